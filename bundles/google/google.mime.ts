// Composes the RFC 5322 message Gmail sends. Every header value the caller chose is checked or encoded here,
// so no recipient, subject or filename can add a header line (header injection) or break the MIME tree.
import { hasLineBreakOrControl, hasUnsafe } from "../../contract/text";

export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

export interface Address {
  name?: string;
  email: string;
}

export interface MimeAttachment {
  filename: string;
  mimeType: string;
  bytes: Uint8Array;
}

export interface MimeInput {
  from: string;
  to: readonly Address[];
  cc: readonly Address[];
  bcc: readonly Address[];
  subject: string;
  text?: string;
  html?: string;
  inReplyTo?: string;
  references?: string;
  attachments: readonly MimeAttachment[];
}

const LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;
const DOMAIN = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
/** A message id as it appears in Message-ID / References: one angle-bracketed token. */
export const MESSAGE_ID = /^<[\x21-\x3b\x3d\x3f-\x7e]{1,250}>$/;
export const MIME_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

function isEmail(text: string): boolean {
  const at = text.lastIndexOf("@");
  if (at <= 0) return false;
  const local = text.slice(0, at);
  return LOCAL.test(local) && !local.startsWith(".") && !local.endsWith(".") && !local.includes("..") && DOMAIN.test(text.slice(at + 1));
}

/**
 * The longest display name shown. Real names fit well inside it ("Dr. Maria-Theresa von Hohenberg-Castellanos"
 * is 44); a longer one is room to pad or to spell out a second, fake address (docs/rules.md R-PROMPT-10).
 */
export const MAX_DISPLAY_NAME_CHARS = 64;
/** `@`, angle brackets and their look-alikes: a display name holding one can pose as an address. */
const ADDRESS_LIKE = /[@\uff20\ufe6b<>\u2039\u203a\uff1c\uff1e\ufe64\ufe65\u3008\u3009\u300a\u300b\u2329\u232a\u27e8\u27e9\u276c-\u276f\u02c2\u02c3\u29fc\u29fd]/u;

/**
 * An RFC 2047 encoded word (`=?charset?B?…?=`, `=?charset?Q?…?=`, any case): recipients' clients show it decoded, as
 * text the card never showed. This module encodes non-ASCII itself, so a caller never needs to write one.
 */
const ENCODED_WORD = /=\?[^?]*\?[bq]\?[^?]*\?=/i;
export const hasEncodedWord = (text: string): boolean => ENCODED_WORD.test(text);
export const ENCODED_WORD_PROBLEM = "holds an RFC 2047 encoded word (=?charset?B?…?= or =?charset?Q?…?=), which mail clients show decoded, as other text than the card shows";

/** Why a display name is refused, or undefined when it may be shown and sent. */
export function displayNameProblem(name: string): string | undefined {
  if (ADDRESS_LIKE.test(name)) return "contains @, < or > or a character that looks like one, so it could pose as an address";
  if (hasEncodedWord(name)) return ENCODED_WORD_PROBLEM;
  if (hasUnsafe(name)) return "contains an invisible, spacing or direction-changing character";
  if (/\s{2,}/u.test(name)) return "contains a run of spaces";
  if ([...name].length > MAX_DISPLAY_NAME_CHARS) return `is longer than ${MAX_DISPLAY_NAME_CHARS} characters`;
  return undefined;
}

/** "ada@example.com" or "Ada Lovelace <ada@example.com>"; anything else is refused, never guessed at. */
export function parseAddress(input: string): Address {
  if (hasLineBreakOrControl(input)) throw new InputError("a recipient contains a line break or control character");
  const trimmed = input.trim();
  const angled = /^(.*?)\s*<([^<>]+)>$/.exec(trimmed);
  const email = (angled ? angled[2] : trimmed)?.trim() ?? "";
  if (!isEmail(email)) throw new InputError("a recipient is not a plain email address (name@example.com, or Name <name@example.com>)");
  let name = angled?.[1]?.trim() ?? "";
  if (name.startsWith('"') && name.endsWith('"') && name.length >= 2) name = name.slice(1, -1).trim();
  const problem = displayNameProblem(name);
  // The address alone is named: the name is what is refused, and is never repeated.
  if (problem !== undefined) throw new InputError(`the display name given for ${email} ${problem}; give the address alone or a plain name`);
  return name === "" ? { email } : { name, email };
}

const encoder = new TextEncoder();

