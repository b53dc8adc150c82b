// The gateway's MCP server, built on the SDK so that both revisions (2025-11-25 and 2026-07-28) are served
// from one code path. It is a proxy: tools/list merges the selected mounts, tools/call reaches exactly one.
import type { ServerContext } from "@modelcontextprotocol/server";
import type { CallRegistryNamespace } from "../contract/call-registry";
import type { CallRef } from "../contract/channel";
import { CHANNEL_META_KEY } from "../contract/channel-keys";
import { RpcCode, RpcError } from "../contract/rpc";
import { type ElicitationModes, elicitationModes, isInputRequired, isPlainObject, NO_ELICITATION, SDK_LEGACY_REVISIONS } from "../contract/tool-call";
import type { Caller } from "./auth";
import type { ProbedStream } from "./caller-stream";
import { type CallOrigin, endCall, recordKey, watchCall } from "./calls";
import { buildChannel, channelTtlMs, isGated } from "./channel";
import { AnswerBox, describeUnaskable, putToCaller, sessionModes } from "./push";
import { describeUnrelayable, modesCapabilities, NO_CAPABILITIES, type RetryParams } from "./relay";
import type { Roster, ServerEntry } from "./roster";
import { describeUnselected, resolveHeaderMap, toolAllowed } from "./roster-use";
import { describeUnroutable, exposedName, routeTool, type Selection } from "./selection";
import { AbortReason, callUpstream, describeUpstreamError, errorCode, serialised, TOO_LARGE, type UpstreamResult } from "./upstream";

export type GatewayEnv = Record<string, unknown> & { CALLS: CallRegistryNamespace };

/** Everything one /mcp request's handlers need; handed to the SDK factory through authInfo.extra. */
export interface GatewayRequest {
  roster: Roster;
  env: GatewayEnv;
  caller: Caller;
  selection: Extract<Selection, { ok: true }>;
  elicitationHeader: string | null;
  /** The Mcp-Session-Id a 2025-era client echoes (the gateway hands one out at initialize), or null. */
  session?: string | null;
  waitUntil: (p: Promise<unknown>) => void;
  /** Filled in by the handlers for the request's log line. */
  log: { tool: string | null; outcome: string };
  /** Settles when the handler has finished (the response may still be streaming). */
  pending?: Promise<void>;
  /** Probes the caller's stream: true once the probes went out without failing (set by the app for streamed answers). */
  probeCaller?: () => Promise<boolean>;
  /** The result of a call the fast lane already made, which the SDK's server answers with instead of making it again. */
  settled?: Record<string, unknown>;
  /**
   * A tools/call's retry members as the caller sent them (contract/tool-call.ts retryParams): the SDK lifts them out
   * of the params its handler sees, so the app reads them off the message, and forwardCall sends them on 2026-07-28 only.
   */
  retry?: RetryParams;
  /** The elicitation capability a 2026-07-28 caller declared, as the gateway declares it on the hop (relay.ts hopCapabilities). */
  hopCapabilities?: Readonly<Record<string, unknown>>;
  /**
   * The caller's event stream of a streamed call, once the app has it (undefined when the answer is not a stream): a
   * question the mount asks a 2025-11-25 caller is pushed on it (push.ts, docs/rules.md R-PUSH-1).
   */
  callerStream?: Promise<ProbedStream | undefined>;
}

const encoder = new TextEncoder();
const LIST_PAGE_LIMIT = 20;
/**
 * The most a tools/list reads of its mounts' answers, all pages of all mounts together (each mount a share of it): a
 * listing is held whole and answered in one frame, so 20 pages of 16 MiB from each mount would run an isolate out of
 * memory (docs/rules.md R-BODY-2). Real lists are a few KiB a mount.
 */
export const MAX_LISTING_BYTES = 8 * 1024 * 1024;
/** The reason every finished call's upstream request is aborted with (it is immutable, so one serves all). */
const CALL_ENDED = Object.freeze(new AbortReason(Object.freeze({ code: "UPSTREAM_ABORTED", reason: "the call has ended" })));

/**
 * The 2025-era revisions the gateway negotiates: the SDK's, less 2025-03-26, the one revision that requires
 * JSON-RPC batches, which the gateway does not serve. An initialize asking for it is answered with the newest
 * revision; a request whose MCP-Protocol-Version names it gets the SDK's unsupported-version error (docs/rules.md
 * R-MCP-4). 2026-07-28 is added by the SDK itself on the modern leg.
 */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = SDK_LEGACY_REVISIONS.filter((v) => v !== "2025-03-26");

