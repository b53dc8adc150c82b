// The operator API for runtime roster writes, /admin/roster (docs/rules.md R-RT-1..R-RT-5): an `admin` caller's bearer
// token (worker/auth.ts), or a person Cloudflare Access signed in whose email gateway.operatorAccess lists (verified
// as the approval service verifies its people, contract/access-jwt.ts), every write checked against the base as check-config checks it (worker/overlay.ts),
// stored in the RosterOverlay Durable Object, and logged as one audit line naming no value.
import { Hono } from "hono";
import { type AccessConfig, verifyAccessJwt } from "../contract/access-jwt";
import { discardBody, dropUnauthenticatedBody, readCountedText } from "../contract/body";
import { OVERLAY_OBJECT, type RosterOverlayApi, type RosterOverlayNamespace } from "../contract/roster-overlay";
import { CallerTable } from "./auth";
import { applyOverlay, checkEntry, describeRefusal, digest, EMPTY_OVERLAY, OVERLAY_READ_TIMEOUT_MS, type Overlay, type OverlayRefusal, parseOverlay, readWithin, replacementAsChange } from "./overlay";
import type { Roster, ServerEntry } from "./roster";

/** A write's body: one server entry is a few hundred bytes; this is far past any real one. */
export const ADMIN_BODY_MAX = 64 * 1024;

type Env = Record<string, unknown>;
type Op = "add" | "set" | "patch" | "remove" | "reset";

/** The object the overlay lives in, or undefined when the gateway was deployed without its binding. */
export function overlayStore(env: Env): RosterOverlayApi | undefined {
  const ns = env.ROSTER_OVERLAY as RosterOverlayNamespace | undefined;
  return ns === undefined ? undefined : (ns.get(ns.idFromName(OVERLAY_OBJECT)) as unknown as RosterOverlayApi);
}

/** Who is writing, as the audit line names them: an admin caller's id, or the email of an operator Access signed in. */
export interface Operator {
  who: string;
  via: "bearer" | "access";
}
type Vars = { Bindings: Env; Variables: { operator: Operator } };

/** The Access application /admin/roster trusts, from the roster; undefined when it declares none (bearer only). */
export function operatorAccessConfig(base: Roster): (AccessConfig & { operators: readonly string[] }) | undefined {
  const access = base.gateway.operatorAccess;
  if (access === undefined) return undefined;
  return { teamDomain: access.teamDomain, audience: access.audience, certsUrl: access.certsUrl ?? `${access.teamDomain}/cdn-cgi/access/certs`, operators: access.operators };
}

const refused = (status: 401 | 403 | 404 | 409 | 413 | 415 | 400 | 422 | 503, code: string, error: string, extra: Record<string, unknown> = {}) =>
  Response.json({ error, code, ...extra }, { status, headers: status === 401 ? { "WWW-Authenticate": 'Bearer realm="strad-admin"' } : undefined });

function refusalResponse(r: OverlayRefusal): Response {
  const key = "key" in r ? r.key : undefined;
  return refused(422, r.code, describeRefusal(r), key === undefined ? {} : { key });
}

/**
 * Why a write may have been sent by a browser page on another site, or undefined (docs/rules.md R-RT-8). An operator
 * signed in through Access carries that sign-in as a cookie, which a browser attaches to a cross-site form or fetch
 * as well: a write is taken only as a program sends one, with no Origin but this gateway's own, no cross-site fetch
 * metadata, and (when it has a body) a JSON body, which no form can send and no page can send to another site
 * without a preflight this gateway never answers.
 */
export function crossSiteWrite(request: Request, hasBody: boolean): { status: 403 | 415; code: string; message: string } | undefined {
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  if ((origin !== null && origin !== new URL(request.url).origin) || (site !== null && site !== "same-origin" && site !== "none")) {
    return { status: 403, code: "CROSS_SITE", message: "a roster write from a page of another site is refused: writes come from the roster CLI or another program, not a browser page" };
  }
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (hasBody && type !== "application/json") return { status: 415, code: "BAD_CONTENT_TYPE", message: "a roster write's body must be sent as Content-Type: application/json" };
  return undefined;
}

