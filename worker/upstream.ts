// One upstream exchange: the gateway builds the request itself (never the caller's headers or _meta),
// speaks 2026-07-28 to the upstream so that one POST is one call, and reads a JSON or SSE answer.
// Failures name the slug and the HTTP status, never a byte of the upstream's body.
import { createParser } from "eventsource-parser";
import { readCountedText } from "../contract/body";
import { RpcCode } from "../contract/rpc";
import { cleanLine } from "../contract/text";
import { checkInputRequired, mcpNameHeader } from "../contract/tool-call";
import { NO_CAPABILITIES } from "./relay";
import type { ServerEntry } from "./roster";

export const UPSTREAM_REVISION = "2026-07-28";
/** The most of an upstream answer the gateway reads; past it the answer is refused, not held. */
export const MAX_UPSTREAM_BODY = 16 * 1024 * 1024;
/** Why an answer past its cap (MAX_UPSTREAM_BODY, or the request's maxBytes) is refused: what a listing tells apart. */
export const TOO_LARGE = "the answer is too large";

export type UpstreamError =
  | { code: "UPSTREAM_HTTP"; status: number }
  | { code: "UPSTREAM_TIMEOUT"; timeoutMs: number }
  | { code: "UPSTREAM_ABORTED"; reason: string }
  | { code: "UPSTREAM_UNREACHABLE" }
  | { code: "UPSTREAM_PROTOCOL"; why: string }
  | { code: "UPSTREAM_RPC"; rpcCode: number; message: string }
  /** The call could not be serialised (arguments nested past the engine's stack): nothing was sent. */
  | { code: "REQUEST_UNENCODABLE" };

/**
 * `drained`: the upstream's answer was read to its end, so nothing of the exchange is left open. Absent when
 * the answer was cut short (an event stream is cancelled once the answer arrives) or never came.
 */
export type UpstreamResult = ({ ok: true; result: Record<string, unknown>; bytes?: number } | { ok: false; error: UpstreamError }) & { drained?: true };

export interface UpstreamRequest {
  server: ServerEntry;
  method: "tools/list" | "tools/call";
  params: Record<string, unknown>;
  /** Gateway-owned _meta entries (channel, progress token). The caller's own _meta never gets here. */
  meta: Record<string, unknown>;
  /** What the gateway declares it can do on this hop (relay.ts hopCapabilities); none when absent. */
  capabilities?: Readonly<Record<string, unknown>>;
  headers: Record<string, string>;
  /** Aborting it aborts the fetch itself, so a bundle's request.signal fires. */
  signal: AbortSignal;
  /** The most of the answer read (MAX_UPSTREAM_BODY when absent); past it the answer is refused, not held. */
  maxBytes?: number;
  onProgress?: (params: Record<string, unknown>) => void;
  fetcher: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * Why the signal fired, set as its reason by whoever aborted. Not an Error: it is never thrown by the
 * gateway, and every call ends by aborting, so capturing a stack for it would be paid on every call.
 */
export class AbortReason {
  constructor(readonly error: UpstreamError) {}
}

const MCP_NAME_FIELD: Record<string, string | undefined> = { "tools/call": "name" };
/** The gateway's envelope on every upstream request: the same for each, so built once and only ever serialised. */
const CLIENT_INFO = Object.freeze({ name: "strad-gateway", version: "0.1.0" });

export async function callUpstream(req: UpstreamRequest): Promise<UpstreamResult> {
  const { server, method } = req;
  const id = 1;
  const params = {
    ...req.params,
    _meta: {
      ...req.meta,
      "io.modelcontextprotocol/protocolVersion": UPSTREAM_REVISION,
      "io.modelcontextprotocol/clientCapabilities": req.capabilities ?? NO_CAPABILITIES,
      "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    },
  };
  const headers: Record<string, string> = {
    ...req.headers,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": UPSTREAM_REVISION,
    "mcp-method": method,
  };
  const nameField = MCP_NAME_FIELD[method];
  const name = nameField === undefined ? undefined : req.params[nameField];
  if (typeof name === "string") headers["mcp-name"] = mcpNameHeader(name);

  const url = server.kind === "bundle" ? `https://bundle.internal${server.path ?? "/"}` : (server.url as string);
  // Nothing goes out for a call already ended (its caller gone, its deadline passed): a fetcher handed an aborted
  // signal is not trusted to refuse it.
  if (req.signal.aborted) return { ok: false, error: abortedOr(req.signal, { code: "UPSTREAM_UNREACHABLE" }) };
  const body = encodeCall(id, method, params);
  if (body === undefined) return { ok: false, error: { code: "REQUEST_UNENCODABLE" } };
  let response: Response;
  try {
    response = await req.fetcher(url, {
      method: "POST",
      headers,
      body,
      signal: req.signal,
      redirect: "manual",
    });
  } catch {
    return { ok: false, error: abortedOr(req.signal, { code: "UPSTREAM_UNREACHABLE" }) };
  }
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    return { ok: false, error: { code: "UPSTREAM_HTTP", status: response.status } };
  }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  try {
    if (type === "application/json") {
      // A bundle's answer crosses a service binding, where nothing holds it to the length it declares.
      const text = await readCountedText(response, req.maxBytes ?? MAX_UPSTREAM_BODY, false, server.kind === "bundle" ? "claimed" : "framed");
      if (!text.ok) return { ok: false, error: abortedOr(req.signal, { code: "UPSTREAM_PROTOCOL", why: text.tooLarge ? TOO_LARGE : "the answer could not be read" }) };
      const answer = answerOf(JSON.parse(text.value), id);
      return answer.ok ? { ...answer, drained: true, bytes: text.bytes } : { ...answer, drained: true };
    }
    if (type === "text/event-stream") return await readEventStream(response, id, req);
    await response.body?.cancel().catch(() => {});
    return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "unexpected content type" } };
  } catch (error) {
    if (req.signal.aborted) return { ok: false, error: abortedOr(req.signal, { code: "UPSTREAM_UNREACHABLE" }) };
    if (error instanceof SyntaxError) return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "the answer is not JSON" } };
    return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "the answer could not be read" } };
  }
}

