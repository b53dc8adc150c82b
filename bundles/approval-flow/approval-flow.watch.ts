// One approval request's life as the tools see it: the call's channel and the caller's store (`ready`), the caller's
// own request on this call's approval session (`ownRequest`), and its status, read from the approval service while it
// is pending and settled once (`observe`, `settle`): a yes counts only within the expiry the person was shown
// (docs/rules.md R-FLOW-5, R-FLOW-7, R-FLOW-8, R-FLOW-12). And the tools' two forms of answer (`json`, `text`).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type ApprovalError, DEFAULT_POLL_INTERVAL_MS, describeApprovalError, LONG_POLL_WAIT_S, type PromptPolled, pollPrompt } from "../kit/approval-client";
import { type AuditReason, audit, auditTrail, decisionTrail } from "../kit/audit";
import { auditRefusal, msFromEnv, noAnswerLine, preflight } from "../kit/confirm";
import { refusal } from "../kit/guard";
import { type CallScope, type CallState, currentScope } from "../kit/scope";
import type { FlowRecord, FlowStatus, FlowStoreApi, Settled } from "./approval-flow.store";

/** How long past its bound a held poll may take to come back before it is cut. */
const BOUND_SLACK_MS = 200;
/** How long check_status and apply give the approval service to answer a plain poll. */
export const QUICK_POLL_MS = 5_000;
/** An elicitationId as request_approval mints it: a UUID. */
export const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const UNKNOWN_ID = "Not found: no approval request with this elicitationId belongs to this caller. Nothing was read or written.";
export const OTHER_SESSION = "this approval request was made on another approval session (another X-Elicitation-Url); only the session it was made on can await, check or apply it";
export const WAIVER_REASON = "this slug waives confirmations (skipConfirmations), but an approval request always asks a person: there is no one to ask on a waived slug";
const NO_CALLER = "the gateway named no caller on the approval channel, so the request could not be kept as this caller's";

/** An approval service's failure, as the audit trail words it. */
export const SERVICE_REASON: Record<ApprovalError["code"], AuditReason> = {
  APPROVAL_HTTP: "approval_service_http",
  APPROVAL_REDIRECT: "approval_service_redirect",
  APPROVAL_UNREACHABLE: "approval_service_unreachable",
  APPROVAL_PROTOCOL: "approval_service_protocol",
};

type StoreNamespace = { idFromName(name: string): unknown; get(id: unknown): unknown };

/** A tool's answer as JSON, with the same value as structured content. */
export function json(value: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, isError };
}

/** A refusal or failure in words. */
export function text(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The approval session a channel names: a digest of its URL, never the URL (a credential). */
export async function sessionTag(url: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(url));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface Ready {
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
export function ready(): { ok: true; ready: Ready } | { ok: false; answer: CallToolResult } {
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
export async function ownRequest(r: Ready, elicitationId: string): Promise<{ ok: true; record: FlowRecord } | { ok: false; answer: CallToolResult }> {
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
export async function settle(r: Ready, record: FlowRecord, status: Settled, approver: string | null, line: { outcome: Parameters<typeof audit>[0]; reason?: AuditReason }): Promise<FlowRecord> {
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
export async function observe(r: Ready, start: FlowRecord, until: number): Promise<Observed> {
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