/** Who the gateway says it is: in the handshake, and on 2026-07-28 in every result's `_meta` (the fast lane's too). */
export const GATEWAY_INFO = Object.freeze({ name: "strad", version: "0.1.0" });

export function track<T>(gw: GatewayRequest, work: Promise<T>): Promise<T> {
  gw.pending = work.then(
    () => undefined,
    () => undefined,
  );
  return work;
}

type Fetch = (url: string, init: RequestInit) => Promise<Response>;
const fetchRemote: Fetch = (url, init) => fetch(url, init);
const bindingMissing: Fetch = () => Promise.reject(new Error("binding missing"));
/** Each service binding's fetch, bound once per isolate rather than wrapped anew for every call. */
const boundFetches = new WeakMap<Fetcher, Fetch>();

function fetcherFor(gw: GatewayRequest, server: ServerEntry): Fetch {
  if (server.kind === "remote-http") return fetchRemote;
  const binding = gw.env[server.bundle as string] as Fetcher | undefined;
  if (binding === undefined || typeof binding.fetch !== "function") return bindingMissing;
  const known = boundFetches.get(binding);
  if (known !== undefined) return known;
  const bound: Fetch = (url, init) => binding.fetch(url, init);
  boundFetches.set(binding, bound);
  return bound;
}

/** A server with no headers of its own (every bundle the roster mounts without them) shares this one. */
const NO_HEADERS: Record<string, string> = Object.freeze({});

function serverHeaders(gw: GatewayRequest, server: ServerEntry): Record<string, string> {
  // Resolved headers hold secrets, so they are resolved for each call and never kept.
  if (Object.keys(server.headers).length === 0) return NO_HEADERS;
  const resolved = resolveHeaderMap(server.headers, server.slug, gw.env);
  if (!resolved.ok) throw new RpcError(RpcCode.UpstreamFailed, `server "${server.slug}" needs secret ${resolved.missing}, which is not seeded`);
  return resolved.headers;
}

/**
 * A signal that aborts when the request's does or `ms` pass, with the same reason AbortSignal.timeout gives, and
 * `done` to stop the clock. Its timer holds it: AbortSignal.timeout's timer holds its signal only weakly in Node,
 * so a listing that nothing else referenced could be collected mid-wait and never end (a unit test hung so under
 * load); workerd holds them either way.
 */
function listingDeadline(request: AbortSignal, ms: number): { signal: AbortSignal; done: () => void } {
  const deadline = new AbortController();
  const onAbort = () => deadline.abort(request.reason);
  const timer = setTimeout(() => {
    request.removeEventListener("abort", onAbort);
    deadline.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }, ms);
  const done = () => {
    clearTimeout(timer);
    request.removeEventListener("abort", onAbort);
  };
  if (request.aborted) deadline.abort(request.reason);
  else request.addEventListener("abort", onAbort, { once: true });
  return { signal: deadline.signal, done };
}

export async function listTools(gw: GatewayRequest, ctx: ServerContext): Promise<{ tools: Record<string, unknown>[] }> {
  const { servers, prefixed } = gw.selection;
  const share = Math.floor(MAX_LISTING_BYTES / Math.max(1, servers.length));
  const lists = await Promise.allSettled(
    servers.map(async (server) => {
      const { signal, done } = listingDeadline(ctx.mcpReq.signal, server.timeoutMs);
      try {
        const tools: Record<string, unknown>[] = [];
        let cursor: string | undefined;
        let left = share;
        for (let page = 0; page < LIST_PAGE_LIMIT; page++) {
          const answer = await callUpstream({
            server,
            method: "tools/list",
            params: cursor === undefined ? {} : { cursor },
            meta: {},
            headers: serverHeaders(gw, server),
            signal,
            maxBytes: left,
            fetcher: fetcherFor(gw, server),
          });
          if (!answer.ok) {
            const past = answer.error.code === "UPSTREAM_PROTOCOL" && answer.error.why === TOO_LARGE;
            throw new RpcError(
              errorCode(answer.error),
              past ? `server "${server.slug}" lists more than the ${share} bytes of tools a listing reads of it` : describeUpstreamError(server.slug, answer.error),
            );
          }
          left -= answer.bytes ?? 0;
          const listed: unknown[] = Array.isArray(answer.result.tools) ? answer.result.tools : [];
          for (const tool of listed) {
            // An entry that is not a tool is passed over: it never hides the mount's other tools.
            if (isPlainObject(tool) && typeof tool.name === "string" && toolAllowed(server, tool.name)) tools.push({ ...tool, name: exposedName(server, tool.name, prefixed) });
          }
          cursor = typeof answer.result.nextCursor === "string" ? answer.result.nextCursor : undefined;
          if (cursor === undefined) break;
        }
        return tools;
      } finally {
        done();
      }
    }),
  );
  // One mount that fails does not hide the others; when every mount fails, the caller hears why.
  const listed = lists.flatMap((l) => (l.status === "fulfilled" ? [l.value] : []));
  const failure = lists.find((l) => l.status === "rejected");
  if (listed.length === 0 && failure !== undefined) {
    gw.log.outcome = "upstream_failed";
    throw failure.reason;
  }
  gw.log.outcome = failure === undefined ? "ok" : "partial";
  return { tools: listed.flat() };
}

export interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** What forwarding a call needs from whoever received it: the SDK's handler context, or the fast lane. */
export interface CallContext {
  id: string | number;
  /** Fires when the caller's response closes. */
  signal: AbortSignal;
  /** The caller's own progress token, if it sent one. */
  progressToken?: unknown;
  notify?: (notification: { method: "notifications/progress"; params: Record<string, unknown> }) => Promise<void>;
  /** Which revision and session the call came in on; without it, a 2025-era call without a session. */
  origin?: CallOrigin;
}

export function callTool(gw: GatewayRequest, params: CallParams, ctx: ServerContext, origin: CallOrigin): Promise<Record<string, unknown>> {
  return forwardCall(gw, params, {
    origin,
    id: ctx.mcpReq.id,
    signal: ctx.mcpReq.signal,
    progressToken: ctx.mcpReq._meta?.progressToken,
    notify: (n) => ctx.mcpReq.notify(n),
  });
}

/** Whether every question of an input_required result is a URL-mode elicitation: a link, which collects nothing. */
function onlyLinks(result: Record<string, unknown>): boolean {
  const requests = isPlainObject(result.inputRequests) ? Object.values(result.inputRequests) : [];
  return requests.every((r) => isPlainObject(r) && r.method === "elicitation/create" && isPlainObject(r.params) && r.params.mode === "url");
}

/** The hop's capabilities for a gated mount on an approval channel whose caller takes URL-mode elicitation: URL alone. */
const URL_TO_CALLER = modesCapabilities({ form: false, url: true });

/** The hop's timeoutMs has passed: its upstream request is aborted, saying so (setTimeout's callback, no closure per call). */
function abortOnTimeout(controller: AbortController, timeoutMs: number): void {
  if (!controller.signal.aborted) controller.abort(new AbortReason({ code: "UPSTREAM_TIMEOUT", timeoutMs }));
}

