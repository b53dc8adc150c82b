// Asking a person for the current call: the one place that decides whether a call may ask, asks over the
// channel the gateway forwarded, keeps the wait alive, and turns a dropped call into a cancel. The guard
// and the capabilities seam both come through here, and so does every audit line about asking
// (docs/rules.md R-AUDIT-1).

import { inputRequired } from "@modelcontextprotocol/server";
import type { CallRegistryNamespace } from "../../contract/call-registry";
import type { CallRef, ClientChannel } from "../../contract/channel";
import { type ApprovalError, CONFIRM_SCHEMA, DEFAULT_POLL_INTERVAL_MS, describeApprovalError, type NoAnswer, type NoAnswerCause, requestApproval } from "./approval-client";
import { type AuditOutcome, type AuditReason, audit, auditTrail, canonicalJson, cardDigest, decisionTrail } from "./audit";
import { fingerprint } from "./fingerprint";
import { DEFAULT_KEEPALIVE_MS, startKeepalive } from "./keepalive";
import { elicitationPosture } from "./posture";
import { type CallScope, type CallState, type ChannelState, currentScope } from "./scope";
import { openSeal, type SealTarget, sameTarget, seal, sealKeys, sealNonce, sealTtlMs } from "./seal";

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
export type Preflight = { ok: true; mode: "ask" | "skip" | "client"; slug: string } | { ok: false; reason: string; code: AuditReason };

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
    case "client":
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
  return channel.kind === "ask" || channel.kind === "skip" || channel.kind === "fallback" || channel.kind === "client" ? channel.channel.call : undefined;
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
  /**
   * The fingerprint of the target the card was made of (what the approval binds): a question asked at the client
   * seals it, so its answer covers that target only (bundles/kit/seal.ts SealTarget.binds). Absent: the question alone.
   */
  binds?: string;
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
  // The person sits at the caller's own client: the call answers with the question, and the retry acts (R-SEAL-1).
  if (call.channel.kind === "client") return askAtClient(input, scope, call, call.channel.channel);
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

/** The key of the one question a client channel puts in its input_required result (and reads back from inputResponses). */
export const CLIENT_QUESTION_KEY = "strad_confirm";

/** What a client's answer says, read as the approval service's is: only accept with the box ticked acts (R-CLIENT-2). */
type ClientAnswer = { answer: "accept"; content: Record<string, unknown> } | { answer: NoAnswer; cause: NoAnswerCause };

function readClientAnswer(value: unknown): ClientAnswer | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { action, content } = value as { action?: unknown; content?: unknown };
  switch (action) {
    case "accept":
      if (typeof content === "object" && content !== null && !Array.isArray(content) && (content as Record<string, unknown>).confirm === true) {
        return { answer: "accept", content: content as Record<string, unknown> };
      }
      return { answer: "decline", cause: "unticked" };
    case "decline":
    case "cancel":
      return { answer: action, cause: "answered" };
    default:
      return undefined;
  }
}

/** The fingerprint of the call's arguments as they came (a seal binds them, not the target the tool resolves). */
export function argumentsFingerprint(tool: string, args: unknown): Promise<string> {
  return fingerprint({ operation: `arguments:${tool}`, target: { arguments: canonicalJson(args ?? {}) } });
}

/** Spends a seal's nonce in the caller's CallRegistry object: true once, false after; undefined when it could not be asked. */
async function spendNonce(env: Record<string, unknown>, ref: CallRef, nonce: string, expiresAt: number): Promise<boolean | undefined> {
  const ns = env.CALLS as CallRegistryNamespace | undefined;
  if (ns === undefined || typeof ns.idFromName !== "function") return undefined;
  try {
    return (await ns.get(ns.idFromName(ref.scope)).spendSeal(nonce, expiresAt)) === true;
  } catch {
    return undefined;
  }
}

/** What a call that put its question to the client says, should the tool's own words ever reach anyone. */
const ASKED_AT_CLIENT = "the question was put to the person at the client; the call acts only when its client retries with the answer";

