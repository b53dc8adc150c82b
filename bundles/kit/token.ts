// The two-call token: what a guarded tool that opts in (`fallback: "token"` on its guard) does when there is
// nobody to ask and the slug allows it (docs/rules.md R-PAD-7 to R-PAD-10). The first call acts on nothing and
// answers a random, single-use token bound to the slug, mount, tool and exact arguments and to what the call would
// act on (a pad's match count among it), valid for 5 minutes, kept in the caller's CallRegistry object so any
// isolate can check it. The second call with the same arguments quoting it acts once, through the send gate;
// different arguments, a changed target, a reused, expired or forged token act on nothing and say why. The text
// says what the token proves, "the call was made twice with the same arguments, and nothing more", and names the
// slug that did not ask, never the client. Gmail and 1Password never opt in: they refuse without a channel.
import type { CallToolResult } from "@modelcontextprotocol/server";
import * as z from "zod";
import { type CallRegistryNamespace, TOKEN_PATTERN, TOKEN_TTL_MS, type TokenBinding, type TokenCheck } from "../../contract/call-registry";
import type { CallRef } from "../../contract/channel";
import { type AuditReason, audit } from "./audit";
import { msFromEnv } from "./confirm";
import { elicitationPosture } from "./posture";
import { currentScope } from "./scope";
import { elicitationSwitch } from "./switch";

/** The argument a second call quotes its token in. */
export const TOKEN_ARGUMENT = "two_call_token";
/** What the token proves, word for word in every answer that hands one out or acts on one. */
export const TOKEN_PROVES = "the call was made twice with the same arguments, and nothing more";

/** The input property every tool that opts in adds to its schema. */
export const twoCallTokenShape = {
  [TOKEN_ARGUMENT]: z
    .string()
    .max(64)
    .optional()
    .describe(
      "Only when this server could not ask a person: the two-call token its first call answered. Quote it in a second call with exactly the same other arguments. It proves the call was made twice with the same arguments, and nothing more.",
    ),
} as const;

export type TokenRoute =
  /** `slug`: the server that did not ask; `why`: in words that blame no one. */
  { kind: "token"; slug: string; why: string; ref: CallRef } | { kind: "refuse"; reason: string; code: AuditReason };

/** Why the bundle did not ask, when it is the bundle's own switch. */
export const SWITCH_OFF_WHY = "this server runs with ELICITATION=false, so its guarded tools fall back to the two-call token";

/**
 * Whether a guard that opts in takes the token on this call: the gateway said nobody can be asked and the slug
 * allows it (a `fallback` channel), or the bundle runs with ELICITATION=false on a slug that allows it. Under
 * ELICITATION=false a slug that does not allow it is refused: nothing goes unannounced. Undefined: the guard's
 * usual path (ask, the waiver, or a refusal), which also refuses every call under a container-wide switch.
 */
export function tokenRoute(): TokenRoute | undefined {
  const scope = currentScope();
  if (!elicitationPosture(scope.env).ok) return undefined;
  const sw = elicitationSwitch(scope.env);
  if (!sw.ok) return { kind: "refuse", reason: sw.reason, code: "elicitation_switch_invalid" };
  const channel = scope.call?.channel;
  if (channel === undefined) return undefined;
  if (channel.kind === "fallback") return { kind: "token", slug: channel.channel.slug, why: channel.channel.reason, ref: channel.channel.call };
  // The switch turns the dialog off wherever it would be shown: at the approval service, or at the caller's own client.
  if (sw.asks || (channel.kind !== "ask" && channel.kind !== "client")) return undefined;
  const { slug, call, fallback } = channel.channel;
  if (fallback === "token" && call !== undefined) return { kind: "token", slug, why: SWITCH_OFF_WHY, ref: call };
  return {
    kind: "refuse",
    reason: `this server runs with ELICITATION=false, so it asks nobody, and slug "${slug}" does not allow the two-call token (its roster entry has no fallback: token)`,
    code: "token_not_allowed",
  };
}

/** JSON with every object's keys sorted, so the same arguments always give the same digest. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The digest of the slug, mount, tool and exact arguments, the token itself left out. */
export async function argumentsDigest(slug: string, mount: string, tool: string, args: unknown): Promise<string> {
  const rest = typeof args === "object" && args !== null && !Array.isArray(args) ? Object.fromEntries(Object.entries(args).filter(([k]) => k !== TOKEN_ARGUMENT)) : args;
  return sha256(canonicalJson({ slug, mount, tool, args: rest }));
}

/** The token a call quotes, if any. */
export function quotedToken(args: unknown): unknown {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>)[TOKEN_ARGUMENT] : undefined;
}

export type TokenStep =
  /** The first call: nothing acts; `answer` hands the token out. */
  | { kind: "issued"; answer: CallToolResult }
  /** The second call's token holds: the caller may act, once. */
  | { kind: "redeemed" }
  /** Nothing acts; `answer` says why. */
  | { kind: "not-done"; answer: CallToolResult };