/** A remote server's URL as listings show it: its query, which may carry a key, withheld (R-RT-5). */
const withoutQuery = (url: string | undefined) => {
  if (url === undefined) return undefined;
  const at = url.indexOf("?");
  return at === -1 ? url : `${url.slice(0, at)}?(query withheld)`;
};

/** A header map shown by name only: a literal value may be a credential (R-RT-5). */
const names = (map: Record<string, string>) => Object.keys(map).sort();

/** An entry as the API shows it: header and env values left out, and whether it is the base's or a runtime one. */
export function shown(s: ServerEntry, source: "base" | "added" | "changed"): Record<string, unknown> {
  return {
    ...s,
    ...(s.url === undefined ? {} : { url: withoutQuery(s.url) }),
    headers: names(s.headers),
    confirmationHeaders: names(s.confirmationHeaders),
    env: names(s.env),
    source: source === "base" ? "base" : `runtime:${source}`,
  };
}

/** A runtime entry as written, its maps by name only (a literal header may be a credential; a bad overlay may hold anything). */
function withoutValues(entry: Record<string, unknown>): Record<string, unknown> {
  const out = { ...entry };
  if (typeof out.url === "string") out.url = withoutQuery(out.url);
  for (const key of ["headers", "confirmationHeaders", "env"]) {
    const map = out[key];
    if (typeof map === "object" && map !== null) out[key] = Object.keys(map).sort();
  }
  return out;
}

