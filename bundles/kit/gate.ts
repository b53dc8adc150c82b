// The send gate: the only door from a tool to its upstream's write endpoints (send, create, delete), and the
// one place every bundle's write is checked. A write for a dropped call never starts, one in flight is aborted
// with the call, an approved write must win the call's single claim in the gateway's CallRegistry, and a write
// bound to a target goes out only for the exact target the approval was given for, once per approval; so an
// approval that lands after the caller gave up, reaches the bundle twice, or covers another message writes
// nothing (docs/rules.md R-GATE-3, R-GATE-4, R-GATE-5, R-GATE-6). Every refusal, claim and write it decides
// is one audit line (docs/rules.md R-AUDIT-1).
import type { CallRegistryNamespace } from "../../contract/call-registry";
import type { CallRef } from "../../contract/channel";
import { type AuditReason, audit } from "./audit";
import { callRefOf } from "./confirm";
import { type FingerprintInput, fingerprint } from "./fingerprint";
import { type Approval, currentScope } from "./scope";

export type GateCode = "CALL_DROPPED" | "NOT_APPROVED" | "TARGET_MISMATCH" | "SPENT" | "NO_CALL_RECORD" | "CLAIM_FAILED";

/** How a refusal names the write to the person reading it: a mailbox says "send", "sent", "message". */
export interface WriteWords {
  act: string;
  done: string;
  target: string;
}
export const WRITE_WORDS: WriteWords = { act: "write", done: "written", target: "target" };

/** How a refusal reads in the audit trail; a dropped call is a `cancelled` line, the rest `refused`. */
const GATE_REASON: Record<Exclude<GateCode, "CALL_DROPPED">, AuditReason> = {
  NOT_APPROVED: "not_approved",
  TARGET_MISMATCH: "target_mismatch",
  SPENT: "approval_spent",
  NO_CALL_RECORD: "no_call_record",
  CLAIM_FAILED: "claim_failed",
};

export function describeRefusal(code: GateCode, w: WriteWords): string {
  switch (code) {
    case "CALL_DROPPED":
      return `the call was dropped before the ${w.act} started; nothing was ${w.done}`;
    case "NOT_APPROVED":
      return `no approval covers this ${w.act}; nothing was ${w.done}`;
    case "TARGET_MISMATCH":
      return `the approval covers a different ${w.target}; nothing was ${w.done}`;
    case "SPENT":
      return `this call has already ${w.done} once; nothing more was ${w.done}`;
    case "NO_CALL_RECORD":
      // Without the gateway's record there is nothing to claim, so an approval could be used twice.
      return `the call carries no record to claim, so it cannot ${w.act} safely; nothing was ${w.done}`;
    case "CLAIM_FAILED":
      return `the call is no longer live or was already used for a ${w.act}; nothing was ${w.done}`;
  }
}

export class GateRefusal extends Error {
  constructor(
    readonly code: GateCode,
    words: WriteWords = WRITE_WORDS,
  ) {
    super(describeRefusal(code, words));
    this.name = "GateRefusal";
  }
}

export type FetchInput = string | URL | Request;
export type Fetcher = (input: FetchInput, init?: RequestInit) => Promise<Response>;

/** A write's request, or what builds it once every check has passed (minting a token is a request too). */
export type WriteInit = RequestInit | (() => RequestInit | Promise<RequestInit>);

export interface WriteOptions {
  /** The exact target this write carries out: refused unless the approval was given for it, and only once per approval. */
  binds?: FingerprintInput;
  /** Only a person's yes (or the slug's waiver) covers it, never a tool's declaration that it does not ask. */
  needsApproval?: boolean;
  words?: WriteWords;
  fetch?: Fetcher;
}

const globalFetch: Fetcher = (input, init) => fetch(input, init);

/** Approvals whose one binding write has been let through. */
const spent = new WeakSet<Approval>();

