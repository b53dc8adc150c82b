// Gmail's answers to the reads every search and message view makes (a message, a list of message ids, a thread),
// checked by hand. zod's schemas in google.mailbox.ts are the rule: each check here gives the same verdict and the
// same value as its schema's safeParse for anything JSON.parse can make (the only values it is given), unknown keys
// dropped and the schema's keys in its order, and test/bundles/google/answers.unit.test.ts holds them to it. By hand
// because zod's parse of three message answers was a fifth of a search's allocations in the bundle (docs/bench.md
// part 7): a context, an issue list and a copy per key at every level. One difference: the parts of a part nested
// MAX_PART_DEPTH deep are left out, unread, where zod would recurse until the stack ran out. Gmail's part tree follows
// the sender's MIME structure, so refusing the message would let any stranger make a whole thread unreadable.
import { arrayOf, copyPresent, isNumber, isPlainObject, isString } from "../kit/json-shape";
import type { GmailHeader, GmailMessage, GmailPart } from "./google.mailbox";

/** Gmail nests a message's parts a few levels deep (multipart/mixed, /alternative, /related); 64 is far past any. */
export const MAX_PART_DEPTH = 64;
/** PartSchema's `parts` cap. */
export const MAX_PARTS = 500;
/** Gmail's own ids (messages, threads, drafts, labels): nothing that could change a request path. */
export const GMAIL_ID = /^[A-Za-z0-9_-]{1,256}$/;

const isId = (v: unknown): v is string => typeof v === "string" && GMAIL_ID.test(v);
const PART_TEXTS = ["partId", "mimeType", "filename"] as const;
const BODY_TEXTS = ["data", "attachmentId"] as const;
const MESSAGE_TEXTS = ["snippet", "internalDate"] as const;
const SIZE = ["size"] as const;
const SIZE_ESTIMATE = ["sizeEstimate"] as const;
const PAGE_TOKEN = ["nextPageToken"] as const;
const RESULT_SIZE = ["resultSizeEstimate"] as const;
const ANY = Number.POSITIVE_INFINITY;

function header(value: unknown): GmailHeader | undefined {
  return isPlainObject(value) && isString(value.name) && isString(value.value) ? { name: value.name, value: value.value } : undefined;
}

const text = (value: unknown): string | undefined => (isString(value) ? value : undefined);

function body(value: unknown): GmailPart["body"] {
  if (!isPlainObject(value)) return undefined;
  const out: NonNullable<GmailPart["body"]> = {};
  return copyPresent(value, out, SIZE, isNumber, undefined) && copyPresent(value, out, BODY_TEXTS, isString, undefined) ? out : undefined;
}

function part(value: unknown, depth: number): GmailPart | undefined {
  if (!isPlainObject(value)) return undefined;
  const out: GmailPart = {};
  if (!copyPresent(value, out, PART_TEXTS, isString, undefined)) return undefined;
  if ("headers" in value) {
    const headers = arrayOf(value.headers, ANY, header, undefined);
    if (headers === undefined) return undefined;
    out.headers = headers;
  }
  if ("body" in value) {
    const checked = body(value.body);
    if (checked === undefined) return undefined;
    out.body = checked;
  }
  // Below the deepest level read, nothing is: no real mail nests a tenth as deep.
  if ("parts" in value && depth < MAX_PART_DEPTH) {
    const parts = arrayOf(value.parts, MAX_PARTS, part, depth + 1);
    if (parts === undefined) return undefined;
    out.parts = parts;
  }
  return out;
}

/** MessageSchema's safeParse, by hand: the message, or undefined when the schema refuses it. */
export function messageAnswer(value: unknown): GmailMessage | undefined {
  if (!isPlainObject(value) || !isId(value.id) || !isId(value.threadId)) return undefined;
  const out: GmailMessage = { id: value.id, threadId: value.threadId };
  if ("labelIds" in value) {
    const labels = arrayOf(value.labelIds, ANY, text, undefined);
    if (labels === undefined) return undefined;
    out.labelIds = labels;
  }
  if (!copyPresent(value, out, MESSAGE_TEXTS, isString, undefined) || !copyPresent(value, out, SIZE_ESTIMATE, isNumber, undefined)) return undefined;
  if ("payload" in value) {
    const payload = part(value.payload, 1);
    if (payload === undefined) return undefined;
    out.payload = payload;
  }
  return out;
}

export interface MessageList {
  messages?: { id: string; threadId: string }[];
  nextPageToken?: string;
  resultSizeEstimate?: number;
}

function messageRef(value: unknown): { id: string; threadId: string } | undefined {
  return isPlainObject(value) && isId(value.id) && isId(value.threadId) ? { id: value.id, threadId: value.threadId } : undefined;
}

/** ListSchema's safeParse, by hand. */
export function listAnswer(value: unknown): MessageList | undefined {
  if (!isPlainObject(value)) return undefined;
  const out: MessageList = {};
  if ("messages" in value) {
    const refs = arrayOf(value.messages, ANY, messageRef, undefined);
    if (refs === undefined) return undefined;
    out.messages = refs;
  }
  return copyPresent(value, out, PAGE_TOKEN, isString, undefined) && copyPresent(value, out, RESULT_SIZE, isNumber, undefined) ? out : undefined;
}

/** ThreadSchema's safeParse, by hand. */
export function threadAnswer(value: unknown): { id: string; messages?: GmailMessage[] } | undefined {
  if (!isPlainObject(value) || !isId(value.id)) return undefined;
  const out: { id: string; messages?: GmailMessage[] } = { id: value.id };
  if ("messages" in value) {
    const messages = arrayOf(value.messages, ANY, messageAnswer, undefined);
    if (messages === undefined) return undefined;
    out.messages = messages;
  }
  return out;
}