export function bytesToBase64(bytes: Uint8Array): string {
  // apply() over chunks: spreading a typed array goes through its iterator and is several times slower.
  const chunks: string[] = [];
  for (let i = 0; i < bytes.length; i += 0x8000) chunks.push(String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]));
  return btoa(chunks.join(""));
}

export function base64UrlEncode(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** RFC 2047: non-ASCII text as UTF-8 encoded words, each short enough to keep lines under 78 characters. */
export function encodeWords(text: string): string {
  if (PRINTABLE_ASCII.test(text) && text.length <= 900) return text;
  const words: string[] = [];
  let chunk = "";
  for (const char of text) {
    if (encoder.encode(chunk + char).length > 42) {
      words.push(chunk);
      chunk = "";
    }
    chunk += char;
  }
  if (chunk !== "") words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${bytesToBase64(encoder.encode(w))}?=`).join("\r\n ");
}

export function formatAddress(address: Address): string {
  if (address.name === undefined) return address.email;
  const name = PRINTABLE_ASCII.test(address.name) ? `"${address.name.replace(/["\\]/g, "\\$&")}"` : encodeWords(address.name);
  return `${name} <${address.email}>`;
}

function addressHeader(name: string, list: readonly Address[]): string[] {
  return list.length === 0 ? [] : [`${name}: ${list.map(formatAddress).join(",\r\n ")}`];
}

/** Both forms of an attachment's name: a quoted ASCII fallback and the exact UTF-8 name (RFC 2231). */
function filenameParams(key: "name" | "filename", filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  if (ascii === filename) return `${key}="${ascii}"`;
  const exact = [...encoder.encode(filename)].map((b) => (/[A-Za-z0-9._-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`)).join("");
  return `${key}="${ascii}"; ${key}*=UTF-8''${exact}`;
}

function base64Lines(bytes: Uint8Array): string {
  return (bytesToBase64(bytes).match(/.{1,76}/g) ?? []).join("\r\n");
}

function textPart(subtype: "plain" | "html", body: string): string {
  return [`Content-Type: text/${subtype}; charset="UTF-8"`, "Content-Transfer-Encoding: base64", "", base64Lines(encoder.encode(body))].join("\r\n");
}

function multipart(subtype: string, boundary: string, parts: readonly string[]): string {
  return [`Content-Type: multipart/${subtype}; boundary="${boundary}"`, "", ...parts.flatMap((p) => [`--${boundary}`, p]), `--${boundary}--`, ""].join("\r\n");
}

/** The message as bytes. `boundary` is random by default; tests pass their own to compare output. */
export function buildMime(input: MimeInput, boundary: string = crypto.randomUUID().replaceAll("-", "")): Uint8Array {
  if (hasLineBreakOrControl(input.subject)) throw new InputError("the subject contains a line break or control character");
  if (hasEncodedWord(input.subject)) throw new InputError(`the subject ${ENCODED_WORD_PROBLEM}`);
  const headers = [
    `From: ${input.from}`,
    ...addressHeader("To", input.to),
    ...addressHeader("Cc", input.cc),
    // Gmail delivers to Bcc and strips the header from what recipients see.
    ...addressHeader("Bcc", input.bcc),
    `Subject: ${encodeWords(input.subject)}`,
    ...(input.inReplyTo !== undefined ? [`In-Reply-To: ${input.inReplyTo}`] : []),
    ...(input.references !== undefined ? [`References: ${input.references}`] : []),
    "MIME-Version: 1.0",
  ];
  const bodies: string[] = [];
  if (input.text !== undefined) bodies.push(textPart("plain", input.text));
  if (input.html !== undefined) bodies.push(textPart("html", input.html));
  if (bodies.length === 0) bodies.push(textPart("plain", ""));
  const body = bodies.length === 1 ? (bodies[0] as string) : multipart("alternative", `alt-${boundary}`, bodies);
  let content = body;
  if (input.attachments.length > 0) {
    const files = input.attachments.map((a) =>
      [
        `Content-Type: ${a.mimeType}; ${filenameParams("name", a.filename)}`,
        `Content-Disposition: attachment; ${filenameParams("filename", a.filename)}`,
        "Content-Transfer-Encoding: base64",
        "",
        base64Lines(a.bytes),
      ].join("\r\n"),
    );
    content = multipart("mixed", `mix-${boundary}`, [body, ...files]);
  }
  return encoder.encode(`${headers.join("\r\n")}\r\n${content}`);
}
