// Approval Flow: the agent itself asks a person to approve a payload (request_approval), waits for the answer
// (await_approval, a bounded long-poll; check_status, a quick read) and then applies exactly what was approved,
// once (apply). Every tool rides on the caller's approval channel, over the same fallback-elicitation protocol as
// every bundle and through the kit: no usable channel, no tool (docs/rules.md R-FLOW-1). Results are JSON, in the
// shapes bundles/approval-flow/README.md lists.
import { type CallToolResult, inputRequired, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { META_REVIEW_URL } from "../../contract/elicitation";
import { slugNamespace } from "../../contract/slug";
import { isSecureOrLoopback } from "../../contract/url-policy";
import { type ApprovalError, createPrompt, DEFAULT_POLL_INTERVAL_MS, describeApprovalError, LONG_POLL_WAIT_S, type PromptPolled, pollPrompt } from "../kit/approval-client";
import { type AuditReason, audit, auditTrail, cardDigest, decisionTrail } from "../kit/audit";
import { argumentsFingerprint, auditRefusal, msFromEnv, noAnswerLine, preflight } from "../kit/confirm";
import { type FingerprintInput, fingerprint } from "../kit/fingerprint";
import { GateRefusal, gatedWrite, type WriteWords } from "../kit/gate";
import { type DeclaredAnnotations, declareGuard, refusal } from "../kit/guard";
import { DEFAULT_KEEPALIVE_MS, startKeepalive } from "../kit/keepalive";
import { PromptRefusal } from "../kit/prompt";
import { type CallScope, type CallState, currentScope } from "../kit/scope";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { buildFlowPrompt, checkPayload, MAX_PURPOSE_CHARS } from "./approval-flow.prompt";
import type { FlowRecord, FlowStatus, FlowStoreApi, NewFlow, Settled } from "./approval-flow.store";

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
/** How long past its bound a held poll may take to come back before it is cut. */
const BOUND_SLACK_MS = 200;
/** How long check_status and apply give the approval service to answer a plain poll. */
export const QUICK_POLL_MS = 5_000;
/** A create is given this long (and never past the call's deadline). */
export const CREATE_TIMEOUT_MS = 15_000;
/** The longest reviewUrl handed on; a longer one, or anything but an absolute https (or loopback http) URL, is null. */
export const MAX_REVIEW_URL_CHARS = 2048;
/**
 * The slug's own setting that hands the agent each request's review link: `<SLUG>__REVIEW_URL_TO_AGENT`, exactly
 * "true" (a roster `env` entry of the slug). Off by default: the link opens a decision page, and the agent's words
 * are not where a person should find it (docs/rules.md R-FLOW-9).
 */
export const REVIEW_URL_SETTING = "REVIEW_URL_TO_AGENT";
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ANNOTATIONS = {
  request: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  apply: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
} satisfies Record<string, DeclaredAnnotations>;

export const UNKNOWN_ID = "Not found: no approval request with this elicitationId belongs to this caller. Nothing was read or written.";
export const OTHER_SESSION = "this approval request was made on another approval session (another X-Elicitation-Url); only the session it was made on can await, check or apply it";
export const WAIVER_REASON = "this slug waives confirmations (skipConfirmations), but an approval request always asks a person: there is no one to ask on a waived slug";
const NO_CALLER = "the gateway named no caller on the approval channel, so the request could not be kept as this caller's";
const APPLY_WORDS: WriteWords = { act: "apply", done: "applied", target: "request" };
/** Where the gate "writes" an apply: nowhere on the network; the fetch it is handed moves the request in the store. */
const APPLY_URL = "https://approval-flow.invalid/apply";

/** An approval service's failure, as the audit trail words it. */
const SERVICE_REASON: Record<ApprovalError["code"], AuditReason> = {
  APPROVAL_HTTP: "approval_service_http",
  APPROVAL_REDIRECT: "approval_service_redirect",
  APPROVAL_UNREACHABLE: "approval_service_unreachable",
  APPROVAL_PROTOCOL: "approval_service_protocol",
};

type StoreNamespace = { idFromName(name: string): unknown; get(id: unknown): unknown };

function json(value: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, isError };
}

