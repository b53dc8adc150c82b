// Serves a bundle's mounts: each mount path gets its own MCP server factory, and every request runs in a
// call scope holding what the gateway forwarded with it (channel, deadline, progress token, signal).
// Bundles have no public route; only the gateway reaches them over a service binding.
import { createMcpHandler, type McpServer } from "@modelcontextprotocol/server";
import { readCappedText } from "../../contract/body";
import { warnPostureOnce } from "./posture";
import { type CallScope, type CallState, callStateFor, currentScope, runInScope } from "./scope";
import { installConfirmSeam } from "./seam";

export type MountFactory = (mount: string, env: Record<string, unknown>) => McpServer;

/**
 * What a bundle declares about itself in bundles/<name>/bundle.json: every mount path it serves. The bundle's
 * entry hands it to serveBundle, and `npm run check-config` refuses a roster path that is not listed.
 */
export interface BundleManifest {
  mounts: readonly string[];
}

export type BundleOptions =
  /** The bundle's manifest, and the slug-independent factory serving each of its mounts. */
  | { manifest: BundleManifest; server: MountFactory }
  /** Mount path ("/echo") to the factory serving it (the kit's own tests). */
  | { mounts: Record<string, MountFactory> };

/** The gateway caps caller bodies at 1 MiB; what it forwards is that plus its own _meta. */
export const MAX_BUNDLE_BODY_BYTES = 4 * 1024 * 1024;

function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });
}

async function readBody(request: Request): Promise<string | undefined> {
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

export function serveBundle(options: BundleOptions): ExportedHandler<Record<string, unknown>> {
  const handlers = new Map<string, ReturnType<typeof createMcpHandler>>();
  const mounts = "manifest" in options ? options.manifest.mounts.map((path) => [path, options.server] as const) : Object.entries(options.mounts);
  for (const [path, factory] of mounts) {
    const mount = path.replace(/^\//, "");
    // The factory runs inside the request's scope, so it sees this request's env and call.
    const build = () => {
      const scope = currentScope();
      const server = factory(mount, scope.env);
      installConfirmSeam(server);
      const call = scope.call;
      // What ctx.mcpReq.notify does: a notification related to this call's request, on its response stream.
      if (call !== undefined) call.notify = (notification) => server.server.notification(notification, { relatedRequestId: call.requestId });
      return server;
    };
    handlers.set(path, createMcpHandler(build, { keepAliveMs: 0 }));
  }
  return {
    async fetch(request, env, ctx) {
      warnPostureOnce(env);
      const path = new URL(request.url).pathname;
      const handler = handlers.get(path);
      if (handler === undefined) return rpcError(404, -32601, `no mount at ${path}`);
      const scope: CallScope = { mount: path.slice(1), signal: request.signal, waitUntil: (p) => ctx.waitUntil(p), env };
      if (request.method !== "POST") return runInScope(scope, () => handler.fetch(request));
      const text = await readBody(request);
      if (text === undefined) return rpcError(413, -32600, `the request body is larger than ${MAX_BUNDLE_BODY_BYTES} bytes`);
      let parsedBody: unknown;
      try {
        parsedBody = JSON.parse(text);
      } catch {
        return rpcError(400, -32700, "Parse error: the request body is not valid JSON");
      }
      scope.call = callOf(parsedBody);
      return runInScope(scope, () => handler.fetch(request, { parsedBody }));
    },
  };
}
