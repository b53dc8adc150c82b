// Serves a bundle's mounts: each mount path gets its own MCP server factory, and every request runs in a
// call scope holding what the gateway forwarded with it (channel, deadline, progress token, signal).
// Bundles have no public address, and a request that did not come over the gateway's service binding is refused
// before anything else (bundles/kit/gateway-only.ts, docs/rules.md R-CHAN-13).
import { createMcpHandler, type McpServer } from "@modelcontextprotocol/server";
import { MAX_FORWARDED_BODY_BYTES, readCappedText } from "../../contract/body";
import { SLUG_PATTERN, slugNamespace } from "../../contract/slug";
import { cameOverGatewayBinding, ONLY_THROUGH_GATEWAY } from "./gateway-only";
import { envSeen, type KnownList, kitLane, type LaneTable, laneTableFor, listLane, listLaneId, listResultOf, sameEnv } from "./lane";
import { warnPostureOnce } from "./posture";
import { type CallScope, type CallState, callStateFor, currentScope, runInScope } from "./scope";
import { installConfirmSeam } from "./seam";
import { logSwitchOnce } from "./switch";
import { type ToolGroupSpec, toolGroupsFor, toolGroupVariable } from "./tool-groups";

export type MountFactory = (mount: string, env: Record<string, unknown>) => McpServer;

/** bundle.json's `mounts` for a bundle that serves `/<slug>` for every slug holding its own `secrets`. */
export const PER_SLUG = "per-slug";

/**
 * What a bundle declares about itself in bundles/<name>/bundle.json. The bundle's entry hands it to serveBundle,
 * and `npm run check-config` refuses a roster path the bundle does not serve.
 *   - `mounts`: every mount path it serves, or "per-slug": a mount at `/<slug>` for any slug whose every
 *     `secrets` name is set under its own namespace (`<SLUG>__NAME`), so a mailbox is a roster entry and its
 *     secrets, not a code change (docs/rules.md R-GMAIL-3).
 *   - `secrets`: the names each mount reads from its own namespace (`npm run deploy:check` lists them).
 *   - `toolGroups`: which tools each mount serves (bundles/kit/tool-groups.ts).
 */
export interface BundleManifest {
  mounts: readonly string[] | string;
  secrets?: readonly string[];
  toolGroups?: ToolGroupSpec;
}

export type BundleOptions =
  /**
   * The bundle's manifest, and the slug-independent factory serving each of its mounts. `elicitationSwitch`: the
   * bundle opts into the two-call token and reads ELICITATION (bundles/kit/switch.ts), naming itself in its log line.
   */
  | { manifest: BundleManifest; server: MountFactory; elicitationSwitch?: { bundle: string } }
  /** Mount path ("/echo") to the factory serving it (the kit's own tests). */
  | { mounts: Record<string, MountFactory> };

/** The gateway caps caller bodies per slug (at most 8 MiB); what it forwards is that plus its own _meta (contract/body.ts). */
export const MAX_BUNDLE_BODY_BYTES = MAX_FORWARDED_BODY_BYTES;

/**
 * A mount the configuration does not let serve: JSON-RPC's internal error, at HTTP 200 with the request's id
 * when it has one, so the gateway relays the reason (it never relays an upstream's HTTP error body).
 */
export const MOUNT_UNAVAILABLE = -32603;

function rpcError(status: number, code: number, message: string, id: string | number | null = null): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status });
}

async function readBody(request: Request): Promise<string | undefined> {
  // Only the gateway's binding gets this far (R-CHAN-13), and its body is a string it serialised, whose length
  // workerd declares itself: "framed", read natively (contract/body.ts).
  const text = await readCappedText(request, MAX_BUNDLE_BODY_BYTES);
  return text.ok ? text.value : undefined;
}

/** One HTTP request is one JSON-RPC message (the gateway never batches), so the request's scope is the call's. */
function callOf(message: unknown): CallState | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, id, params } = message as { method?: unknown; id?: unknown; params?: unknown };
  if (method !== "tools/call" || (typeof id !== "string" && typeof id !== "number")) return undefined;
  return callStateFor(id, typeof params === "object" && params !== null ? (params as Record<string, unknown>) : {});
}

function idOf(message: unknown): string | number | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null;
  const { id } = message as { id?: unknown };
  return typeof id === "string" || typeof id === "number" ? id : null;
}

const isSet = (value: unknown): boolean => typeof value === "string" && value.trim() !== "";

/**
 * Why the configuration keeps this mount from serving, or undefined. Names variables, never a value: a per-slug
 * mount's missing secrets, or a tool-group setting that names no group (the mount then serves no tool at all).
 */
