// The operator API, behind the OPERATOR_TOKEN bearer: mint a session (its elicitation URL and review
// URL), read a session's prompts with their poll counts, and, in dev mode only, decide a prompt
// without a browser (tests and the bench; see approvals/dev-api.mjs).
import { Hono, type MiddlewareHandler } from "hono";
import { type AppEnv, jsonError, originOf, readJson, sessionStore } from "./http";
import { reachedLoopback } from "./person";
import { PROTOCOL_BASE } from "./protocol.routes";
import type { Decision } from "./session-store";
import { isSessionId, newSessionId, reviewKey, secretEquals, sessionToken } from "./tokens";

export const OPERATOR_DECIDER = "operator (dev mode)";

const operator: MiddlewareHandler<AppEnv> = async (c, next) => {
  const expected = c.var.settings.operatorToken;
  if (expected === undefined) return jsonError(503, "the operator API is off: set OPERATOR_TOKEN");
  const match = /^Bearer ([\x21-\x7e]{1,4096})$/.exec(c.req.header("authorization") ?? "");
  if (match === null || !(await secretEquals(match[1] as string, expected))) {
    return jsonError(401, "missing or wrong operator token", { "www-authenticate": 'Bearer realm="strad-approvals"' });
  }
  await next();
};

const knownSession: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("sessionId") ?? "";
  if (!isSessionId(id)) return jsonError(404, "unknown session");
  c.set("sessionId", id);
  await next();
};

export const operatorRoutes = new Hono<AppEnv>();
// Hono's "/api/v1/sessions/*" also matches "/api/v1/sessions" itself.
operatorRoutes.use("/api/v1/sessions/*", operator);
operatorRoutes.use("/api/v1/sessions/:sessionId/*", knownSession);

operatorRoutes.post("/api/v1/sessions", async (c) => {
  const { secret } = c.var.settings;
  // An optional body: { "longPoll": false } mints a session whose polls are answered at once.
  let longPoll = true;
  if (c.req.header("content-type") !== undefined) {
    const body = await readJson(c.req.raw, 1024);
    if (!body.ok) return body.response;
    const value = (body.value as { longPoll?: unknown } | null)?.longPoll;
    if (value !== undefined && typeof value !== "boolean") return jsonError(400, "longPoll must be a boolean");
    longPoll = value !== false;
  }
  const sessionId = newSessionId();
  // DEV_ALARM_DELAY_MS (tests: hold the expiry alarm back) reaches only a session minted in dev mode on loopback.
  const { devMode, devAlarmDelayMs } = c.var.settings;
  const alarmDelayMs = devMode && reachedLoopback(c.req.raw) ? devAlarmDelayMs : 0;
  await sessionStore(c.env, sessionId).open({ longPoll, alarmDelayMs });
  const origin = originOf(c);
  return c.json(
    {
      sessionId,
      elicitationUrl: `${origin}${PROTOCOL_BASE}/${await sessionToken(secret, sessionId)}/`,
      reviewUrl: `${origin}/review/${await reviewKey(secret, sessionId)}`,
    },
    201,
    { "cache-control": "no-store" },
  );
});

operatorRoutes.get("/api/v1/sessions/:sessionId/prompts", async (c) => {
  const prompts = await sessionStore(c.env, c.var.sessionId).list();
  if (prompts === undefined) return jsonError(404, "unknown session");
  return c.json({ prompts }, 200, { "cache-control": "no-store" });
});

operatorRoutes.post("/api/v1/sessions/:sessionId/prompts/:requestId/decision", async (c) => {
  // Without dev mode, only a person on the review page decides.
  if (!c.var.settings.devMode || !reachedLoopback(c.req.raw)) return jsonError(403, "deciding through the operator API needs DEV_MODE; a person decides on the review page");
  const body = await readJson(c.req.raw, 1024);
  if (!body.ok) return body.response;
  const action = (body.value as { action?: unknown } | null)?.action;
  if (action !== "accept" && action !== "decline") return jsonError(400, 'action must be "accept" or "decline"');
  const decision: Decision = action === "accept" ? { action, content: { confirm: true }, by: OPERATOR_DECIDER } : { action, by: OPERATOR_DECIDER };
  const result = await sessionStore(c.env, c.var.sessionId).decide(c.req.param("requestId"), decision);
  if (result.ok) return c.json({ prompt: result.prompt }, 200, { "cache-control": "no-store" });
  if (result.reason === "not_pending") return jsonError(409, `the prompt is already ${result.prompt.status}`);
  return jsonError(404, result.reason === "unknown_session" ? "unknown session" : "unknown prompt");
});