export function adminRoutes(base: Roster): Hono<Vars> {
  let callers: CallerTable | undefined;
  const access = operatorAccessConfig(base);
  const app = new Hono<Vars>();

  /** An operator, or the refusal: an admin caller's bearer token, or (when the roster declares one) a listed person's Access sign-in. */
  const identify = async (request: Request, env: Env): Promise<Operator | Response> => {
    const authorization = request.headers.get("authorization");
    const assertion = request.headers.get("cf-access-jwt-assertion");
    // A bearer token decides when there is one; Access's assertion only when there is none (Access may sit in front
    // of a CLI holding the admin token, and then puts its own assertion on the same request).
    if (authorization === null && assertion !== null && assertion !== "" && access !== undefined) {
      const result = await verifyAccessJwt(assertion, access);
      // The reason is jose's class of failure (expired, wrong_audience, ...), never the token or a claim.
      if (!result.ok) return refused(401, "ACCESS_REFUSED", `the Cloudflare Access sign-in was not accepted (${result.error})`);
      if (result.claims.type === "service") return refused(403, "NOT_OPERATOR", "an Access service token is not an operator: a person must sign in");
      const email = result.claims.email.toLowerCase();
      if (!access.operators.includes(email)) return refused(403, "NOT_OPERATOR", "this person is not one of gateway.operatorAccess.operators");
      return { who: email, via: "access" };
    }
    callers ??= CallerTable.build(base, env).table;
    const caller = callers.authenticate(authorization);
    if (caller === undefined) return refused(401, "UNAUTHENTICATED", "missing or unknown bearer token");
    if (!caller.isAdmin) return refused(403, "NOT_OPERATOR", "the roster is changed by an admin caller only");
    return { who: caller.id, via: "bearer" };
  };

  // Only an operator reaches anything below (R-RT-1); anyone else learns nothing and writes nothing.
  app.use("*", async (c, next) => {
    const operator = await identify(c.req.raw, c.env);
    if (operator instanceof Response) {
      // A refused body is dropped as /mcp drops a stranger's, so the connection can carry the next request (R-BODY-8).
      const drained = await dropUnauthenticatedBody(c.req.raw);
      if (!drained) operator.headers.set("connection", "close");
      return operator;
    }
    c.set("operator", operator);
    await next();
  });

  app.onError((error, c) => {
    // The one failure below that is not a refusal: the object did not answer in time, or threw.
    console.error(JSON.stringify({ event: "roster_admin_error", reason: error instanceof Error && error.message === "timed out" ? "the overlay read timed out" : "the overlay store failed" }));
    return c.json({ error: "the roster overlay could not be read or written; retry", code: "OVERLAY_UNAVAILABLE" }, 503);
  });

  // Bounded as the gateway's own reads are (R-RT-6): a hung object answers the operator 503, never hangs.
  const load = async (store: RosterOverlayApi) => {
    const read = await readWithin(store, OVERLAY_READ_TIMEOUT_MS);
    return { version: read.version, parsed: parseOverlay(read.text) };
  };

  app.get("/", async (c) => {
    const store = overlayStore(c.env);
    if (store === undefined) return refused(503, "NO_OVERLAY_STORE", "the gateway has no ROSTER_OVERLAY binding");
    const { version, parsed } = await load(store);
    const effective = parsed.ok ? await applyOverlay(base, parsed.overlay) : parsed;
    const roster = effective.ok ? effective.roster : base;
    const runtime = effective.ok ? effective.runtime : new Map<string, "added" | "changed">();
    return c.json({
      version,
      // What the gateway serves: the base alone when the overlay is bad (R-RT-6).
      overlayError: effective.ok ? null : describeRefusal(effective.refusal),
      servers: roster.servers.map((s) => shown(s, runtime.get(s.slug) ?? "base")),
      // The runtime entries as written (header values left out), for `npm run roster -- <url> diff`.
      overlay: parsed.ok ? { add: parsed.overlay.add.map(withoutValues), change: parsed.overlay.change.map(withoutValues) } : null,
    });
  });

  app.get("/history", async (c) => {
    const store = overlayStore(c.env);
    if (store === undefined) return refused(503, "NO_OVERLAY_STORE", "the gateway has no ROSTER_OVERLAY binding");
    const limit = Number(c.req.query("limit") ?? "100");
    return c.json({ history: await store.history(Number.isFinite(limit) ? limit : 100) });
  });

  const write = async (c: { env: Env; get(k: "operator"): Operator; req: { raw: Request } }, op: Op, slug: string | undefined) => {
    const crossSite = crossSiteWrite(c.req.raw, op !== "remove" && op !== "reset");
    if (crossSite !== undefined) {
      await discardBody(c.req.raw);
      return refused(crossSite.status, crossSite.code, crossSite.message);
    }
    const store = overlayStore(c.env);
    if (store === undefined) return refused(503, "NO_OVERLAY_STORE", "the gateway has no ROSTER_OVERLAY binding");
    let body: Record<string, unknown> = {};
    if (op !== "remove" && op !== "reset") {
      const text = await readCountedText(c.req.raw, ADMIN_BODY_MAX);
      if (!text.ok) return refused(text.tooLarge ? 413 : 400, "BAD_BODY", text.tooLarge ? `the body is larger than ${ADMIN_BODY_MAX} bytes` : "the body could not be read");
      try {
        const parsed: unknown = JSON.parse(text.value);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return refused(400, "BAD_BODY", "the body must be a JSON object (one server entry)");
        body = parsed as Record<string, unknown>;
      } catch {
        return refused(400, "BAD_BODY", "the body is not JSON");
      }
    }
    const { version, parsed } = await load(store);
    if (!parsed.ok && op !== "reset") return refused(409, "OVERLAY_UNREADABLE", `${describeRefusal(parsed.refusal)}; DELETE /admin/roster resets it to empty`);
    const before = parsed.ok ? parsed.overlay : EMPTY_OVERLAY;
    const next = op === "reset" ? EMPTY_OVERLAY : await edit(base, before, op, slug ?? (typeof body.slug === "string" ? body.slug : ""), body);
    if (next instanceof Response) return next;
    const merged = await applyOverlay(base, next);
    if (!merged.ok) return refusalResponse(merged.refusal);
    const target = op === "reset" ? "*" : (slug ?? String(body.slug));
    const entry = { who: c.get("operator").who, op, slug: target, before: parsed.ok ? await digest(before) : "unreadable", after: await digest(next) };
    const written = await store.write(version, JSON.stringify(next), entry);
    if (!written.ok) return refused(409, "CONFLICT", `the overlay changed meanwhile (now version ${written.version}); read it and retry`);
    // The audit line (R-RT-5): who, what, the digests; never a token, a header or any other value.
    console.log(JSON.stringify({ at: new Date().toISOString(), event: "roster_write", ...entry, version: written.version }));
    return Response.json({ ok: true, version: written.version, op, slug: target, source: merged.runtime.get(target) ?? "base" });
  };

  app.post("/servers", (c) => write(c, "add", undefined));
  app.put("/servers/:slug", (c) => write(c, "set", c.req.param("slug")));
  app.patch("/servers/:slug", (c) => write(c, "patch", c.req.param("slug")));
  app.delete("/servers/:slug", (c) => write(c, "remove", c.req.param("slug")));
  app.delete("/", (c) => write(c, "reset", undefined));
  return app;
}

