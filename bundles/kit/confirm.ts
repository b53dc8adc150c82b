// Asking a person for the current call: the one place that decides whether a call may ask, asks over the
// channel the gateway forwarded, keeps the wait alive, and turns a dropped call into a cancel. The guard
// and the capabilities seam both come through here.

import type { CallRef } from "../../contract/channel";
import { CONFIRM_SCHEMA, DEFAULT_POLL_INTERVAL_MS, describeApprovalError, type NoAnswer, requestApproval } from "./approval-client";
import { DEFAULT_KEEPALIVE_MS, startKeepalive } from "./keepalive";
import { elicitationPosture } from "./posture";
import { type ChannelState, currentScope } from "./scope";

export const NO_CHANNEL_REASON = "no approval channel reached this call, so there is no one to ask: the caller sent no X-Elicitation-Url, or this server does not declare confirmations";

export type Preflight = { ok: true; mode: "ask" | "skip"; slug: string } | { ok: false; reason: string };

export type Decision =
  | { kind: "approved"; asked: boolean; content: Record<string, unknown> }
  | { kind: "not-approved"; answer: NoAnswer; why?: string }
  | { kind: "refused"; reason: string }
  | { kind: "failed"; reason: string };

/** Whether this call may ask at all; checked before the tool reads or writes anything. */
export function preflight(): Preflight {
  const scope = currentScope();
  const posture = elicitationPosture(scope.env);
  if (!posture.ok) return { ok: false, reason: posture.reason };
  const channel = scope.call?.channel ?? { kind: "none" };
  switch (channel.kind) {
    case "none":
      return { ok: false, reason: NO_CHANNEL_REASON };
    case "refused":
      return { ok: false, reason: `the gateway refused the approval channel: ${channel.reason}` };
    case "ask":
    case "skip":
      return { ok: true, mode: channel.kind, slug: channel.channel.slug };
  }
}

/** The CallRegistry record the gateway registered for this call, when the channel names one. */
export function callRefOf(channel: ChannelState): CallRef | undefined {
  return channel.kind === "ask" || channel.kind === "skip" ? channel.channel.call : undefined;
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
}

export async function askPerson(input: AskInput): Promise<Decision> {
  const pre = preflight();
  if (!pre.ok) return { kind: "refused", reason: pre.reason };
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) return { kind: "refused", reason: NO_CHANNEL_REASON };
  // The waiver answers accept inside the bundle and asks nobody (docs/rules.md R-CHAN-6).
  if (call.channel.kind === "skip") return { kind: "approved", asked: false, content: { confirm: true } };
  if (call.channel.kind !== "ask" || call.deadline === undefined) return { kind: "refused", reason: NO_CHANNEL_REASON };

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
      requestedSchema: input.requestedSchema ?? CONFIRM_SCHEMA,
      toolName: call.toolName,
      deadline: call.deadline,
      signal: scope.signal,
      pollIntervalMs: msFromEnv(scope.env, "STRAD_POLL_INTERVAL_MS", DEFAULT_POLL_INTERVAL_MS, 20, 60_000),
    });
    if (!result.ok) return { kind: "failed", reason: describeApprovalError(result.error) };
    if (result.answer !== "accept") return { kind: "not-approved", answer: result.answer, why: result.why };
    if (scope.signal.aborted) return { kind: "not-approved", answer: "cancel", why: "the call was dropped" };
    return { kind: "approved", asked: true, content: result.content };
  } finally {
    stop();
  }
}