/**
 * `value` as JSON, or undefined when it nests deeper than JSON.stringify can follow: V8 throws a RangeError past its
 * stack, at a depth that differs between engines (about 5,000 levels in Node's tests, more in workerd), while
 * JSON.parse, which is not recursive, took it. What a caller sent that deep is refused as the caller's, never reported
 * as a mount being unreachable (docs/rules.md R-FWD-10). Any other failure is thrown: a value JSON.parse made has none.
 */
export function serialised(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** The hop's request body, or undefined when the call's arguments (or a retry's answers) nest too deeply to send. */
export const encodeCall = (id: number, method: string, params: Record<string, unknown>): string | undefined => serialised({ jsonrpc: "2.0", id, method, params });

function abortedOr(signal: AbortSignal, fallback: UpstreamError): UpstreamError {
  if (!signal.aborted) return fallback;
  return signal.reason instanceof AbortReason ? signal.reason.error : { code: "UPSTREAM_ABORTED", reason: "aborted" };
}

function answerOf(message: unknown, id: number): UpstreamResult {
  if (typeof message !== "object" || message === null) return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "the answer is not a JSON-RPC message" } };
  const m = message as { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
  if (m.id !== id) return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "the answer names another request" } };
  if (m.error !== undefined) {
    const rpcCode = typeof m.error.code === "number" ? m.error.code : -32603;
    const text = typeof m.error.message === "string" ? m.error.message : "error";
    return { ok: false, error: { code: "UPSTREAM_RPC", rpcCode, message: cleanLine(text, 300, " ") } };
  }
  if (typeof m.result !== "object" || m.result === null) return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "the answer has no result" } };
  const result = stripHopFields(m.result as Record<string, unknown>);
  // A question for the caller keeps its resultType: it is the caller's to answer, not the hop's (docs/rules.md R-FWD-9).
  if ((m.result as { resultType?: unknown }).resultType !== "input_required") return { ok: true, result };
  const checked = checkInputRequired(result);
  return checked.ok ? { ok: true, result: checked.result } : { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: checked.why } };
}

/**
 * resultType and the io.modelcontextprotocol/* _meta keys belong to the gateway-to-upstream hop, not to the caller
 * (an input_required result's resultType is put back by answerOf).
 */
function stripHopFields(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _hop, _meta, ...rest } = result;
  if (typeof _meta !== "object" || _meta === null) return rest;
  const kept = Object.fromEntries(Object.entries(_meta).filter(([k]) => !k.startsWith("io.modelcontextprotocol/")));
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}

