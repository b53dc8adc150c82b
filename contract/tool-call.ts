// What a tools/call fast lane needs to know of the SDK's answers, shared by the gateway's lane (worker/fast-lane.ts)
// and the kit's (bundles/kit/lane.ts). A lane takes a call only when the SDK's path would take it as it is, and
// answers it byte for byte as that path does; each lane has a differential test holding it to the SDK
// (test/worker/fast-lane.test.ts, test/bundles/kit/lane.unit.test.ts), which fails if the SDK's answers drift from these.
import { CHANNEL_META_KEY } from "./channel-keys";
import { loadSdk } from "./sdk";

// The protocol's own `_meta` keys, as the SDK names them (test/contract/sdk-constants.test.ts holds them to it).
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";
export const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";
export const CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo";
export const SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo";

/** The 2025-era revisions the SDK serves, newest first (held to its SUPPORTED_PROTOCOL_VERSIONS by the same test). */
export const SDK_LEGACY_REVISIONS: readonly string[] = Object.freeze(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]);

/** The revision whose requests carry their own `_meta` envelope. */
export const MODERN_REVISION = "2026-07-28";
/** An `Mcp-Name` header of this form is Base64 the SDK decodes before comparing; a lane leaves it to the SDK. */
const BASE64_SENTINEL = "=?base64?";

/**
 * A tool name as an `Mcp-Name` header carries it (the 2026-07-28 transport's value encoding, as the SDK's client
 * writes it): as it is when it is a plain ASCII field value, else `=?base64?<UTF-8, Base64>?=`, which the SDK's
 * server decodes. A name with a leading or trailing space, or past ASCII, would otherwise be trimmed by fetch (and
 * refused by the mount as not matching the body) or not sent at all.
 */
export function mcpNameHeader(name: string): string {
  let plain = name.length > 0 && name === name.trim() && !(name.startsWith(BASE64_SENTINEL) && name.endsWith("?="));
  for (let i = 0; plain && i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c !== 9 && (c < 0x20 || c > 0x7e)) plain = false;
  }
  if (plain) return name;
  let binary = "";
  for (const byte of new TextEncoder().encode(name)) binary += String.fromCharCode(byte);
  return `${BASE64_SENTINEL}${btoa(binary)}?=`;
}

export interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A 2026-07-28 result that asks its caller a question, as the SDK's isInputRequiredResult tells one. */
export const isInputRequired = (value: unknown): boolean => isPlainObject(value) && value.resultType === "input_required";

/** The elicitation modes a client declares (`capabilities.elicitation`). */
export interface ElicitationModes {
  form: boolean;
  url: boolean;
}

export const NO_ELICITATION: ElicitationModes = Object.freeze({ form: false, url: false });

/**
 * The elicitation modes a capabilities object declares, read as the SDK reads them: a bare `elicitation: {}` is form,
 * URL mode only when named; anything that is not an object declares nothing. The one reading of a declaration, whether
 * it came in a 2026-07-28 envelope, a 2025-11-25 initialize or the gateway's hop.
 */
export function elicitationModes(capabilities: unknown): ElicitationModes {
  const elicitation = isPlainObject(capabilities) ? capabilities.elicitation : undefined;
  if (!isPlainObject(elicitation)) return NO_ELICITATION;
  const url = elicitation.url !== undefined;
  return { form: elicitation.form !== undefined || !url, url };
}

/**
 * An object literal's kind of object (or one without a prototype), with no toJSON: what JSON.stringify writes
 * exactly as the SDK's schemas would rebuild it. A class instance (getters on its prototype, inherited members,
 * its own toJSON) is rebuilt by the schemas and serialised differently; a result holding one is the SDK's to encode.
 */
function isRecord(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !Object.hasOwn(value, "toJSON");
}

/** True when every own key of `object` is one of `allowed`. */
export function onlyKeys(object: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in object) if (!allowed.includes(key)) return false;
  return true;
}

