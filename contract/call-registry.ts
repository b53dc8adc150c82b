// The CallRegistry Durable Object as both sides see it: the gateway registers and watches a confirmed call,
// and cancels or ends it; a bundle's send gate claims it. The class lives in durable-objects/; callers hold
// only this interface.

/** What the RPC methods promise. `watch` is a fetch to WATCH_PATH (a stream of WatchWord lines). */
export interface CallRegistryApi {
  /** The send gate's single permission: true once per call, and only while the call is live. */
  claim(key: string, nonce: string): Promise<boolean>;
  /** The gateway is done with the call (answered, caller left, timed out). */
  end(key: string, nonce: string): Promise<void>;
  /** notifications/cancelled from the same caller, on whichever isolate it landed. */
  cancel(key: string): Promise<boolean>;
  /** Local-development introspection. */
  stats(): Promise<{ served: number; live: number }>;
}

export type CallRegistryStub = DurableObjectStub<CallRegistryApi & Rpc.DurableObjectBranded>;
export type CallRegistryNamespace = DurableObjectNamespace<CallRegistryApi & Rpc.DurableObjectBranded>;

export const WATCH_PATH = "/watch";
/** The watch stream's lines: "live" first, then at most one of the others. */
export type WatchWord = "live" | "cancelled" | "deadline";
export interface WatchRequest {
  key: string;
  nonce: string;
  deadline: number;
}

/** A caller's request id as a record key: a number and a string that read alike are different calls. */
export function requestKey(id: string | number): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}