/** The call's one claim, held by the gateway's CallRegistry Durable Object (DO name = the ref's scope). */
async function claimCall(env: Record<string, unknown>, ref: CallRef): Promise<boolean> {
  const ns = env.CALLS as CallRegistryNamespace | undefined;
  if (ns === undefined || typeof ns.idFromName !== "function") return false;
  try {
    return (await ns.get(ns.idFromName(ref.scope)).claim(ref.key, ref.nonce)) === true;
  } catch {
    return false;
  }
}

/** Both the caller's signal (if any) and the call's: either one aborts the request. */
function withCallSignal(own: AbortSignal | null | undefined, call: AbortSignal): AbortSignal {
  return own ? AbortSignal.any([own, call]) : call;
}

/**
 * One write request. Refuses before anything leaves (a lazy `init` is not even built) when the call was
 * dropped, when no approval (or explicit never-asks declaration) covers it, when a bound target is not the
 * approved one or its approval was already used, or when an approved call's claim fails. Redirects are not
 * followed: a write goes where the tool aimed it or nowhere.
 */
export async function gatedWrite(input: FetchInput, init: WriteInit = {}, options: WriteOptions = {}): Promise<Response> {
  const scope = currentScope();
  const refuse = (code: GateCode) => {
    if (code === "CALL_DROPPED") audit("cancelled", { reason: "caller_left" }, scope);
    else audit("refused", { reason: GATE_REASON[code] }, scope);
    return new GateRefusal(code, options.words);
  };
  const call = scope.call;
  if (scope.signal.aborted) throw refuse("CALL_DROPPED");
  const approval = call?.approval;
  if (call === undefined || approval === undefined) throw refuse("NOT_APPROVED");
  if (options.needsApproval === true && !approval.approved) throw refuse("NOT_APPROVED");
  if (options.binds !== undefined) {
    if ((await fingerprint(options.binds)) !== approval.fingerprint) throw refuse("TARGET_MISMATCH");
    // Tested and marked with no await between, so two writes racing in one call cannot both pass.
    if (spent.has(approval)) throw refuse("SPENT");
    spent.add(approval);
  }
  const ref = callRefOf(call.channel);
  if (ref === undefined) {
    if (approval.approved) throw refuse("NO_CALL_RECORD");
  } else {
    // The first request of the call asks for its claim; a win is one `claimed` line, however many requests follow.
    approval.claimed ??= claimCall(scope.env, ref).then((won) => {
      if (won) audit("claimed", {}, scope);
      return won;
    });
    if (!(await approval.claimed)) throw refuse("CLAIM_FAILED");
  }
  // The claim took a round trip: the caller may have left meanwhile.
  if (scope.signal.aborted) throw refuse("CALL_DROPPED");
  let request: RequestInit;
  if (typeof init === "function") {
    try {
      request = await init();
    } catch (error) {
      // Nothing left: the request (say, its access token) could not be built.
      audit("write_failed", { reason: "request_not_built" }, scope);
      throw error;
    }
    if (scope.signal.aborted) throw refuse("CALL_DROPPED");
  } else request = init;
  let response: Response;
  try {
    response = await (options.fetch ?? globalFetch)(input, { ...request, redirect: "manual", signal: withCallSignal(request.signal, scope.signal) });
  } catch (error) {
    audit("write_failed", { reason: scope.signal.aborted ? "caller_left" : "upstream_unreachable" }, scope);
    throw error;
  }
  // A redirect is not followed (its status is a failure too); an opaque one reports status 0.
  if (response.status >= 200 && response.status <= 299) audit("written", { status: response.status }, scope);
  else audit("write_failed", { reason: "upstream_status", status: response.status }, scope);
  return response;
}

export type GatedWrite = typeof gatedWrite;

/**
 * A fetch for an upstream client that cannot be changed: requests `isWrite` matches go through the gate,
 * every other request is still tied to the call's signal.
 */
export function gatedFetch(isWrite: (url: URL, method: string) => boolean, doFetch: Fetcher = globalFetch): Fetcher {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    if (isWrite(url, method)) return gatedWrite(input, init, { fetch: doFetch });
    return doFetch(input, { ...init, signal: withCallSignal(init.signal, currentScope().signal) });
  };
}
