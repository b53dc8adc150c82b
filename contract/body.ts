// Reading a body under a byte cap. A declared length over the cap is refused before reading; one byte past
// the cap stops keeping it, so an oversized body is never held in memory. Shared by the gateway (caller
// bodies, upstream answers) and every bundle (gateway requests, approval answers, third-party APIs).
//
// An answer we will not read is cancelled. A request body we refuse is read to its end and dropped, up to
// DISCARD_LIMIT_BYTES, and cancelled only past that: workerd closes a connection whose request body was left
// unread (or cancelled) after the response, without saying so in the response, so a client or proxy that
// reuses the kept-alive connection at once has its next request reset (wrangler dev's proxy answered it 503,
// "worker restarted mid-request"). Releasing the reader's lock, as this did before, left the same unread
// body (docs/rules.md R-BODY-8).

export type Capped<T> = { ok: true; value: T } | { ok: false; tooLarge: boolean };
/** A text body and the bytes it was read from (its declared length, or what was counted). */
export type CappedText = { ok: true; value: string; bytes: number } | { ok: false; tooLarge: boolean };

/** The two failures, one object each: returned on hot paths, never changed. */
const UNREADABLE = Object.freeze({ ok: false, tooLarge: false } as const);
const OUTGREW = Object.freeze({ ok: false, tooLarge: true } as const);

/** What the gateway reads of a caller's request unless the slug says otherwise (roster `maxRequestBytes`). */
export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
/** The smallest `maxRequestBytes` a slug may set: room for any ordinary call. */
export const MIN_MAX_REQUEST_BYTES = 64 * 1024;
/**
 * The largest `maxRequestBytes` a slug may set (docs/rules.md R-LIMIT-4). Cloudflare refuses request bodies
 * only past 100 MB (Free and Pro plans; more on Business and Enterprise), so what binds is an isolate's 128 MB
 * of memory, shared by every request it serves at once: the gateway holds a body about four times over (read,
 * parsed, re-serialised for the hop, encoded), and the Gmail bundle about eight in the course of a send (read,
 * parsed, base64-decoded, MIME-encoded, line-wrapped, as bytes), so 8 MiB costs a send some 70 MB, about half an
 * isolate. Larger files go by URL attachment, which never crosses the gateway.
 */
export const MAX_REQUEST_BYTES_CEILING = 8 * 1024 * 1024;
/**
 * What the gateway may add to a caller's body when it forwards it: its own `_meta` (the approval URL, at most
 * 2,048 characters; the slug's confirmationHeaders; the call's record; the caller's id) and the hop's framing.
 */
export const GATEWAY_META_ALLOWANCE_BYTES = 64 * 1024;
/** What a bundle reads of the gateway's request: the largest caller body any slug may allow, and the gateway's own additions. */
export const MAX_FORWARDED_BODY_BYTES = MAX_REQUEST_BYTES_CEILING + GATEWAY_META_ALLOWANCE_BYTES;

/**
 * What ends a body at its declared length. "framed": HTTP framing does (a caller's request, an answer to fetch()),
 * so a body that declares its length is read natively rather than by a JS loop, one promise per chunk. "claimed":
 * nothing does. A Worker's answer across a service binding is whatever its stream yields, whatever length it
 * declared (workerd does not hold it to it), so a native read would hold all of it: such a body is read chunk by
 * chunk and refused one chunk past the length it declared, or past the cap (docs/rules.md R-BODY-3).
 */
export type DeclaredLength = "framed" | "claimed";

/**
 * The body's declared length, when it has a well-formed one that is the length of what will be read. An answer to
 * fetch() with a Content-Encoding is decoded as it is read while its Content-Length stays the encoded one (workerd
 * keeps both headers: a gzip answer of 146 bytes read as 100,010 characters), so such a body has no length to go by
 * and is read chunk by chunk under the cap, which then counts decoded bytes.
 */
function declaredLength(message: Request | Response): number | undefined {
  const value = message.headers.get("content-length");
  if (value === null || !/^\d{1,10}$/.test(value)) return undefined;
  const encoding = message.headers.get("content-encoding")?.trim().toLowerCase() ?? "";
  return encoding === "" || encoding === "identity" ? Number(value) : undefined;
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

/** How much of a refused request body is read and dropped, so that the caller's connection can carry its next request. */
export const DISCARD_LIMIT_BYTES = 8 * 1024 * 1024;

/** Reads a body to its end and drops it; true if it ended within `limit` bytes, false if it failed or was cancelled past it. */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<boolean> {
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      size += value.byteLength;
      if (size > limit) break;
    }
  } catch {
    return false;
  }
  // Past the bound the connection is not worth keeping: the runtime closes it.
  await reader.cancel().catch(() => {});
  return false;
}

/** Reads and drops a body that will not be used, up to `limit` bytes; past it the body is cancelled. */
export async function discardBody(message: Request | Response, limit: number = DISCARD_LIMIT_BYTES): Promise<void> {
  if (message.body === null || message.bodyUsed || message.body.locked) return;
  await discardRest(message.body.getReader(), limit);
}

/**
 * How much of a request refused before its caller is known (401, and the other refusals that come before the token
 * is checked) is read and dropped: enough for any ordinary call, so a client that reuses its connection still can,
 * and far less than what an authenticated caller's connection is worth (docs/rules.md R-BODY-8).
 */
export const UNAUTHENTICATED_DRAIN_BYTES = 64 * 1024;

/**
 * Drops what is left of a request refused before its caller is known. A declared length over `limit` is not read at
 * all (a stranger's body costs nothing); otherwise at most `limit` bytes are read, and the rest cancelled. True when
 * the body was read to its end, so its connection can carry the next request; false when the runtime will close it,
 * which the answer should then say (Connection: close).
 */