export function mountProblem(manifest: BundleManifest | undefined, path: string, env: Record<string, unknown>): string | undefined {
  if (manifest === undefined) return undefined;
  const mount = path.slice(1);
  if (manifest.mounts === PER_SLUG) {
    const missing = secretVariables(manifest, mount).filter((key) => !isSet(env[key]));
    if (missing.length > 0) return `no mount at ${path}: a mount is served at /<slug> for a slug with credentials of its own, and ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not set`;
  }
  if (manifest.toolGroups !== undefined) {
    const groups = toolGroupsFor(manifest.toolGroups, mount, env);
    if (!groups.ok) return `the mount at ${path} serves no tool: ${groups.reason}`;
  }
  return undefined;
}

/** A per-slug mount's own secrets, by the variables that hold them: `<MOUNT>__<secret>`. */
function secretVariables(manifest: BundleManifest, mount: string): string[] {
  return (manifest.secrets ?? []).map((name) => `${slugNamespace(mount)}${name}`);
}

/** Every variable mountProblem reads for a mount, named as it names them: its per-slug secrets and its tool-group setting. */
function mountVariables(manifest: BundleManifest, mount: string): string[] {
  return [...(manifest.mounts === PER_SLUG ? secretVariables(manifest, mount) : []), ...(manifest.toolGroups === undefined ? [] : [toolGroupVariable(manifest.toolGroups, mount)])];
}

/** How many mounts' answers one bundle keeps (a per-slug bundle answers any /<slug>). */
const MAX_REMEMBERED_MOUNTS = 256;

/**
 * mountProblem, remembered per mount with the values of the variables it read: the answer depends on nothing else,
 * so a request whose env holds the same values gets the same answer without the strings and sets that building it
 * again cost every call of a per-slug or tool-grouped bundle.
 */
function rememberedMountProblem(manifest: BundleManifest | undefined): (path: string, env: Record<string, unknown>) => string | undefined {
  if (manifest === undefined) return () => undefined;
  const known = new Map<string, { names: string[]; values: unknown[]; answer: string | undefined }>();
  const unchanged = (entry: { names: string[]; values: unknown[] }, env: Record<string, unknown>): boolean => {
    for (let i = 0; i < entry.names.length; i++) if (env[entry.names[i] as string] !== entry.values[i]) return false;
    return true;
  };
  return (path, env) => {
    const entry = known.get(path);
    if (entry !== undefined && unchanged(entry, env)) return entry.answer;
    const names = entry?.names ?? mountVariables(manifest, path.slice(1));
    const answer = mountProblem(manifest, path, env);
    if (known.size >= MAX_REMEMBERED_MOUNTS && !known.has(path)) known.clear();
    known.set(path, { names, values: names.map((name) => env[name]), answer });
    return answer;
  };
}

/**
 * A call that put its question to the client (bundles/kit/confirm.ts askAtClient) answers with that question, whatever
 * its tool made of the "not approved" it was told (a refusal's text, a 1Password read with every secret withheld): the
 * SDK's McpServer hands an input_required result on as it is (docs/rules.md R-SEAL-1). The seam is McpServer's
 * per-instance executeToolHandler, the one step between a tool's handler and its result; it is not in the SDK's
 * typings, so its absence (an SDK upgrade) fails every mount's first call loudly rather than dropping the question.
 */
function answerWithQuestion(server: McpServer): void {
  const seam = server as unknown as { executeToolHandler?: (tool: unknown, args: unknown, ctx: unknown) => Promise<unknown> };
  const execute = seam.executeToolHandler;
  if (typeof execute !== "function") throw new Error("the MCP SDK's McpServer has no executeToolHandler: the kit cannot return a client question");
  seam.executeToolHandler = async (tool, args, ctx) => {
    const result = await execute.call(server, tool, args, ctx);
    return currentScope().call?.question ?? result;
  };
}

/** How the kit serves; `fastLane: false` only to hold the lane to the SDK's answers (test/bundles/kit/lane.unit.test.ts). */
export interface ServeOptions {
  fastLane?: boolean;
}

