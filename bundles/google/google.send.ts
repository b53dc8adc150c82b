// send_email and create_draft: what the caller's arguments resolve to (recipients, subject, the reply's
// thread, the attachments' bytes, or a saved draft read from Gmail), what the person is shown, what the
// approval is bound to, and the send itself through the mailbox's gated send.

import * as z from "zod";
import { DEFAULT_MAX_REQUEST_BYTES, MAX_REQUEST_BYTES_CEILING } from "../../contract/body";
import { hasLineBreakOrControl, replaceUnsafe } from "../../contract/text";
import { type Editable, type EditPlan, editForm, planEdits } from "../kit/edits";
import type { FingerprintInput } from "../kit/fingerprint";
import type { Guard } from "../kit/guard";
import type { PromptSpec, PromptValue } from "../kit/prompt";
import { currentScope } from "../kit/scope";
import { type Attachment, type AttachmentSpec, MAX_ATTACHMENTS, MAX_CONTENT_BASE64_CHARS, MAX_FILENAME_INPUT_CHARS, materialize, sanitizeFilename } from "./google.attachments";
import { GmailError } from "./google.client";
import { attachmentsOf, header } from "./google.format";
import { GMAIL_ID, Mailbox } from "./google.mailbox";
import { type Address, buildMime, ENCODED_WORD_PROBLEM, hasEncodedWord, InputError, MESSAGE_ID, parseAddress } from "./google.mime";

// Every limit below is one the largest prompt is sized to: a send at all of them at once is a prompt the approval
// service takes and shows whole (contract/elicitation.ts MAX_PROMPT_BYTES, docs/rules.md R-LIMIT-1). Raising one
// fails test/bundles/kit/prompt-limits.unit.test.ts until the cap is raised with it.
export const MAX_RECIPIENTS = 50;
/** One recipient entry, "Name <address>": a 64-character name beside an address of up to 254 (RFC 5321's path less its brackets). */
export const MAX_ADDRESS_ENTRY_CHARS = 320;
/** Gmail's own subject lines stay far below it; a longer one is no longer something a person reads whole on a card. */
export const MAX_SUBJECT_CHARS = 900;
const MAX_REFERENCES = 20;

const recipients = (what: string) =>
  z
    .array(z.string().max(MAX_ADDRESS_ENTRY_CHARS))
    .max(MAX_RECIPIENTS)
    .optional()
    .describe(
      `${what}: "name@example.com" or "Name <name@example.com>", one per entry. A name is at most 64 characters, with no @, < or > (or look-alikes) and no run of spaces; the address is shown first.`,
    );
const AttachmentSpecSchema = z.object({
  filename: z.string().max(MAX_FILENAME_INPUT_CHARS).optional().describe("The file's name as recipients see it. Required with content_base64; defaults to the URL's last path segment."),
  url: z.string().max(2048).optional().describe("An http(s) URL to fetch the file from; only URLs under the operator's GMAIL_ATTACHMENT_URL_PREFIXES are fetched."),
  content_base64: z
    .string()
    .max(MAX_CONTENT_BASE64_CHARS)
    .optional()
    .describe(
      `The file's bytes, base64-encoded (standard or URL-safe alphabet). The whole call must fit the gateway's request cap for this mailbox: ${DEFAULT_MAX_REQUEST_BYTES} bytes (about 0.75 MB of files in all) unless the operator raised it (maxRequestBytes, at most ${MAX_REQUEST_BYTES_CEILING}); send a larger file by url.`,
    ),
  mime_type: z.string().max(255).optional().describe("The file's MIME type, e.g. application/pdf; guessed from the name when absent."),
});

