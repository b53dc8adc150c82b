// The hot path: a tools/call to an ungated mount, with no progress asked for, is forwarded and answered as one
// JSON body without building a per-request SDK server, on both revisions. Streamable HTTP lets a server answer a
// POSTed request with application/json, and the SDK answers these requests so on both revisions.
//
// The lane takes only requests it is sure the SDK's path would accept, and answers them byte for byte as that path
// does (test/worker/fast-lane.test.ts holds the two to the same answers for the same requests, valid and invalid).
// Everything else (handshakes, lists, a malformed envelope or header, confirmed calls that must stream
// keepalives, progress) goes through the SDK, which gives each refusal its own code and status; `npm run bench`
// shows what the lane saves.
import { RpcCode, RpcError } from "../contract/rpc";
import { encodeResult, everydayResult, isPlainObject, type Message, MODERN_REVISION, modernCallFits, plainCall, resultAnswer } from "../contract/tool-call";
import type { CallOrigin } from "./calls";
import { isGated } from "./channel";
import { type CallParams, forwardCall, GATEWAY_INFO, type GatewayRequest, LEGACY_PROTOCOL_VERSIONS } from "./mcp";
import { routeTool } from "./selection";

/**
 * A 2025-era call the SDK's legacy leg takes as it is: no per-request envelope and no progress token (both change
 * what that leg does), and an Accept naming both types (that leg answers 406 otherwise).
 */
function legacyCallFits(request: Request, params: Record<string, unknown>): boolean {
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) return false;
    for (const key in meta) if (key === "progressToken" || key.startsWith("io.modelcontextprotocol/")) return false;
  }
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/json") && accept.includes("text/event-stream");
}

/**
 * The lane's answer, or undefined when the request belongs to the SDK path. A call the lane made whose result it does
 * not encode itself is left to the SDK path too, with the result in `gw.settled`: the SDK's server answers with it
 * (mcp.ts) and the call is not made again.
 */
export async function fastLane(request: Request, message: Message, gw: GatewayRequest): Promise<Response | undefined> {
  const version = request.headers.get("mcp-protocol-version");
  const modern = version === MODERN_REVISION;
  // A 2026-07-28 retry (inputResponses, a string requestState) is a call the lane takes; on a 2025-era revision the SDK's.
  const call = plainCall(message, modern);
  if (call === undefined) return undefined;
  if (modern) {
    const fits = modernCallFits(request, message, call);
    if (fits !== true && !(await fits)) return undefined;
  } else if (version === null || !LEGACY_PROTOCOL_VERSIONS.includes(version) || !legacyCallFits(request, call.params)) return undefined;
  const target = routeTool(gw.selection, call.name);
  if (target === undefined || isGated(target.server)) return undefined;

  const callId = call.id;
  try {
    const origin: CallOrigin = modern ? { era: "modern" } : { era: "legacy", session: gw.session ?? null };
    const result = await forwardCall(gw, call.params as unknown as CallParams, { id: callId, signal: request.signal, origin });
    // A mount's question (input_required) is never an everyday result: the SDK's server checks it against the
    // caller's declared capabilities and encodes it (docs/rules.md R-FWD-9).
    if (!everydayResult(result)) {
      gw.settled = result;
      return undefined;
    }
    // Both legs of the SDK put the result first.
    return resultAnswer(callId, encodeResult(result, modern ? GATEWAY_INFO : undefined));
  } catch (error) {
    // Both legs answer a handler's failure alike: HTTP 200, jsonrpc, id, then the error (a -32002 made -32602,
    // which forwardCall already did).
    const code = error instanceof RpcError ? error.code : RpcCode.Internal;
    const text = error instanceof RpcError ? error.message : "internal error";
    // Not the gateway's own refusal (an RpcError sets its outcome where it is thrown): the log line says so, never "ok".
    if (!(error instanceof RpcError)) gw.log.outcome = "internal_error";
    return Response.json({ jsonrpc: "2.0", id: callId, error: { code, message: text } });
  }
}
