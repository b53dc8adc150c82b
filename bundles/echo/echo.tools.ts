// The echo bundle's tools: read-only helpers that make the whole gateway path real and testable.
import { type CallToolResult, McpServer, type ServerContext } from "@modelcontextprotocol/server";
import * as z from "zod";
import type { CallRegistryNamespace } from "../../contract/call-registry";
import { CHANNEL_META_KEY, ChannelSchema } from "../../contract/channel";
import { slugNamespace } from "../../contract/slug";
import { currentScope } from "../kit/scope";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { DEMO_ASK_TOOL, demoAskOn } from "./echo.ask";
import { DEMO_TOOLS } from "./echo.demo";

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What arrived under _meta, with every credential replaced by its SHA-256 so tests can compare it. */
async function summariseMeta(meta: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
  const keys = Object.keys(meta ?? {}).sort();
  const raw = meta?.[CHANNEL_META_KEY];
  if (raw === undefined || raw === null || typeof raw !== "object") return { keys, channel: null };
  const channel = raw as Record<string, unknown>;
  const headers = (channel.headers ?? {}) as Record<string, string>;
  const hashedHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) hashedHeaders[name] = await sha256(value);
  return {
    keys,
    channel: {
      fields: Object.keys(channel).sort(),
      slug: channel.slug ?? null,
      urlSha256: typeof channel.url === "string" ? await sha256(channel.url) : null,
      ttlMs: channel.ttlMs ?? null,
      headers: hashedHeaders,
      refused: channel.refused ?? null,
      skip: channel.skip ?? null,
      call: channel.call ?? null,
    },
  };
}

/**
 * The test probes (report_meta: hashes of the channel's edge credential and the call nonce; claim_race) are
 * served only where the dev switch is on, never beside a production token (docs/rules.md R-TOOL-6).
 */
export function devProbesOn(env: Record<string, unknown>): boolean {
  return env.STRAD_DEV_PROBES === "1";
}

// Every tool's definition and handler is built once per isolate: a bundle builds a fresh server for each request
// (the SDK serves one exchange per instance), and zod schemas built per request were most of what a call allocated.
// A handler reads its mount and env from the call's scope, which is what the factory was given for this request.

const ECHO = { description: "Returns the text it was given.", inputSchema: jsonSchemaOnce(z.object({ text: z.string().max(10_000) })), annotations: READ_ONLY };
const echoText = async ({ text }: { text: string }): Promise<CallToolResult> => ({ content: [{ type: "text", text }] });

// What the roster's servers[].env gives this mount (`GREETING`, rendered as <SLUG>__GREETING by scripts/roster-env.mjs):
// a mount reads its own namespace only, so one slug's setting never shows on another's mount.
const ABOUT = { description: "Says which echo mount answered and the greeting the roster gave it.", inputSchema: jsonSchemaOnce(z.object({})), annotations: READ_ONLY };
const about = async (): Promise<CallToolResult> => {
  const { mount, env } = currentScope();
  const value = env[`${slugNamespace(mount)}GREETING`];
  const greeting = typeof value === "string" ? value : null;
  return { content: [{ type: "text", text: JSON.stringify({ mount, greeting }) }], structuredContent: { mount, greeting } };
};

const ADD = { description: "Adds two numbers.", inputSchema: jsonSchemaOnce(z.object({ a: z.number(), b: z.number() })), annotations: READ_ONLY };
const add = async ({ a, b }: { a: number; b: number }): Promise<CallToolResult> => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } });

const REPORT_META = { description: "Reports which _meta keys reached this mount (credentials hashed).", inputSchema: jsonSchemaOnce(z.object({})), annotations: READ_ONLY };
const reportMeta = async (_args: unknown, ctx: ServerContext): Promise<CallToolResult> => {
  const summary = await summariseMeta(ctx.mcpReq._meta as Record<string, unknown> | undefined);
  return { content: [{ type: "text", text: JSON.stringify({ mount: currentScope().mount, ...summary }) }] };
};