const composeShape = {
  to: recipients("Recipients"),
  cc: recipients("Cc recipients"),
  bcc: recipients("Bcc recipients (delivered, but not shown to the others)"),
  subject: z.string().max(MAX_SUBJECT_CHARS).optional().describe('Subject line. For a reply it defaults to "Re: " and the original subject.'),
  text: z.string().max(1_000_000).optional().describe("Plain-text body."),
  html: z.string().max(1_000_000).optional().describe("HTML body; sent beside the text body when both are given."),
  reply_to_message_id: z.string().regex(GMAIL_ID).optional().describe("Gmail id of the message this replies to: the reply joins its thread."),
  attachments: z.array(AttachmentSpecSchema).max(MAX_ATTACHMENTS).optional().describe("Files to attach, each given by url or by content_base64."),
};

export const CreateDraftSchema = z.object(composeShape);
export const SendEmailSchema = z.object({
  ...composeShape,
  from_draft_id: z.string().regex(GMAIL_ID).optional().describe("Send this saved draft as it stands; no other field may be given with it."),
});
export type ComposeArgs = z.infer<typeof CreateDraftSchema>;
export type SendEmailArgs = z.infer<typeof SendEmailSchema>;

interface Reply {
  messageId: string;
  threadId: string;
  inReplyTo?: string;
  references?: string;
}

export interface BodiesInForm {
  text: boolean;
  html: boolean;
}
const NO_FORM: BodiesInForm = { text: false, html: false };

export interface ComposeTarget {
  kind: "compose";
  mount: string;
  from: string;
  to: Address[];
  cc: Address[];
  bcc: Address[];
  subject: string;
  /** "original" when the subject is the default of a reply: `Re:` and the inbound mail's subject, which an outsider wrote. */
  subjectFrom: "caller" | "original";
  text?: string;
  html?: string;
  /** Which bodies the card's form offers to read and correct; one left out (too large for the form) is said so on the card. */
  inForm: BodiesInForm;
  bodySha256: string;
  reply?: Reply;
  attachments: Attachment[];
}

type DraftView = { readable: true; messageId: string; to: Address[]; cc: Address[]; bcc: Address[]; subject: string; attachments: string[] } | { readable: false; why: string };

export interface DraftTarget {
  kind: "draft";
  mount: string;
  from: string;
  draftId: string;
  draft: DraftView;
}

export type SendTarget = ComposeTarget | DraftTarget;

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Attachments are fetched once per call, keyed by what the arguments say of them: the bytes the person approved are
 * the bytes that go out, also when a person's edit rebuilt the arguments around the same attachments (R-EDIT-4).
 */
const downloads = new WeakMap<object, Map<string, Promise<Attachment[]>>>();

function attachmentsFor(args: ComposeArgs, mailboxEnv: Record<string, unknown>, signal: AbortSignal): Promise<Attachment[]> {
  const key = currentScope().call ?? args;
  let call = downloads.get(key);
  if (call === undefined) {
    call = new Map();
    downloads.set(key, call);
  }
  const spec = JSON.stringify(args.attachments ?? []);
  let pending = call.get(spec);
  if (pending === undefined) {
    pending = materialize((args.attachments ?? []) as AttachmentSpec[], mailboxEnv, signal);
    call.set(spec, pending);
  }
  return pending;
}

async function replyTo(mailbox: Mailbox, messageId: string): Promise<{ reply: Reply; subject: string }> {
  const original = await mailbox.getMessage(messageId, "metadata", ["Subject", "Message-ID", "References"]);
  const ownId = header(original.payload, "Message-ID")?.trim();
  const inReplyTo = ownId !== undefined && MESSAGE_ID.test(ownId) ? ownId : undefined;
  const prior = (header(original.payload, "References") ?? "").split(/\s+/).filter((r) => MESSAGE_ID.test(r));
  const chain = [...prior, ...(inReplyTo === undefined ? [] : [inReplyTo])].slice(-MAX_REFERENCES);
  // The original subject is upstream text: one line, no controls, before it can become a header. Cut first, then
  // cleaned: a cut inside a surrogate pair leaves half a character, which is cleaned like any other, so the card and
  // the header agree (a lone surrogate would be shown as itself and sent as U+FFFD).
  const originalSubject = replaceUnsafe((header(original.payload, "Subject") ?? "").slice(0, 800), " ").trim();
  return {
    reply: { messageId, threadId: original.threadId, ...(inReplyTo === undefined ? {} : { inReplyTo }), ...(chain.length === 0 ? {} : { references: chain.join(" ") }) },
    subject: /^re:/i.test(originalSubject) ? originalSubject : `Re: ${originalSubject}`,
  };
}

