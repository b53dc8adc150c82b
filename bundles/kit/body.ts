// Reading a body under a byte cap. A declared length over the cap is refused before reading; one byte past
// the cap cancels the stream, so an oversized body is never held in memory. Shared by the gateway (caller
// bodies, upstream answers) and every bundle (gateway requests, approval answers, third-party APIs).

export type Capped<T> = { ok: true; value: T } | { ok: false; tooLarge: boolean };

export async function readCappedBytes(message: Request | Response, maxBytes: number): Promise<Capped<Uint8Array>> {
  const declared = Number(message.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    // An answer we will not read is released; a request's unread body is left to the runtime, since
    // cancelling it can take the caller's connection down with it.
    if (message instanceof Response) await message.body?.cancel().catch(() => {});
    return { ok: false, tooLarge: true };
  }
  if (message.body === null) return { ok: true, value: new Uint8Array() };
  // A declared length within the cap is read natively: the runtime ends the body at that length (HTTP
  // framing, or the known size of a body handed over a service binding), which a JS read loop would only
  // re-check, one promise per chunk.
  const length = message.headers.get("content-length");
  if (length !== null && /^\d{1,10}$/.test(length)) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await message.arrayBuffer());
    } catch {
      return { ok: false, tooLarge: false };
    }
    // A body that outgrew its own declaration (a hand-built stream, never an HTTP peer) is still refused.
    return bytes.byteLength > Math.min(declared, maxBytes) ? { ok: false, tooLarge: true } : { ok: true, value: bytes };
  }
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
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

/** The same, decoded as UTF-8 (invalid sequences replaced unless `fatal`, which turns them into a failure). */
export async function readCappedText(message: Request | Response, maxBytes: number, fatal = false): Promise<Capped<string>> {
  const length = message.headers.get("content-length");
  if (!fatal && length !== null && /^\d{1,10}$/.test(length) && Number(length) <= maxBytes && message.body !== null) {
    // Decoded natively; a decoded string never has more UTF-16 units than the bytes it came from.
    let text: string;
    try {
      text = await message.text();
    } catch {
      return { ok: false, tooLarge: false };
    }
    return text.length > Number(length) ? { ok: false, tooLarge: true } : { ok: true, value: text };
  }
  const bytes = await readCappedBytes(message, maxBytes);
  if (!bytes.ok) return bytes;
  try {
    return { ok: true, value: new TextDecoder("utf-8", { fatal, ignoreBOM: false }).decode(bytes.value) };
  } catch {
    return { ok: false, tooLarge: false };
  }
}
