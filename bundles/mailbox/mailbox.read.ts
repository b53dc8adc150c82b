// The read tools: list mailboxes, list and search messages a page at a time (newest first, never the mailbox
// whole), read one message's headers and text, and get its attachments. Every read opens the mailbox with EXAMINE
// and fetches with BODY.PEEK, so reading changes no flag (readOnlyHint is true, docs/rules.md R-MAIL-5). Bodies
// and attachments over their caps are refused whole (R-MAIL-9). get_attachments saves into the mount's R2 bucket
// when one is bound (then it writes, and says so in its annotations), and otherwise returns the files' bytes.
import type { CallToolResult } from "@modelcontextprotocol/server";
import PostalMime from "postal-mime";
import { slugNamespace } from "../../contract/slug";
import type { ImapClient } from "./mailbox.client";
import { MailError } from "./mailbox.errors";
import { attachmentBytes, checkAttachmentSize, checkMessageSize, checkTextLength, MAX_MESSAGE_BYTES, parseMessage } from "./mailbox.mime";
import { countOf, pageNewestFirst } from "./mailbox.uids";
import { atomOf, bytesOf, listOf, raw, str, type Token } from "./mailbox.wire";

/** The most messages one page lists. */
export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 20;

export const json = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value, null, 1) }] });

/** The mount's R2 bucket for attachments, when one is bound: `<SLUG>__ATTACHMENTS_BUCKET`. */
export function attachmentBucket(mount: string, env: Record<string, unknown>): R2Bucket | undefined {
  const bucket = env[`${slugNamespace(mount)}ATTACHMENTS_BUCKET`];
  return typeof bucket === "object" && bucket !== null && typeof (bucket as { put?: unknown }).put === "function" ? (bucket as R2Bucket) : undefined;
}

export async function listMailboxes(client: ImapClient): Promise<CallToolResult> {
  const boxes = await client.listMailboxes();
  return json({ mailboxes: boxes.map((b) => ({ name: b.name, flags: b.flags, ...(b.messages === undefined ? {} : { messages: b.messages, unseen: b.unseen }) })) });
}

const SUMMARY_ITEMS = "(UID FLAGS RFC822.SIZE INTERNALDATE BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE)])";

/** A page's messages, newest first: UID, flags, size and the decoded From, Subject and Date. */
async function summaries(fetched: Map<number, Map<string, Token>>, order: readonly number[]) {
  const out = [];
  for (const uid of order) {
    const attrs = fetched.get(uid);
    if (attrs === undefined) continue;
    const header = [...attrs.entries()].find(([k]) => k.startsWith("BODY[HEADER.FIELDS"))?.[1];
    const bytes = bytesOf(header);
    const parsed = bytes === undefined ? undefined : await PostalMime.parse(bytes).catch(() => undefined);
    const from = parsed?.from;
    out.push({
      uid,
      flags: (listOf(attrs.get("FLAGS")) ?? []).map((t) => atomOf(t) ?? ""),
      size: Number(atomOf(attrs.get("RFC822.SIZE"))),
      from: from === undefined ? null : from.group === undefined ? (from.name === "" ? from.address : `${from.name} <${from.address}>`) : from.name,
      subject: parsed?.subject ?? null,
      date: parsed?.date ?? null,
    });
  }
  return out;
}

export async function listMessages(client: ImapClient, mailbox: string, offset: number, limit: number): Promise<CallToolResult> {
  const box = await client.open(mailbox, true);
  // By sequence number: the newest `limit` after `offset`, without searching the mailbox.
  const to = box.exists - offset;
  const from = Math.max(1, to - limit + 1);
  const fetched = to >= 1 ? await client.fetchSequence(from, to, SUMMARY_ITEMS) : new Map();
  const order = [...fetched.keys()].sort((a, b) => b - a);
  const next = from > 1 ? offset + order.length : null;
  return json({ mailbox, uid_validity: box.uidValidity, total: box.exists, offset, messages: await summaries(fetched, order), next_offset: next });
}

export interface SearchArgs {
  mailbox: string;
  from?: string;
  to?: string;
  subject?: string;
  text?: string;
  since?: string;
  before?: string;
  seen?: boolean;
  flagged?: boolean;
  offset: number;
  limit: number;
}

const IMAP_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** YYYY-MM-DD as IMAP's date (1-Dec-2025). */
export function imapDate(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  const month = m === null ? undefined : IMAP_MONTHS[Number(m[2]) - 1];
  if (m === null || month === undefined || Number(m[3]) < 1 || Number(m[3]) > 31) throw new MailError(`"${iso.slice(0, 20)}" is not a date as YYYY-MM-DD`);
  return `${Number(m[3])}-${month}-${m[1]}`;
}

export async function searchMessages(client: ImapClient, a: SearchArgs): Promise<CallToolResult> {
  const box = await client.open(a.mailbox, true);
  const criteria = [
    ...(a.from === undefined ? [] : [raw("FROM"), str(a.from)]),
    ...(a.to === undefined ? [] : [raw("TO"), str(a.to)]),
    ...(a.subject === undefined ? [] : [raw("SUBJECT"), str(a.subject)]),
    ...(a.text === undefined ? [] : [raw("TEXT"), str(a.text)]),
    ...(a.since === undefined ? [] : [raw("SINCE"), raw(imapDate(a.since))]),
    ...(a.before === undefined ? [] : [raw("BEFORE"), raw(imapDate(a.before))]),
    ...(a.seen === undefined ? [] : [raw(a.seen ? "SEEN" : "UNSEEN")]),
    ...(a.flagged === undefined ? [] : [raw(a.flagged ? "FLAGGED" : "UNFLAGGED")]),
  ];
  const ranges = await client.search(criteria);
  const total = countOf(ranges);
  const page = pageNewestFirst(ranges, a.offset, a.limit);
  const fetched = await client.fetch(
    [...page].sort((x, y) => x - y),
    SUMMARY_ITEMS,
  );
  const next = a.offset + page.length < total ? a.offset + page.length : null;
  return json({ mailbox: a.mailbox, uid_validity: box.uidValidity, total, offset: a.offset, messages: await summaries(fetched, page), next_offset: next });
}