/**
 * The message the arguments describe, with every upstream read and download done; `inForm`, which bodies the card's
 * form offers (none for a call that asks nobody). Throws InputError or GmailError.
 */
export async function resolveCompose(args: ComposeArgs, mailbox: Mailbox, inForm: BodiesInForm = NO_FORM): Promise<ComposeTarget> {
  const scope = currentScope();
  const to = (args.to ?? []).map(parseAddress);
  const cc = (args.cc ?? []).map(parseAddress);
  const bcc = (args.bcc ?? []).map(parseAddress);
  if (to.length === 0) throw new InputError("at least one recipient in to is needed");
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) throw new InputError(`at most ${MAX_RECIPIENTS} recipients in all`);
  if (args.text === undefined && args.html === undefined && (args.attachments ?? []).length === 0) throw new InputError("the message needs a text or html body, or an attachment");
  if (args.subject !== undefined && hasLineBreakOrControl(args.subject)) throw new InputError("the subject contains a line break or control character");
  if (args.subject !== undefined && hasEncodedWord(args.subject)) throw new InputError(`the subject ${ENCODED_WORD_PROBLEM}; give it as plain text (non-ASCII is encoded by this server)`);
  // Attachments first: a bad one fails before Gmail is read at all.
  const attachments = await attachmentsFor(args, scope.env, scope.signal);
  const from = await mailbox.address();
  const replied = args.reply_to_message_id === undefined ? undefined : await replyTo(mailbox, args.reply_to_message_id);
  if (args.subject === undefined && replied !== undefined && hasEncodedWord(replied.subject)) {
    throw new InputError(`the original mail's subject, the reply's default, ${ENCODED_WORD_PROBLEM}; give a subject`);
  }
  return {
    kind: "compose",
    mount: scope.mount,
    from,
    to,
    cc,
    bcc,
    subject: args.subject ?? replied?.subject ?? "",
    subjectFrom: args.subject === undefined && replied !== undefined ? "original" : "caller",
    ...(args.text === undefined ? {} : { text: args.text }),
    ...(args.html === undefined ? {} : { html: args.html }),
    inForm,
    bodySha256: await sha256(JSON.stringify([args.text ?? null, args.html ?? null])),
    ...(replied === undefined ? {} : { reply: replied.reply }),
    attachments,
  };
}

/** Splits an address header into its entries at commas outside quotes and angle brackets. */
export function splitAddresses(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  let current = "";
  let quoted = false;
  let angled = false;
  for (const char of value) {
    if (char === '"') quoted = !quoted;
    else if (char === "<" && !quoted) angled = true;
    else if (char === ">" && !quoted) angled = false;
    if (char === "," && !quoted && !angled) {
      out.push(current.trim());
      current = "";
    } else current += char;
  }
  out.push(current.trim());
  return out.filter((a) => a !== "").slice(0, 200);
}

/** A draft's recipients under the same rules as a caller's: one the prompt could not show truthfully fails the send (docs/rules.md R-PROMPT-10). */
function draftRecipients(value: string | undefined): Address[] {
  return splitAddresses(value).map((entry) => {
    try {
      return parseAddress(entry);
    } catch (error) {
      if (error instanceof InputError) throw new InputError(`the draft cannot be sent as it stands: ${error.message}`);
      throw error;
    }
  });
}

/**
 * A draft goes out under the limits a composed send has (recipients, subject, attachments): whatever it holds,
 * its prompt is one the approval service takes and shows whole (docs/rules.md R-LIMIT-1).
 */
