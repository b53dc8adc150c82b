// The gateway Worker: authenticates the caller, checks the request, picks the mounts and hands the
// message to the SDK's handler. Every failure is a JSON-RPC error with a status; never a stack trace.
import { Hono } from "hono";
import { DEFAULT_MAX_REQUEST_BYTES, discardBody, dropUnauthenticatedBody, readCountedText } from "../contract/body";
import { claimHoldMs, PROBE_INTERVAL_MS, PROBES_FOR_LIVENESS } from "../contract/call-registry";
import { RpcCode } from "../contract/rpc";
import { lazily } from "../contract/sdk";
import { elicitationModes } from "../contract/tool-call";
import { adminRoutes, overlayStore } from "./admin";
import { CallerTable } from "./auth";
import { type ProbedStream, probedStream } from "./caller-stream";
import { answerKey, cancelCall, cancelKeys } from "./calls";
import { isGated } from "./channel";
import { checkElicitationUrl } from "./elicitation-url";
import { fastLane } from "./fast-lane";
import { writeRequestLog } from "./log";
import type { GatewayEnv, GatewayRequest } from "./mcp";
import { originRefusal } from "./origin";
import { overlayReader, perRoster } from "./overlay";
import { parseQuestionId, QUESTION_ID_PREFIX, replyOf, sessionMark } from "./push";
import { hopCapabilities, retryParams } from "./relay";
import type { Roster } from "./roster";
import { checkSeeded, type RosterResult } from "./roster-use";
import type { SdkHandlers } from "./sdk-leg";
import { routeTool, type Selection, selectionCache, serversParam } from "./selection";
import { serialised } from "./upstream";

/** A caller's body cap unless a slug allows more (roster `maxRequestBytes`, docs/rules.md R-LIMIT-4). */
export const MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BYTES;

/** How much of a body the gateway reads: the default, or the most any selected slug takes, so no slug's own cap is cut short. */
export function readCapFor(selection: Selection): number {
  if (!selection.ok) return DEFAULT_MAX_REQUEST_BYTES;
  return selection.servers.reduce((most, s) => Math.max(most, s.maxRequestBytes), DEFAULT_MAX_REQUEST_BYTES);
}
/** The 2025-11-25 session header: handed out on initialize, echoed by the client on every later request. */
export const SESSION_HEADER = "mcp-session-id";

/** A session id: 32 random bytes, base64url (visible ASCII, as the 2025-11-25 transport asks), unguessable. */
export function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/**
 * The session a request names, or null. Stateless, the gateway cannot tell an id it handed out from one it did not,
 * and never answers 404: any id is only a name within the caller's own records (docs/rules.md R-CALL-12).
 */
function sessionOf(request: Request): string | null {
  const value = request.headers.get(SESSION_HEADER);
  return value === null || value === "" ? null : value;
}

/** Keepalive on a confirmed call's stream: workerd notices a caller that left only when a write fails. */
export const CONFIRMED_KEEPALIVE_MS = 500;

/**
 * Hands a client's answer to the call that asked (docs/rules.md R-PUSH-2): through the caller's CallRegistry object,
 * which hands it to the isolate holding the call. Answered 202 with no body, as the transport asks; anything else is
 * refused with a JSON-RPC error that says what was expected, and reaches nothing.
 */
async function relayAnswer(
  ns: GatewayEnv["CALLS"],
  scope: string,
  session: string | null,
  msg: { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown },
  bytes: number,
): Promise<{ response: Response; outcome: string }> {
  const refused = (status: number, message: string) => ({ response: rpcError(status, RpcCode.InvalidRequest, message), outcome: "answer_refused" });
  const named = parseQuestionId(msg.id);
  const reply = msg.jsonrpc === "2.0" ? replyOf(msg) : undefined;
  if (named === undefined || reply === undefined) return refused(400, "Invalid answer: expected a JSON-RPC 2.0 response with a result or an error object to a question this gateway asked");
  if (session === null) return refused(400, "an answer must carry the Mcp-Session-Id of the session that was asked");
  // Held to the default cap whatever its URL's slugs allow: it goes into the retry's body.
  if (bytes > DEFAULT_MAX_REQUEST_BYTES) return refused(413, `an answer is larger than ${DEFAULT_MAX_REQUEST_BYTES} bytes`);
  // An answer nested past what the gateway can serialise could never go on in the retry: refused, the call still waits.
  // The retry carries it a few levels deeper, in whichever isolate holds the call: serialised here with room to spare,
  // once, and the room cut off again.
  const spared = serialised(nestedIn(reply, RETRY_NESTING_HEADROOM));
  if (spared === undefined) return refused(400, "the answer nests too deeply to relay");
  const payload = spared.slice(RETRY_NESTING_HEADROOM, spared.length - RETRY_NESTING_HEADROOM);
  let delivered = false;
  try {
    delivered = await ns.get(ns.idFromName(scope)).answer(await answerKey(session, named.requestKey), named.round, named.tag, payload);
  } catch {
    delivered = false;
  }
  if (!delivered) return refused(400, "no call of this session is waiting for that answer: it ended, was answered already, or never asked it");
  return { response: new Response(null, { status: 202 }), outcome: "answer_relayed" };
}