export function serveBundle(options: BundleOptions, { fastLane = true }: ServeOptions = {}): ExportedHandler<Record<string, unknown>> {
  const manifest = "manifest" in options ? options.manifest : undefined;
  const perSlug = manifest?.mounts === PER_SLUG;
  const switchOf = "elicitationSwitch" in options ? options.elicitationSwitch : undefined;
  if (typeof manifest?.mounts === "string" && !perSlug) throw new Error(`bundle.json's mounts is a list of paths or "${PER_SLUG}"`);
  if (perSlug && (manifest?.secrets ?? []).length === 0) throw new Error(`a "${PER_SLUG}" bundle lists the secrets that give a slug its mount`);

  const problemOf = rememberedMountProblem(manifest);
  const handlers = new Map<string, ReturnType<typeof createMcpHandler>>();
  // The lane's table per mount path, learnt from the servers its factory builds, and learnt again whenever a request's
  // env is another object or holds other values (bundles/kit/lane.ts, EnvSeen).
  const tables = new Map<string, LaneTable>();
  // Each mount's tools/list as the SDK answered it, with the env it answered under (bundles/kit/lane.ts, KnownList).
  const lists = new Map<string, KnownList>();
  const mountAt = (path: string, factory: MountFactory) => {
    const mount = path.replace(/^\//, "");
    // The factory runs inside the request's scope, so it sees this request's env and call.
    const build = () => {
      const scope = currentScope();
      const server = factory(mount, scope.env);
      if (fastLane) {
        // Learnt from every server the SDK's path builds: a call's server holds its tool alone, so the tools learnt
        // under the same env are kept beside what this one holds (bundles/kit/lane.ts laneTableFor).
        const known = tables.get(path);
        const same = known !== undefined && sameEnv(known, scope.env);
        tables.set(path, same ? laneTableFor(server, known, known.tools) : laneTableFor(server, envSeen(scope.env)));
      }
      installConfirmSeam(server);
      answerWithQuestion(server);
      const call = scope.call;
      // What ctx.mcpReq.notify does: a notification related to this call's request, on its response stream.
      if (call !== undefined) call.notify = (notification) => server.server.notification(notification, { relatedRequestId: call.requestId });
      return server;
    };
    const handler = createMcpHandler(build, { keepAliveMs: 0 });
    handlers.set(path, handler);
    return handler;
  };
  if ("mounts" in options) for (const [path, factory] of Object.entries(options.mounts)) mountAt(path, factory);
  else if (!perSlug) for (const path of options.manifest.mounts as readonly string[]) mountAt(path, options.server);
  /** A per-slug bundle answers any `/<slug>`; whether that slug has a mount is a question of the request's env. */
  const serves = (path: string) => (perSlug ? SLUG_PATTERN.test(path.slice(1)) : handlers.has(path));
  const handlerOf = (path: string) => handlers.get(path) ?? mountAt(path, (options as { server: MountFactory }).server);

  return {
    async fetch(request, env, ctx) {
      // Not over the gateway's binding: refused before the body is read, a mount is looked up or any tool runs, so a
      // reachable bundle serves no read and trusts no forged channel (docs/rules.md R-CHAN-13).
      if (!cameOverGatewayBinding(ctx.props)) return rpcError(403, -32600, ONLY_THROUGH_GATEWAY);
      warnPostureOnce(env);
      // A bundle with an ELICITATION that is neither true nor false serves nothing (docs/rules.md R-PAD-11).
      const sw = switchOf === undefined ? undefined : logSwitchOnce(switchOf.bundle, env);
      const path = new URL(request.url).pathname;
      if (!serves(path)) return rpcError(404, -32601, `no mount at ${path}`);
      const problem = sw !== undefined && !sw.ok ? sw.reason : problemOf(path, env);
      if (problem !== undefined && request.method !== "POST") return rpcError(404, MOUNT_UNAVAILABLE, problem);
      const scope: CallScope = { mount: path.slice(1), signal: request.signal, waitUntil: (p) => ctx.waitUntil(p), env };
      if (request.method !== "POST") return runInScope(scope, () => handlerOf(path).fetch(request));
      const text = await readBody(request);
      if (text === undefined) return rpcError(413, -32600, `the request body is larger than ${MAX_BUNDLE_BODY_BYTES} bytes`);
      let parsedBody: unknown;
      try {
        parsedBody = JSON.parse(text);
      } catch {
        return rpcError(400, -32700, "Parse error: the request body is not valid JSON");
      }
      // Every request to a mount its configuration keeps from serving gets the reason, answered to its id.
      if (problem !== undefined) {
        const id = idOf(parsedBody);
        return id === null ? rpcError(404, MOUNT_UNAVAILABLE, problem) : rpcError(200, MOUNT_UNAVAILABLE, problem, id);
      }
      scope.call = callOf(parsedBody);
      const table = tables.get(path);
      if (table !== undefined && scope.call !== undefined && sameEnv(table, env)) {
        const answer = await runInScope(scope, () => kitLane(request, parsedBody, table, scope));
        if (answer !== undefined) return answer;
      }
      const listId = fastLane && scope.call === undefined ? listLaneId(request, parsedBody) : undefined;
      if (listId !== undefined) {
        const listed = listLane(listId, lists.get(path), env);
        if (listed !== undefined) return listed;
      }
      const handler = handlerOf(path);
      if (listId === undefined) return runInScope(scope, () => handler.fetch(request, { parsedBody }));
      // The env as the SDK's server for a list is made of it, kept with its answer only if it still holds after.
      const seen = envSeen(env);
      const response = await runInScope(scope, () => handler.fetch(request, { parsedBody }));
      if (response.status !== 200 || response.headers.get("content-type") !== "application/json") return response;
      // The SDK's answer to a list the lane may take: learnt when the lane's would be the same bytes, and handed on as it came.
      const listed = await response.text();
      const result = listResultOf(listed, listId);
      if (result !== undefined && sameEnv(seen, env)) {
        if (lists.size >= MAX_REMEMBERED_MOUNTS && !lists.has(path)) lists.clear();
        lists.set(path, { ...seen, result });
      }
      return new Response(listed, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
  };
}
