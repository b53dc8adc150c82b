// The reference approval service: the pulsemcp elicitation endpoints a bundle calls, the review page a
// person answers on, and the operator API that mints sessions. One Durable Object per session.
import { Hono } from "hono";
import { type AppEnv, jsonError } from "./http";
import { operatorRoutes } from "./operator.routes";
import { CONTENT_SECURITY_POLICY } from "./page/review-page";
import { protocolRoutes } from "./protocol.routes";
import { reviewRoutes } from "./review.routes";
import { readSettings } from "./settings";

export { SessionStore } from "./session-store";

const app = new Hono<AppEnv>();

app.use("*", async (c, next) => {
  await next();
  c.res.headers.set("content-security-policy", CONTENT_SECURITY_POLICY);
  c.res.headers.set("x-content-type-options", "nosniff");
  c.res.headers.set("referrer-policy", "no-referrer");
  c.res.headers.set("x-frame-options", "DENY");
});

app.get("/healthz", (c) => c.json({ ok: readSettings(c.env).ok }));
// Browsers ask for it on every page; answering keeps their consoles free of 404s.
app.get("/favicon.ico", () => new Response(null, { status: 204 }));

// A misconfigured service names the variables to fix (never their values) and serves nothing else.
app.use("*", async (c, next) => {
  const result = readSettings(c.env);
  if (!result.ok) {
    console.error(JSON.stringify({ event: "config_error", problems: result.problems }));
    return jsonError(503, `the approval service is misconfigured: ${result.problems.join("; ")}`);
  }
  c.set("settings", result.settings);
  await next();
});

app.route("/", operatorRoutes);
app.route("/", protocolRoutes);
app.route("/", reviewRoutes);
app.notFound(() => jsonError(404, "not found"));
// What failed is logged by kind and route pattern only (a path can hold a session token; a message, a URL), so an
// intermittent 500 says whether a Durable Object call failed as the runtime's (retryable, overloaded) or ours.
app.onError((error, c) => {
  const flags = error as { retryable?: unknown; overloaded?: unknown };
  console.error(JSON.stringify({ event: "internal_error", route: c.req.routePath, error: error.name, retryable: flags.retryable === true, overloaded: flags.overloaded === true }));
  return jsonError(500, "internal error");
});

export default app;