const MESSAGE_KEYS = ["jsonrpc", "id", "method", "params"] as const;
const CALL_KEYS = ["name", "arguments", "_meta"] as const;
/** The multi-round-trip retry members a 2026-07-28 tools/call may carry (SEP-2322): the SDK lifts them out of params. */
export const RETRY_KEYS = ["inputResponses", "requestState"] as const;
const RETRY_CALL_KEYS = [...CALL_KEYS, ...RETRY_KEYS] as const;
const ENVELOPE_KEYS = [PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY] as const;
/**
 * What the gateway adds to the envelope of every call on a gated mount's hop (worker/mcp.ts): its own progress token
 * and its channel. Neither changes how the SDK answers a tool that sends no notification: a progress token only names
 * the notifications a handler may send, and the channel is an extension key the SDK's loose `_meta` passes on.
 */
const HOP_ENVELOPE_KEYS = [...ENVELOPE_KEYS, "progressToken", CHANNEL_META_KEY] as const;

/** A tools/call whose members the SDK takes as they are, read out of the message. */
export interface PlainCall {
  id: string | number;
  name: string;
  params: Record<string, unknown>;
  arguments: Record<string, unknown> | undefined;
}

/**
 * The message as a tools/call of the plain shape, or undefined: exactly the JSON-RPC members (the SDK's request
 * schema is strict), params of a name, arguments and _meta, arguments without an own __proto__ (the SDK's check
 * drops it) and a string or safe-integer id (the SDK refuses any other on both revisions). With `retry`, params may
 * also hold a retry's inputResponses and a string requestState (the SDK refuses any other requestState -32602).
 */
export function plainCall(message: Message, retry = false): PlainCall | undefined {
  if (message.jsonrpc !== "2.0" || message.method !== "tools/call" || !onlyKeys(message as Record<string, unknown>, MESSAGE_KEYS)) return undefined;
  const { id, params } = message;
  if (!isPlainObject(params) || !onlyKeys(params, retry ? RETRY_CALL_KEYS : CALL_KEYS)) return undefined;
  if (retry && params.requestState !== undefined && typeof params.requestState !== "string") return undefined;
  const { name, arguments: args } = params;
  if (typeof name !== "string") return undefined;
  if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, "__proto__"))) return undefined;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  return { id: id as string | number, name, params, arguments: args };
}

/**
 * An envelope of the everyday shape (capabilities `{}`, clientInfo absent or a name and a version), valid by the
 * envelope schema's own terms: what the gateway's hop always carries. Any other is the SDK's classifier's to judge.
 */
function everydayEnvelope(meta: Record<string, unknown>): boolean {
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  const info = meta[CLIENT_INFO_META_KEY];
  return (
    isPlainObject(capabilities) &&
    Object.keys(capabilities).length === 0 &&
    (info === undefined || (isPlainObject(info) && onlyKeys(info, ["name", "version"]) && typeof info.name === "string" && typeof info.version === "string"))
  );
}

/**
 * The id of a 2026-07-28 tools/list the SDK's modern leg answers with a mount's whole list, whatever the id: exactly
 * the JSON-RPC members, a string or safe-integer id, params of an everyday envelope alone (no cursor, nothing else),
 * and headers that agree (version, `Mcp-Method: tools/list`, no `Mcp-Name`, an Accept naming JSON; the content
 * type is the caller's to check, with the SDK's own test). Undefined for any other request: the SDK's to answer.
 */
export function plainListId(request: Request, message: unknown): string | number | undefined {
  const headers = request.headers;
  if (headers.get("mcp-protocol-version") !== MODERN_REVISION || headers.get("mcp-method") !== "tools/list" || headers.get("mcp-name") !== null) return undefined;
  if (!(headers.get("accept") ?? "").includes("application/json")) return undefined;
  if (!isPlainObject(message) || message.jsonrpc !== "2.0" || message.method !== "tools/list" || !onlyKeys(message, MESSAGE_KEYS)) return undefined;
  const { id, params } = message;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  if (!isPlainObject(params) || !onlyKeys(params, ["_meta"])) return undefined;
  const meta = params._meta;
  if (!isPlainObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION || !everydayEnvelope(meta)) return undefined;
  return id as string | number;
}

