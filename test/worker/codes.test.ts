// Covers the JSON-RPC codes the gateway's app answers on the wire: each failure gets the code contract/rpc.ts names, the same on the fast lane and on both revisions of the SDK's path.
import { Server } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { RpcCode } from "../../contract/rpc";
import { createGateway } from "../../worker/gateway";
import { binding, executionContext, gatewayServersIn, untilAborted } from "./helpers/gateway";

const TOKEN = "alice-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: broken, kind: bundle, bundle: BROKEN, path: /broken, entitlements: [user] }
  - { slug: slow, kind: bundle, bundle: SLOW, path: /slow, entitlements: [user], timeoutMs: 1000 }
  - { slug: relay, kind: bundle, bundle: RELAY, path: /relay, entitlements: [user] }
  - { slug: held, kind: bundle, bundle: SLOW, path: /held, entitlements: [user], skipConfirmations: true }
`;

const ECHO = binding((request) => Promise.resolve((echo.fetch as NonNullable<typeof echo.fetch>)(request as never, {}, executionContext())));
const BROKEN = binding(async () => new Response("broken-secret-body", { status: 502 }));
/** Never answers until its request is aborted. */
const SLOW = binding((request) => untilAborted(request.signal));
/** Answers every call with the JSON-RPC error code named by the tool, as an upstream of its own would. */
const RELAY = binding(async (request) => {
  const body = (await request.json()) as { id: number; params: { name: string } };
  return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: Number(body.params.name.replace("code_", "")), message: "the upstream's own error" } });
});

/** A call registry whose watch stream says `live`, then `word` after a moment; or refuses the call as in flight or as one too many. */
function registry(script: { word: "cancelled" | "deadline" } | "in-flight" | "too-many") {
  const encoder = new TextEncoder();
  return {
    idFromName: (name: string) => name,
    get: () => ({
      fetch: async () => {
        if (script === "in-flight") return new Response("in flight", { status: 409 });
        if (script === "too-many") return new Response("too many live calls", { status: 429 });
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode("live\n"));
            setTimeout(() => {
              controller.enqueue(encoder.encode(`${script.word}\n`));
              controller.close();
            }, 50);
          },
        });
        return new Response(stream);
      },
      end: async () => {},
      cancel: async () => true,
      claim: async () => false,
    }),
  };
}
/** Nothing on an ungated mount may touch the call registry. */
const UNTOUCHED = new Proxy(
  {},
  {
    get() {
      throw new Error("the call registry was touched");
    },
  },
);

function env(calls: unknown = UNTOUCHED, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { TOKEN_ALICE: TOKEN, ECHO, BROKEN, SLOW, RELAY, CALLS: calls, ...extra };
}

/**
 * The four ways a tools/call reaches the gateway: the fast lane on either revision (JSON accepted, no progress asked
 * for), and the SDK's leg of either revision (the same request asking for progress, which the fast lane leaves to
 * the SDK; on 2026-07-28 inside the per-request envelope).
 */
type Lane = "fast lane 2025-11-25" | "SDK 2025-11-25" | "fast lane 2026-07-28" | "SDK 2026-07-28";
const LANES: Lane[] = ["fast lane 2025-11-25", "SDK 2025-11-25", "fast lane 2026-07-28", "SDK 2026-07-28"];
const SDK_LANES: Lane[] = ["SDK 2025-11-25", "SDK 2026-07-28"];

function toolCall(lane: Lane, servers: string, name: string, signal?: AbortSignal): Request {
  const modern = lane.endsWith("2026-07-28");
  const progress = lane.startsWith("SDK") ? { progressToken: "p-1" } : {};
  const meta = modern
    ? {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "codes-test", version: "0" },
        ...progress,
      }
    : lane === "SDK 2025-11-25"
      ? progress
      : undefined;
  return new Request(`https://gateway.test/mcp?servers=${servers}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": modern ? "2026-07-28" : "2025-11-25",
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) } }),
    ...(signal === undefined ? {} : { signal }),
  });
}

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** Who answered (the SDK builds a server for each request it serves; the fast lane builds none) and the code it gave. */
async function codeOn(lane: Lane, servers: string, name: string, e: Record<string, unknown> = env(), signal?: AbortSignal): Promise<{ by: string; code: number | undefined }> {
  const ctx = executionContext();
  const gateway = createGateway(ROSTER);
  const servedBefore = gatewayServers();
  const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(toolCall(lane, servers, name, signal) as never, e as never, ctx);
  const text = await response.text();
  await ctx.settle();
  const frame = text.split("\n").find((l) => l.startsWith("data:") && l.includes('"id":7'));
  const message = JSON.parse((text.startsWith("{") ? text : frame?.slice(5)) ?? "null") as Message;
  expect(message.id).toBe(7);
  return { by: gatewayServers() > servedBefore ? "SDK" : "fast lane", code: message.error?.code };
}

/** One lane after the other, so that each answer's server count is its own. */
async function codesOn(lanes: Lane[], servers: string, name: string, e?: () => Record<string, unknown>) {
  const codes: { by: string; code: number | undefined }[] = [];
  for (const lane of lanes) codes.push(await codeOn(lane, servers, name, e?.()));
  return codes;
}

const expected = (lanes: Lane[], code: number) => lanes.map((lane) => ({ by: lane.startsWith("fast lane") ? "fast lane" : "SDK", code }));

let sdkServers: { mock: { contexts: unknown[] } };
const gatewayServers = () => gatewayServersIn(sdkServers);

