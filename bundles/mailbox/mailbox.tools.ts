// The mailbox tools of one mount, over its own IMAP account. What asks (docs/rules.md R-MAIL-2):
// delete_messages always; move_messages always, for move and for copy, under different keys; manage_mailbox's
// delete always, its rename on the two-call token only (a rename is reversible), its create never;
// set_message_flags and save_draft never, and \Deleted is refused outright (docs/rules.md R-MAIL-2, R-MAIL-3).
// Approvals bind the exact UID set, the UIDVALIDITY and both mailboxes (mailbox.guard.ts); writes leave only
// through the kit's send gate. No tool takes a user, password or host: the mount's variables hold them (R-TOOL-2).
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { hasUnsafe } from "../../contract/text";
import { audit } from "../kit/audit";
import { callRefOf } from "../kit/confirm";
import { fingerprint as digest, type FingerprintInput } from "../kit/fingerprint";
import { type GatedWrite, GateRefusal, gatedWrite, type WriteWords } from "../kit/gate";
import { always, checkFallback, type DeclaredAnnotations, declareGuard, editPlanFor, type Guard, type GuardKind, never, refusal, runGuarded } from "../kit/guard";
import { buildPrompt, PromptRefusal } from "../kit/prompt";
import { currentScope } from "../kit/scope";
import { actedOnTokenLine, tokenStep, twoCallTokenShape } from "../kit/token";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { type ImapClient, MailError, MailPartly } from "./mailbox.client";
import {
  deleteFingerprint,
  deleteMailboxFingerprint,
  deleteMailboxPrompt,
  deletePrompt,
  describeMailbox,
  describeMessages,
  describeTransfer,
  MAX_UIDS,
  type MailboxTarget,
  type MessagesTarget,
  type RenameTarget,
  renameFingerprint,
  renamePrompt,
  type TransferTarget,
  transferFingerprint,
  transferPrompt,
} from "./mailbox.guard";
import { buildDraft } from "./mailbox.mime";
import { attachmentBucket, DEFAULT_PAGE, getAttachments, getMessage, listMailboxes, listMessages, MAX_PAGE, searchMessages } from "./mailbox.read";
import { MailSession } from "./mailbox.session";
import { canonicalUids, MAX_UID } from "./mailbox.uids";

