// Approval Flow: the agent itself asks a person to approve a payload (request_approval), waits for the answer
// (await_approval, a bounded long-poll; check_status, a quick read) and then applies exactly what was approved,
// once (apply). Every tool rides on the caller's approval channel, over the same fallback-elicitation protocol as
// every bundle and through the kit: no usable channel, no tool (docs/rules.md R-FLOW-1). Results are JSON, in the
// shapes bundles/approval-flow/README.md lists.
import { type CallToolResult, inputRequired, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { META_REVIEW_URL } from "../../contract/elicitation";
import { createPrompt, describeApprovalError } from "../kit/approval-client";
import { audit, auditTrail, cardDigest, decisionTrail } from "../kit/audit";
import { argumentsFingerprint, msFromEnv } from "../kit/confirm";
import { type FingerprintInput, fingerprint } from "../kit/fingerprint";
import { GateRefusal, gatedWrite, type WriteWords } from "../kit/gate";
import { type DeclaredAnnotations, declareGuard } from "../kit/guard";
import { DEFAULT_KEEPALIVE_MS, startKeepalive } from "../kit/keepalive";
import { PromptRefusal } from "../kit/prompt";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { buildFlowPrompt, checkPayload, MAX_PURPOSE_CHARS } from "./approval-flow.prompt";
import { handsOnReviewUrl, REVIEW_LINK_MESSAGE, REVIEW_QUESTION_KEY, reviewRetry, reviewState, reviewUrlFrom } from "./approval-flow.review";
import type { FlowRecord, FlowStatus, NewFlow } from "./approval-flow.store";
import { json, observe, ownRequest, type Ready, ready, SERVICE_REASON, sessionTag, statusOf, text } from "./approval-flow.watch";
/**
 * The bundle's registry of confirmed tools. All four rest on the caller's approval channel: request_approval asks a
 * person, await_approval and check_status read that person's answer over the channel the request was made on, and
 * apply is the gated write of what the person approved. So each one refuses, before it reads or writes anything,
 * where the channel cannot be used, as every tool that asks does (docs/rules.md R-CHAN-9).
 */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["request_approval", "await_approval", "check_status", "apply"]);

export const TTL_SECONDS = { fallback: 3600, min: 60, max: 86_400 } as const;
/** The longest await_approval waits in one call: under the 25 s a reference service holds a poll, and under most hosts' tool-call timeouts. */
export const AWAIT_MAX_MS = 25_000;
/** What await_approval leaves between its bound and the channel's deadline (itself a margin before the hop's timeout). */
export const AWAIT_MARGIN_MS = 500;
/** A create is given this long (and never past the call's deadline). */
export const CREATE_TIMEOUT_MS = 15_000;

const ANNOTATIONS = {
  request: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  apply: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
} satisfies Record<string, DeclaredAnnotations>;

const APPLY_WORDS: WriteWords = { act: "apply", done: "applied", target: "request" };
/** Where the gate "writes" an apply: nowhere on the network; the fetch it is handed moves the request in the store. */
const APPLY_URL = "https://approval-flow.invalid/apply";

/** The request's expiry: ttlSeconds (3600 when unset) clamped to 60-86400 (docs/rules.md R-FLOW-3). */
export function ttlSeconds(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return TTL_SECONDS.fallback;
  return Math.min(TTL_SECONDS.max, Math.max(TTL_SECONDS.min, Math.floor(requested)));
}

/** What the approval is bound to: this request, the purpose the person read and the payload they saw. */
export function flowBinding(flow: Pick<NewFlow, "id" | "purpose" | "payload">): FingerprintInput {
  return { operation: "approval_flow.apply", target: { elicitation: flow.id, purpose: flow.purpose, payload: flow.payload } };
}