beforeEach(() => {
  sdkServers = vi.spyOn(Server.prototype, "connect");
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("the gateway's own error codes on the wire", () => {
  it("are none the SDK or the spec gives a meaning of their own, and none repeats", () => {
    const own = [RpcCode.Unauthenticated, RpcCode.UpstreamFailed, RpcCode.UpstreamTimeout, RpcCode.Cancelled, RpcCode.InFlight, RpcCode.TooManyCalls, RpcCode.QuestionUnrelayable];
    const taken = [-32000, -32001, -32002, -32020, -32021, -32022, -32042];
    expect(own.filter((code) => taken.includes(code))).toEqual([]);
    expect(own.every((code) => code <= -32000 && code >= -32099)).toBe(true);
    expect(new Set(own).size).toBe(own.length);
  });

  it("upstream failed: a mount answering HTTP 502 is UpstreamFailed on every lane", async () => {
    expect(await codesOn(LANES, "broken", "anything")).toEqual(expected(LANES, RpcCode.UpstreamFailed));
  });

  // Three lanes one after another, each waiting out the mount's 1 s timeoutMs (the roster's minimum): 5 s is too
  // tight on a loaded two-core machine.
  it("timeout: a mount silent past its timeoutMs is UpstreamTimeout on every lane", async () => {
    expect(await codesOn(LANES, "slow", "anything")).toEqual(expected(LANES, RpcCode.UpstreamTimeout));
  }, 20_000);

  it("timeout: a confirmed call whose deadline passes in the call registry is UpstreamTimeout on both revisions", async () => {
    expect(await codesOn(SDK_LANES, "held", "anything", () => env(registry({ word: "deadline" })))).toEqual(expected(SDK_LANES, RpcCode.UpstreamTimeout));
  });

  it.each(["fast lane 2025-11-25", "fast lane 2026-07-28"] as const)("cancelled: a call whose caller leaves is Cancelled on the %s", async (lane) => {
    const leave = new AbortController();
    setTimeout(() => leave.abort(), 50);
    expect(await codeOn(lane, "slow", "anything", env(), leave.signal)).toEqual({ by: "fast lane", code: RpcCode.Cancelled });
    // A drop the gateway missed would answer UpstreamTimeout at the mount's 1 s, failing the assertion above.
  });

  it("cancelled: a call whose caller is gone before it is read is Cancelled on every lane, and no mount is reached", async () => {
    let reached = 0;
    const COUNTED = binding(async (request) => {
      reached++;
      return untilAborted(request.signal);
    });
    const codes: { by: string; code: number | undefined }[] = [];
    for (const lane of LANES) {
      const gone = new AbortController();
      gone.abort();
      codes.push(await codeOn(lane, "slow", "anything", env(UNTOUCHED, { SLOW: COUNTED }), gone.signal));
    }
    // Every lane answers it before the SDK builds a server: the gateway's own word.
    expect(codes).toEqual(LANES.map(() => ({ by: "fast lane", code: RpcCode.Cancelled })));
    expect(reached).toBe(0);
  });

  it("cancelled: a confirmed call cancelled through the call registry is Cancelled on both revisions", async () => {
    expect(await codesOn(SDK_LANES, "held", "anything", () => env(registry({ word: "cancelled" })))).toEqual(expected(SDK_LANES, RpcCode.Cancelled));
  });

  it("too many calls: a confirmed call past the caller's cap of live calls is TooManyCalls on both revisions, not InFlight", async () => {
    expect(await codesOn(SDK_LANES, "held", "anything", () => env(registry("too-many")))).toEqual(expected(SDK_LANES, RpcCode.TooManyCalls));
  });

  it("in flight: a confirmed call whose request id is still live is InFlight on both revisions", async () => {
    expect(await codesOn(SDK_LANES, "held", "anything", () => env(registry("in-flight")))).toEqual(expected(SDK_LANES, RpcCode.InFlight));
  });

  it("unknown tool: InvalidParams whichever way it is asked (the fast lane leaves a tool it cannot route to the SDK)", async () => {
    // Two mounts prefix their tools, so an unprefixed name routes nowhere: the gateway's own refusal.
    expect(await codesOn(LANES, "echo,broken", "no_such_tool")).toEqual(LANES.map(() => ({ by: "SDK", code: RpcCode.InvalidParams })));
    // One mount takes every name: the mount's own refusal, relayed.
    expect(await codesOn(LANES, "echo", "no_such_tool")).toEqual(expected(LANES, RpcCode.InvalidParams));
  });

  it("an upstream's own code is relayed the same on every lane, and a -32002 as the -32602 the SDK makes of it", async () => {
    expect(await codesOn(LANES, "relay", "code_-32011")).toEqual(expected(LANES, -32011));
    expect(await codesOn(LANES, "relay", "code_-32002")).toEqual(expected(LANES, RpcCode.InvalidParams));
  });
});

describe("the app's own early errors", () => {
  it("answer an unknown bearer token with Unauthenticated, and a method /mcp does not take with MethodNotAllowed", async () => {
    const gateway = createGateway(ROSTER);
    const serve = (request: Request) => (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env() as never, executionContext());
    const headers = { authorization: "Bearer nobody-0123456789abcdef", "content-type": "application/json" };
    const unknown = await serve(new Request("https://gateway.test/mcp?servers=echo", { method: "POST", headers, body: "{}" }));
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: { code: RpcCode.Unauthenticated } });
    const get = await serve(new Request("https://gateway.test/mcp"));
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: { code: RpcCode.MethodNotAllowed } });
  });
});