/** The mailbox bundle's registry of confirmed tools: every tool that asks a person (or takes the token), and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["delete_messages", "move_messages", "manage_mailbox"]);

const MAIL_WORDS: WriteWords = { act: "change the mailbox", done: "changed", target: "set of messages" };

// Truthful hints (docs/rules.md R-MAIL-5). Reads peek and change no flag. A delete cannot be undone, and again
// deletes nothing more; a move takes messages out of a folder and a copy adds more each time; a mailbox delete
// loses its messages; flags come back off and setting them twice ends where once does; a draft is a new message
// each time. Every tool talks to an IMAP server outside strad.
const READS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const SAVES_ATTACHMENTS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const DELETES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };
const MOVES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const MANAGES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const FLAGS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const DRAFTS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** A mailbox name as the caller gives it: text, no control character, at most 200 characters. */
const mailboxName = (what: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .refine((n) => !/[\u0000-\u001f\u007f]/.test(n), "a mailbox name holds no control character")
    .describe(what);
const uid = z.number().int().min(1).max(MAX_UID);
const uids = z.array(uid).min(1).max(MAX_UIDS).describe(`The messages' UIDs in the mailbox (at most ${MAX_UIDS}), from list_messages or search_messages.`);
const offset = z.number().int().min(0).max(10_000_000).optional().describe("How many messages (newest first) to skip: the previous page's next_offset.");
const limit = z.number().int().min(1).max(MAX_PAGE).optional().describe(`How many messages to return (default ${DEFAULT_PAGE}, at most ${MAX_PAGE}).`);

/** System flags a caller may set or clear. \Deleted is not one of them (R-MAIL-3); \Recent is the server's. */
const SYSTEM_FLAGS = new Set(["\\Seen", "\\Answered", "\\Flagged", "\\Draft"]);
const KEYWORD = /^[A-Za-z0-9$_.-]{1,64}$/;
const flag = z.string().min(1).max(64).describe("A system flag (\\Seen, \\Answered, \\Flagged, \\Draft) or a keyword ($Important, project-x). \\Deleted is refused.");

function notDone(reason: string): CallToolResult {
  return { content: [{ type: "text", text: `Not done: ${reason}. Nothing was changed.` }], isError: true };
}

/** The answer to a failure: the bundle's own words, or the kind of an error it did not expect (never upstream text). */
function failed(error: unknown): CallToolResult {
  if (error instanceof GateRefusal) return { content: [{ type: "text", text: `Not done: ${error.message}.` }], isError: true };
  // A write that went out and did not complete says what may have changed, never that nothing did.
  if (error instanceof MailPartly) return { content: [{ type: "text", text: `Not done: ${error.message}. ${error.state}` }], isError: true };
  if (error instanceof MailError) return notDone(error.message);
  if (error instanceof RangeError) return notDone(error.message);
  return notDone(`the call failed (${error instanceof Error ? error.name : "error"})`);
}

/**
 * One IMAP write through the send gate: the command runs inside the door the gate opens, once every check has
 * passed (a live call, a yes or the token for this exact target, the call's single claim), and at most once.
 */
async function through<T>(write: GatedWrite, mount: string, op: string, options: { binds: FingerprintInput; needsApproval: boolean }, run: () => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  let failure: unknown;
  const door = async (): Promise<Response> => {
    try {
      result = { value: await run() };
      return new Response(null, { status: 204 });
    } catch (error) {
      // The client says what a write that went out may have changed; an error it did not expect may have come after one.
      failure =
        error instanceof MailError
          ? error
          : new MailPartly(`the IMAP ${op} did not complete (${error instanceof Error ? error.name : "error"})`, "The mailbox may have been changed: the write was under way.");
      return new Response(null, { status: 502 });
    }
  };
  try {
    await write(`imap://${mount}/${op}`, { method: "POST" }, { ...options, words: MAIL_WORDS, fetch: door });
  } catch (error) {
    // Only what the door did counts once it opened: a failure after it must not hide a write, or invent one.
    if (result === undefined && failure === undefined) throw error;
  }
  if (result === undefined) throw failure instanceof Error ? failure : new MailError(`the IMAP ${op} did not complete`);
  return result.value;
}

/** The call's IMAP session, from the mount and env of the call's scope, closed at the call's end; a failure is answered in the bundle's words. */
async function inSession(work: (session: MailSession) => Promise<CallToolResult>): Promise<CallToolResult> {
  const scope = currentScope();
  const session = new MailSession(scope.mount, scope.env, scope.signal);
  try {
    return await work(session);
  } catch (error) {
    return failed(error);
  } finally {
    await session.close();
  }
}

interface MailToolConfig<S extends z.ZodObject> {
  description: string;
  inputSchema: S;
  annotations: DeclaredAnnotations;
}

/** What a guard declares of how it asks, which its tool's schema must fit. */
type Declared = Pick<Guard<never, never>, "rule" | "fallback" | "editable">;

/**
 * A tool that writes, or asks: its guard is built per call around the call's IMAP session, and it is declared (under
 * the registry's checks) on each server it is registered on. `probe` builds the guard as a call does, to check its
 * declaration against the tool's schema when the isolate's first server holding the tool is built, never on a call
 * (R-EDIT-1): not when the module loads, as a probe's session holds an AbortSignal, which workerd lets no module make
 * in its global scope.
 */
function mailTool<S extends z.ZodObject>(
  name: string,
  config: MailToolConfig<S>,
  kind: GuardKind,
  run: (session: MailSession, args: z.infer<S>) => Promise<CallToolResult>,
  probe?: (session: MailSession) => Declared,
): ToolEntry {
  let checked = probe === undefined;
  const handler = (args: z.infer<S>) => inSession((session) => run(session, args));
  return {
    name,
    register: (server) => {
      declareGuard(server, CONFIRMED_TOOLS, name, kind);
      if (!checked && probe !== undefined) {
        // The probe's session is only read for its declarations: it never resolves or acts.
        const guard = probe(new MailSession("", {}, new AbortController().signal));
        checkFallback(name, config, guard);
        editPlanFor(name, config, guard);
        checked = true;
      }
      server.registerTool(name, config, handler as never);
    },
  };
}

/** A read: it asks nobody, sends no notification and needs nothing of the SDK's request, so the kit's lane may serve it. */
function readTool<S extends z.ZodObject>(name: string, config: MailToolConfig<S>, run: (session: MailSession, args: z.infer<S>) => Promise<CallToolResult>): ToolEntry {
  return plainTool(name, config, (args) => inSession((session) => run(session, args as z.infer<S>)));
}

/** A mailbox that can hold messages: not a \Noselect or \NonExistent name in the hierarchy. */
const selectable = (flags: readonly string[]) => !flags.some((f) => ["\\noselect", "\\nonexistent"].includes(f.toLowerCase()));

/**
 * The folders a person may pick as a move's destination (R-MAIL-12): those that can hold messages, never the source,
 * and only names a person reads unambiguously: a name the server lists with a control, bidi, invisible or
 * space-padding character (a shared folder "\u202Eevihcra" that shows as "archive") is left out, not cleaned.
 */
const offered = (boxes: readonly { name: string; flags: readonly string[] }[], source: string) =>
  boxes.filter((b) => selectable(b.flags) && b.name !== source && !hasUnsafe(b.name)).map((b) => b.name);

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** The messages a call names, in a mailbox opened for writing on `client`; every UID must be there, or nobody is asked. */
async function selectMessages(client: ImapClient, mount: string, mailbox: string, list: readonly number[]): Promise<MessagesTarget> {
  const sorted = canonicalUids(list);
  const box = await client.open(mailbox, false);
  const present = await client.existing(sorted);
  const missing = sorted.filter((u) => !present.includes(u));
  if (missing.length > 0) throw new MailError(`mailbox "${mailbox}" (UIDVALIDITY ${box.uidValidity}) holds no message with UID ${missing.join(", ")}`);
  return { mount, mailbox, uidValidity: box.uidValidity, uids: sorted, present };
}

/** A guarded look at the messages: on a connection of its own, closed before anyone is asked (R-MAIL-8). */
const messagesTarget = (session: MailSession, mailbox: string, list: readonly number[]) => session.look((client) => selectMessages(client, session.mount, mailbox, list));

/**
 * The write's own look, on the connection it writes over: every guarded look closed its connection before anyone was
 * asked (R-MAIL-8), so the act sees its target again, selected on this connection, and writes only if it is still
 * the one approved. Undefined when it is; else why not, as the kit says it.
 */
async function changedSince<T>(approved: T, live: T, bind: (t: T) => FingerprintInput, describe: (t: T) => string): Promise<string | undefined> {
  if ((await digest(bind(live))) === (await digest(bind(approved)))) return undefined;
  // Said on the call's trail as the kit says it when its own look after the answer finds the target changed.
  audit("refused", { reason: "target_changed" });
  return `the target changed after it was approved (approved: ${describe(approved)}; now: ${describe(live)}), so the approval does not cover it`;
}

// Every tool's definition, schema, guard and handler is built once per isolate, not per request: the SDK serves one
// exchange per server, so the bundle builds a server for each request, and building every tool's zod schemas and
// closures anew for it was most of what a call allocated. A handler reads its mount and env from the call's scope.
// The reads are plain tools (bundles/kit/tools.ts): the kit's lane serves a 2026-07-28 call of one without an SDK
// server. Every tool that writes stays on the SDK's path, and so does get_attachments where it saves into a bucket.

// ---- the reads: never ask ----
const LIST_MAILBOXES = {
  description: "Lists the account's mailboxes (folders) with their flags and, where the server can say, message counts.",
  inputSchema: jsonSchemaOnce(z.object({})),
  annotations: READS,
};
const LIST_MESSAGES = {
  description: "Lists a mailbox's messages a page at a time, newest first: UID, flags, size, From, Subject and Date. Changes no flag.",
  inputSchema: jsonSchemaOnce(z.object({ mailbox: mailboxName("The mailbox, e.g. INBOX or Archive."), offset, limit })),
  annotations: READS,
};
const SEARCH_MESSAGES = {
  description: "Searches a mailbox (all criteria must match) and returns the matches a page at a time, newest first, with the total. Changes no flag.",
  inputSchema: jsonSchemaOnce(
    z.object({
      mailbox: mailboxName("The mailbox to search."),
      from: z.string().min(1).max(200).optional().describe("Text in the From header."),
      to: z.string().min(1).max(200).optional().describe("Text in the To header."),
      subject: z.string().min(1).max(200).optional().describe("Text in the Subject."),
      text: z.string().min(1).max(200).optional().describe("Text anywhere in the message."),
      since: z.string().max(10).optional().describe("On or after this date, YYYY-MM-DD."),
      before: z.string().max(10).optional().describe("Before this date, YYYY-MM-DD."),
      seen: z.boolean().optional().describe("Only read (true) or unread (false) messages."),
      flagged: z.boolean().optional().describe("Only flagged (true) or unflagged (false) messages."),
      offset,
      limit,
    }),
  ),
  annotations: READS,
};
const GET_MESSAGE = {
  description: "Reads one message by UID: its headers, its text (from the HTML part when there is no plain one) and a list of its attachments. Changes no flag.",
  inputSchema: jsonSchemaOnce(z.object({ mailbox: mailboxName("The mailbox holding the message."), uid: uid.describe("The message's UID.") })),
  annotations: READS,
};
const ATTACHMENTS_INPUT = jsonSchemaOnce(
  z.object({
    mailbox: mailboxName("The mailbox holding the message."),
    uid: uid.describe("The message's UID."),
    indexes: z.array(z.number().int().min(0).max(999)).min(1).max(50).optional().describe("Which attachments, by get_message's index; all when absent."),
  }),
);
const GET_ATTACHMENTS = {
  description: "Returns a message's attachments (all, or those at the given indexes from get_message) as embedded files. Changes nothing.",
  inputSchema: ATTACHMENTS_INPUT,
  annotations: READS,
};
const SAVE_ATTACHMENTS = {
  description: "Saves a message's attachments (all, or those at the given indexes from get_message) into this mount's R2 bucket and returns their keys.",
  inputSchema: ATTACHMENTS_INPUT,
  annotations: SAVES_ATTACHMENTS,
};
const attachmentsOf = async (s: MailSession, a: z.infer<typeof ATTACHMENTS_INPUT>) =>
  getAttachments(await s.client(), s.mount, attachmentBucket(s.mount, currentScope().env), a.mailbox, a.uid, a.indexes);

// ---- delete_messages: always asks ----
const deleteGuard = (session: MailSession): Guard<{ mailbox: string; uids: number[] }, MessagesTarget> => ({
  rule: always,
  fallback: "token",
  resolve: (a) => messagesTarget(session, a.mailbox, a.uids),
  fingerprint: deleteFingerprint,
  prompt: deletePrompt,
  describe: describeMessages,
  act: async (t, write) => {
    try {
      const client = await session.client();
      const changed = await changedSince(t, await selectMessages(client, session.mount, t.mailbox, t.uids), deleteFingerprint, describeMessages);
      if (changed !== undefined) return notDone(changed);
      await through(write, session.mount, "expunge", { binds: deleteFingerprint(t), needsApproval: true }, () => client.expunge(t.uids));
      return { content: [{ type: "text", text: `Deleted ${plural(t.uids.length, "message")} from "${t.mailbox}" (UIDs ${t.uids.join(", ")}).` }] };
    } catch (error) {
      return failed(error);
    }
  },
});
const DELETE_MESSAGES = {
  description:
    "Deletes messages by UID, permanently (expunged, not moved to a trash folder). Always asks a person first, shown the mailbox, the count and the UIDs, never a subject or sender; where this server cannot ask, it answers a two-call token instead.",
  inputSchema: jsonSchemaOnce(z.object({ mailbox: mailboxName("The mailbox holding the messages."), uids, ...twoCallTokenShape })),
  annotations: DELETES,
};

// ---- move_messages: always asks, move and copy under different keys ----
const MOVE_MESSAGES = {
  description:
    "Moves (default) or copies messages by UID into another mailbox. Always asks a person first, for a move and for a copy alike: on a shared or public folder either one discloses the messages to everyone who can read it. The person is shown both mailboxes, the count and the UIDs, never a subject or sender; where this server cannot ask, it answers a two-call token instead.",
  inputSchema: jsonSchemaOnce(
    z.object({
      mailbox: mailboxName("The mailbox holding the messages."),
      uids,
      destination: mailboxName("The mailbox to move or copy them into; it must exist."),
      mode: z.enum(["move", "copy"]).optional().describe("move (default) takes them out of the source; copy leaves them there too."),
      ...twoCallTokenShape,
    }),
  ),
  annotations: MOVES,
};
type TransferArgs = { mailbox: string; uids: number[]; destination: string; mode?: "move" | "copy" };
/** A move's or copy's target on `client`: the messages, and the destination, which must exist (a move never creates the folder it hands messages to). */
async function selectTransfer(client: ImapClient, mount: string, a: TransferArgs): Promise<TransferTarget> {
  if (a.destination === a.mailbox) throw new MailError("the destination is the mailbox the messages are in");
  const target = await selectMessages(client, mount, a.mailbox, a.uids);
  const dest = await client.status(a.destination).catch(() => {
    throw new MailError(`there is no mailbox "${a.destination}" to ${a.mode ?? "move"} into`);
  });
  return { ...target, mode: a.mode ?? "move", destination: a.destination, destinationValidity: dest.uidValidity };
}
const transferGuard = (session: MailSession): Guard<TransferArgs, TransferTarget> => {
  // The folders the person may pick instead of the model's destination (docs/rules.md R-MAIL-12), listed by the
  // call's first resolve, which runs before the form is built; the person's pick is resolved and bound like a model's.
  let folders: string[] | undefined;
  return {
    rule: always,
    fallback: "token",
    editable: { destination: { mode: "pick", label: "Into mailbox", choices: () => folders } },
    resolve: (a) =>
      session.look(async (client) => {
        const target = await selectTransfer(client, session.mount, a);
        folders ??= offered(await client.listMailboxes(), a.mailbox);
        return target;
      }),
    fingerprint: transferFingerprint,
    prompt: transferPrompt,
    describe: describeTransfer,
    act: async (t, write) => {
      try {
        const client = await session.client();
        const changed = await changedSince(t, await selectTransfer(client, session.mount, t), transferFingerprint, describeTransfer);
        if (changed !== undefined) return notDone(changed);
        const moved = await through(write, session.mount, t.mode, { binds: transferFingerprint(t), needsApproval: true }, () => client.transfer(t.mode, t.uids, t.destination));
        const done = t.mode === "move" ? "Moved" : "Copied";
        const uidsNow =
          moved === undefined ? "" : ` Their UIDs in "${t.destination}": ${moved.destination.map(([a, b]) => (a === b ? `${a}` : `${a}:${b}`)).join(",")} (UIDVALIDITY ${moved.uidValidity}).`;
        return { content: [{ type: "text", text: `${done} ${plural(t.uids.length, "message")} from "${t.mailbox}" to "${t.destination}" (UIDs ${t.uids.join(", ")}).${uidsNow}` }] };
      } catch (error) {
        return failed(error);
      }
    },
  };
};

// ---- manage_mailbox: create never, delete always, rename on the two-call token only ----
type ManageArgs = { action: "create" | "delete" | "rename"; mailbox: string; new_name?: string; two_call_token?: string };
async function statusTarget(client: ImapClient, mount: string, name: string): Promise<MailboxTarget> {
  const status = await client.status(name).catch(() => {
    throw new MailError(`there is no mailbox "${name}"`);
  });
  return { mount, mailbox: name, uidValidity: status.uidValidity, messages: status.messages };
}

/**
 * A mailbox to delete: one with no mailboxes under it. The card counts its own messages only, and some servers delete
 * what sits under a mailbox with it, so one with children is refused before anyone is asked, and again before the
 * write should one appear meanwhile (R-MAIL-14).
 */
async function deleteTarget(client: ImapClient, mount: string, name: string): Promise<MailboxTarget> {
  const target = await statusTarget(client, mount, name);
  const delimiter = await client.delimiter();
  const under = delimiter === undefined ? [] : await client.childNames(name, delimiter);
  if (under.length > 0)
    throw new MailError(
      `mailbox "${name}" has ${under.length} mailbox${under.length === 1 ? "" : "es"} under it; delete or move those first: this tool deletes one mailbox and the messages in it, nothing else`,
    );
  return target;
}
const createGuard = (session: MailSession): Guard<ManageArgs, { mailbox: string }> => ({
  rule: never,
  resolve: (a) => ({ mailbox: a.mailbox }),
  fingerprint: (t) => ({ operation: "create_mailbox", target: { mount: session.mount, mailbox: t.mailbox } }),
  prompt: () => ({ heading: "", consequence: "", values: [] }),
  act: async (t, write) => {
    try {
      const client = await session.client();
      const binds = { operation: "create_mailbox", target: { mount: session.mount, mailbox: t.mailbox } };
      await through(write, session.mount, "create", { binds, needsApproval: false }, () => client.createMailbox(t.mailbox));
      return { content: [{ type: "text", text: `Created mailbox "${t.mailbox}".` }] };
    } catch (error) {
      return failed(error);
    }
  },
});
const deleteMailboxGuard = (session: MailSession): Guard<ManageArgs, MailboxTarget> => ({
  rule: always,
  fallback: "token",
  resolve: (a) => session.look((client) => deleteTarget(client, session.mount, a.mailbox)),
  fingerprint: deleteMailboxFingerprint,
  prompt: deleteMailboxPrompt,
  describe: describeMailbox,
  act: async (t, write) => {
    try {
      const client = await session.client();
      const changed = await changedSince(t, await deleteTarget(client, session.mount, t.mailbox), deleteMailboxFingerprint, describeMailbox);
      if (changed !== undefined) return notDone(changed);
      await through(write, session.mount, "delete-mailbox", { binds: deleteMailboxFingerprint(t), needsApproval: true }, () => client.deleteMailbox(t.mailbox));
      return { content: [{ type: "text", text: `Deleted mailbox "${t.mailbox}" and the ${plural(t.messages, "message")} in it.` }] };
    } catch (error) {
      return failed(error);
    }
  },
});
const MANAGE_MAILBOX = {
  description:
    "Creates, deletes or renames a mailbox. create never asks. delete always asks a person first (shown the mailbox and how many messages it holds); where this server cannot ask, it answers a two-call token instead. rename is reversible, so it never asks a person: it always answers a two-call token first (counting the messages of the mailbox and of every mailbox under it, which go with it), and renames on a second call with the same arguments quoting it. A rename changes only the last part of the name, within the same parent; one into another hierarchy is refused (use move_messages, which asks a person), and INBOX is never renamed.",
  inputSchema: jsonSchemaOnce(
    z.object({
      action: z.enum(["create", "delete", "rename"]).describe("create, delete or rename."),
      mailbox: mailboxName("The mailbox to create, delete or rename."),
      new_name: mailboxName("rename only: the mailbox's new name, under the same parent (only the last part of the name changes).").optional(),
      ...twoCallTokenShape,
    }),
  ),
  annotations: MANAGES,
};

// ---- set_message_flags: never asks; \Deleted refused ----
interface FlagsTarget extends MessagesTarget {
  add: string[];
  remove: string[];
}
const flagsFingerprint = (t: FlagsTarget): FingerprintInput => ({
  operation: "set_flags",
  target: { mount: t.mount, mailbox: t.mailbox, uid_validity: t.uidValidity, uids: { set: t.uids }, add: { set: t.add }, remove: { set: t.remove } },
});
const SET_MESSAGE_FLAGS = {
  description:
    "Adds and removes flags (\\Seen, \\Answered, \\Flagged, \\Draft, or keywords) on messages by UID. Never asks: flags come back off. \\Deleted is refused outright: on a server that expunges automatically it is a deletion, and deleting is delete_messages, which asks.",
  inputSchema: jsonSchemaOnce(
    z.object({
      mailbox: mailboxName("The mailbox holding the messages."),
      uids,
      add: z.array(flag).max(10).optional().describe("Flags to add."),
      remove: z.array(flag).max(10).optional().describe("Flags to remove."),
    }),
  ),
  annotations: FLAGS,
};
function setFlags(s: MailSession, a: z.infer<typeof SET_MESSAGE_FLAGS.inputSchema>): Promise<CallToolResult> {
  const add = a.add ?? [];
  const remove = a.remove ?? [];
  const all = [...add, ...remove];
  // Refused before the server is reached (R-MAIL-3).
  if (all.some((f) => f.toLowerCase() === "\\deleted"))
    return Promise.resolve(
      refusal("set_message_flags never sets or clears \\Deleted: on a server that expunges automatically that is a deletion, and deleting is delete_messages, which asks a person"),
    );
  const bad = all.find((f) => (f.startsWith("\\") ? !SYSTEM_FLAGS.has(f) : !KEYWORD.test(f)));
  if (bad !== undefined) return Promise.resolve(refusal(`"${bad.slice(0, 64)}" is not a flag this tool sets: \\Seen, \\Answered, \\Flagged, \\Draft, or a keyword of letters, digits and $_.-`));
  if (all.length === 0) return Promise.resolve(refusal("name at least one flag to add or remove"));
  return runGuarded<{ mailbox: string; uids: number[] }, FlagsTarget>(
    {
      rule: never,
      // Never asks, so its look keeps its connection for the write that follows at once.
      resolve: async (x) => ({ ...(await selectMessages(await s.client(), s.mount, x.mailbox, x.uids)), add, remove }),
      fingerprint: flagsFingerprint,
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) => {
        try {
          const client = await s.client();
          await through(write, s.mount, "store", { binds: flagsFingerprint(t), needsApproval: false }, () => client.store(t.uids, t.add, t.remove));
          return {
            content: [
              {
                type: "text",
                text: `Flags changed on ${plural(t.uids.length, "message")} in "${t.mailbox}" (UIDs ${t.uids.join(", ")}): added ${t.add.join(" ") || "none"}; removed ${t.remove.join(" ") || "none"}.`,
              },
            ],
          };
        } catch (error) {
          return failed(error);
        }
      },
    },
    a,
  );
}

