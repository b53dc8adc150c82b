// The gateway side of a confirmed call's record in the CallRegistry Durable Object: register and watch,
// so that a cancel landing on any isolate, or the deadline alarm, aborts this isolate's upstream fetch.
import { ANSWER_WORD, type CallRegistryNamespace, type CallRegistryStub, MAX_LIVE_CALLS, requestKey, WATCH_PATH, type WatchRequest } from "../contract/call-registry";
import type { CallRef } from "../contract/channel";
import { AbortReason } from "./upstream";

export { requestKey };

/** The first `bytes` bytes of a value's SHA-256, hex: a name for it in a record key that never holds the value. */
async function tagOf(value: string, bytes: number): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
  return Array.from(digest.subarray(0, bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A confirmed call's record key for a 2025-era client that echoes no session: the caller's request id, and for a call
 * that asks a person, a tag of the approval URL it asks over. Sessions sharing one caller token ask over their own
 * approval URLs, so their ids (1, 2, …) never collide and one session's cancel never reaches another's call
 * (docs/rules.md R-CALL-11).
 */
export async function callKey(id: string | number, approvalUrl: string | undefined): Promise<string> {
  if (approvalUrl === undefined) return requestKey(id);
  return `${await tagOf(approvalUrl, 8)}/${requestKey(id)}`;
}

/**
 * Where a call came from within its caller: a 2026-07-28 call (no session, and its cancel is its stream closing), or a
 * 2025-era call with the Mcp-Session-Id its client echoes (null when it sends none).
 */
export type CallOrigin = { era: "modern" } | { era: "legacy"; session: string | null };

/** A record key of a session: the session id's tag (never the id), then the request id as a cancel names it. */
async function sessionKey(session: string, id: string | number): Promise<string> {
  return `m:${await tagOf(session, 16)}/${requestKey(id)}`;
}

/**
 * The record key of a confirmed call, asking or waived or on the token fallback (docs/rules.md R-CALL-12): on 2026-07-28
 * the call's own nonce, never the bare request id, since nothing there names a call but its stream; on 2025-11-25 the
 * session the gateway handed out at initialize and the request id, so sessions sharing a caller token never collide and
 * a cancel reaches only its own session; without a session, callKey as before.
 */
export async function recordKey(origin: CallOrigin, id: string | number, approvalUrl: string | undefined, nonce: string): Promise<string> {
  if (origin.era === "modern") return `c:${nonce}`;
  if (origin.session !== null) return sessionKey(origin.session, id);
  return callKey(id, approvalUrl);
}

/**
 * The record key a 2025-11-25 client's answer to a pushed question names (docs/rules.md R-PUSH-2): its session's tag and
 * the request id as the question's id carried it (`n:1`, `s:abc`). An answer without a session names nothing: a question
 * is pushed only to a session whose initialize declared elicitation, which a client that echoes no session never shows.
 */
export async function answerKey(session: string, requestKeyText: string): Promise<string> {
  return `m:${await tagOf(session, 16)}/${requestKeyText}`;
}

/** The record keys a notifications/cancelled may reach: its session's call alone, or without one the plain and the URL-tagged id. */
export async function cancelKeys(session: string | null, id: string | number, approvalUrl: string | undefined): Promise<string[]> {
  if (session !== null) return [await sessionKey(session, id)];
  return [...new Set([requestKey(id), await callKey(id, approvalUrl)])];
}

/** `tooMany`: the caller already holds that many live calls (MAX_LIVE_CALLS), the most it may. */
export type WatchResult = { ok: true; stop: () => void } | { ok: false; inFlight: boolean; tooMany?: number };

function stubFor(ns: CallRegistryNamespace, scope: string): CallRegistryStub {
  return ns.get(ns.idFromName(scope));
}

export interface WatchHandlers {
  /** Fires with the reason when the record is cancelled or reaches its deadline. */
  abort: (reason: AbortReason) => void;
  /**
   * A claim of this call is on hold: probe the caller, so that one that left is noticed in time. Resolves true
   * once the probes went out without failing (the registry is then told the caller is there), false otherwise.
   */
  probe?: () => Promise<boolean>;
  /** A client's answer to the question of `round` this call pushed to it (docs/rules.md R-PUSH-2), as the registry handed it on. */
  answer?: (round: number, payload: string) => void;
}

/** Registers the call and follows what its record says until stop() or the record's last word. */
export async function watchCall(ns: CallRegistryNamespace, ref: CallRef, deadline: number, on: WatchHandlers, timeoutMs: number): Promise<WatchResult> {
  let response: Response;
  try {
    response = await stubFor(ns, ref.scope).fetch(`https://calls${WATCH_PATH}`, { method: "POST", body: JSON.stringify({ key: ref.key, nonce: ref.nonce, deadline } satisfies WatchRequest) });
  } catch {
    // The object could not be reached (its own words are the runtime's, never the caller's to read): not registered.
    return { ok: false, inFlight: false };
  }
  if (response.status === 409) return { ok: false, inFlight: true };
  if (response.status === 429) {
    response.body?.cancel().catch(() => {});
    return { ok: false, inFlight: false, tooMany: MAX_LIVE_CALLS };
  }
  if (!response.ok || response.body === null) return { ok: false, inFlight: false };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<string | undefined> => {
    for (;;) {
      const at = buffer.indexOf("\n");
      if (at !== -1) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        return line;
      }
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffer += value;
    }
  };
  if ((await next()) !== "live") return { ok: false, inFlight: false };
  let stopped = false;
  void (async () => {
    try {
      for (;;) {
        const word: string | undefined = await next();
        if (stopped || word === undefined) return;
        if (word === "probe") void confirmWhenProbed(on, ns, ref);
        else if (word.startsWith(`${ANSWER_WORD} `)) handAnswer(on, word);
        else if (word === "cancelled") return on.abort(new AbortReason({ code: "UPSTREAM_ABORTED", reason: "the caller cancelled it" }));
        else if (word === "deadline") return on.abort(new AbortReason({ code: "UPSTREAM_TIMEOUT", timeoutMs }));
      }
    } catch {
      // The stream closing without a word is the normal end.
    }
  })();
  return {
    ok: true,
    stop: () => {
      stopped = true;
      reader.cancel().catch(() => {});
    },
  };
}

/** An "answer <round> <payload>" line, handed to the call that pushed the question; anything else on it is dropped. */
function handAnswer(on: WatchHandlers, line: string): void {
  const rest = line.slice(ANSWER_WORD.length + 1);
  const space = rest.indexOf(" ");
  const round = Number(rest.slice(0, space));
  if (space > 0 && Number.isSafeInteger(round)) on.answer?.(round, rest.slice(space + 1));
}

/** Tells the registry the caller is there once its probes went out; says nothing if they failed or never ran. */
async function confirmWhenProbed(on: WatchHandlers, ns: CallRegistryNamespace, ref: CallRef): Promise<void> {
  try {
    if (on.probe !== undefined && (await on.probe())) await stubFor(ns, ref.scope).confirm(ref.key, ref.nonce);
  } catch {
    // Unconfirmed, the claim is refused: failing here can only stop a write.
  }
}

export function endCall(ns: CallRegistryNamespace, ref: CallRef): Promise<void> {
  return stubFor(ns, ref.scope).end(ref.key, ref.nonce);
}

export function cancelCall(ns: CallRegistryNamespace, scope: string, key: string): Promise<boolean> {
  return stubFor(ns, scope).cancel(key);
}
