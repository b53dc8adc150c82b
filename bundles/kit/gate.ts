// The send gate: the only door from a tool to its upstream's write endpoints (send, create, delete).
// A write for a dropped call never starts, one in flight is aborted with the call, and an approved write
// must win the call's single claim in the gateway's CallRegistry, so an approval that lands after the caller
// gave up, or reaches the bundle twice, writes at most once (seed 000, "A dropped call never sends").
import type { CallRegistryNamespace } from "../../contract/call-registry";
import type { CallRef } from "../../contract/channel";
import { callRefOf } from "./confirm";
import { currentScope } from "./scope";

export type GateCode = "CALL_DROPPED" | "NOT_APPROVED" | "NO_CALL_RECORD" | "CLAIM_FAILED";

export class GateRefusal extends Error {
  constructor(
    readonly code: GateCode,
    message: string,
  ) {
    super(message);
    this.name = "GateRefusal";
  }
}

export type FetchInput = string | URL | Request;
export type Fetcher = (input: FetchInput, init?: RequestInit) => Promise<Response>;

const globalFetch: Fetcher = (input, init) => fetch(input, init);

/** The call's one claim, held by the gateway's CallRegistry Durable Object (DO name = the ref's scope). */
export async function claimCall(env: Record<string, unknown>, ref: CallRef): Promise<boolean> {
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
 * One write request. Refuses before anything leaves when the call was dropped, when no approval (or
 * explicit never-asks declaration) covers it, or when an approved call's claim fails. Redirects are not
 * followed: a write goes where the tool aimed it or nowhere.
 */
export async function gatedWrite(input: FetchInput, init: RequestInit = {}, doFetch: Fetcher = globalFetch): Promise<Response> {
  const scope = currentScope();
  const call = scope.call;
  if (scope.signal.aborted) throw new GateRefusal("CALL_DROPPED", "the call was dropped before the write started; nothing was written");
  const approval = call?.approval;
  if (call === undefined || approval === undefined) throw new GateRefusal("NOT_APPROVED", "no approval covers this write; nothing was written");
  const ref = callRefOf(call.channel);
  if (ref === undefined) {
    // Without the gateway's record there is nothing to claim, so an approval could be used twice.
    if (approval.approved) throw new GateRefusal("NO_CALL_RECORD", "the call carries no record to claim, so an approved write cannot be made safely; nothing was written");
  } else {
    approval.claimed ??= claimCall(scope.env, ref);
    if (!(await approval.claimed)) {
      throw new GateRefusal("CLAIM_FAILED", "the call is no longer live or was already used for a write; nothing was written");
    }
  }
  // The claim took a round trip: the caller may have left meanwhile.
  if (scope.signal.aborted) throw new GateRefusal("CALL_DROPPED", "the call was dropped before the write started; nothing was written");
  return doFetch(input, { ...init, redirect: "manual", signal: withCallSignal(init.signal, scope.signal) });
}

/**
 * A fetch for an upstream client that cannot be changed: requests `isWrite` matches go through the gate,
 * every other request is still tied to the call's signal.
 */
export function gatedFetch(isWrite: (url: URL, method: string) => boolean, doFetch: Fetcher = globalFetch): Fetcher {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    if (isWrite(url, method)) return gatedWrite(input, init, doFetch);
    return doFetch(input, { ...init, signal: withCallSignal(init.signal, currentScope().signal) });
  };
}