/** Levels of nesting a relayed answer must have to spare: the retry carries it two levels deeper, on another stack. */
const RETRY_NESTING_HEADROOM = 64;

/** `value` inside `levels` arrays (serialised, `levels` brackets either side of its own JSON), without copying it. */
function nestedIn(value: unknown, levels: number): unknown {
  let nested = value;
  for (let i = 0; i < levels; i++) nested = [nested];
  return nested;
}

function rpcError(status: number, code: number, message: string, id: string | number | null = null, headers?: Record<string, string>): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status, headers });
}

interface Ready {
  callers: CallerTable;
  select: ReturnType<typeof selectionCache>;
}

export interface GatewayOptions {
  /** Off only to hold the fast lane to the SDK's answers (test/worker/fast-lane.test.ts): every request then takes the SDK's path. */
  fastLane?: boolean;
}

/**
 * The gateway serving `parsed`: a roster already held to the schema, as scripts/compile-roster.ts compiles the
 * checked-in one at build time (worker/index.ts), or its errors, which every /mcp request then answers 503 for.
 * worker/gateway.ts builds it from a roster's text.
 */
export function gatewayFor(parsed: RosterResult, { fastLane: lane = true }: GatewayOptions = {}): ExportedHandler<GatewayEnv> {
  const roster: Roster | undefined = parsed.ok ? parsed.roster : undefined;
  let ready: Ready | undefined;
  // The checked-in roster with the runtime overlay merged on, re-read at most every OVERLAY_TTL_MS (docs/rules.md R-RT-2).
  const effective = roster === undefined ? undefined : overlayReader(roster, overlayStore);
  const selectFor = perRoster(selectionCache);

  // One handler per response shape: confirmed calls always stream, so that keepalives reveal a caller that left.
  // Built on the first request the fast lane leaves, so the SDK's modules load then and not at the start (sdk-leg.ts).
  const handlers: () => Promise<SdkHandlers> = lazily(() => import("./sdk-leg").then((leg) => leg.sdkHandlers(CONFIRMED_KEEPALIVE_MS)));

  const app = new Hono<{ Bindings: GatewayEnv }>();

  const servePost = async (c: PostContext): Promise<Response> => {
    const started = Date.now();
    const line = { caller: null as string | null, slugs: [] as string[], method: null as string | null, tool: null as string | null, outcome: "error", status: 500 };
    const finish = (response: Response, outcome: string): Response => {
      line.outcome = outcome;
      line.status = response.status;
      writeRequestLog({ ...line, durationMs: Date.now() - started });
      return response;
    };
    // A refusal before the body is read drops the body first: workerd resets a kept-alive connection whose
    // request body was left unread, and the caller's next request on it would fail (contract/body.ts).
    const refuse = async (response: Response, outcome: string): Promise<Response> => {
      await discardBody(c.req.raw);
      return finish(response, outcome);
    };
    // Before the caller is known its body is worth little: a declared length past the small drain is not read at all,
    // anything else at most that far, and a connection the runtime will close is said to close (workerd drops that
    // header and closes it all the same; a proxy in front may honour it) (docs/rules.md R-BODY-8).
    const refuseStranger = async (response: Response, outcome: string): Promise<Response> => {
      if (!(await dropUnauthenticatedBody(c.req.raw))) response.headers.set("connection", "close");
      return finish(response, outcome);
    };

    if (roster === undefined) {
      console.error(JSON.stringify({ event: "config_error", errors: parsed.ok ? [] : parsed.errors }));
      return refuseStranger(rpcError(503, RpcCode.Internal, "the gateway's roster is invalid; see the gateway's logs"), "config_error");
    }
    ready ??= (() => {
      const { table, unseeded } = CallerTable.build(roster, c.env);
      if (unseeded.length > 0) console.warn(JSON.stringify({ event: "callers_unseeded", secrets: unseeded }));
      // A server's unseeded secret is that server's problem alone: its calls refuse naming the variable (mcp.ts,
      // channel.ts) and every other server answers (docs/rules.md R-CONF-8). Said once per isolate, by name only.
      const problems = checkSeeded(roster, c.env).filter((e) => e.path.startsWith("servers"));
      if (problems.length > 0) console.error(JSON.stringify({ event: "secrets_unseeded", errors: problems.map((p) => `${p.path}: ${p.message}`) }));
      return { callers: table, select: selectFor(roster) };
    })();
    const { callers } = ready;
    // A browser page's request carries an Origin; only the roster's allowedOrigins may call (the 2025-11-25
    // transport requires the check, against DNS rebinding). Server-side clients send none (docs/rules.md R-MCP-3).
    const badOrigin = originRefusal(c.req.raw, roster.gateway.allowedOrigins);
    if (badOrigin !== undefined) return refuseStranger(badOrigin, "origin_refused");

    const caller = callers.authenticate(c.req.header("authorization") ?? null);
    if (caller === undefined) {
      return refuseStranger(rpcError(401, RpcCode.Unauthenticated, "missing or unknown bearer token", null, { "WWW-Authenticate": 'Bearer realm="strad"' }), "unauthenticated");
    }
    line.caller = caller.id;
    // Callers are the base's alone; the servers may carry runtime entries (docs/rules.md R-RT-1).
    const served = effective === undefined ? roster : (await effective(c.env)).roster;
    const select = selectFor(served);

    const contentType = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (contentType !== "application/json") return refuse(rpcError(415, RpcCode.InvalidRequest, "Content-Type must be application/json"), "bad_content_type");
    // Which mounts the URL names decides how much is read: a slug may take larger calls (maxRequestBytes); the
    // message is then held to its own slug's cap below (docs/rules.md R-LIMIT-4).
    const selection = select(caller, serversParam(c.req.url));
    const readCap = readCapFor(selection);
    // Above the default cap the body is decoded strictly: a lenient decoder turns each invalid byte into a
    // 3-byte U+FFFD, so 8 MiB of them would be forwarded as 24 MiB, past the memory R-LIMIT-4 budgets.
    const strict = readCap > DEFAULT_MAX_REQUEST_BYTES;
    const body = await readCountedText(c.req.raw, readCap, strict);
    if (!body.ok) {
      const unreadable = strict ? "the request body could not be read as UTF-8" : "the request body could not be read";
      return finish(body.tooLarge ? rpcError(413, RpcCode.InvalidRequest, `the request body is larger than ${readCap} bytes`) : rpcError(400, RpcCode.ParseError, unreadable), "bad_body");
    }
    let message: unknown;
    try {
      message = JSON.parse(body.value);
    } catch {
      return finish(rpcError(400, RpcCode.ParseError, "Parse error: the request body is not valid JSON"), "parse_error");
    }
    if (Array.isArray(message)) return finish(rpcError(400, RpcCode.InvalidRequest, "JSON-RPC batches are not supported"), "invalid_request");
    const msg = message as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown } | null;
    const id = typeof msg?.id === "string" || typeof msg?.id === "number" ? msg.id : null;
    // A 2025-11-25 client's answer to a question the gateway pushed on one of its calls' streams (docs/rules.md R-PUSH-2).
    if (msg !== null && typeof msg === "object" && msg.method === undefined && typeof msg.id === "string" && msg.id.startsWith(QUESTION_ID_PREFIX)) {
      line.method = "answer";
      const relayed = await relayAnswer(c.env.CALLS, caller.id, sessionOf(c.req.raw), msg, body.bytes);
      return finish(relayed.response, relayed.outcome);
    }
    if (msg === null || typeof msg !== "object" || msg.jsonrpc !== "2.0" || typeof msg.method !== "string") {
      return finish(rpcError(400, RpcCode.InvalidRequest, 'Invalid request: expected a JSON-RPC 2.0 object with a "method"', id), "invalid_request");
    }
    line.method = msg.method;
    const params = (typeof msg.params === "object" && msg.params !== null ? msg.params : {}) as Record<string, unknown>;

    if (!selection.ok) return finish(rpcError(400, RpcCode.InvalidParams, selection.message, id), "unknown_server");
    line.slugs = selection.servers.map((s) => s.slug);
    const toolName = msg.method === "tools/call" && typeof params.name === "string" ? params.name : undefined;
    const target = toolName === undefined ? undefined : routeTool(selection, toolName);
    // A tools/call is held to its slug's cap; anything else to the default, whatever the slugs allow.
    const cap = target === undefined ? DEFAULT_MAX_REQUEST_BYTES : target.server.maxRequestBytes;
    if (body.bytes > cap) {
      const whose = target === undefined ? "" : `, the most "${target.server.slug}" takes`;
      return finish(rpcError(413, RpcCode.InvalidRequest, `the request body is larger than ${cap} bytes${whose}`, id), "bad_body");
    }

    const gw: GatewayRequest = {
      roster: served,
      env: c.env,
      caller,
      selection,
      elicitationHeader: c.req.header("x-elicitation-url") ?? null,
      session: sessionOf(c.req.raw),
      waitUntil: (p) => c.executionCtx.waitUntil(p),
      log: { tool: null, outcome: "ok" },
      // Read off the message: the SDK lifts them out of what its handler sees (docs/rules.md R-FWD-8).
      retry: toolName === undefined ? undefined : retryParams(params),
      hopCapabilities: toolName === undefined ? undefined : hopCapabilities(params._meta),
    };
    const authInfo = { token: "", clientId: caller.id, scopes: caller.roles, extra: { gateway: gw } };

    if (msg.method === "notifications/cancelled") {
      // The SDK checks the cancel as it checks every request (Accept, MCP-Protocol-Version, the 2026-07-28
      // envelope) and acknowledges it 202; only then is it relayed (docs/rules.md R-MCP-1). Stateless: the
      // call it names may be in flight on another isolate; its record knows where.
      let checked: Response;
      try {
        checked = await (await handlers()).plain.fetch(c.req.raw, { parsedBody: message, authInfo });
      } catch {
        return finish(rpcError(500, RpcCode.Internal, "internal error", id), "internal_error");
      }
      if (checked.status !== 202) return finish(checked, "rejected");
      const named = params.requestId;
      if (typeof named === "string" || typeof named === "number") {
        // Only the calls of the session that sent it (R-CALL-12); without a session, a call that asks a person is keyed
        // by its approval URL too, so the cancel reaches it only over the same one (R-CALL-11).
        const approval = checkElicitationUrl(c.req.header("x-elicitation-url") ?? null, roster.gateway.elicitation.allowedUrlPrefixes);
        const keys = await cancelKeys(gw.session ?? null, named, approval.ok ? approval.url : undefined);
        await Promise.all(keys.map((key) => cancelCall(c.env.CALLS, caller.id, key).catch(() => false)));
      }
      return finish(checked, "cancel_relayed");
    }

    // A caller gone before its call is read has nobody to answer and nothing may run for it: the SDK's transport
    // follows only a disconnect that comes later, so an already aborted request ends here on every lane.
    if (msg.method === "tools/call" && c.req.raw.signal.aborted) {
      return finish(rpcError(200, RpcCode.Cancelled, "the caller went away before its call was read", id), "upstream_aborted");
    }
    // The lane may leave a call it made to the SDK with its result (gw.settled): the SDK's server answers with that.
    const quick = lane ? await fastLane(c.req.raw, msg, gw) : undefined;
    if (quick !== undefined) {
      line.tool = gw.log.tool;
      return finish(quick, gw.log.outcome);
    }
    const gated = target !== undefined && isGated(target.server);
    // A streamed call's questions are pushed on its stream (push.ts), which exists only once the handler answered.
    let streamReady: (stream: ProbedStream | undefined) => void = () => {};
    if (gated) gw.callerStream = new Promise((resolve) => (streamReady = resolve));
    let response: Response;
    try {
      const { plain, streamed } = await handlers();
      response = await (gated ? streamed : plain).fetch(c.req.raw, { parsedBody: message, authInfo });
    } catch {
      streamReady(undefined);
      return finish(rpcError(500, RpcCode.Internal, "internal error", id), "internal_error");
    }
    // A 2025-11-25 handshake names a session of the caller's own: the client echoes it, and the gateway keys its
    // confirmed calls and cancels by it, holding nothing itself. The SDK's stateless leg hands out none (R-CALL-12).
    if (msg.method === "initialize" && response.ok) {
      response = new Response(response.body, response);
      // The id carries what its initialize declared of elicitation, so a question can be pushed to it later (R-PUSH-1).
      const declared = elicitationModes((params as { capabilities?: unknown }).capabilities);
      response.headers.set(SESSION_HEADER, `${newSessionId()}${sessionMark(declared)}`);
    }
    // Only an event stream is probed: the SDK's JSON refusals (406, 400) pass as they are, valid JSON (docs/rules.md R-KEEP-1).
    if (gated && response.body !== null && (response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      // While a claim of this call is on hold, probe the caller so that one who left is noticed in time.
      const probed = probedStream(PROBE_INTERVAL_MS, PROBES_FOR_LIVENESS, claimHoldMs(c.env));
      gw.probeCaller = probed.probe;
      response = new Response(response.body.pipeThrough(probed.transform), response);
      streamReady(probed);
    } else streamReady(undefined);
    // The log line waits for the handler, whose outcome is known only when a streamed call ends.
    const pending = gw.pending ?? Promise.resolve();
    c.executionCtx.waitUntil(
      pending.then(() => {
        line.tool = gw.log.tool;
        line.outcome = response.status >= 400 ? "rejected" : gw.log.outcome;
        line.status = response.status;
        writeRequestLog({ ...line, durationMs: Date.now() - started });
      }),
    );
    return response;
  };

  app.post("/mcp", servePost);

  app.on(["GET", "DELETE", "PUT", "PATCH"], "/mcp", () => rpcError(405, RpcCode.MethodNotAllowed, "Method not allowed: /mcp is stateless and takes POST only", null, { Allow: "POST" }));
  if (roster !== undefined) app.route("/admin/roster", adminRoutes(roster));
  app.get("/healthz", (c) => c.json({ ok: roster !== undefined }));
  // Local development only: how many requests a caller's call registry has served (tests, bench).
  app.get("/_dev/calls/:scope", async (c) => {
    if (c.env.STRAD_DEV_ROUTES !== "1") return c.json({ error: "not found" }, 404);
    const ns = c.env.CALLS;
    return c.json(await ns.get(ns.idFromName(c.req.param("scope"))).stats());
  });
  app.notFound(() => Response.json({ error: "not found" }, { status: 404 }));
  app.onError(() => rpcError(500, RpcCode.Internal, "internal error"));

  // A POST to exactly /mcp, every call, skips the router: Hono's dispatch was 6% of the isolate's busy time on a call
  // (ARCHITECTURE.md §2). Any other request, and any other spelling of the path, is Hono's, whose /mcp route is the same handler.
  return {
    fetch(request, env, ctx) {
      if (request.method !== "POST" || !isMcpUrl(request.url)) return app.fetch(request, env, ctx);
      const raw = request as unknown as Request;
      const c: PostContext = { req: { raw, url: raw.url, header: (name) => raw.headers.get(name) ?? undefined }, env, executionCtx: ctx };
      return servePost(c).catch(() => rpcError(500, RpcCode.Internal, "internal error"));
    },
  };
}

/** What the /mcp handler reads of its context: Hono's, or the one the gateway's fetch makes for a POST to /mcp. */
interface PostContext {
  req: { raw: Request; url: string; header: (name: string) => string | undefined };
  env: GatewayEnv;
  executionCtx: Pick<ExecutionContext, "waitUntil">;
}

/** The URL's path is exactly /mcp (a query string allowed): what Hono's strict router matches for the route, without its dispatch. */
export function isMcpUrl(url: string): boolean {
  const at = url.indexOf("/", url.indexOf("//") + 2);
  if (at < 0 || !url.startsWith("/mcp", at)) return false;
  const after = url.charCodeAt(at + 4);
  return Number.isNaN(after) || after === 0x3f; // end, or "?"
}
