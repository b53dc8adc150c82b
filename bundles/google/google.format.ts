// Turns Gmail's message resources into what the read tools answer: the common headers, the decoded text and
// html bodies (cut at a bound), and the attachments by name. What the tools read is the model's to read;
// only the confirmation prompt must never carry it.
import type { GmailMessage, GmailPart } from "./google.mailbox";

export const MAX_BODY_CHARS = 50_000;
export const SUMMARY_HEADERS = ["From", "To", "Cc", "Bcc", "Subject", "Date", "Reply-To", "Message-ID", "In-Reply-To", "References"] as const;

export function header(part: GmailPart | undefined, name: string): string | undefined {
  const lower = name.toLowerCase();
  return part?.headers?.find((h) => h.name.toLowerCase() === lower)?.value;
}

export function decodeBase64Url(data: string): string {
  try {
    const binary = atob(
      data
        .replaceAll("-", "+")
        .replaceAll("_", "/")
        .padEnd(data.length + ((4 - (data.length % 4)) % 4), "="),
    );
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return new TextDecoder().decode(bytes);
  } catch {
    return "";
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [cut: ${text.length} characters in all]`;
}

export interface AttachmentInfo {
  filename: string;
  mimeType: string;
  size: number;
}

/** Every part that carries a filename, depth-first, bounded. */
export function attachmentsOf(part: GmailPart | undefined, out: AttachmentInfo[] = [], depth = 0): AttachmentInfo[] {
  if (part === undefined || depth > 20 || out.length >= 100) return out;
  if (part.filename !== undefined && part.filename !== "") out.push({ filename: part.filename, mimeType: part.mimeType ?? "application/octet-stream", size: part.body?.size ?? 0 });
  for (const child of part.parts ?? []) attachmentsOf(child, out, depth + 1);
  return out;
}

function firstBody(part: GmailPart | undefined, mimeType: string, depth = 0): string | undefined {
  if (part === undefined || depth > 20) return undefined;
  if (part.mimeType === mimeType && (part.filename ?? "") === "" && part.body?.data !== undefined) return decodeBase64Url(part.body.data);
  for (const child of part.parts ?? []) {
    const found = firstBody(child, mimeType, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The summary's header keys, as they are matched and named. */
const SUMMARY_KEYS: readonly string[] = SUMMARY_HEADERS.map((name) => name.toLowerCase());

/**
 * The summary's headers, each the first of its name (matched without case) as header() finds it, in SUMMARY_HEADERS'
 * order: one pass over the message's headers, each name lowered once (a search summarises every message it lists).
 */
function summaryHeaders(part: GmailPart | undefined): Record<string, string> {
  const found = new Map<string, string>();
  for (const h of part?.headers ?? []) {
    const lower = h.name.toLowerCase();
    if (!found.has(lower) && SUMMARY_KEYS.includes(lower)) found.set(lower, h.value);
  }
  const headers: Record<string, string> = {};
  for (const key of SUMMARY_KEYS) {
    const value = found.get(key);
    if (value !== undefined) headers[key] = value;
  }
  return headers;
}

export function summariseMessage(message: GmailMessage, bodies: boolean, maxBodyChars: number = MAX_BODY_CHARS): Record<string, unknown> {
  const headers = summaryHeaders(message.payload);
  const summary: Record<string, unknown> = { id: message.id, threadId: message.threadId, labelIds: message.labelIds ?? [], snippet: message.snippet ?? "", ...headers };
  if (bodies) {
    const text = firstBody(message.payload, "text/plain");
    const html = firstBody(message.payload, "text/html");
    if (text !== undefined) summary.text = cut(text, maxBodyChars);
    if (html !== undefined) summary.html = cut(html, maxBodyChars);
  }
  summary.attachments = attachmentsOf(message.payload);
  return summary;
}
