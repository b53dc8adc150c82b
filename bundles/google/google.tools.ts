// The Gmail tools of one mount. Reads answer without asking; create_draft writes through the send gate
// without asking (a draft goes nowhere); send_email asks a person first, and is the only tool that does
// (docs/rules.md R-TOOL-4). No tool takes a user, token or host (R-TOOL-2). A mount registers only the tools of
// its tool groups (bundle.json's toolGroups, from <MOUNT>__GMAIL_ENABLED_TOOLGROUPS; R-GMAIL-1): any other tool is
// neither listed nor callable on it.
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { always, type DeclaredAnnotations, guardedTool, never } from "../kit/guard";
import { toolGroupsFor } from "../kit/tool-groups";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import manifest from "./bundle.json";
import { GmailError } from "./google.client";
import { summariseMessage } from "./google.format";
import { GMAIL_ID, Mailbox } from "./google.mailbox";
import { CreateDraftSchema, createDraftGuard, SendEmailSchema, sendEmailGuard } from "./google.send";

/** The Google bundle's registry of confirmed tools: every tool that asks a person, and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["send_email"]);

const READS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const DRAFTS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
// Sending is marked destructive: it cannot be taken back, so a client should treat it with the most care.
const SENDS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
/** Each listed item costs one Gmail read; the bound keeps a call inside a Worker's subrequest budget. */
export const MAX_LIST = 25;

const id = (what: string) => z.string().regex(GMAIL_ID).describe(`Gmail id of the ${what}.`);
const listShape = {
  max_results: z.number().int().min(1).max(MAX_LIST).optional().describe(`How many to return (1-${MAX_LIST}, default 10).`),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,512}$/)
    .optional()
    .describe("next_cursor from a previous answer, for the next page."),
};

function json(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 1) }] };
}

/** A read's failure names a status or a reason, never an upstream body. */
async function reading(work: (mailbox: Mailbox) => Promise<unknown>): Promise<CallToolResult> {
  try {
    return json(await work(Mailbox.forCurrentCall()));
  } catch (error) {
    const reason = error instanceof GmailError ? error.message : `the read failed (${error instanceof Error ? error.name : "error"})`;
    return { content: [{ type: "text", text: `Not done: ${reason}.` }], isError: true };
  }
}

/** The tools this mount serves: its tool groups' (read-only by default), or none when its setting names no group. */
export function servedTools(mount: string, env: Record<string, unknown>): ReadonlySet<string> {
  const groups = toolGroupsFor(manifest.toolGroups, mount, env);
  return groups.ok ? groups.tools : new Set();
}

// Every tool's definition, schema and handler is built once per isolate, not per request: the SDK serves one exchange per
// server, so the bundle builds a server for each request, and building every served tool's zod schemas and closures
// anew for it was most of what a call allocated. A handler reads its mount and env from the call's scope. The reads
// are plain tools (bundles/kit/tools.ts): the kit's lane serves a 2026-07-28 call of one without an SDK server.