// ---- save_draft: never asks ----
const address = z
  .string()
  .min(3)
  .max(254)
  .regex(/^[^\s@<>,;"]+@[^\s@<>,;"]+$/, "an address as name@example.com");
const SAVE_DRAFT = {
  description: "Saves a plain-text draft into the account's drafts mailbox (the one marked \\Drafts, else Drafts). Never asks: nothing is sent, and a draft can be deleted.",
  inputSchema: jsonSchemaOnce(
    z.object({
      to: z.array(address).min(1).max(50).describe("Recipients' addresses."),
      cc: z.array(address).max(50).optional().describe("Copy recipients' addresses."),
      subject: z.string().max(900).describe("The subject."),
      body: z.string().max(100_000).describe("The text."),
    }),
  ),
  annotations: DRAFTS,
};
function saveDraft(s: MailSession, a: z.infer<typeof SAVE_DRAFT.inputSchema>): Promise<CallToolResult> {
  return runGuarded<typeof a, { mailbox: string; message: Uint8Array; digest: string }>(
    {
      rule: never,
      resolve: async (x) => {
        const client = await s.client();
        const boxes = await client.listMailboxes();
        const drafts = boxes.find((b) => b.flags.some((f) => f.toLowerCase() === "\\drafts"))?.name ?? "Drafts";
        const message = buildDraft({ to: x.to, cc: x.cc ?? [], subject: x.subject, body: x.body });
        return { mailbox: drafts, message, digest: await sha256(message) };
      },
      fingerprint: (t) => ({ operation: "save_draft", target: { mount: s.mount, mailbox: t.mailbox, message_sha256: t.digest } }),
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) => {
        try {
          const client = await s.client();
          const binds = { operation: "save_draft", target: { mount: s.mount, mailbox: t.mailbox, message_sha256: t.digest } };
          const newUid = await through(write, s.mount, "append", { binds, needsApproval: false }, () => client.append(t.mailbox, t.message, ["\\Draft", "\\Seen"]));
          return { content: [{ type: "text", text: `Saved the draft in "${t.mailbox}"${newUid === undefined ? "" : ` as UID ${newUid}`}. Nothing was sent.` }] };
        } catch (error) {
          return failed(error);
        }
      },
    },
    a,
  );
}

