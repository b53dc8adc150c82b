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
  const reader = message.body?.getReader();
  if (reader === undefined) return { ok: true, value: new Uint8Array() };
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
  const bytes = await readCappedBytes(message, maxBytes);
  if (!bytes.ok) return bytes;
  try {
    return { ok: true, value: new TextDecoder("utf-8", { fatal, ignoreBOM: false }).decode(bytes.value) };
  } catch {
    return { ok: false, tooLarge: false };
  }
}
