// The hot path: a tools/call to an ungated mount, with no progress asked for, is forwarded and answered as one
// JSON body without building a per-request SDK server, on both revisions. Streamable HTTP lets a server answer a
// POSTed request with application/json, and the SDK answers these requests so on both revisions.
//
// The lane takes only requests it is sure the SDK's path would accept, and answers them byte for byte as that path
// does (test/worker/fast-lane.test.ts holds the two to the same answers for the same requests, valid and invalid).
// Everything else (handshakes, lists, a malformed envelope or header, confirmed calls that must stream
// keepalives, progress) goes through the SDK, which gives each refusal its own code and status; `npm run bench`
// shows what the lane saves.
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, classifyInboundRequest, PROTOCOL_VERSION_META_KEY, ProtocolError, SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import { RpcCode } from "../contract/rpc";
import { isGated } from "./channel";
import { type CallParams, forwardCall, GATEWAY_INFO, type GatewayRequest, LEGACY_PROTOCOL_VERSIONS } from "./mcp";
import { routeTool } from "./selection";

/** The revision whose requests carry their own `_meta` envelope (the gateway serves it beside the 2025-era ones). */
export const MODERN_REVISION = "2026-07-28";
/** An `Mcp-Name` header of this form is Base64 the SDK decodes before comparing; the lane leaves it to the SDK. */
const BASE64_SENTINEL = "=?base64?";

interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** True when every own key of `object` is one of `allowed`. */
function onlyKeys(object: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in object) if (!allowed.includes(key)) return false;
  return true;
}

const MESSAGE_KEYS = ["jsonrpc", "id", "method", "params"] as const;
const CALL_KEYS = ["name", "arguments", "_meta"] as const;
const ENVELOPE_KEYS = [PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY] as const;

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
 * A 2026-07-28 call the SDK's modern leg takes as it is: the method and name headers agree with the body (the
 * version header was checked by the caller), and the `_meta` envelope holds only what that leg validates and
 * nothing that changes how it answers (no progress token, no log level). An envelope of the everyday shape
 * (capabilities `{}`, clientInfo a name and a version) is valid by the envelope schema's own terms; any other is
 * put to the SDK's own classifier, so the lane never accepts an envelope the SDK would refuse.
 */