const SEARCH_MESSAGES = {
  description: "Lists messages, newest first, with their sender, recipients, subject, date and snippet. Takes Gmail's search syntax (e.g. from:ada@example.com is:unread).",
  inputSchema: jsonSchemaOnce(
    z.object({
      query: z.string().max(1_000).optional().describe("Gmail search query; all messages when absent."),
      label_ids: z
        .array(z.string().regex(/^[A-Za-z0-9_-]{1,100}$/))
        .max(10)
        .optional()
        .describe("Only messages carrying every one of these labels, e.g. INBOX, UNREAD."),
      ...listShape,
    }),
  ),
  annotations: READS,
};
const GET_MESSAGE = {
  description: "Reads one message: its headers, text and html bodies, and its attachments' names and sizes.",
  inputSchema: jsonSchemaOnce(z.object({ message_id: id("message") })),
  annotations: READS,
};
const GET_THREAD = { description: "Reads a whole conversation, oldest message first.", inputSchema: jsonSchemaOnce(z.object({ thread_id: id("thread") })), annotations: READS };
const LIST_DRAFTS = {
  description: "Lists saved drafts with their recipients and subject.",
  inputSchema: jsonSchemaOnce(z.object({ query: z.string().max(1_000).optional().describe("Gmail search query over drafts."), ...listShape })),
  annotations: READS,
};
const GET_DRAFT = { description: "Reads one saved draft: its recipients, subject, bodies and attachments.", inputSchema: jsonSchemaOnce(z.object({ draft_id: id("draft") })), annotations: READS };
const CREATE_DRAFT = {
  description: "Saves a draft in the mailbox without sending it. Takes the same fields as send_email; send it later with send_email and from_draft_id.",
  inputSchema: CreateDraftSchema,
  annotations: DRAFTS,
};
const SEND_EMAIL = {
  description:
    "Sends an email from this mailbox, or a saved draft (from_draft_id). A person is asked first and shown the sender, recipients, subject and attachment names; nothing is sent unless they approve. Refuses when no approval channel reaches the call.",
  inputSchema: SendEmailSchema,
  annotations: SENDS,
};

/** Every tool of the bundle, in the order a mount lists them. */
const GMAIL_TOOLS: readonly ToolEntry[] = [
  plainTool("search_messages", SEARCH_MESSAGES, async ({ query, label_ids, max_results, cursor }) =>
    reading(async (mailbox) => {
      const list = await mailbox.listMessages({ q: query, labelIds: label_ids, maxResults: max_results ?? 10, pageToken: cursor });
      const messages = await Promise.all(
        (list.messages ?? []).slice(0, MAX_LIST).map(async (m) => summariseMessage(await mailbox.getMessage(m.id, "metadata", ["From", "To", "Cc", "Subject", "Date"]), false)),
      );
      return { messages, next_cursor: list.nextPageToken ?? null, result_size_estimate: list.resultSizeEstimate ?? messages.length };
    }),
  ),
  plainTool("get_message", GET_MESSAGE, async ({ message_id }) => reading(async (mailbox) => summariseMessage(await mailbox.getMessage(message_id, "full"), true))),
  plainTool("get_thread", GET_THREAD, async ({ thread_id }) =>
    reading(async (mailbox) => {
      const thread = await mailbox.getThread(thread_id);
      const messages = (thread.messages ?? []).slice(0, 100);
      return { id: thread.id, messages: messages.map((m) => summariseMessage(m, true, 10_000)) };
    }),
  ),
  plainTool("list_drafts", LIST_DRAFTS, async ({ query, max_results, cursor }) =>
    reading(async (mailbox) => {
      const list = await mailbox.listDrafts({ q: query, maxResults: max_results ?? 10, pageToken: cursor });
      const drafts = await Promise.all((list.drafts ?? []).slice(0, MAX_LIST).map(async (d) => ({ draft_id: d.id, ...summariseMessage((await mailbox.getDraft(d.id, "metadata")).message, false) })));
      return { drafts, next_cursor: list.nextPageToken ?? null };
    }),
  ),
  plainTool("get_draft", GET_DRAFT, async ({ draft_id }) =>
    reading(async (mailbox) => {
      const draft = await mailbox.getDraft(draft_id, "full");
      return { draft_id: draft.id, ...summariseMessage(draft.message, true) };
    }),
  ),
  { name: "create_draft", register: (server) => guardedTool(server, CONFIRMED_TOOLS, "create_draft", CREATE_DRAFT, { rule: never, ...createDraftGuard }) },
  { name: "send_email", register: (server) => guardedTool(server, CONFIRMED_TOOLS, "send_email", SEND_EMAIL, { rule: always, ...sendEmailGuard }) },
];

export function gmailServer(mount: string, env: Record<string, unknown>): McpServer {
  const server = new McpServer({ name: `strad-google/${mount}`, version: "0.1.0" });
  const serves = servedTools(mount, env);
  return registerTools(
    server,
    GMAIL_TOOLS.filter((tool) => serves.has(tool.name)),
  );
}