/** Forwards one tools/call to the mount it routes to; throws RpcError with a reason on failure. */
export async function forwardCall(gw: GatewayRequest, params: CallParams, call: CallContext): Promise<Record<string, unknown>> {
  gw.log.tool = params.name;
  const route = routeTool(gw.selection, params.name);
  if (route === undefined) {
    gw.log.outcome = "unknown_tool";
    throw new RpcError(RpcCode.InvalidParams, describeUnroutable(gw.selection, params.name));
  }
  if (!toolAllowed(route.server, route.tool)) {
    gw.log.outcome = "tool_not_selected";
    throw new RpcError(RpcCode.InvalidParams, describeUnselected(route.server.slug, route.tool));
  }
  const { server, tool } = route;
  const controller = new AbortController();
  const abort = (reason: AbortReason) => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  // The timer and the caller's signal are armed on every call, the hot path's too: a module-level callback with
  // arguments and the signal's own handler slot cost less than a closure each and an event listener (docs/bench.md).
  const timer = setTimeout(abortOnTimeout, server.timeoutMs, controller, server.timeoutMs);
  const onCallerGone = () => abort(new AbortReason({ code: "UPSTREAM_ABORTED", reason: "the caller went away" }));
  // A caller can be gone before its call is read (workerd aborts the request's signal on a disconnect, whenever it
  // comes): a handler set then never fires, so an aborted signal is taken as the event itself. The signal is this
  // call's alone (its request's, or the SDK's for its one request), so its onabort slot is this call's to set.
  if (call.signal.aborted) onCallerGone();
  else call.signal.onabort = onCallerGone;

  const meta: Record<string, unknown> = {};
  let stopWatch: (() => void) | undefined;
  let registered: CallRef | undefined;
  let drained = false;
  let askClient = false;
  /** When a pushed question's answer stops counting (PushTarget.answerBy): set with the channel. */
  let answerBy = 0;
  let started = 0;
  /** The elicitation modes the caller's client declared, read once for a confirmed call. */
  let callerModes: ElicitationModes = NO_ELICITATION;
  const modern = call.origin?.era === "modern";
  /** A gated mount on an approval channel whose caller takes URL-mode elicitation: it may put a link, and nothing else, to the caller (R-PUSH-5). */
  let urlToCaller = false;
  /** Answers to questions pushed on this call's stream (push.ts): made only for a confirmed call, never on the hot path. */
  let answers: AnswerBox | undefined;
  try {
    const headers = serverHeaders(gw, server);
    // The gateway's own progress token: always on a confirmed call (its keepalives ride on it), otherwise only
    // when the caller asked for progress. Relayed under the caller's token only when it sent one.
    const callerToken = call.progressToken;
    const ownToken = isGated(server) || callerToken !== undefined ? `strad-${crypto.randomUUID()}` : undefined;
    if (ownToken !== undefined) meta.progressToken = ownToken;
    if (isGated(server)) {
      const ref = { scope: gw.caller.id, key: "", nonce: crypto.randomUUID() };
      // What this call's client can be asked (R-CHAN-15): on 2026-07-28, what the request's envelope declared; on
      // 2025-11-25, what initialize declared (the session's mark), on a call answered as a stream (R-PUSH-1).
      callerModes = modern ? elicitationModes(gw.hopCapabilities) : gw.callerStream !== undefined ? sessionModes(gw.session) : NO_ELICITATION;
      const clientForm = callerModes.form;
      const channel = buildChannel({ server, caller: gw.caller, headerValue: gw.elicitationHeader, roster: gw.roster, env: gw.env, call: ref, clientForm });
      meta[CHANNEL_META_KEY] = channel;
      started = Date.now();
      answerBy = started + channelTtlMs(server.timeoutMs);
      askClient = channel !== undefined && "ask" in channel;
      urlToCaller = channel !== undefined && "url" in channel && callerModes.url;
      // The channel carries `ref` itself, so the key (by session, approval URL or nonce: R-CALL-12) reaches the bundle's gate too.
      const origin = call.origin ?? { era: "legacy", session: gw.session ?? null };
      ref.key = await recordKey(origin, call.id, channel !== undefined && "url" in channel ? channel.url : undefined, ref.nonce);
      if (channel !== undefined && !("refused" in channel)) {
        const box = new AnswerBox();
        answers = box;
        const on = { abort, probe: () => gw.probeCaller?.() ?? Promise.resolve(false), answer: (round: number, payload: string) => box.deliver(round, payload) };
        const watched = await watchCall(gw.env.CALLS, ref, Date.now() + server.timeoutMs, on, server.timeoutMs);
        if (!watched.ok) {
          gw.log.outcome = watched.inFlight ? "in_flight" : watched.tooMany !== undefined ? "too_many_calls" : "registry_failed";
          throw new RpcError(
            watched.inFlight ? RpcCode.InFlight : watched.tooMany !== undefined ? RpcCode.TooManyCalls : RpcCode.Internal,
            watched.inFlight
              ? `a call with this request id is already in flight for caller "${gw.caller.id}"`
              : watched.tooMany !== undefined
                ? `caller "${gw.caller.id}" already has ${watched.tooMany} confirmed calls in flight, the most one caller may hold: wait for one to end`
                : "the call could not be registered",
          );
        }
        stopWatch = watched.stop;
        registered = ref;
      }
    }
    // A retry's answers and state go on to the mount as they came, on 2026-07-28 only: the revision that has them
    // (docs/rules.md R-FWD-8). The caller's own _meta never does (R-FWD-2). An ungated mount is told the elicitation
    // modes the caller declared, so it may ask; a gated one is told none, so its question never goes to the caller,
    // unless its channel is a client question (R-CHAN-15): then the question is the point, and the caller declared form.
    // On 2025-11-25 the gateway itself answers the mount's questions, with what its caller answers (push.ts, R-PUSH-1).
    const pushing = !modern && (askClient || urlToCaller) && registered !== undefined;
    const capabilities = modern && (!isGated(server) || askClient) ? (gw.hopCapabilities ?? NO_CAPABILITIES) : urlToCaller ? URL_TO_CALLER : pushing ? modesCapabilities(callerModes) : NO_CAPABILITIES;
    // One call to the mount, on the first call and on every retry alike; `checked` turns its failure into the caller's error.
    const ask = (retry: RetryParams | undefined) =>
      callUpstream({
        server,
        method: "tools/call",
        params: { name: tool, ...(params.arguments === undefined ? {} : { arguments: params.arguments }), ...retry },
        meta,
        capabilities,
        headers,
        signal: controller.signal,
        fetcher: fetcherFor(gw, server),
        onProgress: (progress) => {
          if (callerToken === undefined || ownToken === undefined || call.notify === undefined || progress.progressToken !== ownToken || call.signal.aborted) return;
          void call.notify({ method: "notifications/progress", params: { ...progress, progressToken: callerToken } }).catch(() => {});
        },
      });
    const checked = (answer: UpstreamResult): Extract<UpstreamResult, { ok: true }> => {
      drained = answer.drained === true;
      if (answer.ok) return answer;
      gw.log.outcome = answer.error.code.toLowerCase();
      throw new RpcError(errorCode(answer.error), describeUpstreamError(server.slug, answer.error));
    };
    let answer = checked(await ask(modern ? gw.retry : undefined));
    // Each question the mount asks goes to the caller in turn, and the mount is called again with the answers and its
    // own state, inside this call: its claim, hold and deadline hold for the retry as for any call (R-PUSH-3).
    for (let round = 1; pushing && registered !== undefined && answers !== undefined && isInputRequired(answer.result); ) {
      const retry = await putToCaller(gw, server.slug, answer.result, {
        ref: registered,
        id: call.id,
        answers,
        signal: controller.signal,
        first: round,
        form: askClient,
        answerBy,
        started,
        modes: callerModes,
      });
      round += retry.asked;
      // The retry carries the call's arguments and every answer so far: held to the slug's own cap, as a 2026-07-28
      // caller's retry is (R-FWD-8), though each answer came in under the default one (R-PUSH-2).
      const retryText = serialised({ name: tool, arguments: params.arguments, ...retry.params });
      // The relay refused an answer too deep to serialise (app.ts); the retry's few levels more are refused here.
      if (retryText === undefined) {
        gw.log.outcome = "request_unencodable";
        throw new RpcError(RpcCode.InvalidParams, describeUpstreamError(server.slug, { code: "REQUEST_UNENCODABLE" }));
      }
      const retryBytes = encoder.encode(retryText).byteLength;
      if (retryBytes > server.maxRequestBytes) {
        gw.log.outcome = "client_answer_too_large";
        throw new RpcError(RpcCode.InvalidRequest, `the answers to server "${server.slug}"'s questions make its call larger than the ${server.maxRequestBytes} bytes it takes; nothing was done`);
      }
      answer = checked(await ask(retry.params));
    }
    if (isInputRequired(answer.result)) {
      // The mount's question goes back to the caller as the SDK encodes it, on the revision that has it (R-FWD-9).
      if (!modern) {
        gw.log.outcome = "question_unrelayable";
        throw new RpcError(RpcCode.QuestionUnrelayable, describeUnrelayable(server.slug));
      }
      // A gated mount asks its person over its approval channel; to the caller it may put a link alone (R-PUSH-5).
      if (isGated(server) && !askClient && !onlyLinks(answer.result)) {
        gw.log.outcome = "question_unaskable";
        throw new RpcError(RpcCode.QuestionUnrelayable, describeUnaskable(server.slug, "a mount on an approval channel may put only a link to its caller"));
      }
      gw.log.outcome = "input_required";
      return answer.result;
    }
    gw.log.outcome = answer.result.isError === true ? "tool_error" : "ok";
    return answer.result;
  } finally {
    clearTimeout(timer);
    // Whatever ended the call, an upstream request still open ends with it: nothing of it may outlive the
    // answer. One whose answer was read to its end is already over, and aborting it anyway would be work on
    // every call for nothing.
    if (!drained) abort(CALL_ENDED);
    if (call.signal.onabort === onCallerGone) call.signal.onabort = null;
    stopWatch?.();
    if (registered !== undefined) gw.waitUntil(endCall(gw.env.CALLS, registered).catch(() => {}));
  }
}
