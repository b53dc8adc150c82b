import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import { GATEWAY_INFO } from "../../../worker/mcp";

// What the gateway's tests in Node share: an execution context whose waitUntil work can be awaited, and a stand-in
// service binding that hands each request to a Worker-style handler.

export type Ctx = ExecutionContext & { settle: () => Promise<void> };

export function executionContext(): Ctx {
  const pending: Promise<unknown>[] = [];
  return {
    waitUntil: (p: Promise<unknown>) => pending.push(p),
    passThroughOnException: () => {},
    // What the gateway's [[services]] bindings hand a bundle: a bundle serves only a request carrying them (R-CHAN-13).
    props: { ...GATEWAY_PROPS },
    settle: async () => {
      await Promise.allSettled(pending);
    },
  } as unknown as Ctx;
}

const held = new Set<Request>();
/**
 * A stand-in service binding. The Request is held until its answer settles: undici links a Request's signal to the
 * caller's through a weak reference that only the Request itself keeps alive, so a Request the garbage collector took
 * mid-call would never see its caller abort, and a handler waiting for that would hang (it did, at random, under load).
 */
export const binding = (handler: (request: Request) => Promise<Response>) => ({
  fetch: (url: string, init: RequestInit) => {
    const request = new Request(url, init);
    held.add(request);
    return handler(request).finally(() => held.delete(request));
  },
});

/** The one caller these tests authenticate as, and the roster around the servers a test mounts. */
export const ALICE_TOKEN = "alice-token-0123456789abcdef";
/** An allowed approval prefix on a closed loopback port: nothing a test does can leave the machine. */
export const LOOPBACK_PREFIX = "http://127.0.0.1:9/s/";

export function aliceRoster(servers: readonly string[]): string {
  return `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
gateway:
  elicitation:
    allowedUrlPrefixes: [ "${LOOPBACK_PREFIX}" ]
servers:
${servers.map((s) => `  - ${s}\n`).join("")}`;
}

/**
 * How many of the servers a spy on Server.prototype.connect saw are the gateway's own (the SDK builds one per request
 * it serves; a bundle run in the same process builds its own, which are not counted).
 */
export function gatewayServersIn(connect: { mock: { contexts: unknown[] } }): number {
  return connect.mock.contexts.filter((server) => (server as { _serverInfo?: { name?: string } })._serverInfo?.name === GATEWAY_INFO.name).length;
}

/**
 * An upstream that never answers until its request is aborted, as fetch() behaves: a signal already aborted when the
 * call is made rejects at once (an "abort" listener added then would never fire, and the call would hang).
 */
export function untilAborted(signal: AbortSignal): Promise<Response> {
  return new Promise<Response>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
