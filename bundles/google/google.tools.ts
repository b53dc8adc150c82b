// The Gmail tools of one mount. Reads answer without asking; create_draft writes through the send gate
// without asking (a draft goes nowhere); send_email asks a person first, and is the only tool that does
// (docs/rules.md R-TOOL-4). No tool takes a user, token or host (R-TOOL-2). A mount registers only the tools of
// its tool groups (bundle.json's toolGroups, from <MOUNT>__GMAIL_ENABLED_TOOLGROUPS; R-GMAIL-1): any other tool is
// neither listed nor callable on it.
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { always, type DeclaredAnnotations, guardedTool, never } from "../kit/guard";
import { toolGroupsFor } from "../kit/tool-groups";
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

export function gmailServer(mount: string, env: Record<string, unknown>): McpServer {
  const server = new McpServer({ name: `strad-google/${mount}`, version: "0.1.0" });
  const serves = servedTools(mount, env);

  if (serves.has("search_messages"))
    server.registerTool(
      "search_messages",
      {
        description: "Lists messages, newest first, with their sender, recipients, subject, date and snippet. Takes Gmail's search syntax (e.g. from:ada@example.com is:unread).",
        inputSchema: z.object({
          query: z.string().max(1_000).optional().describe("Gmail search query; all messages when absent."),
          label_ids: z
            .array(z.string().regex(/^[A-Za-z0-9_-]{1,100}$/))
            .max(10)
            .optional()
            .describe("Only messages carrying every one of these labels, e.g. INBOX, UNREAD."),
          ...listShape,
        }),
        annotations: READS,
      },
      async ({ query, label_ids, max_results, cursor }) =>
        reading(async (mailbox) => {
          const list = await mailbox.listMessages({ q: query, labelIds: label_ids, maxResults: max_results ?? 10, pageToken: cursor });
          const messages = await Promise.all(
            (list.messages ?? []).slice(0, MAX_LIST).map(async (m) => summariseMessage(await mailbox.getMessage(m.id, "metadata", ["From", "To", "Cc", "Subject", "Date"]), false)),
          );
          return { messages, next_cursor: list.nextPageToken ?? null, result_size_estimate: list.resultSizeEstimate ?? messages.length };
        }),
    );

  if (serves.has("get_message"))
    server.registerTool(
      "get_message",
      { description: "Reads one message: its headers, text and html bodies, and its attachments' names and sizes.", inputSchema: z.object({ message_id: id("message") }), annotations: READS },
      async ({ message_id }) => reading(async (mailbox) => summariseMessage(await mailbox.getMessage(message_id, "full"), true)),
    );

  if (serves.has("get_thread"))
    server.registerTool(
      "get_thread",
      { description: "Reads a whole conversation, oldest message first.", inputSchema: z.object({ thread_id: id("thread") }), annotations: READS },
      async ({ thread_id }) =>
        reading(async (mailbox) => {
          const thread = await mailbox.getThread(thread_id);
          const messages = (thread.messages ?? []).slice(0, 100);
          return { id: thread.id, messages: messages.map((m) => summariseMessage(m, true, 10_000)) };
        }),
    );

  if (serves.has("list_drafts"))
    server.registerTool(
      "list_drafts",
      {
        description: "Lists saved drafts with their recipients and subject.",
        inputSchema: z.object({ query: z.string().max(1_000).optional().describe("Gmail search query over drafts."), ...listShape }),
        annotations: READS,
      },
      async ({ query, max_results, cursor }) =>
        reading(async (mailbox) => {
          const list = await mailbox.listDrafts({ q: query, maxResults: max_results ?? 10, pageToken: cursor });
          const drafts = await Promise.all(
            (list.drafts ?? []).slice(0, MAX_LIST).map(async (d) => ({ draft_id: d.id, ...summariseMessage((await mailbox.getDraft(d.id, "metadata")).message, false) })),
          );
          return { drafts, next_cursor: list.nextPageToken ?? null };
        }),
    );

  if (serves.has("get_draft"))
    server.registerTool(
      "get_draft",
      { description: "Reads one saved draft: its recipients, subject, bodies and attachments.", inputSchema: z.object({ draft_id: id("draft") }), annotations: READS },
      async ({ draft_id }) =>
        reading(async (mailbox) => {
          const draft = await mailbox.getDraft(draft_id, "full");
          return { draft_id: draft.id, ...summariseMessage(draft.message, true) };
        }),
    );

  if (serves.has("create_draft"))
    guardedTool(
      server,
      CONFIRMED_TOOLS,
      "create_draft",
      {
        description: "Saves a draft in the mailbox without sending it. Takes the same fields as send_email; send it later with send_email and from_draft_id.",
        inputSchema: CreateDraftSchema,
        annotations: DRAFTS,
      },
      { rule: never, ...createDraftGuard },
    );

  if (serves.has("send_email"))
    guardedTool(
      server,
      CONFIRMED_TOOLS,
      "send_email",
      {
        description:
          "Sends an email from this mailbox, or a saved draft (from_draft_id). A person is asked first and shown the sender, recipients, subject and attachment names; nothing is sent unless they approve. Refuses when no approval channel reaches the call.",
        inputSchema: SendEmailSchema,
        annotations: SENDS,
      },
      { rule: always, ...sendEmailGuard },
    );

  return server;
}