function checkDraftLimits(draft: Extract<DraftView, { readable: true }>): void {
  const cannot = (why: string) => new InputError(`the draft cannot be sent as it stands: ${why}`);
  const count = draft.to.length + draft.cc.length + draft.bcc.length;
  if (count > MAX_RECIPIENTS) throw cannot(`it has ${count} recipients, more than the ${MAX_RECIPIENTS} send_email sends`);
  if (draft.subject.length > MAX_SUBJECT_CHARS) throw cannot(`its subject is longer than ${MAX_SUBJECT_CHARS} characters`);
  if (draft.attachments.length > MAX_ATTACHMENTS) throw cannot(`it has ${draft.attachments.length} attachments, more than the ${MAX_ATTACHMENTS} send_email sends`);
  // A draft someone else made is held to what a composed send is: no text the card shows one way and recipients read another.
  if (hasEncodedWord(draft.subject)) throw cannot(`its subject ${ENCODED_WORD_PROBLEM}`);
  const encoded = draft.attachments.findIndex(hasEncodedWord);
  if (encoded !== -1) throw cannot(`attachment ${encoded + 1}'s file name ${ENCODED_WORD_PROBLEM}`);
}

async function resolveDraft(draftId: string, mailbox: Mailbox): Promise<DraftTarget> {
  const scope = currentScope();
  const from = await mailbox.address();
  let read: Awaited<ReturnType<Mailbox["getDraft"]>>;
  try {
    read = await mailbox.getDraft(draftId, "full");
  } catch (error) {
    if (!(error instanceof GmailError)) throw error;
    return { kind: "draft", mount: scope.mount, from, draftId, draft: { readable: false, why: error.message } };
  }
  const payload = read.message.payload;
  const draft: DraftView = {
    readable: true,
    messageId: read.message.id,
    to: draftRecipients(header(payload, "To")),
    cc: draftRecipients(header(payload, "Cc")),
    bcc: draftRecipients(header(payload, "Bcc")),
    subject: header(payload, "Subject") ?? "",
    attachments: attachmentsOf(payload).map((a) => sanitizeFilename(a.filename)),
  };
  checkDraftLimits(draft);
  return { kind: "draft", mount: scope.mount, from, draftId, draft };
}

const DRAFT_ONLY_FIELDS = ["to", "cc", "bcc", "subject", "text", "html", "reply_to_message_id", "attachments"] as const;

let sendPlan: EditPlan | undefined;
/**
 * Which bodies send_email's card offers in its form: the kit's own editForm over the tool's own plan, as the kit
 * builds the form for this call, which leaves off a field too large for the form's cap (bundles/kit/edits.ts).
 */
export function bodiesInForm(args: SendEmailArgs): BodiesInForm {
  sendPlan ??= planEdits("send_email", SendEmailSchema, COMPOSE_EDITABLE);
  const offered = new Set(editForm(sendPlan, args)?.offered.map((o) => o.field.name));
  return { text: offered.has("text"), html: offered.has("html") };
}

export async function resolveSend(args: SendEmailArgs): Promise<SendTarget> {
  return prepared(async () => {
    const mailbox = Mailbox.forCurrentCall();
    if (args.from_draft_id === undefined) return resolveCompose(args, mailbox, bodiesInForm(args));
    // A draft send takes no fields of its own: the draft's recipients and files are the ones shown and sent.
    const extra = DRAFT_ONLY_FIELDS.filter((f) => args[f] !== undefined);
    if (extra.length > 0) throw new InputError(`from_draft_id sends the draft as it stands, so ${extra.join(", ")} cannot be given with it`);
    return resolveDraft(args.from_draft_id, mailbox);
  });
}

/** Errors before the send become the tool's answer; their messages name a reason, never an upstream body. */
export async function prepared<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InputError || error instanceof GmailError) throw new Error(`Not done: ${error.message}. Nothing was sent.`);
    throw new Error(`Not done: the message could not be prepared (${error instanceof Error ? error.name : "error"}). Nothing was sent.`);
  }
}

