// The Gmail fake's state: mailboxes per account, access tokens, every request it received, and the outbox of
// everything sent (how it arrived, who it went to, what it carried). Resources are shaped like Gmail's.
import { addresses, base64ToBytes, bytesToBase64Url, bytesToBinary, decodeWords, header, type MimePart, parseMime, walk } from "./mime";
import { GRANTS, seedMailbox } from "./seed";

export interface StoredMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  /** The message as a binary string, one char per byte. */
  raw: string;
  internalDate: number;
}

export interface Account {
  email: string;
  messages: Map<string, StoredMessage>;
  drafts: Map<string, StoredMessage>;
}

export interface RecordedGmailRequest {
  at: number;
  method: string;
  path: string;
  query: Record<string, string>;
  /** The mailbox the bearer token opened, or null. */
  account: string | null;
  /** On token requests: the client_id sent (never the secret). */
  clientId?: string;
  /** On token requests: the access token the fake minted, so a test can tell whose token a later request carried. */
  minted?: string;
  /** The bearer token the request carried, or null (the fake's own access tokens only: they open nothing real). */
  bearer: string | null;
  contentType: string | null;
  bytes: number;
  status: number;
}

export type Via = "send" | "upload-media" | "upload-multipart" | "draft";

export interface OutboxEntry {
  at: number;
  id: string;
  threadId: string;
  account: string;
  via: Via;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  inReplyTo: string | null;
  references: string | null;
  text: string | null;
  html: string | null;
  attachments: { filename: string; mimeType: string; size: number; sha256: string }[];
  rawBytes: number;
}

export interface Fault {
  method?: string;
  /** Matches when the request path ends with this. */
  path: string;
  status: number;
  /** How many requests it answers; unlimited when absent. */
  times?: number;
}

const MAX_RECORDS = 5_000;
const utf8 = new TextDecoder();

function hexId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 16);
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function textOf(part: MimePart, type: string): string | null {
  let found: string | null = null;
  walk(part, (p) => {
    if (found === null && p.mimeType === type && p.filename === "" && p.parts.length === 0) found = utf8.decode(p.body);
  });
  return found;
}

export function snippetOf(raw: string): string {
  return (textOf(parseMime(raw), "text/plain") ?? "").replace(/\s+/g, " ").trim().slice(0, 120);
}

interface ResourcePart {
  partId: string;
  mimeType: string;
  filename: string;
  headers: { name: string; value: string }[];
  body: { size: number; data?: string; attachmentId?: string };
  parts?: ResourcePart[];
}

function resourcePart(p: MimePart, partId: string, messageId: string): ResourcePart {
  const body =
    p.parts.length > 0 ? { size: 0 } : p.filename !== "" ? { size: p.body.length, attachmentId: `att-${messageId}-${partId || "0"}` } : { size: p.body.length, data: bytesToBase64Url(p.body) };
  const out: ResourcePart = { partId, mimeType: p.mimeType, filename: p.filename, headers: p.headers.map(([name, value]) => ({ name, value: decodeWords(value) })), body };
  if (p.parts.length > 0) out.parts = p.parts.map((c, i) => resourcePart(c, partId === "" ? String(i) : `${partId}.${i}`, messageId));
  return out;
}

/** A stored message as Gmail's users.messages resource in the given format. */
export function messageResource(m: StoredMessage, format: string, metadataHeaders: string[] = []): Record<string, unknown> {
  const base = { id: m.id, threadId: m.threadId, labelIds: m.labelIds, snippet: snippetOf(m.raw), internalDate: String(m.internalDate), sizeEstimate: m.raw.length };
  if (format === "minimal") return base;
  if (format === "raw") return { ...base, raw: bytesToBase64Url(Uint8Array.from(m.raw, (c) => c.charCodeAt(0))) };
  const parsed = parseMime(m.raw);
  if (format === "metadata") {
    const wanted = metadataHeaders.map((h) => h.toLowerCase());
    const headers = parsed.headers.filter(([n]) => wanted.length === 0 || wanted.includes(n.toLowerCase())).map(([name, value]) => ({ name, value: decodeWords(value) }));
    return { ...base, payload: { partId: "", mimeType: parsed.mimeType, filename: "", headers } };
  }
  return { ...base, payload: resourcePart(parsed, "", m.id) };
}

/** Gmail's search, in the small: from:, to:, subject:, is:unread, in:/label:, and free words. */
export function matches(m: StoredMessage, q: string | undefined): boolean {
  if (q === undefined || q.trim() === "") return true;
  const parsed = parseMime(m.raw);
  const get = (n: string) => decodeWords(header(parsed, n) ?? "").toLowerCase();
  const all = `${get("subject")} ${get("from")} ${get("to")} ${snippetOf(m.raw).toLowerCase()}`;
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t !== "")
    .every((term) => {
      const [key, value = ""] = term.includes(":") ? (term.split(/:(.*)/) as [string, string]) : ["", term];
      if (key === "from" || key === "to" || key === "subject") return get(key).includes(value);
      if (key === "is" && value === "unread") return m.labelIds.includes("UNREAD");
      if (key === "in" || key === "label") return m.labelIds.map((l) => l.toLowerCase()).includes(value);
      return all.includes(term);
    });
}

