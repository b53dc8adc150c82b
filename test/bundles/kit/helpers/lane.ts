// The kit lane's differential harness: requests as the gateway sends them to a bundle, and each answered twice, by
// the bundle with its lane and without (the SDK's path), so a test can hold the two to the same bytes
// (test/bundles/kit/lane.unit.test.ts, and each bundle's own lane test).
import { McpServer } from "@modelcontextprotocol/server";
import { vi } from "vitest";
import { GATEWAY_PROPS } from "../../../../bundles/kit/gateway-only";

export type Handler = ExportedHandler<Record<string, unknown>>;
export const MODERN = "2026-07-28";
/** The context the gateway's service binding gives a bundle: its props say the gateway called. */
export const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;

export interface Raw {
  label: string;
  path: string;
  headers: Record<string, string>;
  /** The body as sent: a string is sent as it is (for members JSON.stringify cannot write, such as an own __proto__). */
  body: unknown;
}

export const envelope = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "strad-gateway", version: "0.1.0" },
  ...extra,
});
export const callHeaders = (name: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/call",
  "mcp-name": name,
});
/** A call as the gateway sends one to an ungated mount (worker/upstream.ts). */
export function call(path: string, name: string, args: unknown, label = `${path} ${name} ${JSON.stringify(args)}`): Raw {
  return { label, path, headers: callHeaders(name), body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: envelope() } } };
}
export const withHeaders = (raw: Raw, headers: Record<string, string | undefined>, label: string): Raw => {
  const merged: Record<string, string> = { ...raw.headers };
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  return { ...raw, label, headers: merged };
};
export const withBody = (raw: Raw, change: (body: Record<string, unknown>) => unknown, label: string): Raw => ({ ...raw, label, body: change(structuredClone(raw.body) as Record<string, unknown>) });
export const params = (body: Record<string, unknown>) => body.params as Record<string, unknown>;

export const ENV: Record<string, unknown> = {};

/** The whole answer as the gateway reads it: status, content type and body, byte for byte. */
export async function answer(handler: Handler, raw: Raw, env: Record<string, unknown> = ENV): Promise<string> {
  const body = typeof raw.body === "string" ? raw.body : JSON.stringify(raw.body);
  const request = new Request(`https://bundle.internal${raw.path}`, { method: "POST", headers: raw.headers, body });
  const response = await (handler.fetch as NonNullable<Handler["fetch"]>)(request as never, env, ctx);
  return `${response.status} ${response.headers.get("content-type")}\n${await response.text()}`;
}

/**
 * The answer with and without the lane, how many SDK servers each built, and how often each ran a tool (as `runs`
 * counts them: a map the bundle's tools add to, cleared before each).
 */
export async function both(raw: Raw, lanes: { on: Handler; off: Handler }, env: Record<string, unknown> = ENV, runs: Map<string, number> = new Map()) {
  const connect = vi.spyOn(McpServer.prototype, "connect");
  const measure = async (handler: Handler) => {
    runs.clear();
    connect.mockClear();
    const text = await answer(handler, raw, env);
    return { text, servers: connect.mock.calls.length, runs: Object.fromEntries(runs) };
  };
  const on = await measure(lanes.on);
  const off = await measure(lanes.off);
  connect.mockRestore();
  return { on, off };
}

/** A tools/list, which the SDK serves with a server holding every tool of the mount: the lane learns its table from it. */
export const list = (path: string): Raw => ({
  label: `${path} tools/list`,
  path,
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
  body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: envelope() } },
});

/** A channel as the gateway puts it on a gated mount's hop, to an approval service under an allowed prefix (worker/channel.ts). */
export const APPROVAL_CHANNEL = {
  slug: "gated",
  url: "https://approvals.example.com/api/v1/elicitations/session/t-1/",
  headers: {},
  ttlMs: 90_000,
  call: { scope: "dev-session", key: "c:n-1", nonce: "n-1" },
  caller: "dev-session",
};

/** The same call as the gateway sends it to a gated mount: its own progress token and a channel beside the envelope (worker/mcp.ts). */
export function onGatedHop(raw: Raw, channel: Record<string, unknown> = APPROVAL_CHANNEL): Raw {
  return withBody(raw, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ progressToken: "strad-5f0c", "dev.strad/elicitation": channel }) } }), `${raw.label} on a gated mount's hop`);
}