/** The reads a mount lists before get_attachments. */
const READ_TOOLS: readonly ToolEntry[] = [
  readTool("list_mailboxes", LIST_MAILBOXES, async (s) => listMailboxes(await s.client())),
  readTool("list_messages", LIST_MESSAGES, async (s, a) => listMessages(await s.client(), a.mailbox, a.offset ?? 0, a.limit ?? DEFAULT_PAGE)),
  readTool("search_messages", SEARCH_MESSAGES, async (s, a) => searchMessages(await s.client(), { ...a, offset: a.offset ?? 0, limit: a.limit ?? DEFAULT_PAGE })),
  readTool("get_message", GET_MESSAGE, async (s, a) => getMessage(await s.client(), a.mailbox, a.uid)),
];

/** The tools a mount lists after get_attachments: every one writes, and three of them ask. */
const WRITE_TOOLS: readonly ToolEntry[] = [
  mailTool("delete_messages", DELETE_MESSAGES, "always", (s, a) => runGuarded(deleteGuard(s), a), deleteGuard),
  mailTool(
    "move_messages",
    MOVE_MESSAGES,
    "always",
    (s, a) => {
      // The plan is the call's own: its pick list is this call's folders.
      const guard = transferGuard(s);
      return runGuarded(guard, a, editPlanFor("move_messages", MOVE_MESSAGES, guard));
    },
    transferGuard,
  ),
  mailTool(
    "manage_mailbox",
    MANAGE_MAILBOX,
    "when",
    async (s, a) => {
      if (a.action === "create") return runGuarded(createGuard(s), a);
      if (a.action === "delete") return runGuarded(deleteMailboxGuard(s), a);
      return renameOnToken(s, a);
    },
    deleteMailboxGuard,
  ),
  mailTool("set_message_flags", SET_MESSAGE_FLAGS, "never", setFlags),
  mailTool("save_draft", SAVE_DRAFT, "never", saveDraft),
];

