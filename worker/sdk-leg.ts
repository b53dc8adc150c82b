// The SDK's side of the gateway: its server and transport, which answer everything the fast lane leaves (handshakes,
// lists, cancels, confirmed calls that stream, and both revisions' refusals, each with the SDK's own code and status).
// Only ever imported dynamically (app.ts), so the SDK's modules are evaluated on the first request that needs them,
// never at the Worker's start (contract/sdk.ts; scripts/check-boundaries.mjs holds the import to that).
import { type CallToolResult, createMcpHandler, type ListToolsResult, type McpHttpHandler, Server } from "@modelcontextprotocol/server";
import { MAX_REQUEST_BYTES_CEILING } from "../contract/body";
import type { CallOrigin } from "./calls";
import { type CallParams, callTool, GATEWAY_INFO, type GatewayRequest, LEGACY_PROTOCOL_VERSIONS, listTools, track } from "./mcp";
import { describeSelection } from "./selection";

/** `era`: which revision's leg of the SDK built this server; a confirmed call's record is keyed by it (calls.ts recordKey). */
export function createServer(gw: GatewayRequest, era: CallOrigin["era"] = "legacy"): Server {
  const server = new Server({ ...GATEWAY_INFO }, { capabilities: { tools: {} }, instructions: describeSelection(gw.selection), supportedProtocolVersions: [...LEGACY_PROTOCOL_VERSIONS] });
  // Upstream answers pass through as they came; the SDK validates them on the way out.
  server.setRequestHandler("tools/list", (_request, ctx) => track(gw, listTools(gw, ctx)) as Promise<ListToolsResult>);
  server.setRequestHandler("tools/call", (request, ctx) => {
    const settled = gw.settled;
    const origin: CallOrigin = era === "modern" ? { era } : { era, session: gw.session ?? null };
    return track(gw, settled === undefined ? callTool(gw, request.params as CallParams, ctx, origin) : Promise.resolve(settled)) as Promise<CallToolResult>;
  });
  return server;
}

/** The SDK's two handlers: `plain` answers as the SDK chooses, `streamed` always with an event stream (confirmed calls). */
export interface SdkHandlers {
  plain: McpHttpHandler;
  streamed: McpHttpHandler;
}

/** Both handlers, built once per isolate; each request's server comes from the GatewayRequest in its authInfo. */
export function sdkHandlers(keepAliveMs: number): SdkHandlers {
  const factory = (ctx: { era: "legacy" | "modern"; authInfo?: { extra?: Record<string, unknown> } }) => createServer(ctx.authInfo?.extra?.gateway as GatewayRequest, ctx.era);
  const onerror = () => {};
  // The handlers are handed the parsed body and never read one; their bound is the largest a slug may allow.
  return {
    plain: createMcpHandler(factory, { onerror, maxRequestBodySize: MAX_REQUEST_BYTES_CEILING }),
    streamed: createMcpHandler(factory, { onerror, responseMode: "sse", keepAliveMs, maxRequestBodySize: MAX_REQUEST_BYTES_CEILING }),
  };
}