function text(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The request's expiry: ttlSeconds (3600 when unset) clamped to 60-86400 (docs/rules.md R-FLOW-3). */
export function ttlSeconds(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return TTL_SECONDS.fallback;
  return Math.min(TTL_SECONDS.max, Math.max(TTL_SECONDS.min, Math.floor(requested)));
}

/** The approval session a channel names: a digest of its URL, never the URL (a credential). */
export async function sessionTag(url: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(url));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether this slug opts in to handing the agent the review link: its own namespaced setting, exactly "true"; a bare name is not read (another slug of the bundle could set it). */
export function handsOnReviewUrl(env: Record<string, unknown>, slug: string): boolean {
  return env[`${slugNamespace(slug)}${REVIEW_URL_SETTING}`] === "true";
}

/** The review page's URL as the approval service named it, when it is one to hand on; otherwise null. */
export function reviewUrlFrom(meta: Record<string, unknown>): string | null {
  const value = meta[META_REVIEW_URL];
  if (typeof value !== "string" || value.length > MAX_REVIEW_URL_CHARS) return null;
  try {
    const url = new URL(value);
    return isSecureOrLoopback(url) && url.username === "" && url.password === "" && url.href === value ? value : null;
  } catch {
    return null;
  }
}

/** What the approval is bound to: this request, the purpose the person read and the payload they saw. */
export function flowBinding(flow: Pick<NewFlow, "id" | "purpose" | "payload">): FingerprintInput {
  return { operation: "approval_flow.apply", target: { elicitation: flow.id, purpose: flow.purpose, payload: flow.payload } };
}

interface Ready {
  scope: CallScope;
  call: CallState;
  /** The slug the call came on: a request asked under another slug of the mount reads as unknown. */
  slug: string;
  url: string;
  headers: Record<string, string>;
  caller: string;
  deadline: number;
  store: FlowStoreApi;
}

/** The kit's preflight, then what this bundle needs on top: an ask channel naming its caller, and its store. */
function ready(): { ok: true; ready: Ready } | { ok: false; answer: CallToolResult } {
  const scope = currentScope();
  const pre = preflight();
  if (!pre.ok) {
    auditRefusal(pre);
    return { ok: false, answer: refusal(pre.reason) };
  }
  const call = scope.call;
  const channel = call?.channel;
  if (call === undefined || channel?.kind !== "ask" || call.deadline === undefined) {
    audit("refused", { reason: "no_channel" }, scope);
    return { ok: false, answer: refusal(pre.mode === "skip" ? WAIVER_REASON : "no approval channel this bundle can ask over reached this call") };
  }
  const caller = channel.channel.caller;
  if (caller === undefined) {
    audit("refused", { reason: "malformed_channel" }, scope);
    return { ok: false, answer: refusal(NO_CALLER) };
  }
  const ns = scope.env.FLOWS as StoreNamespace | undefined;
  if (ns === undefined || typeof ns.idFromName !== "function")
    return { ok: false, answer: text("Not done: this bundle has no store for approval requests (the FLOWS binding is missing). Nothing was read or written.") };
  const store = ns.get(ns.idFromName(`caller:${caller}`)) as FlowStoreApi;
  return { ok: true, ready: { scope, call, slug: channel.channel.slug, url: channel.channel.url, headers: channel.channel.headers, caller, deadline: call.deadline, store } };
}

/** The caller's own request on this call's approval session, or the answer that says why not. */
async function ownRequest(r: Ready, elicitationId: string): Promise<{ ok: true; record: FlowRecord } | { ok: false; answer: CallToolResult }> {
  // Another caller's id is looked up in that caller's store only, so it reads exactly as an unknown one (R-FLOW-5).
  const record = ID.test(elicitationId) ? await r.store.get(elicitationId) : undefined;
  // One asked under another slug of this mount (its card named that slug) reads the same way.
  if (record === undefined || record.caller !== r.caller || (record.slug != null && record.slug !== r.slug)) return { ok: false, answer: text(UNKNOWN_ID) };
  if (record.session !== (await sessionTag(r.url))) return { ok: false, answer: refusal(OTHER_SESSION) };
  const trail = auditTrail(r.scope);
  if (trail !== undefined) {
    trail.request = record.requestId;
    trail.fingerprint = record.fingerprint;
    trail.approver = record.approver;
  }
  // Every later line of the request carries the digest of the card the person was shown (docs/rules.md R-EDIT-6).
  const decision = decisionTrail(r.scope);
  if (decision !== undefined) decision.card = record.card ?? null;
  return { ok: true, record };
}

/** Records what a poll (or the deadline) said, once; the call that moved the request writes its audit line. */
async function settle(r: Ready, record: FlowRecord, status: Settled, approver: string | null, line: { outcome: Parameters<typeof audit>[0]; reason?: AuditReason }): Promise<FlowRecord> {
  const settled = await r.store.settle(record.id, status, approver);
  if (settled === undefined) return record;
  if (settled.changed) {
    const trail = auditTrail(r.scope);
    if (trail !== undefined) trail.approver = settled.record.approver;
    audit(line.outcome, { reason: line.reason }, r.scope);
  }
  return settled.record;
}

/**
 * A pending request as a poll answered it: settled when the answer was one, unchanged while pending. An accept read at
 * or after the expiry counts as expired, unless the service's answer says it was decided before the expiry (its
 * `decidedAt`): a yes is only as good as the window the person was shown (docs/rules.md R-FLOW-12).
 */
async function settleFrom(r: Ready, record: FlowRecord, polled: Exclude<PromptPolled, { ok: false }>, readAt: number): Promise<FlowRecord> {
  if (polled.answer === "pending") return record;
  if (polled.answer === "accept") {
    const inTime = readAt < record.expiresAt || (polled.decidedAt !== undefined && polled.decidedAt < record.expiresAt);
    if (!inTime) return settle(r, record, "expired", null, { outcome: "expired", reason: "deadline" });
    return settle(r, record, "approved", polled.approver, { outcome: "approved" });
  }
  const line = noAnswerLine(polled.answer, polled.cause);
  return settle(r, record, polled.answer === "expired" ? "expired" : "rejected", polled.approver, line);
}

type Observed = { ok: true; record: FlowRecord } | { ok: false; answer: CallToolResult };

/**
 * The request's status, asking the approval service only while it is pending: until `until` (epoch ms) with
 * `Prefer: wait` (a service that does not hold polls is polled every STRAD_POLL_INTERVAL_MS), never past the
 * request's expiry. At or after the expiry one last plain poll reads what the service decided in time; without an
 * answer by then the request is expired (docs/rules.md R-FLOW-7, R-FLOW-8).
 */
async function observe(r: Ready, start: FlowRecord, until: number): Promise<Observed> {
  let record = start;
  const interval = msFromEnv(r.scope.env, "STRAD_POLL_INTERVAL_MS", DEFAULT_POLL_INTERVAL_MS, 20, 60_000);
  const poll = (waitS: number, deadline: number) =>
    pollPrompt({ url: r.url, headers: r.headers, requestId: record.requestId, waitS, deadline: Math.min(deadline, r.deadline), signal: r.scope.signal });
  for (;;) {
    if (record.status !== "pending") return { ok: true, record };
    if (r.scope.signal.aborted) return { ok: true, record };
    const now = Date.now();
    if (now >= record.expiresAt) {
      const last = await poll(0, now + QUICK_POLL_MS);
      if (last.ok && last.answer !== "pending") return { ok: true, record: await settleFrom(r, record, last, Date.now()) };
      // Nothing decided in time (or no word from the service): the deadline decides.
      return { ok: true, record: await settle(r, record, "expired", null, { outcome: "expired", reason: "deadline" }) };
    }
    const end = Math.min(until, record.expiresAt);
    const waitS = Math.min(LONG_POLL_WAIT_S, Math.floor((end - now) / 1000));
    const holding = waitS >= 1;
    // A held poll is cut at the bound (a service answering late must not hold the call past it); one held to the
    // expiry is given a moment to answer how the request ended. A plain poll gets QUICK_POLL_MS.
    const abortAt = Math.min(r.deadline, holding ? end + (end === record.expiresAt ? QUICK_POLL_MS : BOUND_SLACK_MS) : now + QUICK_POLL_MS);
    const started = Date.now();
    const polled = await poll(waitS, abortAt);
    if (!polled.ok) {
      if (r.scope.signal.aborted) return { ok: true, record };
      if (holding && polled.error.code === "APPROVAL_UNREACHABLE" && Date.now() >= abortAt - 5) {
        // The bound cut the held poll: still pending, unless the expiry has come meanwhile.
        if (Date.now() >= record.expiresAt) continue;
        return { ok: true, record };
      }
      audit("refused", { reason: SERVICE_REASON[polled.error.code] }, r.scope);
      return { ok: false, answer: text(`Not done: ${describeApprovalError(polled.error)}. The request's status is unknown for now; nothing was applied.`) };
    }
    record = await settleFrom(r, record, polled, Date.now());
    if (record.status !== "pending") return { ok: true, record };
    if (Date.now() >= until && Date.now() < record.expiresAt) return { ok: true, record };
    // A service that answered at once (no long-poll) is asked again after the poll interval, within the bound.
    const held = Date.now() - started;
    const pause = Math.min(Math.max(0, interval - held), Math.max(0, Math.min(until, record.expiresAt) - Date.now()));
    if (pause > 0) await sleep(pause, r.scope.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The status the agent is told: an approval not applied by its expiry has run out, and is expired (docs/rules.md R-FLOW-12). */
export const statusOf = (record: FlowRecord, now: number = Date.now()): FlowStatus => (record.status === "approved" && now >= record.expiresAt ? "expired" : record.status);

/** The key of the review link's question in request_approval's input_required, and what its retry's state starts with. */
export const REVIEW_QUESTION_KEY = "review";
const REVIEW_STATE = "af1.";
/** The words the host shows with the link: fixed, never the caller's purpose (a person reads the purpose on the page). */
export const REVIEW_LINK_MESSAGE = "A person's approval is asked for: open the approval service's review page to decide.";

/**
 * The state a pushed review link's retry brings back: which request it was, the link (as the service named it) and a
 * fingerprint of the arguments, so a retry is taken only for the very call that asked.
 */
function reviewState(id: string, reviewUrl: string, args: string): string {
  return `${REVIEW_STATE}${btoa(JSON.stringify({ id, reviewUrl, args })).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}`;
}

function readReviewState(state: string | undefined, args: string): { id: string; reviewUrl: string } | undefined {
  if (state === undefined || !state.startsWith(REVIEW_STATE) || state.length > 4 * MAX_REVIEW_URL_CHARS) return undefined;
  try {
    const decoded = JSON.parse(atob(state.slice(REVIEW_STATE.length).replaceAll("-", "+").replaceAll("_", "/"))) as { id?: unknown; reviewUrl?: unknown; args?: unknown };
    if (typeof decoded.id !== "string" || !ID.test(decoded.id) || typeof decoded.reviewUrl !== "string" || decoded.args !== args) return undefined;
    // Held to what a service-named link must be, so the retry can hand on nothing the first call would not have.
    const reviewUrl = reviewUrlFrom({ [META_REVIEW_URL]: decoded.reviewUrl });
    return reviewUrl === null ? undefined : { id: decoded.id, reviewUrl };
  } catch {
    return undefined;
  }
}

/**
 * The retry of a request_approval whose review link was put to the host (docs/rules.md R-FLOW-13): the answer names the
 * request this caller made on this session, so the result is that request's, and nothing new is asked or kept. The
 * state is the caller's own to send, and can name only the caller's own request on its own session: anything else is
 * not a retry, and the call asks afresh.
 */
async function reviewRetry(r: Ready): Promise<CallToolResult | undefined> {
  // Only where a link could have been put (the caller calls this only where the slug hands it on): a caller that takes
  // URL-mode elicitation.
  if (r.call.requestState === undefined || r.call.urlElicitation !== true) return undefined;
  const state = readReviewState(r.call.requestState, await argumentsFingerprint(r.call.toolName, r.call.arguments));
  if (state === undefined) return undefined;
  const own = await ownRequest(r, state.id);
  if (!own.ok) return undefined;
  return json({
    elicitationId: own.record.id,
    status: statusOf(own.record),
    reviewUrl: state.reviewUrl,
    expiresAt: new Date(own.record.expiresAt).toISOString(),
    // The link was put to a host that advertised URL-mode elicitation: on 2026-07-28 its client retried with this state,
    // on 2025-11-25 the gateway pushed it on the call's stream and retried at once (it waits for no answer to a link).
    elicitationDelivered: true,
  });
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