function text(message: string, isError: boolean): CallToolResult {
  return { content: [{ type: "text", text: message }], isError };
}

const CHECK_REASON: Record<Exclude<TokenCheck, "ok">, AuditReason> = {
  unknown: "token_unknown",
  arguments_differ: "token_arguments_differ",
  target_changed: "token_target_changed",
  used: "token_used",
  expired: "token_expired",
};

function minutes(ms: number): string {
  const m = ms / 60_000;
  return m >= 1 && Number.isInteger(m) ? `${m} minute${m === 1 ? "" : "s"}` : `${Math.max(1, Math.round(ms / 1000))} seconds`;
}

export interface TokenCall {
  route: Extract<TokenRoute, { kind: "token" }>;
  args: unknown;
  /** The fingerprint of what the call would act on now (bundles/kit/fingerprint.ts). */
  target: string;
  /** The prompt a person would have been shown: what the second call would do. */
  message: string;
  /** The target as it stands now, in words, for a second call whose target changed. */
  describe?: string;
}

/** One step of the two-call token for the current call. Never throws. */
export async function tokenStep(input: TokenCall): Promise<TokenStep> {
  const scope = currentScope();
  const call = scope.call;
  const { route } = input;
  const notDone = (reason: AuditReason, why: string): TokenStep => {
    audit("refused", { reason }, scope);
    return { kind: "not-done", answer: text(`Not done: ${why}. Nothing was written.`, true) };
  };
  const ns = scope.env.CALLS as CallRegistryNamespace | undefined;
  if (call === undefined || ns === undefined || typeof ns.idFromName !== "function") {
    return notDone("token_store_failed", `${route.slug} did not ask a person (${route.why}), and it has no store for a two-call token here`);
  }
  const binding: TokenBinding = { args: await argumentsDigest(route.slug, scope.mount, call.toolName, input.args), target: input.target };
  const store = ns.get(ns.idFromName(route.ref.scope));
  const quoted = quotedToken(input.args);

  if (quoted === undefined) {
    const ttlMs = msFromEnv(scope.env, "STRAD_TOKEN_TTL_MS", TOKEN_TTL_MS.fallback, TOKEN_TTL_MS.min, TOKEN_TTL_MS.max);
    let minted: Awaited<ReturnType<typeof store.mintToken>>;
    try {
      minted = await store.mintToken(binding, ttlMs);
    } catch {
      return notDone("token_store_failed", `${route.slug} did not ask a person (${route.why}), and the two-call token could not be issued`);
    }
    if (!minted.ok)
      return notDone("token_store_failed", `${route.slug} did not ask a person (${route.why}), and this caller already holds as many unexpired two-call tokens as it may; wait for some to expire`);
    audit("refused", { reason: "two_call_token_issued" }, scope);
    const lines = [
      `Not done yet: ${route.slug} did not ask a person about this call (${route.why}), so nothing was written.`,
      `To go ahead, call ${call.toolName} again within ${minutes(ttlMs)}, with exactly the same arguments and ${TOKEN_ARGUMENT} set to:`,
      minted.token,
      `The token proves ${TOKEN_PROVES}: nobody was asked, and nobody approved it.`,
      "",
      "What the second call would do:",
      input.message,
    ];
    return { kind: "issued", answer: text(lines.join("\n"), false) };
  }

  if (typeof quoted !== "string" || !TOKEN_PATTERN.test(quoted)) return notDone("token_unknown", `the ${TOKEN_ARGUMENT} is not one ${route.slug} issued; call again without it for a new one`);
  let check: TokenCheck;
  try {
    check = await store.redeemToken(quoted, binding);
  } catch {
    return notDone("token_store_failed", `the ${TOKEN_ARGUMENT} could not be checked`);
  }
  switch (check) {
    case "ok":
      audit("approved", { reason: "two_call_token" }, scope);
      return { kind: "redeemed" };
    case "unknown":
      return notDone(CHECK_REASON[check], `the ${TOKEN_ARGUMENT} is not one ${route.slug} issued to this caller (or it expired long ago); call again without it for a new one`);
    case "arguments_differ":
      return notDone(CHECK_REASON[check], `the ${TOKEN_ARGUMENT} was issued for other arguments: a token covers only the exact arguments of the call that got it`);
    case "target_changed":
      return notDone(
        CHECK_REASON[check],
        `what this call would act on changed since the ${TOKEN_ARGUMENT} was issued${input.describe === undefined ? "" : ` (now: ${input.describe})`}, so the token does not cover it; call again without it for a new one`,
      );
    case "used":
      return notDone(CHECK_REASON[check], `the ${TOKEN_ARGUMENT} was already used once: a token acts once; call again without it for a new one`);
    case "expired":
      return notDone(CHECK_REASON[check], `the ${TOKEN_ARGUMENT} expired; call again without it for a new one`);
  }
}

/** The line a call that acted on a two-call token ends with. */
export function actedOnTokenLine(slug: string): string {
  return `Done on the two-call token, which proves ${TOKEN_PROVES}: ${slug} did not ask a person.`;
}
