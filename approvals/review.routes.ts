// The review page at /review/<review key>: a person sees the session's prompts and accepts or declines.
// The review key is derived apart from the session token, so the agent holding the elicitation URL
// cannot find this page. Answering needs a person (person.ts), a CSRF token bound to that person and
// a same-origin request; a decided or expired prompt is final.
import { Hono, type MiddlewareHandler } from "hono";
import { UNSAFE_CHARS } from "../contract/text";
import { type AppContext, type AppEnv, jsonError, originOf, readJson, sessionStore } from "./http";
import reviewCss from "./page/review.client.css";
import reviewJs from "./page/review.client.js";
import { renderErrorPage, renderReviewPage } from "./page/review-page";
import { identifyPerson } from "./person";
import { checkEdits, type Json, MAX_DECISION_BYTES, REQUEST_ID } from "./prompt";
import { PROMPT_REVIEW_BASE } from "./protocol.routes";
import type { Decision, PromptRecord, PromptSummary } from "./session-store";
import { REVIEW_RECENT } from "./settings";
import { constantTimeEqual, csrfToken, sessionFromPromptReviewKey, sessionFromReviewKey } from "./tokens";

export const CSRF_HEADER = "x-csrf-token";

/**
 * A prompt as the list the page polls every 2 s carries it: its state and `createdAt`, which tells the page the prompt
 * behind a request id changed. Neither its message nor its schema: the card fetches both once (R-APPR-17).
 */
export interface PromptSummaryView {
  requestId: string;
  toolName: string | null;
  callerSessionId: string | null;
  createdAt: number;
  expiresAt: number;
  status: PromptRecord["status"];
  decidedAt: number | null;
  decidedBy: string | null;
  /** On an accepted prompt: the fields the person changed, by name; [] when they changed none. */
  edited: string[];
}

/** One prompt whole, its message and its form with the defaults: the per-prompt route's answer, and a decision's. */
export interface PromptView extends PromptSummaryView {
  message: string;
  confirm: { title: string | null; description: string | null };
  /** The fields the person may edit before accepting (docs/rules.md R-EDIT-2): text, or a list they may only untick. */
  fields: FieldView[];
}

export interface FieldView {
  name: string;
  kind: "text" | "list" | "choice";
  title: string | null;
  description: string | null;
  maxLength: number | null;
  /** A long text (no maxLength, or one past a line's worth, or a default over several lines) is a text area. */
  multiline: boolean;
  default: string | string[];
  /** A list's entries, each of which the person may keep or leave out; a choice's, of which the person picks one. */
  options: string[] | null;
}

/** A text field longer than this is a text area on the card. */
const ONE_LINE_CHARS = 1000;

function fieldsOf(schema: PromptRecord["requestedSchema"]): FieldView[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const fields: FieldView[] = [];
  for (const [name, p] of Object.entries(properties)) {
    if (name === "confirm") continue;
    const title = typeof p.title === "string" ? p.title : null;
    const description = typeof p.description === "string" ? p.description : null;
    if (p.type === "string" && Array.isArray(p.enum)) {
      // A pick-one field: a select of exactly its listed choices (R-EDIT-8).
      const options = (p.enum as unknown[]).filter((o): o is string => typeof o === "string");
      fields.push({ name, kind: "choice", title, description, maxLength: null, multiline: false, default: typeof p.default === "string" ? p.default : (options[0] ?? ""), options });
    } else if (p.type === "string") {
      const value = typeof p.default === "string" ? p.default : "";
      const maxLength = typeof p.maxLength === "number" ? p.maxLength : null;
      fields.push({ name, kind: "text", title, description, maxLength, multiline: maxLength === null || maxLength > ONE_LINE_CHARS || /[\r\n]/.test(value), default: value, options: null });
    } else if (p.type === "array") {
      const options = ((p.items as { enum?: unknown } | undefined)?.enum ?? []) as string[];
      const value = Array.isArray(p.default) ? (p.default as string[]) : [];
      fields.push({ name, kind: "list", title, description, maxLength: null, multiline: false, default: value, options });
    }
  }
  return fields;
}

