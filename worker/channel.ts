// What a confirmed slug's tools/call carries under _meta["dev.strad/elicitation"] (docs/rules.md R-CHAN-3,
// R-CHAN-4, R-CHAN-6, R-CHAN-12). Only slugs declaring confirmations or skipConfirmations ever get the key (R-CHAN-1),
// and slugs whose `fallback` is "token" (R-PAD-7). A human-backed caller may be asked at its own client (R-CHAN-15).
import type { CallRef, Channel } from "../contract/channel";
import { checkUnderPrefix } from "../contract/url-policy";
import type { Caller } from "./auth";
import { checkElicitationUrl, describeUrlError } from "./elicitation-url";
import type { Roster, ServerEntry } from "./roster";
import { resolveHeaderMap } from "./roster-use";

export function isGated(server: ServerEntry): boolean {
  return server.kind === "bundle" && (server.confirmations || server.skipConfirmations || server.fallback === "token");
}

/** Why nobody can be asked, in words that blame no one: the bundle names itself as the server that did not ask. */
export const NO_ADDRESS_REASON = "no approval address came with this call";
export const NO_CONFIRMATIONS_REASON = "this slug declares no confirmations";

/** The bundle stops accepting answers a margin before the gateway stops waiting: a quarter, at most 15 s. */
export function channelTtlMs(timeoutMs: number): number {
  return timeoutMs - Math.min(Math.floor(timeoutMs / 4), 15_000);
}

/**
 * `clientForm`: the call came over 2026-07-28 and its client declared form elicitation in the request's own envelope
 * (worker/relay.ts hopCapabilities), so a question returned as input_required can reach the person at that client.
 */
export function buildChannel(args: {
  server: ServerEntry;
  caller: Caller;
  headerValue: string | null;
  roster: Roster;
  env: Record<string, unknown>;
  call: CallRef;
  clientForm?: boolean;
}): Channel | undefined {
  const { server, caller, roster, env, call } = args;
  const slug = server.slug;
  if (!isGated(server)) return undefined;
  const ttlMs = channelTtlMs(server.timeoutMs);
  // The caller's roster id rides on every channel, so the bundle's audit lines name who called (docs/rules.md R-AUDIT-2).
  const who = caller.id;
  // The waiver rides on the call whatever the caller sent, and never carries the caller's URL.
  if (server.skipConfirmations) return { slug, skip: true, ttlMs, call, caller: who };
  // `fallback: token` (docs/rules.md R-PAD-7): with nobody to ask, the call still carries its record, and the
  // bundle may take the two-call token; only for these two reasons, never for an address or a secret that failed.
  const token = server.fallback === "token";
  if (caller.kind === "console" || caller.kind === "grant") {
    return { slug, refused: `caller "${caller.id}" is a ${caller.kind} caller and has no session to ask`, caller: who };
  }
  if (!server.confirmations) return { slug, fallback: "token", reason: NO_CONFIRMATIONS_REASON, ttlMs, call, caller: who };
  // The question goes to the client only when the operator declared both ends (the caller has a person at its client,
  // the slug allows it), the call names no approval service and its client can show a form (docs/rules.md R-CHAN-15).
  // A caller alone never chooses it: anything else is exactly as before.
  // It carries the slug's `fallback`, so a bundle running with ELICITATION=false takes the token here too (R-PAD-7).
  if (caller.asks === "client" && server.clientQuestions && args.headerValue === null && args.clientForm === true)
    return { slug, ask: "client", ttlMs, call, caller: who, ...(token ? { fallback: "token" as const } : {}) };
  const checked = checkElicitationUrl(args.headerValue, roster.gateway.elicitation.allowedUrlPrefixes);
  if (!checked.ok) {
    if (token && checked.error.code === "ELICITATION_URL_MISSING") return { slug, fallback: "token", reason: NO_ADDRESS_REASON, ttlMs, call, caller: who };
    return { slug, refused: describeUrlError(checked.error), caller: who };
  }
  // The slug's edge credential belongs to its own approval service: the URL is held to its prefixes too (R-CHAN-12).
  const own = server.approvalUrlPrefixes;
  if (own !== undefined && !checkUnderPrefix(checked.url, own, "approvalUrlPrefixes").ok) {
    return { slug, refused: `X-Elicitation-Url was refused: it is not under any of the approvalUrlPrefixes of "${slug}"`, caller: who };
  }
  const headers = resolveHeaderMap(server.confirmationHeaders, slug, env);
  if (!headers.ok) return { slug, refused: `confirmationHeaders of "${slug}" need secret ${headers.missing}, which is not seeded`, caller: who };
  return { slug, url: checked.url, ttlMs, headers: headers.headers, call, caller: who, ...(token ? { fallback: "token" as const } : {}) };
}
