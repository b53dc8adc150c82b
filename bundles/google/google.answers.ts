// Gmail's answers to the reads every search and message view makes (a message, a list of message ids, a thread),
// checked by hand. zod's schemas in google.mailbox.ts are the rule: each check here gives the same verdict and the
// same value as its schema's safeParse for anything JSON.parse can make (the only values it is given), unknown keys
// dropped and the schema's keys in its order, and test/bundles/google/answers.unit.test.ts holds them to it. By hand
// because zod's parse of three message answers was a fifth of a search's allocations in the bundle (docs/bench.md
// part 7): a context, an issue list and a copy per key at every level. One difference: a part nested deeper than
// MAX_PART_DEPTH is refused, where zod would recurse until the stack ran out.
import type { GmailHeader, GmailMessage, GmailPart } from "./google.mailbox";

/** Gmail nests a message's parts a few levels deep (multipart/mixed, /alternative, /related); 64 is far past any. */
export const MAX_PART_DEPTH = 64;
/** PartSchema's `parts` cap. */
export const MAX_PARTS = 500;
/** Gmail's own ids (messages, threads, drafts, labels): nothing that could change a request path. */
export const GMAIL_ID = /^[A-Za-z0-9_-]{1,256}$/;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is string => typeof v === "string" && GMAIL_ID.test(v);
// z.number() takes finite numbers only (JSON.parse makes Infinity of 1e400, which both refuse).
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function headers(value: unknown): GmailHeader[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: GmailHeader[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const h: unknown = value[i];
    if (!isObject(h) || typeof h.name !== "string" || typeof h.value !== "string") return undefined;
    out[i] = { name: h.name, value: h.value };
  }
  return out;
}

function strings(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const v of value) if (typeof v !== "string") return undefined;
  return value.slice() as string[];
}

function part(value: unknown, depth: number): GmailPart | undefined {
  if (!isObject(value) || depth > MAX_PART_DEPTH) return undefined;
  const out: GmailPart = {};
  if ("partId" in value) {
    if (typeof value.partId !== "string") return undefined;
    out.partId = value.partId;
  }
  if ("mimeType" in value) {
    if (typeof value.mimeType !== "string") return undefined;
    out.mimeType = value.mimeType;
  }
  if ("filename" in value) {
    if (typeof value.filename !== "string") return undefined;
    out.filename = value.filename;
  }
  if ("headers" in value) {
    const hs = headers(value.headers);
    if (hs === undefined) return undefined;
    out.headers = hs;
  }
  if ("body" in value) {
    // An optional key is checked only when present (`in`, as zod asks); absent, it stays absent.
    const b = value.body;
    if (!isObject(b)) return undefined;
    const body: NonNullable<GmailPart["body"]> = {};
    if ("size" in b) {
      if (!isNumber(b.size)) return undefined;
      body.size = b.size;
    }
    if ("data" in b) {
      if (typeof b.data !== "string") return undefined;
      body.data = b.data;
    }
    if ("attachmentId" in b) {
      if (typeof b.attachmentId !== "string") return undefined;
      body.attachmentId = b.attachmentId;
    }
    out.body = body;
  }
  if ("parts" in value) {
    const ps = value.parts;
    if (!Array.isArray(ps) || ps.length > MAX_PARTS) return undefined;
    const children: GmailPart[] = new Array(ps.length);
    for (let i = 0; i < ps.length; i++) {
      const child = part(ps[i], depth + 1);
      if (child === undefined) return undefined;
      children[i] = child;
    }
    out.parts = children;
  }
  return out;
}

/** MessageSchema's safeParse, by hand: the message, or undefined when the schema refuses it. */
export function messageAnswer(value: unknown): GmailMessage | undefined {
  if (!isObject(value) || !isId(value.id) || !isId(value.threadId)) return undefined;
  const out: GmailMessage = { id: value.id, threadId: value.threadId };
  if ("labelIds" in value) {
    const labels = strings(value.labelIds);
    if (labels === undefined) return undefined;
    out.labelIds = labels;
  }
  if ("snippet" in value) {
    if (typeof value.snippet !== "string") return undefined;
    out.snippet = value.snippet;
  }
  if ("internalDate" in value) {
    if (typeof value.internalDate !== "string") return undefined;
    out.internalDate = value.internalDate;
  }
  if ("sizeEstimate" in value) {
    if (!isNumber(value.sizeEstimate)) return undefined;
    out.sizeEstimate = value.sizeEstimate;
  }
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

/** ListSchema's safeParse, by hand. */
export function listAnswer(value: unknown): MessageList | undefined {
  if (!isObject(value)) return undefined;
  const out: MessageList = {};
  if ("messages" in value) {
    const ms = value.messages;
    if (!Array.isArray(ms)) return undefined;
    const refs: { id: string; threadId: string }[] = new Array(ms.length);
    for (let i = 0; i < ms.length; i++) {
      const m: unknown = ms[i];
      if (!isObject(m) || !isId(m.id) || !isId(m.threadId)) return undefined;
      refs[i] = { id: m.id, threadId: m.threadId };
    }
    out.messages = refs;
  }
  if ("nextPageToken" in value) {
    if (typeof value.nextPageToken !== "string") return undefined;
    out.nextPageToken = value.nextPageToken;
  }
  if ("resultSizeEstimate" in value) {
    if (!isNumber(value.resultSizeEstimate)) return undefined;
    out.resultSizeEstimate = value.resultSizeEstimate;
  }
  return out;
}

/** ThreadSchema's safeParse, by hand. */
export function threadAnswer(value: unknown): { id: string; messages?: GmailMessage[] } | undefined {
  if (!isObject(value) || !isId(value.id)) return undefined;
  const out: { id: string; messages?: GmailMessage[] } = { id: value.id };
  if ("messages" in value) {
    const ms = value.messages;
    if (!Array.isArray(ms)) return undefined;
    const messages: GmailMessage[] = new Array(ms.length);
    for (let i = 0; i < ms.length; i++) {
      const m = messageAnswer(ms[i]);
      if (m === undefined) return undefined;
      messages[i] = m;
    }
    out.messages = messages;
  }
  return out;
}
