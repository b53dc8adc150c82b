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
  /**
   * A 2025-11-25 client's answer to a question the gateway pushed on the call's own stream (docs/rules.md R-PUSH-2):
   * handed to the watching gateway as an "answer" line, once per round, only when `tag` is questionTag(the record's
   * nonce, round) and the record is live. True when it was handed on.
   */
  answer(key: string, round: number, tag: string, payload: string): Promise<boolean>;
  /** Local-development introspection. */
  stats(): Promise<{ served: number; live: number }>;
  /**
   * The two-call token's store (docs/rules.md R-PAD-8): a random, single-use token bound to what the first call
   * would act on, kept in the caller's own object so any isolate can check it and no other caller can use it.
   */
  mintToken(binding: TokenBinding, ttlMs: number): Promise<MintedToken>;
  /** Spends the token if it was issued here for exactly this binding, unspent and unexpired; otherwise says why not. */
  redeemToken(token: string, binding: TokenBinding): Promise<TokenCheck>;
  /**
   * Spends a client question's seal nonce (docs/rules.md R-SEAL-3): true only the first time, and only before
   * `expiresAt`; a spent nonce is kept until then.
   */
  spendSeal(nonce: string, expiresAt: number): Promise<boolean>;
  /** How many spent seal nonces the object keeps (tests). */
  sealCount(): Promise<number>;
}

/** A seal's nonce as minted (bundles/kit/seal.ts): 16 random bytes, base64url without padding. */
export const SEAL_NONCE_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/** What a two-call token is bound to: digests only, never an argument. */
export interface TokenBinding {
  /** The slug, mount, tool and exact arguments (the token itself left out). */
  args: string;
  /** What the call would act on, as measured on the first call (a pad's match count among it). */
  target: string;
}

export type MintedToken = { ok: true; token: string; expiresAt: number } | { ok: false; reason: "too_many" };
/** "ok" spends it; anything else acts on nothing. `unknown`: never issued to this caller (or forged), or long gone. */
export type TokenCheck = "ok" | "unknown" | "arguments_differ" | "target_changed" | "used" | "expired";

/** A token is valid this long at most (5 minutes), and at least TOKEN_TTL_MS.min (tests ask for a short one). */
export const TOKEN_TTL_MS = { fallback: 5 * 60 * 1000, min: 50, max: 5 * 60 * 1000 } as const;
/** Unspent, unexpired tokens one caller may hold: a runaway first call cannot grow the object without bound. */
export const MAX_LIVE_TOKENS = 256;
/** A token as issued: 32 random bytes, base64url without padding. Anything else is refused unread. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

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
 * The watch line that hands a client's answer on: `answer <round> <payload>`, the payload one line of JSON (a
 * JSON-RPC response's `result` or `error` member, as `{"result":…}` or `{"error":…}`).
 */
export const ANSWER_WORD = "answer";

/** Rounds of questions one call may put to its client before it is refused (a mount that keeps asking is broken). */
export const MAX_QUESTION_ROUNDS = 4;

/**
 * What names a pushed question to the caller without revealing the record's nonce: the first 12 bytes of
 * SHA-256("strad-question:<nonce>:<round>"), hex. The gateway puts it in the question's JSON-RPC id; the registry
 * recomputes it, so an answer reaches only the call that asked, for the round it asked in (docs/rules.md R-PUSH-2).
 */
export async function questionTag(nonce: string, round: number): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`strad-question:${nonce}:${round}`)));
  return Array.from(digest.subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
}

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
