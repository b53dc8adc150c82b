// Reading a body under a byte cap. A declared length over the cap is refused before reading; one byte past
// the cap cancels the stream, so an oversized body is never held in memory. Shared by the gateway (caller
// bodies, upstream answers) and every bundle (gateway requests, approval answers, third-party APIs).

export type Capped<T> = { ok: true; value: T } | { ok: false; tooLarge: boolean };

/**
 * The body's declared length, when it has a well-formed one. Such a body is read natively rather than by a JS
 * loop, one promise per chunk. HTTP framing ends it at that length; a length a Worker declares across a service
 * binding is not enforced by the runtime, which is why readDeclared checks the size it got.
 */
function declaredLength(message: Request | Response): number | undefined {
  const value = message.headers.get("content-length");
  return value !== null && /^\d{1,10}$/.test(value) ? Number(value) : undefined;
}

/** Reads a declared-length body natively; one that outgrew its declaration (a hand-built stream, never an HTTP peer) is still refused. */
async function readDeclared<T>(read: () => Promise<T>, size: (value: T) => number, declared: number): Promise<Capped<T>> {
  let value: T;
  try {
    value = await read();
  } catch {
    return { ok: false, tooLarge: false };
  }
  return size(value) > declared ? { ok: false, tooLarge: true } : { ok: true, value };
}

export async function readCappedBytes(message: Request | Response, maxBytes: number): Promise<Capped<Uint8Array>> {
  const declared = declaredLength(message);
  if (declared !== undefined && declared > maxBytes) {
    // An answer we will not read is released; a request's unread body is left to the runtime, since
    // cancelling it can take the caller's connection down with it.
    if (message instanceof Response) await message.body?.cancel().catch(() => {});
    return { ok: false, tooLarge: true };
  }
  if (message.body === null) return { ok: true, value: new Uint8Array() };
  if (declared !== undefined)
    return readDeclared(
      async () => new Uint8Array(await message.arrayBuffer()),
      (bytes) => bytes.byteLength,
      declared,
    );
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        // As above: an answer is released, a request's rest is left to the runtime.
        if (message instanceof Response) await reader.cancel().catch(() => {});
        else reader.releaseLock();
        return { ok: false, tooLarge: true };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, tooLarge: false };
  }
  if (chunks.length === 1) return { ok: true, value: chunks[0] as Uint8Array };
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, value: bytes };
}

// One decoder of each kind serves every read: decode() without { stream: true } keeps no state between calls.
const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The same, decoded as UTF-8 (invalid sequences replaced unless `fatal`, which turns them into a failure). */
export async function readCappedText(message: Request | Response, maxBytes: number, fatal = false): Promise<Capped<string>> {
  const declared = declaredLength(message);
  if (!fatal && declared !== undefined && declared <= maxBytes && message.body !== null) {
    // Decoded natively; a decoded string never has more UTF-16 units than the bytes it came from.
    return readDeclared(
      () => message.text(),
      (text) => text.length,
      declared,
    );
  }
  const bytes = await readCappedBytes(message, maxBytes);
  if (!bytes.ok) return bytes;
  try {
    return { ok: true, value: (fatal ? strictUtf8 : lenientUtf8).decode(bytes.value) };
  } catch {
    return { ok: false, tooLarge: false };
  }
}
