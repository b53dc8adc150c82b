// The largest send_email the tool accepts, and the largest draft it sends as it stands: every limit at its
// maximum, each character the most UTF-8 bytes that limit lets it cost. The limits are found by probing the
// tool's own schema and parsers, not copied, so a limit raised in code grows these too, and the test that holds
// their prompts to the approval service's cap (test/bundles/kit/prompt-limits.unit.test.ts) fails until the cap
// grows with it (docs/rules.md R-LIMIT-1).
import { MAX_ATTACHMENT_BYTES, sanitizeFilename } from "../../../bundles/google/google.attachments";
import { GMAIL_ID } from "../../../bundles/google/google.mailbox";
import { type Address, MIME_TYPE, parseAddress } from "../../../bundles/google/google.mime";
import { type ComposeTarget, type DraftTarget, humanSize, MAX_RECIPIENTS, SendEmailSchema } from "../../../bundles/google/google.send";
import { MAX_SLUG_CHARS } from "../../../contract/slug";

/** The largest n in [1, hi] for which `ok` holds; `ok` must hold at 1 and fail at hi (a limit below hi exists). */
export function largest(ok: (n: number) => boolean, hi = 100_000): number {
  if (!ok(1)) throw new Error("the probe fails at 1");
  if (ok(hi)) throw new Error(`the probe still holds at ${hi}: no limit found`);
  let lo = 1;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

const accepts = (args: Record<string, unknown>) => SendEmailSchema.safeParse(args).success;
const parses = (entry: string) => {
  try {
    parseAddress(entry);
    return true;
  } catch {
    return false;
  }
};

/** A character of three UTF-8 bytes in one UTF-16 unit (CJK), the most bytes per unit; varied by `i`. */
const threeByte = (i: number) => String.fromCodePoint(0x4e00 + (i % 20_000));
/** A character of four UTF-8 bytes in two UTF-16 units (an emoji), the most bytes per character; varied by `i`. */
const fourByte = (i: number) => String.fromCodePoint(0x1f600 + (i % 64));

/** A domain of exactly `length` characters, in labels of at most 63 (at least two labels). */
export function domainOf(length: number, fill = "b"): string {
  if (length <= 63) return `${fill.repeat(length - 3)}.cc`;
  const labels: string[] = [];
  let left = length;
  while (left > 63) {
    labels.push(fill.repeat(63));
    left -= 64;
  }
  labels.push("c".repeat(left));
  return labels.join(".");
}

/** The tool's limits, each found by probing the schema or the parser that enforces it. */
export function sendLimits() {
  const to = ["a@b.cc"];
  const url = "https://files.example.com/a.bin";
  return {
    /** UTF-16 units of one recipient entry ("Name <address>"). */
    entryUnits: largest((n) => accepts({ to: ["x".repeat(n)] })),
    recipientsPerField: largest((n) => accepts({ to: Array.from({ length: n }, () => "a@b.cc") })),
    /** Characters (code points) of a display name. */
    nameChars: largest((n) => parses(`${threeByte(0).repeat(n)} <a@b.cc>`)),
    localChars: largest((n) => parses(`${"a".repeat(n)}@example.com`)),
    domainChars: largest((n) => n < 4 || parses(`a@${domainOf(n)}`)),
    subjectUnits: largest((n) => accepts({ to, subject: threeByte(0).repeat(n) })),
    replyIdChars: largest((n) => accepts({ to, reply_to_message_id: "a".repeat(n) })),
    attachments: largest((n) => accepts({ to, attachments: Array.from({ length: n }, () => ({ url })) })),
    filenameUnits: largest((n) => accepts({ to, attachments: [{ url, filename: "a".repeat(n) }] })),
    /** Characters of a file name as shown and sent (longer ones are cut). */
    filenameChars: largest((n) => sanitizeFilename("a".repeat(n)) === "a".repeat(n), 10_000),
    draftIdChars: largest((n) => GMAIL_ID.test("a".repeat(n)), 10_000),
  };
}

export type SendLimits = ReturnType<typeof sendLimits>;

/** The longest address the parser accepts with `units` UTF-16 units to spare, unique by `i`. */
function longestAddress(limits: SendLimits, units: number, i: number): string {
  const length = Math.min(units, limits.localChars + 1 + limits.domainChars);
  const local = Math.min(limits.localChars, length - 1 - 4);
  const tag = `r${String(i).padStart(2, "0")}`;
  return `${tag}${"x".repeat(local - tag.length)}@${domainOf(length - 1 - local)}`;
}

/** A display name at its limit in three-byte characters (one unit each), unique by `i`. */
function longestName(limits: SendLimits, i: number): string {
  return Array.from({ length: limits.nameChars }, (_, k) => threeByte(i * 97 + k)).join("");
}

/**
 * A file name at its limit in shown characters, as many of them four-byte as the unit limit allows (four-byte
 * characters cost two units each), the rest three-byte; unique by `i`.
 */
export function longestFilename(limits: SendLimits, i: number): string {
  const four = Math.max(0, Math.min(limits.filenameChars, limits.filenameUnits - limits.filenameChars));
  const three = limits.filenameChars - four;
  return [...Array.from({ length: four }, (_, k) => fourByte(i + k)), ...Array.from({ length: three }, (_, k) => threeByte(i * 131 + k))].join("");
}

/** The attachment size whose shown text ("1024.0 KB") is longest while all of them together stay within the cap. */
export function longestSizeText(count: number): number {
  const candidates = [1023, 1024 * 1024 - 1, Math.floor(MAX_ATTACHMENT_BYTES / Math.max(1, count))];
  return candidates.filter((size) => size * count <= MAX_ATTACHMENT_BYTES).reduce((a, b) => (humanSize(b).length > humanSize(a).length ? b : a));
}

export interface LargestSend {
  /** Recipient entries: the first goes in `to`, the rest in `bcc` (the longest label). */
  entries: string[];
  subject: string;
  filenames: string[];
  attachmentBytes: number;
}

/**
 * The arguments of the largest legal send, but for where its files come from and what it replies to (a caller
 * names those; see largestComposeTarget and the browser test). `subjectTag` makes the subject unique: its digits
 * are written as three-byte characters so the subject stays at its limit in bytes.
 */
export function largestSend(limits: SendLimits = sendLimits(), subjectTag = ""): LargestSend {
  const count = Math.min(MAX_RECIPIENTS, limits.recipientsPerField * 3);
  const entries = Array.from({ length: count }, (_, i) => {
    const name = longestName(limits, i);
    // "Name<address>": no space between them leaves the address one more unit.
    return `${name}<${longestAddress(limits, limits.entryUnits - name.length - 2, i)}>`;
  });
  const tag = [...subjectTag].map((d) => threeByte(10_000 + Number.parseInt(d, 36))).join("");
  const subject = `${tag}${Array.from({ length: limits.subjectUnits - tag.length }, (_, k) => threeByte(k + 7)).join("")}`;
  const filenames = Array.from({ length: limits.attachments }, (_, i) => longestFilename(limits, i));
  return { entries, subject, filenames, attachmentBytes: longestSizeText(limits.attachments) };
}

/** The send's arguments as a caller passes them, each file at `urlOf(i)`, replying to `replyTo` when given. */
export function largestSendArgs(send: LargestSend, urlOf: (i: number) => string, replyTo?: string): Record<string, unknown> {
  const [first, ...rest] = send.entries;
  return {
    to: [first],
    bcc: rest,
    subject: send.subject,
    text: "The largest legal send.",
    ...(replyTo === undefined ? {} : { reply_to_message_id: replyTo }),
    attachments: send.filenames.map((filename, i) => ({ url: urlOf(i), filename })),
  };
}

/** The slug and mailbox address at their longest: the prompt's first line. */
export function longestSlugAndFrom(limits: SendLimits): { slug: string; from: string } {
  return { slug: "s".repeat(MAX_SLUG_CHARS), from: longestAddress(limits, Number.POSITIVE_INFINITY, 99) };
}

/** The longest MIME type MIME_TYPE accepts, shown on each attachment's line: its type and its subtype each at their limit. */
export function longestMimeType(): string {
  const type = largest((n) => MIME_TYPE.test(`${"t".repeat(n)}/s`), 1000);
  const subtype = largest((n) => MIME_TYPE.test(`t/${"s".repeat(n)}`), 1000);
  return `${"t".repeat(type)}/${"s".repeat(subtype)}`;
}

/** A body whose size as shown ("1023.6 KB") is as long as humanSize writes one: three-byte characters, within the schema's length. */
const longestSizedBody = () => threeByte(0).repeat(349_400);

/**
 * What the largest legal send resolves to, as sendPrompt reads it: the longest slug and mailbox, a reply at the longest id,
 * both bodies too large for the form (each then said so on its line), every attachment of the longest MIME type.
 */
export function largestComposeTarget(limits: SendLimits = sendLimits()): ComposeTarget {
  const send = largestSend(limits);
  const { slug, from } = longestSlugAndFrom(limits);
  const mimeType = longestMimeType();
  const [first, ...rest] = send.entries.map(parseAddress);
  return {
    kind: "compose",
    mount: slug,
    from,
    to: [first as Address],
    cc: [],
    bcc: rest,
    subject: send.subject,
    subjectFrom: "caller",
    text: longestSizedBody(),
    html: longestSizedBody(),
    inForm: { text: false, html: false },
    bodySha256: "0".repeat(64),
    reply: { messageId: "m".repeat(limits.replyIdChars), threadId: "t" },
    attachments: send.filenames.map((name) => ({ filename: sanitizeFilename(name), mimeType, bytes: new Uint8Array(send.attachmentBytes), sha256: "0".repeat(64) })),
  };
}

/**
 * The largest draft send_email sends as it stands: a draft is held to the send's counts and subject, but its
 * entries were written in Gmail, not to the 320-unit entry, so each name is at its limit in four-byte characters
 * and each address at the parser's longest.
 */
export function largestDraftTarget(limits: SendLimits = sendLimits()): DraftTarget {
  const count = Math.min(MAX_RECIPIENTS, limits.recipientsPerField * 3);
  const recipients = Array.from({ length: count }, (_, i) => {
    const name = Array.from({ length: limits.nameChars }, (_, k) => fourByte(i + k)).join("");
    return parseAddress(`${name} <${longestAddress(limits, Number.POSITIVE_INFINITY, i)}>`);
  });
  const { slug, from } = longestSlugAndFrom(limits);
  const [first, ...rest] = recipients;
  const four = Array.from({ length: limits.filenameChars }, (_, k) => fourByte(k)).join("");
  return {
    kind: "draft",
    mount: slug,
    from,
    draftId: "d".repeat(limits.draftIdChars),
    draft: {
      readable: true,
      messageId: "m".repeat(limits.draftIdChars),
      to: [first as Address],
      cc: [],
      bcc: rest,
      subject: Array.from({ length: limits.subjectUnits }, (_, k) => threeByte(k)).join(""),
      attachments: Array.from({ length: limits.attachments }, () => sanitizeFilename(four)),
    },
  };
}