const WAIT_FOR_ABORT = {
  description: "Waits until the gateway's request is aborted or ms elapse, then reports which came first to the recorder.",
  inputSchema: jsonSchemaOnce(z.object({ ms: z.number().int().min(1).max(600_000), tag: z.string().max(100) })),
  annotations: READ_ONLY,
};
const waitForAbort = async ({ ms, tag }: { ms: number; tag: string }): Promise<CallToolResult> => {
  const scope = currentScope();
  const outcome = await new Promise<"aborted" | "elapsed">((resolve) => {
    if (scope.signal.aborted) return resolve("aborted");
    const timer = setTimeout(() => resolve("elapsed"), ms);
    scope.signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve("aborted");
      },
      { once: true },
    );
  });
  const recorder = scope.env.RECORDER_URL;
  if (typeof recorder === "string") {
    scope.waitUntil(
      fetch(`${recorder}/events`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ kind: "wait_for_abort", tag, outcome, at: Date.now() }) }).then((r) =>
        r.body?.cancel(),
      ),
    );
  }
  return { content: [{ type: "text", text: outcome }] };
};

const PROGRESS_DEMO = {
  description: "Sends `steps` progress notifications, `ms` apart, against the call's progress token, then answers.",
  inputSchema: jsonSchemaOnce(z.object({ steps: z.number().int().min(1).max(20), ms: z.number().int().min(0).max(5_000) })),
  annotations: READ_ONLY,
};
const progressDemo = async ({ steps, ms }: { steps: number; ms: number }, ctx: ServerContext): Promise<CallToolResult> => {
  const token = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.progressToken;
  for (let i = 1; i <= steps; i++) {
    await new Promise((r) => setTimeout(r, ms));
    if (typeof token === "string" || typeof token === "number") {
      await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } });
    }
  }
  return { content: [{ type: "text", text: `done after ${steps} steps` }] };
};

const CLAIM_RACE = {
  description: "Claims this call's record n times at once and reports how many claims succeeded (at most one may).",
  inputSchema: jsonSchemaOnce(z.object({ n: z.number().int().min(1).max(100) })),
  annotations: READ_ONLY,
};
const claimRace = async ({ n }: { n: number }, ctx: ServerContext): Promise<CallToolResult> => {
  const parsed = ChannelSchema.safeParse((ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[CHANNEL_META_KEY]);
  const call = parsed.success && "call" in parsed.data ? parsed.data.call : undefined;
  if (call === undefined) return { content: [{ type: "text", text: "this call has no record to claim" }], isError: true };
  const ns = currentScope().env.CALLS as CallRegistryNamespace;
  const stub = ns.get(ns.idFromName(call.scope));
  const results = await Promise.all(Array.from({ length: n }, () => stub.claim(call.key, call.nonce)));
  const won = results.filter(Boolean).length;
  return { content: [{ type: "text", text: String(won) }], structuredContent: { won } };
};

// The order is the one tools/list shows; the probes are served only with the dev switch on.
const ECHO_TOOLS: readonly (ToolEntry & { probe?: true })[] = [
  // Plain tools: the kit's lane may answer their calls without an SDK server (bundles/kit/lane.ts).
  plainTool("echo", ECHO, echoText),
  plainTool("about", ABOUT, about),
  plainTool("add", ADD, add),
  { name: "report_meta", probe: true, register: (server) => server.registerTool("report_meta", REPORT_META, reportMeta) },
  { name: "wait_for_abort", register: (server) => server.registerTool("wait_for_abort", WAIT_FOR_ABORT, waitForAbort) },
  { name: "progress_demo", register: (server) => server.registerTool("progress_demo", PROGRESS_DEMO, progressDemo) },
  { name: "claim_race", probe: true, register: (server) => server.registerTool("claim_race", CLAIM_RACE, claimRace) },
  ...DEMO_TOOLS,
];
const WITH_PROBES: readonly ToolEntry[] = ECHO_TOOLS;
const WITHOUT_PROBES: readonly ToolEntry[] = ECHO_TOOLS.filter((tool) => tool.probe !== true);
// The pass-through demo (echo.ask.ts) joins last, and only where the dev stack turns it on.
const TABLES = new Map<string, readonly ToolEntry[]>([
  ["probes", WITH_PROBES],
  ["plain", WITHOUT_PROBES],
  ["probes+ask", [...WITH_PROBES, DEMO_ASK_TOOL]],
  ["plain+ask", [...WITHOUT_PROBES, DEMO_ASK_TOOL]],
]);

export function echoServer(mount: string, env: Record<string, unknown>): McpServer {
  const server = new McpServer({ name: `strad-echo/${mount}`, version: "0.1.0" });
  return registerTools(server, TABLES.get(`${devProbesOn(env) ? "probes" : "plain"}${demoAskOn(env) ? "+ask" : ""}`) as readonly ToolEntry[]);
}
