// R-FWD-10: a call whose arguments nest deeper than the gateway can serialise (JSON.parse took them, JSON.stringify
// runs out of stack) is the caller's to fix: refused as invalid params, naming why, with nothing sent to the mount,
// never reported as the mount being unreachable. Here the gateway's app in Node in front of a recording binding;
// test/worker/oversized-bodies.workerd.test.ts holds the same on workerd, whose stack goes deeper.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RpcCode } from "../../contract/rpc";
import { createGateway } from "../../worker/gateway";
import type { GatewayEnv } from "../../worker/mcp";
import { encodeCall } from "../../worker/upstream";
import { ALICE_TOKEN, binding, executionContext } from "./helpers/gateway";
import { messageOf } from "./helpers/message";

const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: mail, kind: bundle, bundle: MAIL, path: /mail, entitlements: [user] }
`;

let received: string[] = [];
/** When set, the mount answers a result holding a value 400,000 levels deep: valid JSON Node cannot stringify again. */
let deepAnswer = false;
const MAIL = binding(async (request) => {
  received.push(await request.text());
  if (deepAnswer) {
    const deep = `${"[".repeat(400_000)}${"]".repeat(400_000)}`;
    return new Response(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}],"structuredContent":{"deep":${deep}}}}`, { headers: { "content-type": "application/json" } });
  }
  return Response.json({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "done" }] } });
});
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "deep-test", version: "0" },
};

/** `{"a":[[[...]]]}` with `depth` arrays: valid JSON, `depth` + 1 levels deep. */
const nested = (depth: number) => `{"a":${"[".repeat(depth)}${"]".repeat(depth)}}`;

/** The first depth at which this engine's JSON.stringify runs out of stack, by bisection (bounded: 2^20 levels). */
function stringifyLimit(): number {
  let fits = 1;
  let fails = 1 << 20;
  while (fails - fits > 1) {
    const mid = Math.floor((fits + fails) / 2);
    if (encodeCall(1, "tools/call", { arguments: JSON.parse(nested(mid)) }) === undefined) fails = mid;
    else fits = mid;
  }
  return fails;
}

async function call(revision: string, args: string): Promise<{ status: number; message: Record<string, unknown>; logs: string[] }> {
  const modern = revision === "2026-07-28";
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send","arguments":${args}${modern ? `,"_meta":${JSON.stringify(META)}` : ""}}}`;
  const request = new Request("https://gateway.test/mcp?servers=mail", {
    method: "POST",
    headers: {
      authorization: `Bearer ${ALICE_TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": revision,
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": "send" } : {}),
    },
    body,
  });
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  log.mockClear();
  const ctx = executionContext();
  const response = await (createGateway(ROSTER).fetch as NonNullable<ExportedHandler<GatewayEnv>["fetch"]>)(request as never, { TOKEN_ALICE: ALICE_TOKEN, MAIL, CALLS: {} } as never, ctx);
  const text = await response.text();
  await ctx.settle();
  const logs = log.mock.calls.map((c) => String(c[0]));
  return { status: response.status, message: messageOf(text), logs };
}

beforeEach(() => {
  received = [];
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("R-FWD-10: arguments nested past what the gateway can serialise", () => {
  const limit = stringifyLimit();

  for (const revision of ["2025-11-25", "2026-07-28"]) {
    it(`${revision}: 64 levels under the engine's limit is forwarded whole; 64 levels past it, and far past it, the call is refused -32602 naming why, and nothing is sent`, async () => {
      // The envelope around the arguments (params, the gateway's _meta) adds levels of its own: the call at the
      // limit's edge is found from the arguments' side, so both sides of it are probed whatever the envelope's depth.
      let edge = limit;
      while (encodeCall(1, "tools/call", { params: { arguments: JSON.parse(nested(edge)) } }) === undefined) edge--;
      const under = await call(revision, nested(edge - 64));
      expect(under.message.error, JSON.stringify(under.message).slice(0, 200)).toBeUndefined();
      expect(received).toHaveLength(1);
      expect(received[0]).toContain(nested(edge - 64));

      for (const depth of [edge + 64, 400_000]) {
        received = [];
        const { status, message, logs } = await call(revision, nested(depth));
        expect(status).toBe(200);
        expect(message.error).toEqual({ code: RpcCode.InvalidParams, message: `the call's arguments or answers nest too deeply to send to server "mail"; nothing was sent` });
        expect(received).toEqual([]);
        const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === "mcp_request");
        expect(line?.outcome).toBe("request_unencodable");
      }
    });
  }

  it("a mount's answer nested past what this engine can serialise ends the call -32603 on the fast lane, logged internal_error, never ok", async () => {
    deepAnswer = true;
    try {
      const { status, message, logs } = await call("2026-07-28", '{"a":1}');
      expect(status).toBe(200);
      expect(message.error).toEqual({ code: RpcCode.Internal, message: "internal error" });
      const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === "mcp_request");
      expect(line?.outcome).toBe("internal_error");
    } finally {
      deepAnswer = false;
    }
  });

  it("encodeCall refuses only the stack's RangeError: any other failure of serialisation is not hidden as the caller's", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeCall(1, "tools/call", cyclic)).toThrow(TypeError);
    expect(() => encodeCall(1, "tools/call", { n: 1n })).toThrow(TypeError);
    expect(encodeCall(1, "tools/call", { a: 1 })).toBe('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":1}}');
  });
});
