// Asking a person for the current call: the one place that decides whether a call may ask, asks over the
// channel the gateway forwarded, keeps the wait alive, and turns a dropped call into a cancel. The guard
// and the capabilities seam both come through here, and so does every audit line about asking
// (docs/rules.md R-AUDIT-1).

import type { CallRef } from "../../contract/channel";
import { type ApprovalError, CONFIRM_SCHEMA, DEFAULT_POLL_INTERVAL_MS, describeApprovalError, type NoAnswer, type NoAnswerCause, requestApproval } from "./approval-client";
import { type AuditOutcome, type AuditReason, audit, auditTrail, cardDigest, decisionTrail } from "./audit";
import { DEFAULT_KEEPALIVE_MS, startKeepalive } from "./keepalive";
import { elicitationPosture } from "./posture";
import { type ChannelState, currentScope } from "./scope";

export const NO_CHANNEL_REASON = "no approval channel reached this call, so there is no one to ask: the caller sent no X-Elicitation-Url, or this server does not declare confirmations";

/**
 * The line every guarded call the waiver let through carries in its answer, whatever the bundle: a waiver spares the
 * person the question, never the caller the knowledge that nobody was asked (no setting lets a guarded call go
 * unannounced; docs/rules.md R-CHAN-14).
 */
export function waivedLine(slug: string): string {
  return `Nobody was asked: the roster's skipConfirmations on slug "${slug}" waived the question this call would have put to a person.`;
}

/** A refusal says why in words for the caller, and in a fixed code for the audit trail. */
export type Preflight = { ok: true; mode: "ask" | "skip"; slug: string } | { ok: false; reason: string; code: AuditReason };

export type Decision =
  | { kind: "approved"; asked: boolean; content: Record<string, unknown> }
  | { kind: "not-approved"; answer: NoAnswer; why?: string }
  /**
   * `edit`: the person accepted, but what their answer would run was refused (docs/rules.md R-EDIT-3, R-EDIT-4). A
   * refusal of its own kind would fall through a switch written before it; as a refusal, every caller runs nothing.
   */
  | { kind: "refused"; reason: string; edit?: true }
  | { kind: "failed"; reason: string };

/** What `vet` says of an accept's content before the `approved` line is written: it may run, or why it may not. */
export type Vetted = { ok: true } | { ok: false; code: AuditReason; why: string };

/** Whether this call may ask at all; checked before the tool reads or writes anything. */
export function preflight(): Preflight {
  const scope = currentScope();
  const posture = elicitationPosture(scope.env);
  if (!posture.ok) return { ok: false, reason: posture.reason, code: posture.variable === "ELICITATION_ENABLED" ? "elicitation_disabled" : "container_elicitation_url" };
  const channel = scope.call?.channel ?? { kind: "none" };
  switch (channel.kind) {
    case "none":
      return { ok: false, reason: NO_CHANNEL_REASON, code: "no_channel" };
    case "refused":
      return { ok: false, reason: `the gateway refused the approval channel: ${channel.reason}`, code: channel.malformed === true ? "malformed_channel" : "channel_refused" };
    case "fallback":
      // Only a guard that opts into the two-call token takes this channel (bundles/kit/token.ts); to any other,
      // it is no channel at all.
      return { ok: false, reason: `${NO_CHANNEL_REASON} (${channel.channel.reason})`, code: "no_channel" };
    case "ask":
    case "skip":
      return { ok: true, mode: channel.kind, slug: channel.channel.slug };
  }
}

/** A preflight refusal, written to the audit trail by whoever refuses the call on it (the guard, the seam, askPerson). */
export function auditRefusal(pre: Extract<Preflight, { ok: false }>): void {
  audit("refused", { reason: pre.code });
}

const APPROVAL_ERROR_REASON: Record<ApprovalError["code"], AuditReason> = {
  APPROVAL_HTTP: "approval_service_http",
  APPROVAL_REDIRECT: "approval_service_redirect",
  APPROVAL_UNREACHABLE: "approval_service_unreachable",
  APPROVAL_PROTOCOL: "approval_service_protocol",
};

/** The line an answer other than yes writes, by what the answer was and why there was no yes. */
export function noAnswerLine(answer: NoAnswer, cause: NoAnswerCause): { outcome: AuditOutcome; reason?: AuditReason } {
  switch (answer) {
    case "decline":
      return { outcome: "declined", reason: cause === "unticked" ? "confirm_unticked" : cause === "unrecognised" ? "unrecognised_answer" : undefined };
    case "cancel":
      return { outcome: "cancelled", reason: cause === "caller_left" ? "caller_left" : "approval_cancelled" };
    case "expired":
      return { outcome: "expired", reason: cause === "deadline" ? "deadline" : cause === "too_many_polls" ? "too_many_polls" : "approval_expired" };
  }
}