function modernCallFits(request: Request, message: Message, params: Record<string, unknown>, name: string): boolean {
  const headers = request.headers;
  if (headers.get("mcp-method") !== "tools/call" || headers.get("mcp-name") !== name || name.startsWith(BASE64_SENTINEL)) return false;
  if (!(headers.get("accept") ?? "").includes("application/json")) return false;
  const meta = params._meta;
  if (!isPlainObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return false;
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  const info = meta[CLIENT_INFO_META_KEY];
  const everyday =
    isPlainObject(capabilities) &&
    Object.keys(capabilities).length === 0 &&
    (info === undefined || (isPlainObject(info) && onlyKeys(info, ["name", "version"]) && typeof info.name === "string" && typeof info.version === "string"));
  if (everyday) return true;
  const route = classifyInboundRequest({ httpMethod: "POST", protocolVersionHeader: MODERN_REVISION, mcpMethodHeader: "tools/call", mcpNameHeader: name, body: message });
  return route.kind === "modern";
}

/**
 * A result the SDK's check of a handler's tools/call result (its era codec's validateResult) passes unchanged on both
 * revisions but for the order of its members: text content only, an object of structured content, an isError flag
 * and a _meta object without a progress token (the 2025-era schema types that one), neither object with an own
 * __proto__ member, nothing else. Any other result
 * (images, resources, no content, members the schemas do not name) is handed to the SDK's path to check, normalise
 * and encode: the call itself is not made twice.
 */
function everydayResult(result: Record<string, unknown>): boolean {
  if (!onlyKeys(result, RESULT_KEYS) || !Array.isArray(result.content)) return false;
  for (const block of result.content) {
    if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string" || !onlyKeys(block, TEXT_BLOCK_KEYS)) return false;
  }
  const { structuredContent, isError, _meta } = result;
  // The schemas' checks drop an own __proto__ member of either object; such a result is the SDK's to encode.
  if (structuredContent !== undefined && (!isPlainObject(structuredContent) || Object.hasOwn(structuredContent, "__proto__"))) return false;
  if (isError !== undefined && typeof isError !== "boolean") return false;
  return _meta === undefined || (isPlainObject(_meta) && !("progressToken" in _meta) && !Object.hasOwn(_meta, "__proto__"));
}

const RESULT_KEYS = ["content", "structuredContent", "isError", "_meta"] as const;
const TEXT_BLOCK_KEYS = ["type", "text"] as const;

/** Text blocks as the schema rebuilds them, type before text: the same array when every block already is. */
function inSchemaOrder(blocks: Record<string, unknown>[]): Record<string, unknown>[] {
  const ordered = (block: Record<string, unknown>) => {
    for (const key in block) return key === "type";
    return true;
  };
  return blocks.every(ordered) ? blocks : blocks.map((block) => ({ type: block.type, text: block.text }));
}

/**
 * An everyday result as the SDK sends it. Its check rebuilds the result through the era's schema, which puts the
 * members in the schema's order (_meta, content, structuredContent, isError) on both revisions; on 2026-07-28 its
 * codec's encodeResult then stamps `resultType: "complete"` and adds the server's identity to `_meta` (a new `_meta`
 * goes last). The upstream's own resultType and io.modelcontextprotocol/* entries were stripped on the way in.
 */
function encodeResult(result: Record<string, unknown>, modern: boolean): Record<string, unknown> {
  const { _meta, content, structuredContent, isError } = result;
  const encoded: Record<string, unknown> = {};
  if (_meta !== undefined) encoded._meta = modern ? { ...(_meta as object), [SERVER_INFO_META_KEY]: GATEWAY_INFO } : _meta;
  encoded.content = inSchemaOrder(content as Record<string, unknown>[]);
  if (structuredContent !== undefined) encoded.structuredContent = structuredContent;
  if (isError !== undefined) encoded.isError = isError;
  if (modern) {
    encoded.resultType = "complete";
    if (_meta === undefined) encoded._meta = { [SERVER_INFO_META_KEY]: GATEWAY_INFO };
  }
  return encoded;
}

/**
 * The lane's answer, or undefined when the request belongs to the SDK path. A call the lane made whose result it does
 * not encode itself is left to the SDK path too, with the result in `gw.settled`: the SDK's server answers with it
 * (mcp.ts) and the call is not made again.
 */
export async function fastLane(request: Request, message: Message, gw: GatewayRequest): Promise<Response | undefined> {
  // The SDK holds a request to exactly these members (its JSON-RPC request schema is strict).
  if (message.method !== "tools/call" || !onlyKeys(message as Record<string, unknown>, MESSAGE_KEYS)) return undefined;
  const id = message.id;
  const params = message.params;
  if (!isPlainObject(params) || !onlyKeys(params, CALL_KEYS)) return undefined;
  const name = params.name;
  if (typeof name !== "string") return undefined;
  const args = params.arguments;
  // The SDK's check of the arguments drops an own __proto__ member; the lane leaves such a call to it.
  if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, "__proto__"))) return undefined;
  // The SDK takes a string or an integer id on both revisions; anything else is its to refuse.
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  const version = request.headers.get("mcp-protocol-version");
  const modern = version === MODERN_REVISION;
  if (modern ? !modernCallFits(request, message, params, name) : version === null || !LEGACY_PROTOCOL_VERSIONS.includes(version) || !legacyCallFits(request, params)) {
    return undefined;
  }
  const target = routeTool(gw.selection, name);
  if (target === undefined || isGated(target.server)) return undefined;

  const callId = id as string | number;
  try {
    const result = await forwardCall(gw, params as unknown as CallParams, { id: callId, signal: request.signal });
    if (!everydayResult(result)) {
      gw.settled = result;
      return undefined;
    }
    // Both legs of the SDK put the result first.
    return Response.json({ result: encodeResult(result, modern), jsonrpc: "2.0", id: callId });
  } catch (error) {
    // Both legs answer a handler's failure alike: HTTP 200, jsonrpc, id, then the error (a -32002 made -32602,
    // which forwardCall already did).
    const code = error instanceof ProtocolError ? error.code : RpcCode.Internal;
    const text = error instanceof ProtocolError ? error.message : "internal error";
    return Response.json({ jsonrpc: "2.0", id: callId, error: { code, message: text } });
  }
}
