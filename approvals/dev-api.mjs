// A client of the approval service's operator API, for scripts, tests and the bench (plain ESM, so that
// `node scripts/*.mjs` can import it without a build). Defaults are the committed LOCAL values of
// approvals/wrangler.toml; nothing here works against a production deployment's secrets unless
// you pass them. Errors name the status only.

export const DEV_ORIGIN = "http://127.0.0.1:8788";
export const DEV_OPERATOR_TOKEN = "dev-approvals-operator-token-0123456789abcdef";
/** The service token the emulated edge demands locally (the gateway's dev roster sends the same pair). */
export const DEV_ACCESS_HEADERS = Object.freeze({
  "CF-Access-Client-Id": "dev-access-client-id.access",
  "CF-Access-Client-Secret": "dev-access-client-secret-0123456789abcdef",
});

function settings(options = {}) {
  return { origin: (options.origin ?? DEV_ORIGIN).replace(/\/+$/, ""), token: options.operatorToken ?? DEV_OPERATOR_TOKEN };
}

async function call(method, path, options, body) {
  const { origin, token } = settings(options);
  const response = await fetch(`${origin}${path}`, {
    method,
    redirect: "manual",
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(`approval service answered ${response.status} to ${method} ${path.replace(/\/[0-9a-f]{32}\b/, "/<session>")}`);
    error.status = response.status;
    throw error;
  }
  return payload;
}

/** Mints a session: { sessionId, elicitationUrl, reviewUrl }. */
export function mintSession(options) {
  return call("POST", "/api/v1/sessions", options, options?.longPoll === false ? { longPoll: false } : undefined);
}

/** The session's prompts, newest first, with poll counts (polls, accessPolls, createdWithAccess). */
export async function listPrompts(sessionId, options) {
  return (await call("GET", `/api/v1/sessions/${sessionId}/prompts`, options)).prompts;
}

/**
 * Decides a pending prompt without a browser: action "accept" (content { confirm: true }) or "decline".
 * Only in dev mode on a loopback host; production answers 403 (a person decides on the review page).
 */
export async function decidePrompt(sessionId, requestId, action = "accept", options) {
  return (await call("POST", `/api/v1/sessions/${sessionId}/prompts/${encodeURIComponent(requestId)}/decision`, options, { action })).prompt;
}

/** Waits (bounded) until the session holds a pending prompt and returns the newest one. */
export async function waitForPendingPrompt(sessionId, { timeoutMs = 30_000, intervalMs = 50, ...options } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pending = (await listPrompts(sessionId, options)).find((p) => p.status === "pending");
    if (pending !== undefined) return pending;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`no pending prompt appeared within ${timeoutMs} ms`);
}
