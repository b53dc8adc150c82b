// Attachments are fetched or decoded before anyone is asked, so bad input fails without a prompt and the
// prompt lists the files that will actually go out (docs/rules.md R-PROMPT-4). A URL is one the model wrote, fetched
// from the bundle's network position, so only URLs under an operator-listed prefix are fetched (R-URL-9).

import { MAX_REQUEST_BYTES_CEILING, readCappedBytes } from "../../contract/body";
import { replaceUnsafe } from "../../contract/text";
import { checkPrefix, checkUnderPrefix } from "../../contract/url-policy";
import { ENCODED_WORD_PROBLEM, hasEncodedWord, InputError, MIME_TYPE } from "./google.mime";

export const MAX_ATTACHMENTS = 10;
/** All attachments together, decoded: keeps the encoded message under Gmail's 25 MB attachment limit. */
export const MAX_ATTACHMENT_BYTES = 18 * 1024 * 1024;
export const DOWNLOAD_TIMEOUT_MS = 30_000;
/** A file name as it is shown and sent: a longer one is cut, keeping its extension. */
export const MAX_FILENAME_CHARS = 120;
/** A file name as a caller may give it (UTF-16 units): room for MAX_FILENAME_CHARS characters of any plane. */
export const MAX_FILENAME_INPUT_CHARS = 255;
/**
 * Room in a tools/call body for everything but one attachment's content: the JSON-RPC envelope, the MCP client's
 * own `_meta`, a recipient, a subject line and the file's name.
 */
export const CALL_ENVELOPE_BYTES = 4 * 1024;
/**
 * The longest inline `content_base64` the schema takes: what a body at the largest cap a slug may set
 * (contract/body.ts MAX_REQUEST_BYTES_CEILING, 8 MiB) carries beside its envelope, so every size the schema
 * advertises can reach the bundle (docs/rules.md R-LIMIT-5). About 6 MB of file; at the default 1 MiB cap the
 * gateway refuses the call (413) past about 0.75 MB of base64 in all, as the field's description says.
 */
export const MAX_CONTENT_BASE64_CHARS = MAX_REQUEST_BYTES_CEILING - CALL_ENVELOPE_BYTES;

export interface AttachmentSpec {
  filename?: string;
  url?: string;
  content_base64?: string;
  mime_type?: string;
}

export interface Attachment {
  filename: string;
  mimeType: string;
  bytes: Uint8Array;
  sha256: string;
}

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

