// A Rustpad client on workerd: the pad ids Rustpad accepts, the server's address from the mount's configuration, and
// the two reads over HTTP (GET /api/text/<id>, a pad's plain text; GET /api/stats, the server's own statistics), each
// capped and timed out. A pad is edited through a session (pads.session.ts). Every pad id is checked against
// Rustpad's own alphabet and length before anything is sent (docs/rules.md R-PAD-1).
import { readCappedText } from "../../contract/body";
import { slugNamespace } from "../../contract/slug";
import { isSecureOrLoopback } from "../../contract/url-policy";
import type { WriteWords } from "../kit/gate";

/** Rustpad's pad ids: what its own client generates, six characters of this alphabet. */
export const PAD_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
export const PAD_ID_LENGTH = 6;
export const PAD_ID = /^[A-Za-z0-9]{6}$/;
/** Rustpad refuses an edit that would leave a pad longer than this (and drops the connection that sent it). */
export const MAX_PAD_CHARS = 100_000;
/** How long the bundle waits for Rustpad to answer one step (connect, sync, acknowledge). */
export const PAD_TIMEOUT_MS = 15_000;
/** A Rustpad answer over HTTP is read up to this many bytes (a full pad is at most 100,000 code points). */
export const MAX_HTTP_BYTES = 512 * 1024;
export const RUSTPAD_URL_VARIABLE = "RUSTPAD_URL";

/** How a refused edit reads: the gate's words for a pad. */
export const PAD_WORDS: WriteWords = { act: "change", done: "changed", target: "pad" };

/** A failure in words the bundle chose: a status, a cause, never a byte of Rustpad's answer. */
export class PadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PadError";
  }
}

export function checkPadId(pad: string): void {
  if (!PAD_ID.test(pad)) throw new PadError(`a pad id is ${PAD_ID_LENGTH} characters of A-Z, a-z and 0-9, as Rustpad makes them`);
}

/**
 * The Rustpad server a mount talks to: its own `<MOUNT>__RUSTPAD_URL`, else the bundle-wide `RUSTPAD_URL`. https,
 * or plain http on loopback only; no credentials, query or fragment. Throws PadError naming the variable, never its value.
 */
export function rustpadBase(mount: string, env: Record<string, unknown>): URL {
  const own = `${slugNamespace(mount)}${RUSTPAD_URL_VARIABLE}`;
  const name = typeof env[own] === "string" && env[own] !== "" ? own : RUSTPAD_URL_VARIABLE;
  const raw = env[name];
  if (typeof raw !== "string" || raw === "") throw new PadError(`no Rustpad server is configured for this mount: set ${own} or ${RUSTPAD_URL_VARIABLE}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PadError(`${name} is not a URL`);
  }
  if (!isSecureOrLoopback(url)) throw new PadError(`${name} must be https (plain http on a loopback host only)`);
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") throw new PadError(`${name} may hold no credentials, query or fragment`);
  return url;
}

/** A path under the server's base (which may itself sit under a path). */
export function endpoint(base: URL, path: string): string {
  return `${base.origin}${base.pathname.replace(/\/+$/, "")}${path}`;
}

/** A new pad id, as Rustpad's client makes one: six characters drawn uniformly from its alphabet. */
export function newPadId(): string {
  let id = "";
  while (id.length < PAD_ID_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      // 248 = 4 × 62: a byte at or past it would favour the first letters.
      if (byte < 248 && id.length < PAD_ID_LENGTH) id += PAD_ID_ALPHABET[byte % 62];
    }
  }
  return id;
}

/**
 * Rustpad's answer as text, at most MAX_HTTP_BYTES of it (contract/body.ts): an answer that declares its length is
 * read natively, one that declares more than the cap is not read at all, and one without (chunked, or encoded) is
 * read chunk by chunk and cancelled one chunk past the cap.
 */
async function readCapped(response: Response): Promise<string> {
  const text = await readCappedText(response, MAX_HTTP_BYTES);
  if (text.ok) return text.value;
  throw new PadError(text.tooLarge ? `Rustpad's answer is larger than ${MAX_HTTP_BYTES} bytes` : "Rustpad's answer could not be read");
}

/**
 * A GET against Rustpad. Reads change nothing, so one whose connection failed before any answer (a kept-alive
 * connection the server had closed) is tried once more, never once the call was dropped, and never after an answer.
 */
async function get(url: string, signal: AbortSignal): Promise<string> {
  let response: Response;
  for (let reconnected = false; ; reconnected = true) {
    try {
      response = await fetch(url, { method: "GET", redirect: "manual", signal });
      break;
    } catch {
      if (!reconnected && !signal.aborted) continue;
      throw new PadError("Rustpad could not be reached");
    }
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    throw new PadError(`Rustpad answered HTTP ${response.status}`);
  }
  return readCapped(response);
}

/** GET /api/text/<id>: the pad's text. Rustpad answers an empty text for a pad it does not hold, and creates none. */
export async function readPadText(base: URL, pad: string, signal: AbortSignal): Promise<string> {
  checkPadId(pad);
  return get(endpoint(base, `/api/text/${pad}`), signal);
}

export interface RustpadStats {
  start_time: number;
  num_documents: number;
}

/** GET /api/stats: when the server started (seconds since the epoch) and how many pads it holds. */
export async function readStats(base: URL, signal: AbortSignal): Promise<RustpadStats> {
  const text = await get(endpoint(base, "/api/stats"), signal);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PadError("Rustpad's statistics are not JSON");
  }
  const { start_time, num_documents } = (body ?? {}) as Record<string, unknown>;
  if (typeof start_time !== "number" || typeof num_documents !== "number") throw new PadError("Rustpad's statistics are not of the documented shape");
  return { start_time, num_documents };
}
