// The audit trail: every decision about a guarded call is one JSON line, written here and nowhere else, so
// every bundle's lines have the same shape (docs/audit.md; docs/rules.md R-AUDIT-1 to R-AUDIT-5). A line
// holds names, ids, a digest and a reason from the fixed list below: never an argument, a prompt, a body, a
// URL (an approval URL is a credential), a header, a token or a secret, and never free text from a caller,
// an upstream or an approval service (an approver's name is cleaned and capped first).
import { cleanLine } from "../../contract/text";
import { type AuditTrail, activeScope, type CallScope, type ChannelState } from "./scope";

/** The discriminator every audit line carries, beside the gateway's `mcp_request` lines. */
export const AUDIT_EVENT = "audit";

export const AUDIT_OUTCOMES = ["asked", "approved", "declined", "expired", "cancelled", "refused", "claimed", "written", "write_failed"] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/**
 * Every reason a line may carry, with what it means (docs/audit.md lists the same words). A reason is one
 * of these codes, never a sentence someone else wrote.
 */
export const AUDIT_REASONS = {
  // refused: nobody was asked, or an approval was not let through
  no_channel: "no approval channel reached the call (no X-Elicitation-Url, or the slug declares no confirmations)",
  channel_refused: "the gateway refused the caller's approval channel (an address not allowed, an unseeded confirmationHeaders secret, a caller that has no session)",
  malformed_channel: "the gateway's channel entry did not parse",
  elicitation_disabled: "the bundle sets ELICITATION_ENABLED to something other than true",
  container_elicitation_url: "the bundle sets a container-wide ELICITATION_REQUEST_URL or ELICITATION_POLL_URL",
  not_a_tool_call: "the guarded tool ran outside a tools/call",
  url_elicitation: "an upstream tool asked for URL-mode elicitation, which the channel cannot carry",
  prompt_value_too_long: "a value that binds the approval is too long to be shown whole",
  prompt_too_large: "the prompt is larger than the approval service takes",
  approval_service_http: "the approval service answered with an HTTP error",
  approval_service_redirect: "the approval service answered with a redirect, which is never followed",
  approval_service_unreachable: "the approval service could not be reached",
  approval_service_protocol: "the approval service gave an unusable answer",
  target_changed: "the target changed between the approval and the write",
  not_approved: "no approval covers the write",
  target_mismatch: "the write is bound to another target than the approved one",
  approval_spent: "the approval already let its one bound write out",
  no_call_record: "an approved call names no record to claim",
  claim_failed: "the call's single claim was lost, or the call is no longer live",
  two_call_token_issued: "nobody was asked and nothing acted: the first call of the two-call token got its token",
  token_unknown: "the call quoted a two-call token this caller was never issued (or forged one, or it is long gone)",
  token_arguments_differ: "the call quoted a two-call token issued for other arguments",
  token_target_changed: "the call quoted a two-call token, but what it would act on changed since the first call (a pad's match count)",
  token_used: "the call quoted a two-call token that was already used once",
  token_expired: "the call quoted a two-call token past its expiry",
  token_store_failed: "the two-call token could not be issued or checked (the store failed or holds too many)",
  token_not_allowed: "the bundle runs with ELICITATION=false and the slug does not allow the two-call token (fallback: token)",
  elicitation_switch_invalid: "the bundle's ELICITATION is neither true nor false",
  // approved
  waived: "the slug waives confirmations (skipConfirmations): nobody was asked",
  two_call_token: "the call quoted the two-call token its first call got, with the same arguments: nobody was asked",
  // declined
  confirm_unticked: "the approval service answered accept without the confirm box ticked",
  unrecognised_answer: "the approval service answered an action the protocol does not define",
  // expired
  deadline: "the channel's deadline passed without an answer",
  approval_expired: "the approval service answered expired",
  too_many_polls: "the approval service answered pending too many times",
  // cancelled
  caller_left: "the call was dropped: its caller left, cancelled it, or the gateway's deadline passed",
  approval_cancelled: "the approval service answered cancel (a person dismissed the prompt)",
  // write_failed
  upstream_status: "the upstream answered the write with a status that is not 2xx (status holds it)",
  upstream_unreachable: "the write's request failed before any answer",
  request_not_built: "the write's request could not be built (say, its access token could not be minted): nothing left",
} as const;
export type AuditReason = keyof typeof AUDIT_REASONS;

/** A slug, caller or tool name is cut here: each is a short name, and a line stays one short line. */
export const MAX_NAME_CHARS = 128;

export interface AuditLine {
  event: typeof AUDIT_EVENT;
  outcome: AuditOutcome;
  /** ISO 8601, UTC. */
  time: string;
  /** The roster slug the gateway named on the channel; null when no channel (or a malformed one) reached the call. */
  slug: string | null;
  /** The bundle's mount path the request was routed to, without its "/". */
  mount: string | null;
  tool: string | null;
  /** The roster caller id the gateway named on the channel. */
  caller: string | null;
  /** The approval request id the approval service issued (or accepted), once the request was created. */
  request: string | null;
  /** Who decided, as the approval service reported it; null when it named nobody. */
  approver: string | null;
  /** The SHA-256 fingerprint of the operation and target the approval covers (bundles/kit/fingerprint.ts). */
  fingerprint: string | null;
  reason: AuditReason | null;
  /** The HTTP status of a write's answer (written, write_failed); null otherwise. */
  status: number | null;
}

export interface AuditDetail {
  reason?: AuditReason;
  status?: number;
}

function name(value: string | undefined): string | null {
  if (value === undefined) return null;
  const clean = cleanLine(value, MAX_NAME_CHARS, { collapse: true });
  return clean === "" ? null : clean;
}

function slugOf(channel: ChannelState | undefined): string | undefined {
  if (channel === undefined || channel.kind === "none") return undefined;
  return channel.kind === "refused" ? channel.slug : channel.channel.slug;
}

function callerOf(channel: ChannelState | undefined): string | undefined {
  if (channel === undefined || channel.kind === "none") return undefined;
  return channel.kind === "refused" ? channel.caller : channel.channel.caller;
}

/** The call's trail, created on first use. */
export function auditTrail(scope: CallScope | undefined = activeScope()): AuditTrail | undefined {
  const call = scope?.call;
  if (call === undefined) return undefined;
  call.audit ??= { request: null, approver: null, fingerprint: null };
  return call.audit;
}

/** The line for `outcome` in the given (or current) call scope. */
export function auditLine(outcome: AuditOutcome, detail: AuditDetail = {}, scope: CallScope | undefined = activeScope(), now: Date = new Date()): AuditLine {
  const call = scope?.call;
  const trail = call?.audit;
  return {
    event: AUDIT_EVENT,
    outcome,
    time: now.toISOString(),
    slug: name(slugOf(call?.channel)),
    mount: name(scope?.mount),
    tool: call === undefined ? null : name(call.toolName),
    caller: name(callerOf(call?.channel)),
    request: trail?.request ?? null,
    approver: trail?.approver ?? null,
    fingerprint: trail?.fingerprint ?? call?.approval?.fingerprint ?? null,
    reason: detail.reason ?? null,
    status: detail.status ?? null,
  };
}

/** Writes one audit line: one console.log call, one JSON object. */
export function audit(outcome: AuditOutcome, detail: AuditDetail = {}, scope: CallScope | undefined = activeScope()): void {
  console.log(JSON.stringify(auditLine(outcome, detail, scope)));
}