// Path separators and quotes would change where a name points or break its MIME parameter; everything else
// that could forge a line or disguise an extension ("invoice\u202Efdp.exe") is the shared unsafe set.
const NAME_SEPARATORS = /[/\\"]/g;

/** The name that goes out and that the person sees: unsafe characters become "_", never dropped silently. */
export function sanitizeFilename(name: string): string {
  let clean = replaceUnsafe(name, "_").replace(NAME_SEPARATORS, "_").trim();
  // A name of only dots would read as a path; an empty one as nothing at all.
  if (/^\.*$/.test(clean)) clean = "attachment";
  const chars = [...clean];
  if (chars.length <= MAX_FILENAME_CHARS) return clean;
  // Keep the extension visible when cutting a long name.
  const dot = clean.lastIndexOf(".");
  const ext = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : "";
  return `${chars.slice(0, MAX_FILENAME_CHARS - [...ext].length - 1).join("")}…${ext}`;
}

/** The operator's list of URL prefixes attachments may be fetched from; entries that are not valid prefixes are dropped. */
export function attachmentUrlPrefixes(env: Record<string, unknown>): string[] {
  const raw = env.GMAIL_ATTACHMENT_URL_PREFIXES;
  if (typeof raw !== "string") return [];
  return raw.split(/[\s,]+/).filter((p) => p !== "" && checkPrefix(p) === undefined);
}

/** Whether a caller's URL may be fetched: the one URL policy, against GMAIL_ATTACHMENT_URL_PREFIXES. */
export function checkAttachmentUrl(raw: string, prefixes: readonly string[]): { ok: true; url: URL } | { ok: false; why: string } {
  if (prefixes.length === 0) return { ok: false, why: "this bundle fetches no attachment URLs (GMAIL_ATTACHMENT_URL_PREFIXES is empty); send the file as content_base64" };
  const checked = checkUnderPrefix(raw, prefixes, "GMAIL_ATTACHMENT_URL_PREFIXES");
  if (checked.ok) return checked;
  return { ok: false, why: checked.error.code === "URL_NO_PREFIXES" ? "no attachment URL prefix is configured" : `an attachment URL was refused: ${checked.error.why}` };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function decodeBase64(text: string): Uint8Array {
  const compact = text
    .replace(/[\r\n ]/g, "")
    .replaceAll("-", "+")
    .replaceAll("_", "/");
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw new InputError("an attachment's content_base64 is not valid base64");
  const padded = compact.padEnd(compact.length + ((4 - (compact.length % 4)) % 4), "=");
  let binary: string;
  try {
    binary = atob(padded);
  } catch {
    throw new InputError("an attachment's content_base64 is not valid base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const BY_EXTENSION: Record<string, string> = {
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  html: "text/html",
  json: "application/json",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  zip: "application/zip",
  ics: "text/calendar",
};

function mimeTypeOf(filename: string, declared: string | undefined, served: string | null): string {
  if (declared !== undefined) return declared.toLowerCase();
  const fromServer = served?.split(";")[0]?.trim();
  if (fromServer !== undefined && MIME_TYPE.test(fromServer)) return fromServer.toLowerCase();
  return BY_EXTENSION[filename.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
}

function nameFromUrl(url: URL): string {
  const last = url.pathname.split("/").pop() ?? "";
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** Reads at most `cap` bytes; one byte more and the download is refused. */
async function readCapped(response: Response, cap: number): Promise<Uint8Array> {
  const bytes = await readCappedBytes(response, cap);
  if (bytes.ok) return bytes.value;
  if (bytes.tooLarge) throw new InputError(`the attachments are larger than ${MAX_ATTACHMENT_BYTES} bytes in all`);
  throw new InputError("an attachment could not be downloaded");
}

async function download(url: URL, cap: number, signal: AbortSignal, doFetch: Fetch): Promise<{ bytes: Uint8Array; type: string | null }> {
  let response: Response;
  const timeout = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  for (let reconnected = false; ; reconnected = true) {
    try {
      // No redirect is followed: a URL under an allowed prefix must not lead the fetch anywhere else.
      response = await doFetch(url.href, { method: "GET", redirect: "manual", signal: AbortSignal.any([signal, timeout]) });
      break;
    } catch {
      // A GET is safe to repeat: a connection that failed before any answer (a kept-alive connection the server had
      // closed) is tried once more, as Gmail's reads are, never once the call was dropped or the download's time ran out.
      if (!reconnected && !signal.aborted && !timeout.aborted) continue;
      throw new InputError(signal.aborted ? "the call was dropped while an attachment was downloading" : "an attachment URL could not be fetched");
    }
  }
  if ((response.type as string) === "opaqueredirect" || response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    throw new InputError(`an attachment URL answered HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ", a redirect, which is never followed" : ""}`);
  }
  try {
    return { bytes: await readCapped(response, cap), type: response.headers.get("content-type") };
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError("an attachment URL's body could not be read");
  }
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Decodes or downloads every attachment, in order; throws an InputError naming the first problem. */
export async function materialize(specs: readonly AttachmentSpec[], env: Record<string, unknown>, signal: AbortSignal, doFetch: Fetch = (i, init) => fetch(i, init)): Promise<Attachment[]> {
  if (specs.length > MAX_ATTACHMENTS) throw new InputError(`at most ${MAX_ATTACHMENTS} attachments can be sent`);
  // Check every spec before fetching anything, so one bad entry costs no download.
  const checked = specs.map((spec, i) => {
    if ((spec.url === undefined) === (spec.content_base64 === undefined)) throw new InputError("each attachment needs exactly one of url and content_base64");
    if (spec.mime_type !== undefined && !MIME_TYPE.test(spec.mime_type)) throw new InputError("an attachment's mime_type is not a MIME type (type/subtype)");
    let url: URL | undefined;
    if (spec.url !== undefined) {
      const verdict = checkAttachmentUrl(spec.url, attachmentUrlPrefixes(env));
      if (!verdict.ok) throw new InputError(verdict.why);
      url = verdict.url;
    } else if (spec.filename === undefined || spec.filename.trim() === "") throw new InputError("an attachment given as content_base64 needs a filename");
    // The name goes out as it is when it is ASCII, and recipients' clients decode an encoded word in it: the card would
    // show "=?UTF-8?B?...?=" where the recipient reads another name.
    if (hasEncodedWord(sanitizeFilename(spec.filename ?? (url === undefined ? "" : nameFromUrl(url))))) throw new InputError(`attachment ${i + 1}'s file name ${ENCODED_WORD_PROBLEM}`);
    return { spec, url };
  });
  const out: Attachment[] = [];
  let total = 0;
  for (const { spec, url } of checked) {
    let bytes: Uint8Array;
    let served: string | null = null;
    if (url !== undefined) {
      const got = await download(url, MAX_ATTACHMENT_BYTES - total, signal, doFetch);
      bytes = got.bytes;
      served = got.type;
    } else {
      bytes = decodeBase64(spec.content_base64 as string);
      if (total + bytes.byteLength > MAX_ATTACHMENT_BYTES) throw new InputError(`the attachments are larger than ${MAX_ATTACHMENT_BYTES} bytes in all`);
    }
    total += bytes.byteLength;
    const filename = sanitizeFilename(spec.filename ?? (url === undefined ? "" : nameFromUrl(url)));
    out.push({ filename, mimeType: mimeTypeOf(filename, spec.mime_type, served), bytes, sha256: await sha256(bytes) });
  }
  return out;
}