/**
 * The client path (docs/rules.md R-SEAL-1, R-SEAL-2, R-SEAL-3): a call whose retry brings an answer under a seal that
 * opens with a current key, has not expired, is for this very caller, slug, tool, arguments and question, and whose
 * nonce was never spent, is answered with that answer. Any other call, the first one included, gets the question and a
 * fresh seal (never an error: R-SEAL-2), and acts on nothing: the tool's answer is replaced by the question.
 */
async function askAtClient(input: AskInput, scope: CallScope, call: CallState, channel: ClientChannel): Promise<Decision> {
  const keys = sealKeys(scope.env);
  if (!keys.ok) {
    audit("refused", { reason: "seal_key_missing" }, scope);
    return { kind: "refused", reason: keys.reason };
  }
  const requestedSchema = input.requestedSchema ?? CONFIRM_SCHEMA;
  const question = await cardDigest(input.message, requestedSchema);
  const decision = decisionTrail(scope);
  if (decision !== undefined) decision.card = question;
  const target: SealTarget = { caller: channel.caller, slug: channel.slug, tool: call.toolName, args: await argumentsFingerprint(call.toolName, call.arguments), question, binds: input.binds ?? "" };
  let why: AuditReason = "client_question";
  if (call.requestState !== undefined) {
    const opened = await openSeal(call.requestState, keys.keys);
    const answer = readClientAnswer(call.inputResponses?.[CLIENT_QUESTION_KEY]);
    if (!opened.ok) why = opened.problem === "expired" ? "seal_expired" : "seal_unopened";
    else if (!sameTarget(opened.payload, target)) why = "seal_other_target";
    else if (answer !== undefined) {
      // Spent before anything is decided, so a replay of this very retry, decline or accept, is asked again.
      const spent = await spendNonce(scope.env, channel.call, opened.payload.nonce, opened.payload.exp);
      if (spent === undefined) {
        audit("refused", { reason: "seal_store_failed" }, scope);
        return { kind: "failed", reason: "the answer's seal could not be checked against the gateway's record, so nothing acted" };
      }
      if (!spent) why = "seal_used";
      else return answeredAtClient(input, scope, answer);
    }
  }
  const state = await seal({ ...target, exp: Date.now() + sealTtlMs(scope.env), nonce: sealNonce() }, keys.keys);
  call.question = inputRequired({
    // The kit's schemas are the form's own (approval-client CONFIRM_SCHEMA, edits.ts editForm): the SDK's type is narrower than Record.
    inputRequests: { [CLIENT_QUESTION_KEY]: inputRequired.elicit({ message: input.message, requestedSchema: requestedSchema as Parameters<typeof inputRequired.elicit>[0]["requestedSchema"] }) },
    requestState: state,
  }) as unknown as Record<string, unknown>;
  audit("asked", { reason: why }, scope);
  return { kind: "not-approved", answer: "cancel", why: ASKED_AT_CLIENT };
}

async function answeredAtClient(input: AskInput, scope: CallScope, answer: ClientAnswer): Promise<Decision> {
  if (answer.answer !== "accept") {
    const line = noAnswerLine(answer.answer, answer.cause);
    // A plain decline or cancel says where it was answered; an unticked accept keeps its own reason.
    audit(line.outcome, { reason: answer.cause === "answered" ? "answered_at_client" : line.reason }, scope);
    return { kind: "not-approved", answer: answer.answer, ...(answer.cause === "unticked" ? { why: "the confirm box was not ticked" } : {}) };
  }
  if (scope.signal.aborted) {
    audit("cancelled", { reason: "caller_left" }, scope);
    return { kind: "not-approved", answer: "cancel", why: "the call was dropped" };
  }
  if (input.vet !== undefined) {
    const vetted = await input.vet(answer.content);
    if (!vetted.ok) {
      audit("refused", { reason: vetted.code }, scope);
      return { kind: "refused", reason: vetted.why, edit: true };
    }
  }
  audit("approved", { reason: "answered_at_client" }, scope);
  return { kind: "approved", asked: true, content: answer.content };
}
