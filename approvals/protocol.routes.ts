// The pulsemcp fallback-elicitation endpoints (docs/rules.md R-CLIENT-1) at /api/v1/elicitations/session/<token>/.
// The token names the session; nothing else the caller sends does. It can create and poll a prompt,
// never answer one. With the emulation switch on, these routes stand behind an emulated Cloudflare
// Access service-token policy, so tests prove the slug's confirmationHeaders reach this far.
import { Hono, type MiddlewareHandler } from "hono";
import { APPROVER_META_KEY, DECIDED_AT_META_KEY } from "../contract/channel";
import { MAX_CREATE_BODY_BYTES, META_EXPIRES_AT, META_REQUEST_ID, META_REVIEW_URL } from "../contract/elicitation";
import { type AppEnv, jsonError, originOf, readJson, sessionStore } from "./http";
import { parseCreate, REQUEST_ID } from "./prompt";
import type { PromptRecord } from "./session-store";
import { MAX_PENDING, MAX_REQUEST_IDS } from "./settings";
import { promptReviewKey, secretEquals, sessionFromToken } from "./tokens";

export const PROTOCOL_BASE = "/api/v1/elicitations/session";
/** One prompt's own review page: `/prompt/<requestId>/<prompt review key>` (approvals/review.routes.ts). */
export const PROMPT_REVIEW_BASE = "/prompt";
/** The longest a poll carrying `Prefer: wait` is held. */
export const MAX_WAIT_S = 25;
/** Any JSON encoding of the largest message the service takes, and its envelope (contract/elicitation.ts, docs/rules.md R-LIMIT-2). */
export const MAX_CREATE_BYTES = MAX_CREATE_BODY_BYTES;

/** RFC 7240 `Prefer: wait=<seconds>`, possibly beside other preferences; undefined when absent. */
export function preferredWait(header: string | null): number | undefined {
  if (header === null) return undefined;
  for (const pref of header.split(",")) {
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*(;.*)?$/i.exec(pref);
    if (match !== null) return Math.min(Number(match[1]), MAX_WAIT_S);
  }
  return undefined;
}

/** The statuses a person (or, in dev mode, the operator API) decided; an expiry is nobody's decision. */
const DECIDED: ReadonlySet<PromptRecord["status"]> = new Set(["accept", "decline", "cancel"]);

/**
 * A poll's answer. A decided prompt also names who decided it under `_meta["dev.strad/approver"]`, as it was
 * recorded (the Access person's email, the dev identity, the operator API's dev-mode name), for the bundle's
 * audit trail (docs/rules.md R-AUDIT-4); every settled one says when it became final under
 * `_meta["dev.strad/decided-at"]`: the store's time of the decision, or the expiry for `expired` (R-APPR-19).
 * `_meta` carries extra keys beside the protocol's own.
 */
export function pollAnswer(p: PromptRecord): { action: string; content: PromptRecord["content"]; _meta: Record<string, string> } {
  const meta: Record<string, string> = { [META_REQUEST_ID]: p.requestId, [META_EXPIRES_AT]: new Date(p.expiresAt).toISOString() };
  if (DECIDED.has(p.status) && p.decidedBy !== null) meta[APPROVER_META_KEY] = p.decidedBy;
  const finalAt = p.status === "pending" ? null : p.status === "expired" ? p.expiresAt : p.decidedAt;
  if (finalAt !== null) meta[DECIDED_AT_META_KEY] = new Date(finalAt).toISOString();
  return {
    action: p.status,
    content: p.status === "accept" ? p.content : null,
    _meta: meta,
  };
}

const UNKNOWN_SESSION = "unknown session: mint one with POST /api/v1/sessions";

/** The emulated edge: without the service token, a 401 and the service never sees the request. */
const edge: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { emulation, serviceToken } = c.var.settings;
  const id = c.req.header("cf-access-client-id");
  const secret = c.req.header("cf-access-client-secret");
  const matches = serviceToken !== undefined && id !== undefined && secret !== undefined && (await secretEquals(id, serviceToken.clientId)) && (await secretEquals(secret, serviceToken.clientSecret));
  if (emulation !== undefined && !matches) {
    return jsonError(401, "Cloudflare Access (emulated): this application requires a service token (CF-Access-Client-Id and CF-Access-Client-Secret)");
  }
  c.set("access", matches);
  await next();
};