async function requestApproval(args: { purpose: string; payload?: unknown; ttlSeconds?: number }): Promise<CallToolResult> {
  const got = ready();
  if (!got.ok) return got.answer;
  const r = got.ready;
  const slug = r.call.channel.kind === "ask" ? r.call.channel.channel.slug : r.scope.mount;
  // The review link is asked for, and handed on, only where the slug opts in (R-FLOW-9).
  const withReviewUrl = handsOnReviewUrl(r.scope.env, slug);
  const retried = withReviewUrl ? await reviewRetry(r) : undefined;
  if (retried !== undefined) return retried;
  const payload = checkPayload(args.payload);
  if (!payload.ok) return text(`Not done: ${payload.reason}. No one was asked.`);
  const now = Date.now();
  const expiresAt = now + ttlSeconds(args.ttlSeconds) * 1000;
  const id = crypto.randomUUID();
  const proposed = crypto.randomUUID();
  let message: string;
  try {
    message = buildFlowPrompt({ slug, purpose: args.purpose, payload: JSON.parse(payload.text), expiresAt });
  } catch (error) {
    if (error instanceof PromptRefusal) {
      audit("refused", { reason: error.code === "too_large" ? "prompt_too_large" : "prompt_value_too_long" }, r.scope);
      return text(`Not done: ${error.message}, so no one was asked.`);
    }
    throw error;
  }
  const requestedSchema = {
    type: "object",
    properties: { confirm: { type: "boolean", title: "Approve", description: "Tick to let the agent carry out exactly this payload, once." } },
    required: ["confirm"],
  };
  const flow: NewFlow = {
    id,
    requestId: proposed,
    caller: r.caller,
    slug,
    session: await sessionTag(r.url),
    purpose: args.purpose,
    payload: payload.text,
    fingerprint: await fingerprint(flowBinding({ id, purpose: args.purpose, payload: payload.text })),
    // The card exactly as the approval service will receive it: its digest goes on every line from `asked` on (R-EDIT-6).
    card: await cardDigest(message, requestedSchema),
    createdAt: now,
    expiresAt,
  };
  // Kept first, so a person is never shown a request the bundle could not hand out once approved.
  const kept = await r.store.create(flow);
  if (!kept.ok)
    return text(
      `Not done: this caller already holds the most approval requests it may${kept.reason === "too_many" ? " pending at once" : ""}: wait for some to be decided or to expire. No one was asked.`,
    );
  const created = await createPrompt({
    url: r.url,
    headers: r.headers,
    message,
    requestedSchema,
    toolName: r.call.toolName,
    requestId: proposed,
    expiresAt,
    ...(withReviewUrl ? { meta: { [META_REVIEW_URL]: true } } : {}),
    deadline: Math.min(r.deadline, Date.now() + CREATE_TIMEOUT_MS),
    signal: r.scope.signal,
  });
  if (!created.ok) {
    await r.store.drop(id);
    audit("refused", { reason: SERVICE_REASON[created.error.code] }, r.scope);
    return text(`Not done: ${describeApprovalError(created.error)}. No approval request was made.`);
  }
  // The service named its own id: that is the one to poll.
  if (created.requestId !== proposed) await r.store.rebind(id, created.requestId);
  const trail = auditTrail(r.scope);
  if (trail !== undefined) {
    trail.request = created.requestId;
    trail.fingerprint = flow.fingerprint;
  }
  const decision = decisionTrail(r.scope);
  if (decision !== undefined) decision.card = flow.card ?? null;
  audit("asked", {}, r.scope);
  const reviewUrl = withReviewUrl ? reviewUrlFrom(created.meta) : null;
  // A host that takes URL-mode elicitation is handed the review link as a question of its own, best effort: the call
  // answers input_required, and the retry answers with this request (R-FLOW-13). Only where the slug hands the link on.
  if (reviewUrl !== null && r.call.urlElicitation === true) {
    r.call.question = inputRequired({
      inputRequests: { [REVIEW_QUESTION_KEY]: inputRequired.elicitUrl({ message: REVIEW_LINK_MESSAGE, url: reviewUrl }) },
      requestState: reviewState(id, reviewUrl, await argumentsFingerprint(r.call.toolName, r.call.arguments)),
    }) as unknown as Record<string, unknown>;
  }
  return json({
    elicitationId: id,
    status: "pending",
    reviewUrl,
    expiresAt: new Date(expiresAt).toISOString(),
    elicitationDelivered: false,
  });
}

/** What await_approval, check_status and apply share: a usable channel, and a request this caller made on this session. */
async function onOwnRequest(elicitationId: string, work: (r: Ready, record: FlowRecord) => Promise<CallToolResult>): Promise<CallToolResult> {
  const got = ready();
  if (!got.ok) return got.answer;
  const own = await ownRequest(got.ready, elicitationId);
  return own.ok ? work(got.ready, own.record) : own.answer;
}

