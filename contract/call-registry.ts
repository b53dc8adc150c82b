// The CallRegistry Durable Object as both sides see it: the gateway registers and watches a confirmed call,
// and cancels or ends it; a bundle's send gate claims it. The class lives in durable-objects/; callers hold
// only this interface.

/** What the RPC methods promise. `watch` is a fetch to WATCH_PATH (a stream of WatchWord lines). */
export interface CallRegistryApi {
  /** The send gate's single permission: true once per call, and only while the call is live. */
  claim(key: string, nonce: string): Promise<boolean>;
  /** The gateway is done with the call (answered, caller left, timed out). */
  end(key: string, nonce: string): Promise<void>;
  /** notifications/cancelled from the same caller, on whichever isolate it landed. */
  cancel(key: string): Promise<boolean>;
  /**
   * The watching gateway's word that its caller is still there: since the claim was asked it has pushed
   * PROBES_FOR_LIVENESS probes out to the caller, one after another, and none failed.
   */
  confirm(key: string, nonce: string): Promise<void>;
  /** Local-development introspection. */
  stats(): Promise<{ served: number; live: number }>;
}

export type CallRegistryStub = DurableObjectStub<CallRegistryApi & Rpc.DurableObjectBranded>;
export type CallRegistryNamespace = DurableObjectNamespace<CallRegistryApi & Rpc.DurableObjectBranded>;

export const WATCH_PATH = "/watch";
/** Live records one caller may hold: a watch past it answers 429, and the gateway refuses the call naming the cap. */
export const MAX_LIVE_CALLS = 256;
/**
 * The watch stream's lines: "live" first; "probe" whenever a claim is on hold (the gateway then writes to its
 * caller often enough for a caller that left to be noticed before the hold ends); then at most one of
 * "cancelled" and "deadline", after which the stream closes.
 */
export type WatchWord = "live" | "probe" | "cancelled" | "deadline";

/**
 * How long a claim is held before it is granted, and the bounds an operator may set it within
 * (STRAD_CLAIM_HOLD_MS on the gateway). The gateway notices a caller that left only when a write to it
 * fails; during the hold it writes every PROBE_INTERVAL_MS, so a caller gone before the claim was asked is
 * noticed, and the call ended, before the hold runs out.
 */
export const CLAIM_HOLD_MS = { fallback: 250, min: 100, max: 5_000 } as const;
export const PROBE_INTERVAL_MS = 20;
/**
 * A claim is granted only once the hold has passed AND the gateway has confirmed its caller: it pushed this many
 * probes out, each only after the runtime had taken the one before, with none failing. A gateway too loaded to
 * probe in time delays the claim instead of letting an unnoticed drop through; past CLAIM_CONFIRM_MAX_MS without
 * that word, the claim is refused (nothing is written).
 */
export const PROBES_FOR_LIVENESS = 8;
export const CLAIM_CONFIRM_MAX_MS = 5_000;

/** The hold in force: STRAD_CLAIM_HOLD_MS clamped to its bounds, or the default. */
export function claimHoldMs(env: Record<string, unknown>): number {
  const raw = Number(env.STRAD_CLAIM_HOLD_MS);
  if (!Number.isFinite(raw) || raw <= 0) return CLAIM_HOLD_MS.fallback;
  return Math.min(CLAIM_HOLD_MS.max, Math.max(CLAIM_HOLD_MS.min, Math.floor(raw)));
}
export interface WatchRequest {
  key: string;
  nonce: string;
  deadline: number;
}

/** A caller's request id as a record key: a number and a string that read alike are different calls. */
export function requestKey(id: string | number): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}