/** Resolves the token in the path to its session, or answers 404 for anything the service did not mint. */
const session: MiddlewareHandler<AppEnv> = async (c, next) => {
  const sessionId = await sessionFromToken(c.var.settings.secret, c.req.param("token") ?? "");
  if (sessionId === undefined) return jsonError(404, UNKNOWN_SESSION);
  c.set("sessionId", sessionId);
  await next();
};

export const protocolRoutes = new Hono<AppEnv>();

protocolRoutes.use(`${PROTOCOL_BASE}/*`, edge);
// Hono's "/:token/*" also matches "/:token" itself.
protocolRoutes.use(`${PROTOCOL_BASE}/:token/*`, session);

const create = async (c: Parameters<MiddlewareHandler<AppEnv>>[0]): Promise<Response> => {
  const body = await readJson(c.req.raw, MAX_CREATE_BYTES);
  if (!body.ok) return body.response;
  const parsed = parseCreate(body.value, Date.now());
  if (!parsed.ok) return jsonError(400, parsed.reason);
  const result = await sessionStore(c.env, c.var.sessionId).create(parsed.prompt, c.var.access);
  if (!result.ok) {
    switch (result.reason) {
      case "unknown_session":
        return jsonError(404, UNKNOWN_SESSION);
      case "duplicate":
        // Also an id whose prompt was evicted or deleted: an id is used once per session, for good (R-APPR-8).
        return jsonError(409, "this request id was already used in this session: each prompt needs a new one");
      case "ids_spent":
        return jsonError(409, `this session has used the ${MAX_REQUEST_IDS} request ids it records: mint a new session`);
      case "too_many":
        // The one hard cap (R-APPR-9): settled history never refuses a create, it makes room (R-APPR-17).
        return jsonError(429, `this session already holds ${MAX_PENDING} pending prompts, the most it takes at once: wait for a decision or an expiry`);
    }
  }
  const { requestId } = parsed.prompt;
  // Asked for (META_REVIEW_URL: true in the create's _meta): where a person reviews this one prompt. Without the ask
  // the answer is the protocol's own, { requestId }.
  if (!wantsReviewUrl(body.value)) return c.json({ requestId }, 201, { "cache-control": "no-store" });
  const key = await promptReviewKey(c.var.settings.secret, c.var.sessionId, requestId);
  return c.json({ requestId, _meta: { [META_REVIEW_URL]: `${originOf(c)}${PROMPT_REVIEW_BASE}/${requestId}/${key}` } }, 201, { "cache-control": "no-store" });
};

/** Whether a (validated) create body's _meta asks where its prompt is reviewed. */
function wantsReviewUrl(body: unknown): boolean {
  const meta = (body as { _meta?: Record<string, unknown> })._meta;
  return meta?.[META_REVIEW_URL] === true;
}

protocolRoutes.post(`${PROTOCOL_BASE}/:token/`, create);
protocolRoutes.post(`${PROTOCOL_BASE}/:token`, create);

protocolRoutes.get(`${PROTOCOL_BASE}/:token/:requestId`, async (c) => {
  const requestId = c.req.param("requestId");
  if (!REQUEST_ID.test(requestId)) return jsonError(404, "unknown prompt");
  const wait = preferredWait(c.req.header("prefer") ?? null);
  const result = await sessionStore(c.env, c.var.sessionId).poll(requestId, (wait ?? 0) * 1000, c.var.access);
  if (!result.ok) return jsonError(404, result.reason === "unknown_session" ? UNKNOWN_SESSION : "unknown prompt");
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (wait !== undefined && result.longPoll) headers["preference-applied"] = `wait=${wait}`;
  return c.json(pollAnswer(result.prompt), 200, headers);
});

// Answering is a person's act on the review page; the token that creates and polls never can.
protocolRoutes.on(["POST", "PUT", "PATCH", "DELETE"], [`${PROTOCOL_BASE}/:token/:requestId`, `${PROTOCOL_BASE}/:token/:requestId/*`], () =>
  jsonError(405, "a session token can create and poll a prompt, never answer one: a person answers on the review page", { allow: "GET" }),
);
protocolRoutes.on(["GET", "PUT", "PATCH", "DELETE"], [`${PROTOCOL_BASE}/:token/`, `${PROTOCOL_BASE}/:token`], () =>
  jsonError(405, "create a prompt with POST; poll it with GET <url><requestId>", { allow: "POST" }),
);
