// The hot path: a 2025-11-25 tools/call to an ungated mount, with no progress asked for, is forwarded and
// answered as one JSON body without building a per-request SDK server. Streamable HTTP lets a server answer
// a POSTed request with application/json. Everything else (handshakes, 2026-07-28, lists, confirmed calls
// that must stream keepalives, progress) goes through the SDK; `npm run bench` shows why this lane exists.
import { ProtocolError } from "@modelcontextprotocol/server";
import { RpcCode } from "../contract/rpc";
import { isGated } from "./channel";
import { type CallParams, forwardCall, type GatewayRequest, LEGACY_PROTOCOL_VERSIONS } from "./mcp";
import { routeTool } from "./selection";

interface Message {
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/** The lane's answer, or undefined when the request belongs to the SDK path. */
export async function fastLane(request: Request, message: Message, gw: GatewayRequest): Promise<Response | undefined> {
  if (message.method !== "tools/call") return undefined;
  const id = message.id;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const version = request.headers.get("mcp-protocol-version");
  // A modern or unknown revision, or a per-request envelope, is the SDK's to validate.
  if (version === null || !LEGACY_PROTOCOL_VERSIONS.includes(version)) return undefined;
  const params = message.params;
  if (typeof params !== "object" || params === null) return undefined;
  const p = params as { name?: unknown; arguments?: unknown; _meta?: Record<string, unknown> };
  if (typeof p.name !== "string") return undefined;
  if (p.arguments !== undefined && (typeof p.arguments !== "object" || p.arguments === null || Array.isArray(p.arguments))) return undefined;
  const meta = p._meta;
  if (meta !== undefined && (typeof meta !== "object" || meta === null || Object.keys(meta).some((k) => k.startsWith("io.modelcontextprotocol/") || k === "progressToken"))) return undefined;
  // The SDK's 2025-era transport answers 406 unless Accept names both; the lane holds a caller to the same.
  const accept = request.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  const target = routeTool(gw.selection, p.name);
  if (target === undefined || isGated(target.server)) return undefined;

  try {
    const result = await forwardCall(gw, p as CallParams, { id, signal: request.signal });
    return Response.json({ jsonrpc: "2.0", id, result });
  } catch (error) {
    const code = error instanceof ProtocolError ? error.code : RpcCode.Internal;
    const text = error instanceof ProtocolError ? error.message : "internal error";
    return Response.json({ jsonrpc: "2.0", id, error: { code, message: text } });
  }
}