function listed(p: PromptSummary): PromptSummaryView {
  return {
    requestId: p.requestId,
    toolName: p.toolName,
    callerSessionId: p.callerSessionId,
    createdAt: p.createdAt,
    expiresAt: p.expiresAt,
    status: p.status,
    decidedAt: p.decidedAt,
    decidedBy: p.decidedBy,
    edited: p.edited,
  };
}

function summaryOf(p: PromptRecord): PromptSummary {
  const { message: _message, requestedSchema: _schema, content, ...rest } = p;
  return { ...rest, edited: p.status === "accept" && content !== null ? Object.keys(content).filter((k) => k !== "confirm") : [] };
}

function view(p: PromptRecord): PromptView {
  const confirm = ((p.requestedSchema.properties as Record<string, Record<string, unknown>> | undefined)?.confirm ?? {}) as Record<string, unknown>;
  return {
    ...listed(summaryOf(p)),
    message: p.message,
    confirm: { title: typeof confirm.title === "string" ? confirm.title : null, description: typeof confirm.description === "string" ? confirm.description : null },
    fields: fieldsOf(p.requestedSchema),
  };
}

/** One prompt of the page's session, whole, for the card the page builds (a GET: it reads, it decides nothing). */
async function promptForm(c: AppContext, requestId: string): Promise<Response> {
  const prompt = REQUEST_ID.test(requestId) ? await sessionStore(c.env, c.var.sessionId).prompt(requestId) : undefined;
  if (prompt === undefined) return jsonError(404, "There is no such prompt in this session.");
  return c.json({ now: Date.now(), prompt: view(prompt) }, 200, { "cache-control": "no-store" });
}

/** Why a decision was refused, in words for the person who clicked. */
export function refusal(p: PromptRecord): string {
  if (p.status === "expired") return `Too late: this prompt expired at ${new Date(p.expiresAt).toISOString()} and can no longer be decided. Ask the agent to send it again.`;
  const verb = p.status === "accept" ? "accepted" : p.status === "cancel" ? "dismissed" : "declined";
  return `This prompt was already ${verb}${p.decidedBy === null ? "" : ` by ${p.decidedBy}`}; it cannot be decided again.`;
}

/** Where the page's script takes the one sanitiser's character class (docs/rules.md R-PROMPT-7). */
export const UNSAFE_CHARS_PLACEHOLDER = '"__STRAD_UNSAFE_CHARS__"';
/** The page's script as served: contract/text.ts's class written in, so the page shows as code points exactly what a bundle replaces. */
export const REVIEW_SCRIPT = reviewJs.replace(UNSAFE_CHARS_PLACEHOLDER, () => JSON.stringify(UNSAFE_CHARS));

const asset = (body: string, type: string) => () => new Response(body, { headers: { "content-type": type, "cache-control": "no-cache", "x-content-type-options": "nosniff" } });

type ReviewContext = Parameters<MiddlewareHandler<AppEnv>>[0];

/**
 * Resolves a review key and the person; the page (a GET of `pagePath`) answers in HTML, its API in JSON. Both review
 * pages use it: the session's and one prompt's own.
 */
function reviewGate(pagePath: (c: ReviewContext) => string, sessionOf: (c: ReviewContext) => Promise<string | undefined>, unknownKey: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const html = c.req.method === "GET" && c.req.path === pagePath(c);
    const fail = (status: number, reason: string) => (html ? c.html(renderErrorPage(reason), status as 401) : jsonError(status, reason));
    const sessionId = await sessionOf(c);
    if (sessionId === undefined) return fail(404, unknownKey);
    const person = await identifyPerson(c.req.raw, c.var.settings);
    if (!person.ok) return fail(person.status, person.reason);
    c.set("sessionId", sessionId);
    c.set("identity", person.identity);
    c.set("devMode", person.devMode);
    await next();
  };
}

const reviewer = reviewGate(
  (c) => `/review/${c.req.param("key") ?? ""}`,
  (c) => sessionFromReviewKey(c.var.settings.secret, c.req.param("key") ?? ""),
  "There is no such review page. Ask the operator for the session's review URL.",
);