/** The message's bytes, its size checked first, so an over-cap message is never read. */
async function messageBytes(client: ImapClient, mailbox: string, uid: number): Promise<{ raw: Uint8Array; uidValidity: number }> {
  const box = await client.open(mailbox, true);
  const sized = await client.fetch([uid], "(UID RFC822.SIZE)");
  const size = Number(atomOf(sized.get(uid)?.get("RFC822.SIZE")));
  if (!Number.isFinite(size)) throw new MailError(`mailbox "${mailbox}" holds no message with UID ${uid} (UIDVALIDITY ${box.uidValidity})`);
  checkMessageSize(size);
  const body = await client.fetch([uid], "(UID BODY.PEEK[])", MAX_MESSAGE_BYTES + 64 * 1024);
  const raw = bytesOf(body.get(uid)?.get("BODY[]"));
  if (raw === undefined) throw new MailError(`the IMAP server sent no body for UID ${uid}`);
  checkMessageSize(raw.length);
  return { raw, uidValidity: box.uidValidity };
}

export async function getMessage(client: ImapClient, mailbox: string, uid: number): Promise<CallToolResult> {
  const { raw: bytes, uidValidity } = await messageBytes(client, mailbox, uid);
  const m = await parseMessage(bytes);
  checkTextLength(m.text.length);
  return json({
    mailbox,
    uid,
    uid_validity: uidValidity,
    from: m.from,
    to: m.to,
    cc: m.cc,
    subject: m.subject,
    date: m.date,
    message_id: m.messageId,
    text: m.text,
    text_from_html: m.fromHtml,
    attachments: m.attachments.map((a, index) => ({ index, filename: a.filename, mime_type: a.mimeType, size: attachmentBytes(a).length })),
  });
}

/** A mailbox name as one path segment: percent-encoded, "/" and "." included, so no name reads as two segments, "." or "..". */
const mailboxSegment = (mailbox: string) => encodeURIComponent(mailbox).replace(/\./g, "%2E");

/**
 * Where a saved attachment goes in the mount's bucket: the mount, the mailbox, its UIDVALIDITY, the UID and the
 * attachment's index and file name. The mailbox is part of it because a UIDVALIDITY is unique only within its mailbox
 * (RFC 3501 §2.3.1.1): two mailboxes may share one, and the same UIDs, and neither may overwrite the other's files.
 */
export function attachmentKey(mount: string, mailbox: string, uidValidity: number, uid: number, index: number, filename: string): string {
  return `${mount}/${mailboxSegment(mailbox)}/${uidValidity}/${uid}/${index}-${filename.replace(/[\u0000-\u001f/\\]/g, "_")}`;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export async function getAttachments(client: ImapClient, mount: string, bucket: R2Bucket | undefined, mailbox: string, uid: number, indexes: readonly number[] | undefined): Promise<CallToolResult> {
  const { raw: bytes, uidValidity } = await messageBytes(client, mailbox, uid);
  const all = (await parseMessage(bytes)).attachments;
  const wanted = indexes === undefined ? all.map((_, i) => i) : [...new Set(indexes)].sort((a, b) => a - b);
  const missing = wanted.filter((i) => i >= all.length);
  if (missing.length > 0) throw new MailError(`the message has ${all.length} attachment(s); there is no attachment ${missing.join(", ")}`);
  // Every size is checked before anything is returned or saved: all or none.
  const files = wanted.map((index) => {
    const a = all[index] as (typeof all)[number];
    const data = attachmentBytes(a);
    checkAttachmentSize(index, data.length);
    return { index, filename: a.filename ?? `attachment-${index}`, mimeType: a.mimeType, data };
  });
  if (bucket !== undefined) {
    const saved = [];
    for (const f of files) {
      const key = attachmentKey(mount, mailbox, uidValidity, uid, f.index, f.filename);
      await bucket.put(key, f.data, { httpMetadata: { contentType: f.mimeType } });
      saved.push({ index: f.index, filename: f.filename, mime_type: f.mimeType, size: f.data.length, key });
    }
    return json({ mailbox, uid, uid_validity: uidValidity, saved });
  }
  return {
    content: [
      {
        type: "text",
        text: JSON.stringify(
          { mailbox, uid, uid_validity: uidValidity, attachments: files.map((f) => ({ index: f.index, filename: f.filename, mime_type: f.mimeType, size: f.data.length })) },
          null,
          1,
        ),
      },
      ...files.map((f) => ({
        type: "resource" as const,
        resource: { uri: `imap-attachment://${encodeURIComponent(mount)}/${mailboxSegment(mailbox)}/${uidValidity}/${uid}/${f.index}`, mimeType: f.mimeType, blob: base64(f.data) },
      })),
    ],
  };
}
