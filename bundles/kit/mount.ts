// Serves a bundle's mounts: each mount path gets its own MCP server factory, and every request runs in a
// call scope. Bundles have no public route; only the gateway reaches them over a service binding.
import { createMcpHandler, type McpServer } from "@modelcontextprotocol/server";
import { currentScope, runInScope } from "./scope";

export type MountFactory = (mount: string, env: Record<string, unknown>) => McpServer;

export interface BundleOptions {
  /** Mount path ("/echo") to the slug-independent factory serving it. */
  mounts: Record<string, MountFactory>;
}

export function serveBundle(options: BundleOptions): ExportedHandler<Record<string, unknown>> {
  const handlers = new Map<string, ReturnType<typeof createMcpHandler>>();
  for (const [path, factory] of Object.entries(options.mounts)) {
    const mount = path.replace(/^\//, "");
    // The factory runs inside the request's scope, so it sees this request's env.
    handlers.set(path, createMcpHandler(() => factory(mount, currentScope().env), { keepAliveMs: 0 }));
  }
  return {
    async fetch(request, env, ctx) {
      const path = new URL(request.url).pathname;
      const handler = handlers.get(path);
      if (handler === undefined) {
        return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32601, message: `no mount at ${path}` } }, { status: 404 });
      }
      return runInScope({ mount: path.slice(1), signal: request.signal, waitUntil: (p) => ctx.waitUntil(p), env }, () => handler.fetch(request));
    },
  };
}
