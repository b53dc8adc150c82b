// A small MIME reader for the Gmail fake: the part tree Gmail's message resource shows (headers, nested
// multiparts, base64 and quoted-printable bodies, RFC 2231 attachment names). Encoded words and address lists,
// where the grammar is subtle, are postal-mime's; postal-mime itself gives no part tree, which Gmail's
// payload (partIds, every part's headers) needs.
import { addressParser, decodeWords } from "postal-mime";

/** RFC 2047 encoded words in a header value (any charset); whitespace between two encoded words is dropped. */
export { decodeWords };

export interface MimePart {
  headers: [string, string][];
  mimeType: string;
  params: Record<string, string>;
  filename: string;
  body: Uint8Array;
  parts: MimePart[];
}

export function header(part: MimePart, name: string): string | undefined {
  const lower = name.toLowerCase();
  return part.headers.find(([n]) => n.toLowerCase() === lower)?.[1];
}

export function bytesToBinary(bytes: Uint8Array): string {
  const chunks: string[] = [];
  for (let i = 0; i < bytes.length; i += 0x8000) chunks.push(String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]));
  return chunks.join("");
}

export function binaryToBytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}

export function base64ToBytes(data: string): Uint8Array {
  const clean = data
    .replace(/[^A-Za-z0-9+/_-]/g, "")
    .replaceAll("-", "+")
    .replaceAll("_", "/");
  return binaryToBytes(atob(clean.padEnd(clean.length + ((4 - (clean.length % 4)) % 4), "=")));
}

export function bytesToBase64Url(bytes: Uint8Array): string {
  return btoa(bytesToBinary(bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

const utf8 = new TextDecoder();

function parseParams(value: string): { value: string; params: Record<string, string> } {
  const pieces: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (c === "\\" && quoted) {
      current += value[++i] ?? "";
      continue;
    }
    if (c === '"') quoted = !quoted;
    else if (c === ";" && !quoted) {
      pieces.push(current);
      current = "";
      continue;
    }
    current += c;
  }
  pieces.push(current);
  const params: Record<string, string> = {};
  for (const piece of pieces.slice(1)) {
    const at = piece.indexOf("=");
    if (at < 0) continue;
    const key = piece.slice(0, at).trim().toLowerCase();
    let v = piece.slice(at + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    params[key] = v;
  }
  return { value: (pieces[0] ?? "").trim().toLowerCase(), params };
}

function rfc2231(value: string): string {
  const m = /^([^']*)'[^']*'(.*)$/.exec(value);
  if (m === null) return value;
  const bytes = binaryToBytes((m[2] ?? "").replace(/%([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))));
  return /utf-?8/i.test(m[1] ?? "") ? utf8.decode(bytes) : bytesToBinary(bytes);
}

function decodeBody(text: string, encoding: string): Uint8Array {
  if (encoding === "base64") return base64ToBytes(text);
  if (encoding === "quoted-printable") return binaryToBytes(text.replace(/=\r?\n/g, "").replace(/=([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))));
  return binaryToBytes(text);
}

/** Parses a message held as a binary string (one char per byte). */
export function parseMime(raw: string, depth = 0): MimePart {
  const split = /\r?\n\r?\n/.exec(raw);
  const head = split === null ? raw : raw.slice(0, split.index);
  const bodyText = split === null ? "" : raw.slice(split.index + split[0].length);
  const headers: [string, string][] = [];
  for (const line of head.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && headers.length > 0) {
      const last = headers[headers.length - 1] as [string, string];
      last[1] += ` ${line.trim()}`;
    } else {
      const at = line.indexOf(":");
      if (at > 0) headers.push([line.slice(0, at).trim(), line.slice(at + 1).trim()]);
    }
  }
  const find = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];
  const type = parseParams(find("content-type") ?? "text/plain");
  const disposition = parseParams(find("content-disposition") ?? "");
  const filename =
    disposition.params["filename*"] !== undefined
      ? rfc2231(disposition.params["filename*"])
      : decodeWords(disposition.params.filename ?? (type.params["name*"] !== undefined ? rfc2231(type.params["name*"]) : (type.params.name ?? "")));
  const part: MimePart = { headers, mimeType: type.value, params: type.params, filename, body: new Uint8Array(), parts: [] };
  const boundary = type.params.boundary;
  if (type.value.startsWith("multipart/") && boundary !== undefined && depth < 10) {
    const delimiter = `--${boundary}`;
    const sections = bodyText.split(new RegExp(`\\r?\\n?${delimiter.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    for (const section of sections.slice(1)) {
      if (section.startsWith("--")) break;
      part.parts.push(parseMime(section.replace(/^[ \t]*\r?\n/, ""), depth + 1));
    }
    return part;
  }
  part.body = decodeBody(bodyText, (find("content-transfer-encoding") ?? "7bit").toLowerCase());
  return part;
}

/** The addresses (addr-spec only) in an address header, groups unwrapped. */
export function addresses(value: string | undefined): string[] {
  if (value === undefined) return [];
  return addressParser(value, { flatten: true })
    .map((a) => a.address?.trim() ?? "")
    .filter((a) => a !== "");
}

export function walk(part: MimePart, visit: (p: MimePart) => void, depth = 0): void {
  if (depth > 20) return;
  visit(part);
  for (const child of part.parts) walk(child, visit, depth + 1);
}
