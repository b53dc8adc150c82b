// Reading a message (postal-mime, which runs on Workers) and writing a draft. A message, a text or an attachment
// over its cap is refused whole with the cap named, never cut (docs/rules.md R-MAIL-9). A draft's header values
// are the caller's, so a line break in one is refused rather than let it add a header of its own.
import PostalMime, { type Address, type Attachment } from "postal-mime";
import { MailError } from "./mailbox.errors";

/** The largest message get_message and get_attachments read (its RFC822.SIZE, checked before its bytes are). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** The most text get_message returns. */
export const MAX_TEXT_CHARS = 100_000;
/** The largest single attachment get_attachments returns or saves. */
export const MAX_ATTACHMENT_BYTES = 2 * 1024 * 1024;

export function checkMessageSize(size: number): void {
  if (size > MAX_MESSAGE_BYTES) throw new MailError(`the message is ${size} bytes, more than the ${MAX_MESSAGE_BYTES} this server reads; it was not read, and nothing is cut short`);
}

export function checkTextLength(chars: number): void {
  if (chars > MAX_TEXT_CHARS) throw new MailError(`the message's text is ${chars} characters, more than the ${MAX_TEXT_CHARS} this server returns; it is not returned cut short`);
}

export function checkAttachmentSize(index: number, bytes: number): void {
  if (bytes > MAX_ATTACHMENT_BYTES)
    throw new MailError(`attachment ${index} is ${bytes} bytes, more than the ${MAX_ATTACHMENT_BYTES} this server returns; no attachment was returned, and none is cut short`);
}

const address = (a: Address | undefined): string | null => {
  if (a === undefined) return null;
  if (a.group !== undefined) return `${a.name}: ${a.group.map((m) => m.address).join(", ")}`;
  return a.name === "" ? a.address : `${a.name} <${a.address}>`;
};

export interface ParsedMessage {
  from: string | null;
  to: string[];
  cc: string[];
  subject: string | null;
  date: string | null;
  messageId: string | null;
  text: string;
  /** The text came from the HTML part, its tags dropped: there was no plain-text part. */
  fromHtml: boolean;
  attachments: Attachment[];
}

function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, "")
    .replace(/<br\s*\/?>|<\/p>|<\/div>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

export async function parseMessage(raw: Uint8Array): Promise<ParsedMessage> {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    email = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" });
  } catch {
    throw new MailError("the message could not be parsed as MIME");
  }
  const fromHtml = (email.text ?? "") === "" && (email.html ?? "") !== "";
  return {
    from: address(email.from),
    to: (email.to ?? []).map(address).filter((x): x is string => x !== null),
    cc: (email.cc ?? []).map(address).filter((x): x is string => x !== null),
    subject: email.subject ?? null,
    date: email.date ?? null,
    messageId: email.messageId ?? null,
    text: fromHtml ? htmlToText(email.html ?? "") : (email.text ?? ""),
    fromHtml,
    attachments: email.attachments,
  };
}

export const attachmentBytes = (a: Attachment): Uint8Array =>
  typeof a.content === "string" ? new TextEncoder().encode(a.content) : a.content instanceof Uint8Array ? a.content : new Uint8Array(a.content);

/** RFC 2047 for a header value that is not plain ASCII. */
function encodeHeader(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `=?UTF-8?B?${btoa(binary)}?=`;
}

/** A header value as the caller gave it, refused when it holds a line break or other control character. */
function headerValue(label: string, value: string): string {
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new MailError(`the draft's ${label} holds a line break or control character`);
  return value;
}

export interface Draft {
  to: readonly string[];
  cc: readonly string[];
  subject: string;
  body: string;
}

/** The draft as an RFC 5322 message: UTF-8 text, base64 body, CRLF line ends. */
export function buildDraft(draft: Draft, now = new Date()): Uint8Array {
  const lines = [
    `Date: ${now.toUTCString().replace("GMT", "+0000")}`,
    `To: ${draft.to.map((a) => headerValue("To", a)).join(", ")}`,
    ...(draft.cc.length > 0 ? [`Cc: ${draft.cc.map((a) => headerValue("Cc", a)).join(", ")}`] : []),
    `Subject: ${encodeHeader(headerValue("subject", draft.subject))}`,
    `Message-ID: <${crypto.randomUUID()}@strad.invalid>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
  ];
  const body = new TextEncoder().encode(draft.body.replace(/\r?\n/g, "\r\n"));
  let binary = "";
  for (const b of body) binary += String.fromCharCode(b);
  const b64 = (btoa(binary).match(/.{1,76}/g) ?? []).join("\r\n");
  return new TextEncoder().encode(`${lines.join("\r\n")}\r\n${b64}\r\n`);
}