/** Reads SSE frames until the response to `id` arrives; relays progress on the way. */
async function readEventStream(response: Response, id: number, req: UpstreamRequest): Promise<UpstreamResult> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: "empty event stream" } };
  const decoder = new TextDecoder();
  let answer: UpstreamResult | undefined;
  // The parser keeps an unfinished line in pieces and joins them once, so one long frame costs linear time.
  const parser = createParser({
    onEvent: ({ data }) => {
      // Frames after the answer in the same chunk are not this call's business.
      if (answer !== undefined || data === "") return;
      const message = JSON.parse(data) as { method?: unknown; params?: unknown; id?: unknown };
      if (message.method === "notifications/progress" && typeof message.params === "object" && message.params !== null) {
        req.onProgress?.(message.params as Record<string, unknown>);
      } else if (message.id === id) answer = answerOf(message, id);
    },
  });
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { ok: false, error: abortedOr(req.signal, { code: "UPSTREAM_PROTOCOL", why: "the event stream ended without an answer" }) };
      total += value.byteLength;
      if (total > (req.maxBytes ?? MAX_UPSTREAM_BODY)) return { ok: false, error: { code: "UPSTREAM_PROTOCOL", why: TOO_LARGE } };
      parser.feed(decoder.decode(value, { stream: true }));
      if (answer !== undefined) return answer.ok ? { ...answer, bytes: total } : answer;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** Resource not found in 2025-11-25, which the SDK sends as -32602 on both revisions (each codec's encodeErrorCode). */
const SDK_REWRITES_TO_INVALID_PARAMS = -32002;

/**
 * Codes that speak of the hop, not of the caller's request, so relaying one would tell the caller something untrue:
 * HeaderMismatch (-32020) and UnsupportedProtocolVersion (-32022) are about the headers and revision the gateway sent,
 * MissingRequiredClientCapability (-32021) about the gateway's own capabilities on the hop (none; the SDK would also
 * answer it HTTP 400), and URLElicitationRequired (-32042) names URLs in its data, which the gateway does not relay, so
 * the caller would get the code without what it requires. Each is the mount failing, as the gateway sees it.
 */
const HOP_ONLY_CODES: ReadonlySet<number> = new Set([-32020, -32021, -32022, -32042]);

/** The JSON-RPC code the caller is answered with for an upstream failure, the same on every lane (docs/rules.md R-FWD-7). */
export function errorCode(error: UpstreamError): number {
  if (error.code === "UPSTREAM_TIMEOUT") return RpcCode.UpstreamTimeout;
  if (error.code === "UPSTREAM_ABORTED") return RpcCode.Cancelled;
  if (error.code === "REQUEST_UNENCODABLE") return RpcCode.InvalidParams;
  if (error.code === "UPSTREAM_RPC") {
    // An upstream's own code is relayed as the SDK would send it, so the fast lane says the same: the SDK sends
    // a code only when it is a safe integer (-32603 otherwise) and makes -32002 a -32602.
    if (!Number.isSafeInteger(error.rpcCode)) return RpcCode.Internal;
    if (HOP_ONLY_CODES.has(error.rpcCode)) return RpcCode.UpstreamFailed;
    return error.rpcCode === SDK_REWRITES_TO_INVALID_PARAMS ? RpcCode.InvalidParams : error.rpcCode;
  }
  return RpcCode.UpstreamFailed;
}

export function describeUpstreamError(slug: string, error: UpstreamError): string {
  switch (error.code) {
    case "UPSTREAM_HTTP":
      return `server "${slug}" answered HTTP ${error.status}`;
    case "UPSTREAM_TIMEOUT":
      return `server "${slug}" timed out after ${error.timeoutMs} ms; the call was aborted`;
    case "UPSTREAM_ABORTED":
      return `the call to server "${slug}" was aborted: ${error.reason}`;
    case "UPSTREAM_UNREACHABLE":
      return `server "${slug}" could not be reached`;
    case "UPSTREAM_PROTOCOL":
      return `server "${slug}" gave an unusable answer: ${error.why}`;
    case "UPSTREAM_RPC":
      return `server "${slug}": ${error.message}`;
    case "REQUEST_UNENCODABLE":
      return `the call's arguments or answers nest too deeply to send to server "${slug}"; nothing was sent`;
  }
}