export async function dropUnauthenticatedBody(request: Request, limit: number = UNAUTHENTICATED_DRAIN_BYTES): Promise<boolean> {
  if (request.body === null || request.bodyUsed || request.body.locked) return true;
  const declared = declaredLength(request);
  if (declared !== undefined && declared > limit) return false;
  return discardRest(request.body.getReader(), limit);
}

/** workerd's BYOB reader: reads until at least `minBytes` are in `view` or the stream ends (not in the WHATWG standard). */
interface BoundedReader {
  readAtLeast(minBytes: number, view: Uint8Array): Promise<{ done: boolean; value: Uint8Array | undefined }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
}

/**
 * A body of a claimed length read in one native step where the runtime can (workerd's `readAtLeast` on a stream it
 * made, such as a service binding's answer): at most one byte past the claim is ever taken, and a body that has it is
 * refused. One await instead of a JS loop of reads, which cost 70-110 us more CPU per call in a microbenchmark
 * (ARCHITECTURE.md §2). Undefined where the stream cannot be read so (Node's streams, one a Worker built in JS): the caller's loop reads it.
 */
async function readClaimed(body: ReadableStream<Uint8Array>, declared: number): Promise<Capped<Uint8Array> | undefined> {
  let reader: BoundedReader;
  try {
    reader = body.getReader({ mode: "byob" }) as unknown as BoundedReader;
  } catch {
    return undefined;
  }
  if (typeof reader.readAtLeast !== "function") {
    reader.releaseLock();
    return undefined;
  }
  let value: Uint8Array | undefined;
  try {
    // Fewer bytes than asked for only when the stream ended: then what came is the whole body.
    ({ value } = await reader.readAtLeast(declared + 1, new Uint8Array(declared + 1)));
  } catch {
    return UNREADABLE;
  }
  if (value === undefined) return { ok: true, value: new Uint8Array() };
  if (value.byteLength > declared) {
    await reader.cancel().catch(() => {});
    return OUTGREW;
  }
  return { ok: true, value };
}

export async function readCappedBytes(message: Request | Response, maxBytes: number, length: DeclaredLength = "framed"): Promise<Capped<Uint8Array>> {
  const declared = declaredLength(message);
  if (declared !== undefined && declared > maxBytes) {
    if (message instanceof Response) await message.body?.cancel().catch(() => {});
    else await discardBody(message);
    return { ok: false, tooLarge: true };
  }
  if (message.body === null) return { ok: true, value: new Uint8Array() };
  if (declared !== undefined && length === "framed")
    return readDeclared(
      async () => new Uint8Array(await message.arrayBuffer()),
      (bytes) => bytes.byteLength,
      declared,
    );
  // A claimed length is a cap of its own: a body longer than it said is refused one chunk past it, or, where the
  // runtime reads natively up to a bound (workerd), one byte past it.
  if (declared !== undefined) {
    const held = await readClaimed(message.body, declared);
    if (held !== undefined) return held;
  }
  const limit = declared ?? maxBytes;
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        if (message instanceof Response) await reader.cancel().catch(() => {});
        else await discardRest(reader, DISCARD_LIMIT_BYTES);
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

/** The length a framed text body within `maxBytes` declares, when it can be read natively (readNatively); else undefined. */
function nativeTextLength(message: Request | Response, maxBytes: number, fatal: boolean, length: DeclaredLength): number | undefined {
  if (fatal || length !== "framed" || message.body === null) return undefined;
  const declared = declaredLength(message);
  return declared !== undefined && declared <= maxBytes ? declared : undefined;
}

/**
 * A framed body of a declared length, decoded natively: a decoded string never has more UTF-16 units than the bytes
 * it came from, so one that does outgrew its declaration (a hand-built stream, never an HTTP peer) and is refused.
 * Every bundle and the gateway read their bodies through here, so it is one await and no closure (docs/bench.md, part 7).
 */
async function readNatively(message: Request | Response, declared: number): Promise<{ ok: true; value: string } | typeof UNREADABLE | typeof OUTGREW> {
  let value: string;
  try {
    value = await message.text();
  } catch {
    return UNREADABLE;
  }
  return value.length > declared ? OUTGREW : { ok: true, value };
}

/** The same, decoded as UTF-8 (invalid sequences replaced unless `fatal`, which turns them into a failure). */
export async function readCappedText(message: Request | Response, maxBytes: number, fatal = false, length: DeclaredLength = "framed"): Promise<Capped<string>> {
  const declared = nativeTextLength(message, maxBytes, fatal, length);
  if (declared !== undefined) return readNatively(message, declared);
  const text = await readCountedText(message, maxBytes, fatal, length);
  return text.ok ? { ok: true, value: text.value } : text;
}

/** readCappedText, and how many bytes the text was read from: what a cap that depends on the message is held to (docs/rules.md R-LIMIT-4). */
export async function readCountedText(message: Request | Response, maxBytes: number, fatal = false, length: DeclaredLength = "framed"): Promise<CappedText> {
  const declared = nativeTextLength(message, maxBytes, fatal, length);
  if (declared !== undefined) {
    const text = await readNatively(message, declared);
    return text.ok ? { ok: true, value: text.value, bytes: declared } : text;
  }
  const bytes = await readCappedBytes(message, maxBytes, length);
  if (!bytes.ok) return bytes;
  try {
    return { ok: true, value: (fatal ? strictUtf8 : lenientUtf8).decode(bytes.value), bytes: bytes.value.byteLength };
  } catch {
    return { ok: false, tooLarge: false };
  }
}