/** Every tool of a mount that hands attachments back, and of one that saves them into its R2 bucket (R-MAIL-5), in the order a mount lists them. */
const READING_MOUNT: readonly ToolEntry[] = [...READ_TOOLS, readTool("get_attachments", GET_ATTACHMENTS, attachmentsOf), ...WRITE_TOOLS];
const SAVING_MOUNT: readonly ToolEntry[] = [...READ_TOOLS, mailTool("get_attachments", SAVE_ATTACHMENTS, "never", attachmentsOf), ...WRITE_TOOLS];

/** get_attachments is the computed one: read-only unless the mount binds an R2 bucket it saves into (R-MAIL-5). */
export function annotationsFor(mount: string, env: Record<string, unknown>): Readonly<Record<string, DeclaredAnnotations>> {
  return {
    list_mailboxes: READS,
    list_messages: READS,
    search_messages: READS,
    get_message: READS,
    get_attachments: attachmentBucket(mount, env) === undefined ? GET_ATTACHMENTS.annotations : SAVE_ATTACHMENTS.annotations,
    delete_messages: DELETES,
    move_messages: MOVES,
    manage_mailbox: MANAGES,
    set_message_flags: FLAGS,
    save_draft: DRAFTS,
  };
}

export function mailboxServer(mount: string, env: Record<string, unknown> = {}): McpServer {
  const server = new McpServer({ name: `strad-mailbox/${mount}`, version: "0.1.0" });
  return registerTools(server, attachmentBucket(mount, env) === undefined ? READING_MOUNT : SAVING_MOUNT);
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Why a rename is on the token even where a person could be asked: it is reversible (R-MAIL-2). */
export const RENAME_WHY = "a rename is reversible, so this server takes the two-call token for it instead of asking a person";

/**
 * rename: the two-call token only, even when a channel exists (R-MAIL-2). The token is kept in the gateway's record
 * of the call, so a call that carries none (no channel at all) cannot have one and is refused.
 */
async function renameOnToken(session: MailSession, a: { mailbox: string; new_name?: string; two_call_token?: string }): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) return refusal("this request is not a tool call");
  if (a.new_name === undefined) return refusal("a rename names the mailbox's new_name");
  if (a.new_name === a.mailbox) return refusal("the new name is the mailbox's name");
  // INBOX is not renamed: on IMAP a RENAME of INBOX moves its messages into a new mailbox and leaves INBOX in place,
  // empty, which is a move of every message and nothing a rename's token should carry (R-MAIL-11).
  if (a.mailbox.toUpperCase() === "INBOX" || a.new_name.toUpperCase() === "INBOX") {
    return refusal("INBOX is never renamed, nor is anything renamed to INBOX: to move its messages elsewhere, use move_messages, which asks a person");
  }
  const channel = call.channel;
  const ref = callRefOf(channel);
  if (ref === undefined || (channel.kind !== "ask" && channel.kind !== "skip" && channel.kind !== "fallback")) {
    const why = channel.kind === "refused" ? `the gateway refused the approval channel: ${channel.reason}` : "no approval channel reached this call";
    return refusal(`a rename takes the two-call token, which lives in the gateway's record of the call, and this call has none (${why})`);
  }
  const slug = channel.channel.slug;
  const newName = a.new_name;
  const source = await (async () => {
    const client = await session.fresh();
    // A rename changes the last part of the name only, within the same parent: a RENAME into another hierarchy
    // ("Private" to "Public/Shared/Private") moves the mailbox and every child into whatever that hierarchy is shared
    // with, which is a disclosure no token covers. Refused before IMAP acts (R-MAIL-11).
    const delimiter = await client.delimiter();
    if (delimiter !== undefined) {
      const parent = (name: string) => name.slice(0, Math.max(0, name.lastIndexOf(delimiter)));
      if (parent(a.mailbox) !== parent(newName) || newName.endsWith(delimiter)) {
        const where = parent(a.mailbox) === "" ? "at the top level" : `under "${parent(a.mailbox)}"`;
        throw new MailError(
          `a rename changes only the last part of the name and keeps the mailbox ${where}; "${newName}" would move it (and every mailbox under it) into another hierarchy, which may be shared. To move messages elsewhere, use move_messages, which asks a person`,
        );
      }
    }
    const status = await client.status(a.mailbox).catch(() => {
      throw new MailError(`there is no mailbox "${a.mailbox}"`);
    });
    const taken = await client.status(newName).then(
      () => true,
      () => false,
    );
    if (taken) throw new MailError(`a mailbox named "${newName}" already exists`);
    const children = delimiter === undefined ? [] : await client.children(a.mailbox, delimiter);
    return { ...status, children: children.length, total: children.reduce((sum, c) => sum + c.messages, status.messages) };
  })();
  const target: RenameTarget = { mount: session.mount, mailbox: a.mailbox, to: newName, uidValidity: source.uidValidity, messages: source.messages, children: source.children, total: source.total };
  const fp = await digest(renameFingerprint(target));
  let message: string;
  try {
    message = buildPrompt(slug, renamePrompt(target));
  } catch (error) {
    if (error instanceof PromptRefusal) return notDone(error.message);
    throw error;
  }
  const step = await tokenStep({ route: { kind: "token", slug, why: RENAME_WHY, ref }, args: a, target: fp, message, describe: describeMailbox(target) });
  if (step.kind !== "redeemed") return step.answer;
  call.approval = { fingerprint: fp, approved: true };
  const client = await session.client();
  await through(gatedWrite, session.mount, "rename", { binds: renameFingerprint(target), needsApproval: true }, () => client.renameMailbox(target.mailbox, target.to));
  return {
    content: [
      { type: "text", text: `Renamed mailbox "${target.mailbox}" to "${target.to}".` },
      { type: "text", text: actedOnTokenLine(slug) },
    ],
  };
}
