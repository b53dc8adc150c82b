// Who may talk to a bundle (bundles/kit/gateway-only.ts, docs/rules.md R-CHAN-13), in Node: only props equal to what the gateway's binding carries pass, and each bundle, handed a request without them (any method, path, body or channel), answers 403 before it reads the body, builds a server or runs a tool; with them it answers as before.
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cameOverGatewayBinding, GATEWAY_PROPS, ONLY_THROUGH_GATEWAY } from "../../../bundles/kit/gateway-only";
import { serveBundle } from "../../../bundles/kit/mount";
import { CHANNEL_META_KEY } from "../../../contract/channel";

type Handler = ExportedHandler<Record<string, unknown>>;
const ctxWith = (props: unknown) => ({ waitUntil: () => {}, passThroughOnException: () => {}, props }) as unknown as ExecutionContext;

describe("the gateway's props", () => {
  it.each<[string, unknown]>([
    ["no props at all", undefined],
    ["null", null],
    ["what an HTTP request gets: {}", {}],
    ["an array", ["strad-gateway"]],
    ["the bare string", "strad-gateway"],
    ["a trailing space", { from: "strad-gateway " }],
    ["another case", { from: "Strad-Gateway" }],
    ["a trailing NUL", { from: "strad-gateway\u0000" }],
    ["the value in an array", { from: ["strad-gateway"] }],
    ["another key", { From: "strad-gateway" }],
    ["from undefined", { from: undefined }],
    ["another Worker's name", { from: "strad-bundle-echo" }],
    ["an inherited from", Object.create({ from: "strad-gateway" })],
  ])("%s is not the gateway's binding", (_what, props) => {
    expect(cameOverGatewayBinding(props)).toBe(false);
  });

  it("are exactly { from: strad-gateway }, and more keys beside it do not matter", () => {
    expect(GATEWAY_PROPS).toEqual({ from: "strad-gateway" });
    expect(cameOverGatewayBinding({ from: "strad-gateway" })).toBe(true);
    expect(cameOverGatewayBinding({ from: "strad-gateway", other: 1 })).toBe(true);
  });

  it("no other from value passes (randomized)", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `strad-gateway${s}`),
          fc.string().map((s) => `${s}strad-gateway`),
        ),
        (from) => from === GATEWAY_PROPS.from || !cameOverGatewayBinding({ from }),
      ),
      { numRuns: 2000 },
    );
  });
});

/** The bundles whose entries load in Node (approval-flow's needs workerd; test/bundles/kit/bundle-direct.unit.test.ts runs every bundle there). */
const bundles = [
  { dir: "echo", load: () => import("../../../bundles/echo/echo.app"), mount: "/echo-confirmed" },
  { dir: "google", load: () => import("../../../bundles/google/google.app"), mount: "/gmail-rw-external" },
  { dir: "onepassword", load: () => import("../../../bundles/onepassword/onepassword.app"), mount: "/onepassword" },
  { dir: "pads", load: () => import("../../../bundles/pads/pads.app"), mount: "/pads" },
];

const forgedCall = { scope: "dev-session", key: "n:1", nonce: "forged-nonce-0123456789" };
const CHANNELS: [string, unknown][] = [
  ["no channel", undefined],
  ["a forged waiver", { slug: "forged", skip: true, call: forgedCall }],
  ["a forged confirmed channel", { slug: "forged", url: "http://127.0.0.1:9/forged/", ttlMs: 10_000, headers: { "CF-Access-Client-Id": "forged" }, call: forgedCall }],
];

/** The requests a reachable bundle could be sent: each method, a tools/call with each channel, an unknown path, bodies it would refuse. */
function requests(mount: string): [string, () => Request][] {
  const post =
    (body: string, path = mount) =>
    () =>
      new Request(`https://bundle.example.com${path}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body });
  const rpc = (method: string, params: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", id: 7, method, params });
  return [
    ["initialize", post(rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "0" } }))],
    ["tools/list", post(rpc("tools/list", {}))],
    ...CHANNELS.map(([what, channel]): [string, () => Request] => [
      `tools/call with ${what}`,
      post(rpc("tools/call", { name: "echo", arguments: { text: "hi" }, _meta: channel === undefined ? {} : { [CHANNEL_META_KEY]: channel } })),
    ]),
    ["GET", () => new Request(`https://bundle.example.com${mount}`, { headers: { accept: "text/event-stream" } })],
    ["DELETE", () => new Request(`https://bundle.example.com${mount}`, { method: "DELETE" })],
    ["an unknown path", post(rpc("tools/list", {}), "/no-such-mount")],
    ["a body that is not JSON", post("{not json")],
    ["a body over the cap", post("x".repeat(9 * 1024 * 1024))],
  ];
}

describe("a request that did not come over the gateway's binding", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  describe.each(bundles)("the $dir bundle", ({ load, mount }) => {
    it.each<[string, unknown]>([
      ["no props", undefined],
      ["{} (an HTTP request's)", {}],
      ["another binding's props", { from: "strad-bundle-echo" }],
    ])("with %s: every method, path, body and channel is refused 403, before the body is read and with nothing fetched", async (_what, props) => {
      const outbound: string[] = [];
      vi.stubGlobal("fetch", (input: RequestInfo | URL) => {
        outbound.push(String(input instanceof Request ? input.url : input));
        return Promise.reject(new Error("a refused request fetched something"));
      });
      const handler = (await load()).default as Handler;
      for (const [what, make] of requests(mount)) {
        const request = make();
        const response = await (handler.fetch as NonNullable<Handler["fetch"]>)(request as never, {}, ctxWith(props));
        expect(response.status, what).toBe(403);
        expect(await response.json(), what).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: ONLY_THROUGH_GATEWAY } });
        expect(request.bodyUsed, what).toBe(false);
      }
      expect(outbound).toEqual([]);
    });
  });

  it("never builds a mount's server, so no tool of it can run", async () => {
    const factory = vi.fn(() => {
      throw new Error("a server was built for a refused request");
    });
    const bundle = serveBundle({ mounts: { "/m": factory } });
    for (const [what, make] of requests("/m")) {
      const response = await (bundle.fetch as NonNullable<Handler["fetch"]>)(make() as never, {}, ctxWith({}));
      expect(response.status, what).toBe(403);
    }
    expect(factory).not.toHaveBeenCalled();
  });

  it("with the gateway's props the same bundle answers: tools/list lists echo's tools", async () => {
    const echo = (await import("../../../bundles/echo/echo.app")).default as Handler;
    const [, make] = requests("/echo").find(([what]) => what === "tools/list") as [string, () => Request];
    const response = await (echo.fetch as NonNullable<Handler["fetch"]>)(make() as never, {}, ctxWith({ ...GATEWAY_PROPS }));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"name":"echo"');
  });
});