/**
 * A 2026-07-28 call the SDK's modern leg takes as it is: the method and name headers agree with the body (the
 * version header was checked by the caller), and the `_meta` envelope holds only what that leg validates and
 * nothing that changes how it answers (no log level; a progress token only with `hop`, below). With `hop` (a bundle's
 * lane, for a plain tool, which sends no notification) the envelope may also hold what the gateway adds on a gated
 * mount's hop (HOP_ENVELOPE_KEYS); the gateway's own lane never takes a progress token, which it must relay. An envelope of the everyday shape
 * (capabilities `{}`, clientInfo a name and a version) is valid by the envelope schema's own terms; any other is
 * put to the SDK's own classifier, so a lane never accepts an envelope the SDK would refuse. The everyday answer is
 * given at once; only the classifier's waits for the SDK's modules (contract/sdk.ts).
 */
export function modernCallFits(request: Request, message: Message, call: PlainCall, hop = false): boolean | Promise<boolean> {
  const headers = request.headers;
  const name = call.name;
  if (headers.get("mcp-method") !== "tools/call" || headers.get("mcp-name") !== name || name.startsWith(BASE64_SENTINEL)) return false;
  if (!(headers.get("accept") ?? "").includes("application/json")) return false;
  const meta = call.params._meta;
  if (!isPlainObject(meta) || !onlyKeys(meta, hop ? HOP_ENVELOPE_KEYS : ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return false;
  // The SDK refuses a progress token that is neither a string nor a safe integer (-32602): its path words that.
  const token = meta.progressToken;
  if (token !== undefined && typeof token !== "string" && !Number.isSafeInteger(token)) return false;
  if (everydayEnvelope(meta)) return true;
  // An SDK that cannot be loaded fits nothing: the call goes to the SDK's path, which answers why it cannot be served.
  return loadSdk().then(
    (sdk) => sdk.classifyInboundRequest({ httpMethod: "POST", protocolVersionHeader: MODERN_REVISION, mcpMethodHeader: "tools/call", mcpNameHeader: name, body: message }).kind === "modern",
    () => false,
  );
}

const RESULT_KEYS = ["content", "structuredContent", "isError", "_meta"] as const;
const TEXT_BLOCK_KEYS = ["type", "text"] as const;

/**
 * A result the SDK's check of a handler's tools/call result (its era codec's validateResult) passes unchanged on both
 * revisions but for the order of its members: text content only, an object of structured content, an isError flag
 * and a _meta object without a progress token (the 2025-era schema types that one) and without an entry under the
 * protocol's own `io.modelcontextprotocol/` prefix (the SDK keeps a server identity a result already carries), neither
 * object with an own __proto__ member, nothing else. Any other result (images, resources, no content, members the
 * schemas do not name) is the SDK's to check, normalise and encode.
 */
export function everydayResult(result: Record<string, unknown>): boolean {
  if (!isRecord(result) || !onlyKeys(result, RESULT_KEYS)) return false;
  const content = result.content;
  if (!Array.isArray(content) || Object.getPrototypeOf(content) !== Array.prototype || Object.hasOwn(content, "toJSON")) return false;
  for (const block of content) {
    if (!isRecord(block) || block.type !== "text" || typeof block.text !== "string" || !onlyKeys(block, TEXT_BLOCK_KEYS)) return false;
  }
  const { structuredContent, isError, _meta } = result;
  // The schemas' checks drop an own __proto__ member of either object; such a result is the SDK's to encode.
  if (structuredContent !== undefined && (!isRecord(structuredContent) || Object.hasOwn(structuredContent, "__proto__"))) return false;
  if (isError !== undefined && typeof isError !== "boolean") return false;
  // A _meta member present but undefined keeps its place when the SDK stamps the server's identity into it.
  if (_meta === undefined) return !Object.hasOwn(result, "_meta");
  if (!isRecord(_meta) || "progressToken" in _meta || Object.hasOwn(_meta, "__proto__")) return false;
  for (const key in _meta) if (key.startsWith("io.modelcontextprotocol/")) return false;
  return true;
}

/** Text blocks as the schema rebuilds them, type before text: the same array when every block already is. */
function inSchemaOrder(blocks: Record<string, unknown>[]): Record<string, unknown>[] {
  const ordered = (block: Record<string, unknown>) => {
    for (const key in block) return key === "type";
    return true;
  };
  return blocks.every(ordered) ? blocks : blocks.map((block) => ({ type: block.type, text: block.text }));
}

/** A server's identity, as it reports itself (its name and version, and whatever else it was given). */
export interface ServerIdentity {
  readonly name: string;
  readonly version: string;
  readonly [more: string]: unknown;
}

/**
 * An everyday result as the SDK sends it. Its check rebuilds the result through the era's schema, which puts the
 * members in the schema's order (_meta, content, structuredContent, isError) on both revisions; on 2026-07-28 its
 * codec's encodeResult then stamps `resultType: "complete"` and adds the server's identity to `_meta` (a new `_meta`
 * goes last). `serverInfo` is given on 2026-07-28 only.
 */
export function encodeResult(result: Record<string, unknown>, serverInfo: ServerIdentity | undefined): Record<string, unknown> {
  const { _meta, content, structuredContent, isError } = result;
  const encoded: Record<string, unknown> = {};
  if (_meta !== undefined) encoded._meta = serverInfo !== undefined ? { ...(_meta as object), [SERVER_INFO_META_KEY]: serverInfo } : _meta;
  encoded.content = inSchemaOrder(content as Record<string, unknown>[]);
  if (structuredContent !== undefined) encoded.structuredContent = structuredContent;
  if (isError !== undefined) encoded.isError = isError;
  if (serverInfo !== undefined) {
    encoded.resultType = "complete";
    if (_meta === undefined) encoded._meta = { [SERVER_INFO_META_KEY]: serverInfo };
  }
  return encoded;
}

const utf8 = new TextEncoder();

/**
 * The SDK's answer to a request it served: the result first, on both revisions. Its length is declared (a body a
 * Worker hands over a service binding carries no Content-Length unless the Worker sets one): the gateway reads a
 * bundle's answer in one native step held to that length, or chunk by chunk to its cap without one (contract/body.ts).
 */
export function resultAnswer(id: string | number, result: Record<string, unknown>): Response {
  const body = utf8.encode(JSON.stringify({ result, jsonrpc: "2.0", id }));
  return new Response(body, { headers: { "content-type": "application/json", "content-length": String(body.byteLength) } });
}

/** The embedded requests a 2026-07-28 input_required result may carry, as the SDK's server seam knows them. */
const INPUT_REQUEST_METHODS: readonly string[] = ["elicitation/create", "sampling/createMessage", "roots/list"];

export type InputRequiredCheck = { ok: true; result: Record<string, unknown> } | { ok: false; why: string };

/**
 * A mount's `resultType: "input_required"` result, held to what the SDK's server seam requires of one (at least one
 * of a non-empty inputRequests and a string requestState; every inputRequests entry an object naming one of the
 * embedded methods) and rebuilt of exactly those members and `_meta`, in the SDK's own order (its inputRequired()
 * builder's), so nothing else a mount put beside them reaches the caller (docs/rules.md R-FWD-9).
 */
export function checkInputRequired(raw: Record<string, unknown>): InputRequiredCheck {
  const { inputRequests, requestState, _meta } = raw;
  if (inputRequests !== undefined) {
    if (!isPlainObject(inputRequests)) return { ok: false, why: "input_required with inputRequests that is not an object" };
    for (const key in inputRequests) {
      const entry = inputRequests[key];
      if (!isPlainObject(entry) || typeof entry.method !== "string" || !INPUT_REQUEST_METHODS.includes(entry.method)) {
        return { ok: false, why: "input_required with an input request that is not elicitation/create, sampling/createMessage or roots/list" };
      }
    }
  }
  if (requestState !== undefined && typeof requestState !== "string") return { ok: false, why: "input_required with a requestState that is not a string" };
  const asks = isPlainObject(inputRequests) && Object.keys(inputRequests).length > 0;
  if (!asks && requestState === undefined) return { ok: false, why: "input_required with neither inputRequests nor requestState" };
  if (_meta !== undefined && !isPlainObject(_meta)) return { ok: false, why: "input_required with a _meta that is not an object" };
  return {
    ok: true,
    result: {
      resultType: "input_required",
      ...(inputRequests === undefined ? {} : { inputRequests }),
      ...(requestState === undefined ? {} : { requestState }),
      ...(_meta === undefined ? {} : { _meta }),
    },
  };
}
