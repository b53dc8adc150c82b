// The mailbox tools of one mount, over its own IMAP account. What asks (docs/rules.md R-MAIL-2):
// delete_messages always; move_messages always, for move and for copy, under different keys; manage_mailbox's
// delete always, its rename on the two-call token only (a rename is reversible), its create never;
// set_message_flags and save_draft never, and \Deleted is refused outright (docs/rules.md R-MAIL-2, R-MAIL-3).
// Approvals bind the exact UID set, the UIDVALIDITY and both mailboxes (mailbox.guard.ts); writes leave only
// through the kit's send gate. No tool takes a user, password or host: the mount's variables hold them (R-TOOL-2).
// The reads answer from mailbox.read.ts; the writes are mailbox.messages.ts's and mailbox.manage.ts's.
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { checkFallback, type DeclaredAnnotations, declareGuard, editPlanFor, type Guard, type GuardKind, runGuarded } from "../kit/guard";
import { currentScope } from "../kit/scope";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { inSession } from "./mailbox.call";
import { createGuard, deleteMailboxGuard, MANAGE_MAILBOX, renameOnToken } from "./mailbox.manage";
import { DELETE_MESSAGES, deleteGuard, MOVE_MESSAGES, SAVE_DRAFT, SET_MESSAGE_FLAGS, saveDraft, setFlags, transferGuard } from "./mailbox.messages";
import { attachmentBucket, DEFAULT_PAGE, getAttachments, getMessage, listMailboxes, listMessages, searchMessages } from "./mailbox.read";
import { DELETES, DRAFTS, FLAGS, limit, MANAGES, MOVES, mailboxName, offset, READS, SAVES_ATTACHMENTS, uid } from "./mailbox.schema";
import { MailSession } from "./mailbox.session";

/** The mailbox bundle's registry of confirmed tools: every tool that asks a person (or takes the token), and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["delete_messages", "move_messages", "manage_mailbox"]);

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
