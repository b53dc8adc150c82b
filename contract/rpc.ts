// The gateway's JSON-RPC error codes, the same on both lanes (the SDK's path and the fast lane) and both
// revisions. Its own sit at the far end of the server-error range (-32000..-32099), clear of every code the
// SDK 2.4.0 or the spec gives a meaning: -32000 and -32001 (the SDK's transport), -32002 (resource not found,
// which the SDK rewrites to -32602 on both revisions), -32020..-32022 (2026-07-28) and -32042 (URL elicitation).

export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  /** Also an unknown tool or server, as the spec and the SDK answer them. */
  InvalidParams: -32602,
  Internal: -32603,
  /** An HTTP method /mcp does not take: the code the SDK's transports give the same refusal. */
  MethodNotAllowed: -32000,
  /** No or an unknown bearer token (HTTP 401); not -32001, the SDK's "session not found" and the v1 client's own timeout. */
  Unauthenticated: -32090,
  /** The upstream answered with an HTTP error, an unreadable answer or not at all, or a secret it needs is unseeded. */
  UpstreamFailed: -32091,
  /** The hop's timeoutMs, or the call's deadline in the CallRegistry, passed first. */
  UpstreamTimeout: -32092,
  /** The call was cancelled (notifications/cancelled, relayed through the CallRegistry) or its caller left. */
  Cancelled: -32093,
  /** A call with this request id is still live for this caller. */
  InFlight: -32094,
  /** The caller already holds the most live confirmed calls it may (MAX_LIVE_CALLS in contract/call-registry.ts). */
  TooManyCalls: -32095,
  /**
   * The mount asked the caller a question (a 2026-07-28 `input_required` result) on a call that came over a 2025-era
   * revision, which has no form for it (docs/rules.md R-FWD-9).
   */
  QuestionUnrelayable: -32096,
} as const;
export type RpcCodeValue = (typeof RpcCode)[keyof typeof RpcCode];

/**
 * A JSON-RPC error the gateway answers a call with. The SDK's server sends a handler's thrown error as its code (a
 * safe integer) and message, whatever its class, and the fast lane sends the same; the gateway's own class keeps the
 * SDK's modules out of the hot path, which never loads them (contract/sdk.ts).
 */
export class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
    this.name = "RpcError";
  }
}