/**
 * One prompt's own page, `/prompt/<requestId>/<key>` (tokens.ts promptReviewKey): the same page and the same person
 * checks, for that prompt alone. Its key names the session and the request together, so it opens nothing else.
 */
const promptReviewer = reviewGate(
  (c) => `${PROMPT_REVIEW_BASE}/${c.req.param("requestId") ?? ""}/${c.req.param("key") ?? ""}`,
  async (c) => {
    const requestId = c.req.param("requestId") ?? "";
    return REQUEST_ID.test(requestId) ? sessionFromPromptReviewKey(c.var.settings.secret, c.req.param("key") ?? "", requestId) : undefined;
  },
  "There is no such review page. Ask the agent for the request's review URL again.",
);

/** A decision on the page (CSRF, same origin, the ticked box), on the prompt the route names. */
async function decide(c: AppContext, requestId: string): Promise<Response> {
  // CSRF: a same-origin fetch with a custom header carrying a token bound to this session and person.
  const site = c.req.header("sec-fetch-site");
  const origin = c.req.header("origin");
  if ((site !== undefined && site !== "same-origin") || (origin !== undefined && origin !== originOf(c) && origin !== new URL(c.req.url).origin)) {
    return jsonError(403, "decisions are accepted only from the review page itself");
  }
  // The token is required, not only checked when sent: a request without the header (and without Origin or
  // Sec-Fetch-Site, which a non-browser client omits) is refused like one with a wrong token.
  const presented = c.req.header(CSRF_HEADER);
  const expected = await csrfToken(c.var.settings.secret, c.var.sessionId, c.var.identity);
  if (presented === undefined || presented === "" || !constantTimeEqual(presented, expected)) return jsonError(403, "the page's form token is missing or stale: reload the page");
  const body = await readJson(c.req.raw, MAX_DECISION_BYTES);
  if (!body.ok) return body.response;
  const { action, confirm, edits } = (body.value ?? {}) as { action?: unknown; confirm?: unknown; edits?: unknown };
  if (action !== "accept" && action !== "decline" && action !== "dismiss") return jsonError(400, 'action must be "accept", "decline" or "dismiss"');
  if (action === "accept" && confirm !== true) return jsonError(400, "tick the confirm box to accept");
  const by = c.var.identity;
  let content: { [key: string]: Json } = { confirm: true };
  if (action === "accept" && edits !== undefined) {
    // The edits are held to the prompt's own form before they are stored; the bundle checks them again (R-EDIT-2, R-EDIT-3).
    const prompt = await sessionStore(c.env, c.var.sessionId).prompt(requestId);
    if (prompt === undefined) return jsonError(404, "There is no such prompt in this session.");
    const checked = checkEdits(prompt.requestedSchema, edits);
    if (!checked.ok) return jsonError(400, `The edit was not recorded: ${checked.reason}.`);
    content = { ...checked.content, confirm: true };
  }
  // Dismiss clears an abandoned card: the prompt is cancelled (the protocol's `cancel`), which never acts.
  const decision: Decision = action === "accept" ? { action, content, by } : action === "dismiss" ? { action: "cancel", by } : { action, by };
  const result = await sessionStore(c.env, c.var.sessionId).decide(requestId, decision);
  if (result.ok) return c.json({ prompt: view(result.prompt) }, 200, { "cache-control": "no-store" });
  if (result.reason === "not_pending") return c.json({ error: refusal(result.prompt), prompt: view(result.prompt) }, 409, { "cache-control": "no-store" });
  return jsonError(404, result.reason === "unknown_session" ? "This session no longer exists." : "There is no such prompt in this session.");
}

export const reviewRoutes = new Hono<AppEnv>();
reviewRoutes.get("/assets/review.js", asset(REVIEW_SCRIPT, "text/javascript; charset=utf-8"));
reviewRoutes.get("/assets/review.css", asset(reviewCss, "text/css; charset=utf-8"));
// Hono's "/review/:key/*" also matches "/review/:key" itself.
reviewRoutes.use("/review/:key/*", reviewer);