function awaitApproval(args: { elicitationId: string }): Promise<CallToolResult> {
  return onOwnRequest(args.elicitationId, async (r, start) => {
    // The bound: AWAIT_MAX_MS, and always before the channel's deadline, which sits a margin before the hop's timeout.
    const until = Math.min(Date.now() + AWAIT_MAX_MS, r.deadline - AWAIT_MARGIN_MS);
    const stop = startKeepalive({
      progressToken: r.call.progressToken,
      notify: r.call.notify,
      intervalMs: msFromEnv(r.scope.env, "STRAD_KEEPALIVE_MS", DEFAULT_KEEPALIVE_MS, 20, 60_000),
      signal: r.scope.signal,
    });
    try {
      const seen = await observe(r, start, until);
      return seen.ok ? json({ status: statusOf(seen.record) }) : seen.answer;
    } finally {
      stop();
    }
  });
}

function checkStatus(args: { elicitationId: string }): Promise<CallToolResult> {
  return onOwnRequest(args.elicitationId, async (r, start) => {
    const seen = await observe(r, start, Date.now());
    return seen.ok ? json({ status: statusOf(seen.record) }) : seen.answer;
  });
}

const NOT_APPLIED: Record<Exclude<FlowStatus, "approved" | "applied">, string> = {
  pending: "Not applied: nobody has approved this request yet. Call await_approval to wait for the decision.",
  rejected: "Not applied: the request was rejected. Nothing is handed out for it.",
  expired: "Not applied: the request expired before anyone approved it. Ask for approval again.",
};

/** Why an approval that ran out is not applied: the person was told it ends at the expiry (R-FLOW-12). */
const ranOut = (record: FlowRecord): string =>
  `Not applied: the approval ran out at ${new Date(record.expiresAt).toISOString()}, the expiry the person was shown, before it was applied. Nothing is handed out for it; ask for approval again.`;

function apply(args: { elicitationId: string }): Promise<CallToolResult> {
  return onOwnRequest(args.elicitationId, (r, start) => applyOwn(r, start));
}

async function applyOwn(r: Ready, start: FlowRecord): Promise<CallToolResult> {
  const seen = await observe(r, start, Date.now());
  if (!seen.ok) return seen.answer;
  const record = seen.record;
  if (record.status === "applied") {
    audit("refused", { reason: "approval_spent" }, r.scope);
    return json({ status: "applied", message: "Already applied: the payload was handed out once, by an earlier apply, and is not handed out again." });
  }
  if (record.status !== "approved") {
    audit("refused", { reason: "not_approved" }, r.scope);
    return json({ status: record.status, message: NOT_APPLIED[record.status] }, true);
  }
  // An approval is used only inside the window the person was shown; the store checks it again as it hands out.
  if (Date.now() >= record.expiresAt) {
    audit("refused", { reason: "not_approved" }, r.scope);
    return json({ status: "expired", message: ranOut(record) }, true);
  }
  // A gated write like any other: the approval covers this request as the person saw it, and the call must win its
  // single claim (held while the gateway vouches for its caller) before the store hands the payload out, once.
  r.call.approval = { fingerprint: record.fingerprint, approved: true };
  let handed: string | undefined;
  let lapsed = false;
  try {
    const response = await gatedWrite(
      APPLY_URL,
      { method: "POST" },
      {
        binds: flowBinding(record),
        needsApproval: true,
        words: APPLY_WORDS,
        fetch: async () => {
          const applied = await r.store.apply(record.id, Date.now());
          if (applied.ok) handed = applied.payload;
          // Still approved but not applied: the expiry came while the call won its claim.
          else lapsed = applied.record?.status === "approved";
          return new Response(null, { status: applied.ok ? 200 : 409 });
        },
      },
    );
    if (lapsed) return json({ status: "expired", message: ranOut(record) }, true);
    if (handed === undefined || response.status !== 200) {
      return json({ status: "applied", message: "Already applied: the payload was handed out once, by an earlier apply, and is not handed out again." });
    }
  } catch (error) {
    if (error instanceof GateRefusal) return text(`Not done: ${error.message}. The request is still approved; nothing was handed out.`);
    throw error;
  }
  // The payload exactly as stored at request time, never a value the agent re-supplies.
  const result = JSON.parse(`{"status":"applied","payload":${handed}}`) as Record<string, unknown>;
  return { content: [{ type: "text", text: `{"status":"applied","payload":${handed}}` }], structuredContent: result };
}