const formatted = (a: Address) => (a.name === undefined ? a.email : `${a.name} <${a.email}>`);
/** As a person is shown it: the address whole and first, then the name (docs/rules.md R-PROMPT-10). */
export const shownAddress = (a: Address) => (a.name === undefined ? a.email : `${a.email} (name: ${a.name})`);

export function sendFingerprint(target: SendTarget): FingerprintInput {
  if (target.kind === "draft") {
    const d = target.draft;
    return {
      operation: "send_draft",
      target: d.readable
        ? {
            mount: target.mount,
            from: target.from,
            draft: target.draftId,
            message: d.messageId,
            to: { set: d.to.map(formatted) },
            cc: { set: d.cc.map(formatted) },
            bcc: { set: d.bcc.map(formatted) },
            subject: d.subject,
            attachments: { tuple: d.attachments },
          }
        : { mount: target.mount, from: target.from, draft: target.draftId, unreadable: true },
    };
  }
  return {
    operation: "send_email",
    target: {
      mount: target.mount,
      from: target.from,
      to: { set: target.to.map(formatted) },
      cc: { set: target.cc.map(formatted) },
      bcc: { set: target.bcc.map(formatted) },
      subject: target.subject,
      body: target.bodySha256,
      thread: target.reply?.threadId ?? null,
      inReplyTo: target.reply?.inReplyTo ?? null,
      attachments: { tuple: target.attachments.map((a) => `${a.filename}\u0000${a.mimeType}\u0000${a.sha256}`) },
    },
  };
}

export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const lines = (label: string, list: readonly string[]): PromptValue[] => list.map((value) => ({ label, value }));

/**
 * The subject, shown verbatim like every value that goes out. An empty one is said by its label, never by a stand-in
 * text such as "(no subject)", which a real subject could equal (docs/rules.md R-PROMPT-13).
 */
const subjectLine = (label: string, subject: string): PromptValue => (subject === "" ? { label: `${label} (none)`, value: "" } : { label, value: subject });

/**
 * A body's presence and size, on a line of its own: a body the form could not offer is never invisible, and the card
 * says it is not in the form (docs/rules.md R-PROMPT-2).
 */
const bodyLine = (label: string, body: string | undefined, inForm: boolean): PromptValue[] =>
  body === undefined ? [] : [{ label, value: `${humanSize(new TextEncoder().encode(body).byteLength)}${inForm ? "" : ", not shown in the form"}` }];

export function sendPrompt(target: SendTarget): PromptSpec {
  if (target.kind === "draft") {
    const d = target.draft;
    if (!d.readable) {
      return {
        heading: `This will send a saved draft from ${target.from}.`,
        consequence: `The draft could not be read (${d.why}), so its recipients, subject and attachments cannot be shown.\nDecline unless you already know exactly what this draft holds. A sent email cannot be recalled.`,
        values: [{ label: "Draft", value: target.draftId }],
      };
    }
    return {
      heading: `This will send a saved draft from ${target.from} to ${d.to.length + d.cc.length + d.bcc.length} recipient(s).`,
      consequence: "A sent email cannot be recalled. The recipients, subject and attachment names below were read from the draft in Gmail just now; the body is not shown.",
      values: [
        { label: "Draft", value: target.draftId },
        ...(d.to.length === 0 ? [{ label: "To", value: "(none)" }] : lines("To", d.to.map(shownAddress))),
        ...lines("Cc", d.cc.map(shownAddress)),
        ...lines("Bcc", d.bcc.map(shownAddress)),
        subjectLine("Subject", d.subject),
        ...lines("Attachment", d.attachments),
      ],
    };
  }
  const count = target.to.length + target.cc.length + target.bcc.length;
  return {
    heading: `This will send an email from ${target.from} to ${count} recipient(s)${target.attachments.length > 0 ? ` with ${target.attachments.length} attachment(s)` : ""}.`,
    consequence:
      "A sent email cannot be recalled. The recipients, subject and attachments below are exactly what will go out; the body is shown in the form with this card, to read and correct before accepting (a body too long for the form is not shown there, and its line below says so).",
    values: [
      ...lines("To", target.to.map(shownAddress)),
      ...lines("Cc", target.cc.map(shownAddress)),
      ...lines("Bcc", target.bcc.map(shownAddress)),
      // A reply's default subject was written by whoever sent the original: the label says so (docs/rules.md R-PROMPT-11).
      subjectLine(target.subjectFrom === "original" ? "Subject (from the original mail)" : "Subject", target.subject),
      ...(target.reply === undefined ? [] : [{ label: "In reply to message", value: target.reply.messageId }]),
      ...bodyLine("Text body", target.text, target.inForm.text),
      ...bodyLine("HTML body", target.html, target.inForm.html),
      // The type binds the approval and decides how a recipient's client opens the file: shown beside the name.
      ...target.attachments.map((a) => ({ label: "Attachment", value: `${a.filename} (${a.mimeType}, ${humanSize(a.bytes.byteLength)})` })),
    ],
  };
}

