// The review link (docs/rules.md R-FLOW-9, R-FLOW-13): where a slug opts in, request_approval hands the agent the
// approval service's review page for the request, or, to a host that takes URL-mode elicitation, puts it to the host
// as a link whose retry brings back which request it was. The link is only ever one the service named.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { META_REVIEW_URL } from "../../contract/elicitation";
import { slugNamespace } from "../../contract/slug";
import { isSecureOrLoopback } from "../../contract/url-policy";
import { argumentsFingerprint } from "../kit/confirm";
import { ID, json, ownRequest, type Ready, statusOf } from "./approval-flow.watch";

/** The longest reviewUrl handed on; a longer one, or anything but an absolute https (or loopback http) URL, is null. */
export const MAX_REVIEW_URL_CHARS = 2048;
/**
 * The slug's own setting that hands the agent each request's review link: `<SLUG>__REVIEW_URL_TO_AGENT`, exactly
 * "true" (a roster `env` entry of the slug). Off by default: the link opens a decision page, and the agent's words
 * are not where a person should find it (docs/rules.md R-FLOW-9).
 */
export const REVIEW_URL_SETTING = "REVIEW_URL_TO_AGENT";
/** Whether this slug opts in to handing the agent the review link: its own namespaced setting, exactly "true"; a bare name is not read (another slug of the bundle could set it). */
export function handsOnReviewUrl(env: Record<string, unknown>, slug: string): boolean {
  return env[`${slugNamespace(slug)}${REVIEW_URL_SETTING}`] === "true";
}

/** The review page's URL as the approval service named it, when it is one to hand on; otherwise null. */
export function reviewUrlFrom(meta: Record<string, unknown>): string | null {
  const value = meta[META_REVIEW_URL];
  if (typeof value !== "string" || value.length > MAX_REVIEW_URL_CHARS) return null;
  try {
    const url = new URL(value);
    return isSecureOrLoopback(url) && url.username === "" && url.password === "" && url.href === value ? value : null;
  } catch {
    return null;
  }
}

/** The key of the review link's question in request_approval's input_required, and what its retry's state starts with. */
export const REVIEW_QUESTION_KEY = "review";
const REVIEW_STATE = "af1.";
/** The words the host shows with the link: fixed, never the caller's purpose (a person reads the purpose on the page). */
export const REVIEW_LINK_MESSAGE = "A person's approval is asked for: open the approval service's review page to decide.";

/**
 * The state a pushed review link's retry brings back: which request it was, the link (as the service named it) and a
 * fingerprint of the arguments, so a retry is taken only for the very call that asked.
 */
export function reviewState(id: string, reviewUrl: string, args: string): string {
  return `${REVIEW_STATE}${btoa(JSON.stringify({ id, reviewUrl, args })).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}`;
}

function readReviewState(state: string | undefined, args: string): { id: string; reviewUrl: string } | undefined {
  if (state === undefined || !state.startsWith(REVIEW_STATE) || state.length > 4 * MAX_REVIEW_URL_CHARS) return undefined;
  try {
    const decoded = JSON.parse(atob(state.slice(REVIEW_STATE.length).replaceAll("-", "+").replaceAll("_", "/"))) as { id?: unknown; reviewUrl?: unknown; args?: unknown };
    if (typeof decoded.id !== "string" || !ID.test(decoded.id) || typeof decoded.reviewUrl !== "string" || decoded.args !== args) return undefined;
    // Held to what a service-named link must be, so the retry can hand on nothing the first call would not have.
    const reviewUrl = reviewUrlFrom({ [META_REVIEW_URL]: decoded.reviewUrl });
    return reviewUrl === null ? undefined : { id: decoded.id, reviewUrl };
  } catch {
    return undefined;
  }
}

/**
 * The retry of a request_approval whose review link was put to the host (docs/rules.md R-FLOW-13): the answer names the
 * request this caller made on this session, so the result is that request's, and nothing new is asked or kept. The
 * state is the caller's own to send, and can name only the caller's own request on its own session: anything else is
 * not a retry, and the call asks afresh.
 */
export async function reviewRetry(r: Ready): Promise<CallToolResult | undefined> {
  // Only where a link could have been put (the caller calls this only where the slug hands it on): a caller that takes
  // URL-mode elicitation.
  if (r.call.requestState === undefined || r.call.urlElicitation !== true) return undefined;
  const state = readReviewState(r.call.requestState, await argumentsFingerprint(r.call.toolName, r.call.arguments));
  if (state === undefined) return undefined;
  const own = await ownRequest(r, state.id);
  if (!own.ok) return undefined;
  return json({
    elicitationId: own.record.id,
    status: statusOf(own.record),
    reviewUrl: state.reviewUrl,
    expiresAt: new Date(own.record.expiresAt).toISOString(),
    // The link was put to a host that advertised URL-mode elicitation: on 2026-07-28 its client retried with this state,
    // on 2025-11-25 the gateway pushed it on the call's stream and retried at once (it waits for no answer to a link).
    elicitationDelivered: true,
  });
}
