// The audit trail: every decision about a guarded call is one JSON line, written here and nowhere else, so
// every bundle's lines have the same shape (docs/audit.md; docs/rules.md R-AUDIT-1 to R-AUDIT-5, R-EDIT-6). A line
// holds names, ids, digests, changed argument names and a reason from the fixed list below: never an argument, a prompt, a body, a
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
  edit_not_offered: "the person's accept sets a field the card did not offer to edit: nothing ran",
  edit_widened: "the person's accept adds, changes or reorders an entry of a field that may only lose entries: nothing ran",
  edit_invalid: "the person's edited call fails a rule a model's call must pass (the tool's schema, its own checks, the prompt's): nothing ran",
  seal_key_missing: "the slug asks at the client, but the bundle's STRAD_SEAL_KEY is not set, so no question could be sealed",
  seal_store_failed: "a client's answer came with a seal that opened, but its single-use nonce could not be spent (the CallRegistry failed)",
  // asked: at the caller's own client (input_required with a sealed requestState); nothing acted on this call
  client_question: "the question went to the person at the caller's own client; the retry carrying the answer is another call",
  seal_unopened: "a retry's requestState did not open (tampered, or sealed with a key the bundle no longer holds): asked again",
  seal_expired: "a retry's requestState was past its expiry: asked again",
  seal_other_target: "a retry's requestState was sealed for another caller, slug, tool, arguments or question: asked again",
  seal_used: "a retry's requestState was already used once: asked again",
  // approved, declined, cancelled: answered at the client
  answered_at_client: "the person answered at the caller's own client, on a retry whose seal opened onto this very call",
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
  /** SHA-256 of the card as the approval service received it (cardDigest: its message and requestedSchema), once it holds it; null when nobody was shown one. */
  card: string | null;
  /** When the person edited the call: the fingerprint of the call as the model proposed it (`fingerprint` is then the edited call's); null otherwise. */
  proposed: string | null;
  /** When the person edited the call: the names of the arguments they changed, sorted (never their values); null otherwise. */
  edited: string[] | null;
}

/** What a call's lines carry beside the trail in scope.ts: the card shown, and the person's edit (docs/rules.md R-EDIT-6). */
export interface DecisionTrail {
  card: string | null;
  proposed: string | null;
  edited: string[] | null;
}

const decisions = new WeakMap<object, DecisionTrail>();

/** The call's decision trail, created on first use; later lines of the same call carry it. */
export function decisionTrail(scope: CallScope | undefined = activeScope()): DecisionTrail | undefined {
  const call = scope?.call;
  if (call === undefined) return undefined;
  let trail = decisions.get(call);
  if (trail === undefined) {
    trail = { card: null, proposed: null, edited: null };
    decisions.set(call, trail);
  }
  return trail;
}

/** JSON with every object's keys sorted, no whitespace: the same text whatever order a service keeps the keys in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The card's digest (docs/rules.md R-EDIT-6): SHA-256, in hex, of the UTF-8 of canonicalJson({ message,
 * requestedSchema }), exactly as the approval service received them. An auditor recomputes it from the service's
 * record of the prompt and so proves what the person was shown, without the log holding any of it.
 */
export async function cardDigest(message: string, requestedSchema: Record<string, unknown>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson({ message, requestedSchema })));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
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
  const decision = call === undefined ? undefined : decisions.get(call);
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
    card: decision?.card ?? null,
    proposed: decision?.proposed ?? null,
    edited: decision?.edited === null || decision?.edited === undefined ? null : [...decision.edited],
  };
}

/** Writes one audit line: one console.log call, one JSON object. */
export function audit(outcome: AuditOutcome, detail: AuditDetail = {}, scope: CallScope | undefined = activeScope()): void {
  console.log(JSON.stringify(auditLine(outcome, detail, scope)));
}