export function composeMime(target: ComposeTarget): Uint8Array {
  return buildMime({
    from: target.from,
    to: target.to,
    cc: target.cc,
    bcc: target.bcc,
    subject: target.subject,
    ...(target.text === undefined ? {} : { text: target.text }),
    ...(target.html === undefined ? {} : { html: target.html }),
    ...(target.reply?.inReplyTo === undefined ? {} : { inReplyTo: target.reply.inReplyTo }),
    ...(target.reply?.references === undefined ? {} : { references: target.reply.references }),
    attachments: target.attachments,
  });
}

/**
 * What a person may correct on a send's card (docs/rules.md R-EDIT-1): recipients may only be unticked, never added
 * or changed; the subject and the bodies may be rewritten within the tool's schema. The edited message is checked as
 * a model's is (display names, caps, no line break in the subject) and is what goes out.
 */
export const COMPOSE_EDITABLE: Editable = {
  to: "narrow",
  cc: "narrow",
  bcc: "narrow",
  subject: "free",
  text: { mode: "free", label: "Body (plain text)" },
  html: { mode: "free", label: "Body (HTML)" },
};

const text = (message: string, isError = false) => ({ content: [{ type: "text" as const, text: message }], ...(isError ? { isError: true } : {}) });

export const sendEmailGuard: Omit<Guard<SendEmailArgs, SendTarget>, "rule"> = {
  editable: COMPOSE_EDITABLE,
  resolve: resolveSend,
  fingerprint: sendFingerprint,
  prompt: sendPrompt,
  act: async (target, write) => {
    const mailbox = Mailbox.forCurrentCall(write);
    try {
      const sent =
        target.kind === "draft" ? await mailbox.sendDraft(target.draftId, sendFingerprint(target)) : await mailbox.sendMessage(composeMime(target), target.reply?.threadId, sendFingerprint(target));
      return text(`Sent from ${target.from}: Gmail message ${sent.id} in thread ${sent.threadId}.`);
    } catch (error) {
      if (error instanceof GmailError) return text(`Not done: ${error.message}.`, true);
      throw error;
    }
  },
};

const draftFingerprint = (target: ComposeTarget): FingerprintInput => ({ ...sendFingerprint(target), operation: "create_draft" });

export const createDraftGuard: Omit<Guard<ComposeArgs, ComposeTarget>, "rule"> = {
  resolve: (args) => prepared(() => resolveCompose(args, Mailbox.forCurrentCall())),
  fingerprint: draftFingerprint,
  prompt: sendPrompt,
  act: async (target, write) => {
    try {
      const draft = await Mailbox.forCurrentCall(write).createDraft(composeMime(target), target.reply?.threadId, draftFingerprint(target));
      return text(`Draft ${draft.id} created in ${target.from} (message ${draft.messageId}). Nothing was sent; send_email with from_draft_id sends it.`);
    } catch (error) {
      if (error instanceof GmailError) return text(`Not done: ${error.message}.`, true);
      throw error;
    }
  },
};