/** The CallRegistry record the gateway registered for this call, when the channel names one. */
export function callRefOf(channel: ChannelState): CallRef | undefined {
  return channel.kind === "ask" || channel.kind === "skip" || channel.kind === "fallback" ? channel.channel.call : undefined;
}

/** A positive integer from a var, clamped; production leaves it unset and gets the default. */
export function msFromEnv(env: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  const value = typeof raw === "string" ? Number(raw) : typeof raw === "number" ? raw : Number.NaN;
  if (!Number.isFinite(value) || value <= 0) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

export interface AskInput {
  message: string;
  requestedSchema?: Record<string, unknown>;
  /**
   * Reads a person's accept before it counts (the guard's edits, docs/rules.md R-EDIT-3): a refusal is a `refused`
   * line instead of `approved`, and the call runs nothing. Not called for the waiver, which nobody answered.
   */
  vet?: (content: Record<string, unknown>) => Promise<Vetted>;
}

export async function askPerson(input: AskInput): Promise<Decision> {
  const pre = preflight();
  if (!pre.ok) {
    auditRefusal(pre);
    return { kind: "refused", reason: pre.reason };
  }
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) {
    audit("refused", { reason: "not_a_tool_call" }, scope);
    return { kind: "refused", reason: NO_CHANNEL_REASON };
  }
  // The waiver answers accept inside the bundle and asks nobody (docs/rules.md R-CHAN-6).
  if (call.channel.kind === "skip") {
    audit("approved", { reason: "waived" }, scope);
    return { kind: "approved", asked: false, content: { confirm: true } };
  }
  if (call.channel.kind !== "ask" || call.deadline === undefined) {
    audit("refused", { reason: "no_channel" }, scope);
    return { kind: "refused", reason: NO_CHANNEL_REASON };
  }
  const trail = auditTrail(scope);
  const requestedSchema = input.requestedSchema ?? CONFIRM_SCHEMA;
  // What the person is shown, as the service receives it: its digest goes on every line from `asked` on (R-EDIT-6).
  const card = await cardDigest(input.message, requestedSchema);

  const stop = startKeepalive({
    progressToken: call.progressToken,
    notify: call.notify,
    intervalMs: msFromEnv(scope.env, "STRAD_KEEPALIVE_MS", DEFAULT_KEEPALIVE_MS, 20, 60_000),
    signal: scope.signal,
  });
  try {
    const result = await requestApproval({
      url: call.channel.channel.url,
      headers: call.channel.channel.headers,
      message: input.message,
      requestedSchema,
      toolName: call.toolName,
      deadline: call.deadline,
      signal: scope.signal,
      pollIntervalMs: msFromEnv(scope.env, "STRAD_POLL_INTERVAL_MS", DEFAULT_POLL_INTERVAL_MS, 20, 60_000),
      onCreated: (requestId) => {
        if (trail !== undefined) trail.request = requestId;
        const decision = decisionTrail(scope);
        if (decision !== undefined) decision.card = card;
        audit("asked", {}, scope);
      },
    });
    if (!result.ok) {
      audit("refused", { reason: APPROVAL_ERROR_REASON[result.error.code] }, scope);
      return { kind: "failed", reason: describeApprovalError(result.error) };
    }
    if (trail !== undefined) trail.approver = result.approver;
    if (result.answer !== "accept") {
      const line = noAnswerLine(result.answer, result.cause);
      audit(line.outcome, { reason: line.reason }, scope);
      return { kind: "not-approved", answer: result.answer, why: result.why };
    }
    if (scope.signal.aborted) {
      audit("cancelled", { reason: "caller_left" }, scope);
      return { kind: "not-approved", answer: "cancel", why: "the call was dropped" };
    }
    if (input.vet !== undefined) {
      const vetted = await input.vet(result.content);
      if (!vetted.ok) {
        audit("refused", { reason: vetted.code }, scope);
        return { kind: "refused", reason: vetted.why, edit: true };
      }
      if (scope.signal.aborted) {
        audit("cancelled", { reason: "caller_left" }, scope);
        return { kind: "not-approved", answer: "cancel", why: "the call was dropped" };
      }
    }
    audit("approved", {}, scope);
    return { kind: "approved", asked: true, content: result.content };
  } finally {
    stop();
  }
}
