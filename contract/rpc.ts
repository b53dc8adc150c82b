// The gateway's own JSON-RPC error codes, the same on every lane (the SDK's path and the fast lane).

export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  Unauthenticated: -32001,
  UpstreamFailed: -32002,
  UpstreamTimeout: -32003,
  Cancelled: -32004,
  InFlight: -32005,
} as const;
export type RpcCodeValue = (typeof RpcCode)[keyof typeof RpcCode];