reviewRoutes.get("/review/:key", async (c) => {
  // Only whether the session exists: reading its prompts (up to 500 of up to 48 KiB) for that would cost megabytes a view.
  if (!(await sessionStore(c.env, c.var.sessionId).live())) return c.html(renderErrorPage("This session no longer exists."), 404);
  const csrf = await csrfToken(c.var.settings.secret, c.var.sessionId, c.var.identity);
  const base = `/review/${c.req.param("key")}`;
  return c.html(renderReviewPage({ devMode: c.var.devMode, identity: c.var.identity, csrf, base }), 200, { "cache-control": "no-store" });
});

// The list lived at /prompts while it carried each prompt's message. A page loaded before that changed polls /prompts
// still, and would build cards showing no message whose Accept still worked: it is told to reload instead, and its
// cards built before stay as they were, each with the message it was given (R-APPR-17).
reviewRoutes.get("/review/:key/prompts", () => jsonError(410, "This page is out of date: reload it to see the prompts."));

reviewRoutes.get("/review/:key/list", async (c) => {
  // Polled every 2 s: every pending prompt (at most 100) and only the most recent settled ones; older ones are counted.
  const page = await sessionStore(c.env, c.var.sessionId).review(REVIEW_RECENT);
  if (page === undefined) return jsonError(404, "This session no longer exists.");
  return c.json({ now: Date.now(), identity: c.var.identity, devMode: c.var.devMode, prompts: page.prompts.map(listed), olderSettled: page.older }, 200, { "cache-control": "no-store" });
});

// One prompt whole, its message and form, fetched once per card: the list above carries neither (R-APPR-17).
reviewRoutes.get("/review/:key/prompts/:requestId", (c) => promptForm(c, c.req.param("requestId")));

reviewRoutes.post("/review/:key/prompts/:requestId/decision", (c) => decide(c, c.req.param("requestId")));

// One prompt's own page: the same shell, its JSON holding that prompt alone, decisions on that prompt only.
reviewRoutes.use(`${PROMPT_REVIEW_BASE}/:requestId/:key/*`, promptReviewer);

reviewRoutes.get(`${PROMPT_REVIEW_BASE}/:requestId/:key`, async (c) => {
  if ((await sessionStore(c.env, c.var.sessionId).prompt(c.req.param("requestId"))) === undefined)
    return c.html(renderErrorPage("There is no such prompt: it was deleted after its retention period, or its session no longer exists."), 404);
  const csrf = await csrfToken(c.var.settings.secret, c.var.sessionId, c.var.identity);
  const base = `${PROMPT_REVIEW_BASE}/${c.req.param("requestId")}/${c.req.param("key")}`;
  return c.html(renderReviewPage({ devMode: c.var.devMode, identity: c.var.identity, csrf, base }), 200, { "cache-control": "no-store" });
});

reviewRoutes.get(`${PROMPT_REVIEW_BASE}/:requestId/:key/prompts`, () => jsonError(410, "This page is out of date: reload it to see the prompt."));

reviewRoutes.get(`${PROMPT_REVIEW_BASE}/:requestId/:key/list`, async (c) => {
  const prompt = await sessionStore(c.env, c.var.sessionId).prompt(c.req.param("requestId"));
  if (prompt === undefined) return jsonError(404, "There is no such prompt in this session.");
  return c.json({ now: Date.now(), identity: c.var.identity, devMode: c.var.devMode, prompts: [listed(summaryOf(prompt))], olderSettled: 0 }, 200, { "cache-control": "no-store" });
});

reviewRoutes.get(`${PROMPT_REVIEW_BASE}/:requestId/:key/prompts/:shown`, (c) => {
  // This page shows its own prompt's form and no other.
  if (c.req.param("shown") !== c.req.param("requestId")) return jsonError(404, "There is no such prompt on this page.");
  return promptForm(c, c.req.param("requestId"));
});

reviewRoutes.post(`${PROMPT_REVIEW_BASE}/:requestId/:key/prompts/:decided/decision`, (c) => {
  // This page decides its own prompt and no other.
  if (c.req.param("decided") !== c.req.param("requestId")) return jsonError(404, "There is no such prompt on this page.");
  return decide(c, c.req.param("requestId"));
});