// Every tool's definition, schema and handler is built once per isolate, not per request: the SDK serves one exchange
// per server, so the bundle builds a server for each request, and nothing of a tool's definition depends on the
// request. A handler reads its mount, env and call from the call's scope. Every tool is a confirmed one, resting on the
// caller's approval channel. check_status is also a plain tool the kit's lane may serve (bundles/kit/tools.ts): it reads
// the channel from the call's scope, as the SDK's path would hand it, asks nobody and sends no notification (its one
// poll is a plain one); await_approval sends keepalives, and request_approval and apply ask or act, so they stay the SDK's.

const IdInput = jsonSchemaOnce(z.object({ elicitationId: z.string().min(1).max(128).describe("The elicitationId request_approval answered.") }));

const REQUEST_APPROVAL = {
  description:
    "Asks a person, on the caller's approval channel, to approve a JSON payload before the agent carries it out. Returns at once with an elicitationId; then call await_approval, and apply once it is approved. The payload is stored and is exactly what apply hands back.",
  inputSchema: jsonSchemaOnce(
    z.object({
      purpose: z.string().min(1).max(MAX_PURPOSE_CHARS).describe("What the payload is for, in a sentence the person reads first."),
      payload: z.unknown().describe("The JSON value to approve: exactly what apply will hand back."),
      ttlSeconds: z.number().optional().describe("How long the person has to decide, in seconds: 3600 unless set, clamped to 60-86400."),
    }),
  ),
  annotations: ANNOTATIONS.request,
};
const AWAIT_APPROVAL = {
  description: `Waits for the person's decision: returns the moment it lands, or "pending" after at most ${AWAIT_MAX_MS / 1000} s (call it again), never past the request's expiry. Status: pending, approved, rejected, applied or expired.`,
  inputSchema: IdInput,
  annotations: ANNOTATIONS.read,
};
const CHECK_STATUS = { description: "The request's status now, without waiting: pending, approved, rejected, applied or expired.", inputSchema: IdInput, annotations: ANNOTATIONS.read };
const APPLY = {
  description:
    "Hands back the approved payload, once, for the agent to carry out, and only before the request's expiresAt: an approval not applied by then has run out. A pending, rejected or expired request cannot be applied; a second apply answers applied without the payload.",
  inputSchema: IdInput,
  annotations: ANNOTATIONS.apply,
};

/** A tool of the bundle, declared as one that asks (under the registry's checks) on each server it is registered on. */
function flowTool(name: string, config: { description: string; inputSchema: z.ZodType; annotations: DeclaredAnnotations }, handler: (args: never) => Promise<CallToolResult>): ToolEntry {
  return {
    name,
    register: (server) => {
      declareGuard(server, CONFIRMED_TOOLS, name, "always");
      server.registerTool(name, config as never, handler as never);
    },
  };
}

/** A confirmed tool that asks nobody and sends no notification: registered as flowTool does, and served by the kit's lane too. */
function flowReadTool(name: string, config: typeof CHECK_STATUS, run: (args: { elicitationId: string }) => Promise<CallToolResult>): ToolEntry {
  const entry = plainTool(name, config, run);
  return {
    ...entry,
    register: (server) => {
      declareGuard(server, CONFIRMED_TOOLS, name, "always");
      entry.register(server);
    },
  };
}

/** Every tool of the bundle, in the order its mount lists them. */
const FLOW_TOOLS: readonly ToolEntry[] = [
  flowTool("request_approval", REQUEST_APPROVAL, requestApproval),
  flowTool("await_approval", AWAIT_APPROVAL, awaitApproval),
  flowReadTool("check_status", CHECK_STATUS, checkStatus),
  flowTool("apply", APPLY, apply),
];

export function approvalFlowServer(mount: string, _env: Record<string, unknown>): McpServer {
  return registerTools(new McpServer({ name: `strad-approval-flow/${mount}`, version: "0.1.0" }), FLOW_TOOLS);
}