export class GmailStore {
  accounts = new Map<string, Account>();
  tokens = new Map<string, { email: string; expiresAt: number }>();
  requests: RecordedGmailRequest[] = [];
  fileRequests: { at: number; path: string }[] = [];
  outbox: OutboxEntry[] = [];
  faults: Fault[] = [];
  expiresIn = 3600;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.accounts.clear();
    this.tokens.clear();
    this.clearRecords();
    this.expiresIn = 3600;
    let clock = Date.UTC(2026, 2, 2);
    for (const email of new Set(Object.values(GRANTS).map((g) => g.email))) {
      const seed = seedMailbox(email);
      const account: Account = { email, messages: new Map(), drafts: new Map() };
      const tick = () => {
        clock += 3_600_000;
        return clock;
      };
      for (const m of seed.messages) account.messages.set(m.id, { ...m, internalDate: tick() });
      for (const d of seed.drafts) account.drafts.set(d.id, { ...d.message, internalDate: tick() });
      this.accounts.set(email, account);
    }
  }

  clearRecords(): void {
    this.requests.length = 0;
    this.fileRequests.length = 0;
    this.outbox.length = 0;
    this.faults.length = 0;
  }

  record(entry: RecordedGmailRequest): void {
    if (this.requests.length >= MAX_RECORDS) this.requests.shift();
    this.requests.push(entry);
  }

  mint(email: string): string {
    const token = `fake-access-${crypto.randomUUID()}`;
    this.tokens.set(token, { email, expiresAt: Date.now() + this.expiresIn * 1000 });
    return token;
  }

  accountFor(authorization: string | undefined): Account | undefined {
    const token = /^Bearer (\S+)$/.exec(authorization ?? "")?.[1];
    const grant = token === undefined ? undefined : this.tokens.get(token);
    if (grant === undefined || grant.expiresAt <= Date.now()) return undefined;
    return this.accounts.get(grant.email);
  }

  /** The fault for this request, if one is armed; it is used up when its count runs out. */
  fault(method: string, path: string): Fault | undefined {
    const i = this.faults.findIndex((f) => (f.method === undefined || f.method.toUpperCase() === method) && path.endsWith(f.path));
    if (i < 0) return undefined;
    const fault = this.faults[i] as Fault;
    if (fault.times !== undefined && --fault.times <= 0) this.faults.splice(i, 1);
    return fault;
  }

  storeDraft(account: Account, raw: string, threadId: string | undefined): { id: string; message: StoredMessage } {
    const message: StoredMessage = { id: hexId(), threadId: threadId ?? hexId(), labelIds: ["DRAFT"], raw, internalDate: Date.now() };
    const id = `r${hexId()}`;
    account.drafts.set(id, message);
    return { id, message };
  }

  /** Sends a message: stores it under SENT and adds it to the outbox. */
  async deliver(account: Account, raw: string, threadId: string | undefined, via: Via, keepId?: string): Promise<StoredMessage> {
    const known = threadId !== undefined && [...account.messages.values()].some((m) => m.threadId === threadId);
    const message: StoredMessage = { id: keepId ?? hexId(), threadId: known ? (threadId as string) : hexId(), labelIds: ["SENT"], raw, internalDate: Date.now() };
    account.messages.set(message.id, message);
    const parsed = parseMime(raw);
    const attachments: OutboxEntry["attachments"] = [];
    const files: MimePart[] = [];
    walk(parsed, (p) => {
      if (p.filename !== "") files.push(p);
    });
    for (const p of files) attachments.push({ filename: p.filename, mimeType: p.mimeType, size: p.body.length, sha256: await sha256Hex(p.body) });
    const get = (n: string) => header(parsed, n);
    this.outbox.push({
      at: Date.now(),
      id: message.id,
      threadId: message.threadId,
      account: account.email,
      via,
      from: addresses(get("from"))[0] ?? "",
      to: addresses(get("to")),
      cc: addresses(get("cc")),
      bcc: addresses(get("bcc")),
      subject: decodeWords(get("subject") ?? ""),
      inReplyTo: get("in-reply-to") ?? null,
      references: get("references") ?? null,
      text: textOf(parsed, "text/plain"),
      html: textOf(parsed, "text/html"),
      attachments,
      rawBytes: raw.length,
    });
    return message;
  }
}

export { base64ToBytes, bytesToBinary };