/** The overlay after one operation, or the refusal (before the merged roster is held to the schema). */
export async function edit(base: Roster, overlay: Overlay, op: Exclude<Op, "reset">, slug: string, body: Record<string, unknown>): Promise<Overlay | Response> {
  if ("slug" in body && body.slug !== slug) return refused(400, "SLUG_MISMATCH", `the body names slug "${String(body.slug)}" but the path names "${slug}"`);
  const inBase = base.servers.find((s) => s.slug === slug);
  const added = overlay.add.findIndex((e) => e.slug === slug);
  const changed = overlay.change.findIndex((e) => e.slug === slug);
  const without = <T>(list: T[], i: number) => list.filter((_, j) => j !== i);
  switch (op) {
    case "add": {
      if (inBase !== undefined) return refused(409, "IS_BASE", `"${slug}" is a checked-in entry; change it with PATCH or PUT`);
      if (added >= 0) return refused(409, "EXISTS", `"${slug}" is already a runtime entry; change it with PATCH or PUT`);
      return { ...overlay, add: [...overlay.add, { ...body, slug }] };
    }
    case "set":
    case "patch": {
      if (added >= 0) {
        const entry = op === "set" ? { ...body, slug } : { ...overlay.add[added], ...body, slug };
        return { ...overlay, add: overlay.add.map((e, j) => (j === added ? entry : e)) };
      }
      if (inBase === undefined) return refused(404, "NO_SUCH_SERVER", `no server "${slug}"; add it with POST /admin/roster/servers`);
      let change: Record<string, unknown>;
      if (op === "set") {
        const r = await replacementAsChange(inBase, body);
        if (!r.ok) return refusalResponse(r.refusal);
        change = r.change;
      } else {
        change = { ...(changed >= 0 ? overlay.change[changed] : {}), ...body, slug };
        const refusal = checkEntry(change, base, "change");
        if (refusal !== undefined) return refusalResponse(refusal);
      }
      const rest = changed >= 0 ? without(overlay.change, changed) : overlay.change;
      // A change that leaves nothing differing is the base again.
      return Object.keys(change).length === 1 ? { ...overlay, change: rest } : { ...overlay, change: [...rest, change] };
    }
    case "remove": {
      if (added >= 0) return { ...overlay, add: without(overlay.add, added) };
      if (changed >= 0) return { ...overlay, change: without(overlay.change, changed) };
      if (inBase !== undefined) return refused(409, "IS_BASE", `"${slug}" is a checked-in entry; it leaves with a redeploy, not a runtime write`);
      return refused(404, "NO_SUCH_SERVER", `no server "${slug}"`);
    }
  }
}
