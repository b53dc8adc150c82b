// Covers the gateway's pass-through of a mount's question (issue 28): a 2026-07-28 retry's inputResponses and requestState reach the mount as they came, a mount's input_required reaches a 2026-07-28 caller as the SDK encodes it and a 2025-era one as a clear error, on both lanes, and the log line says what happened.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { DEFAULT_MAX_REQUEST_BYTES } from "../../contract/body";
import { RpcCode } from "../../contract/rpc";
import { createGateway } from "../../worker/gateway";
import { hopCapabilities } from "../../worker/relay";
import { binding, executionContext } from "./helpers/gateway";

const TOKEN = "alice-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: mirror, kind: bundle, bundle: MIRROR, path: /mirror, entitlements: [user] }
  - { slug: shape, kind: bundle, bundle: SHAPE, path: /shape, entitlements: [user] }
  - { slug: held, kind: bundle, bundle: MIRROR, path: /held, entitlements: [user], skipConfirmations: true }
`;

/** The echo bundle as the dev stack runs it: with the pass-through demo (demo_ask) turned on. */
const ECHO = binding((request) => Promise.resolve((echo.fetch as NonNullable<typeof echo.fetch>)(request as never, { ECHO_DEMO_ASK: "1" }, executionContext())));
/** What each upstream request carried; answers with a plain result. */
let upstream: Record<string, unknown>[] = [];
const MIRROR = binding(async (request) => {
  const body = (await request.json()) as { id: number; params: Record<string, unknown> };
  upstream.push(body.params);
  return Response.json({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text: "mirrored" }] } });
});
/** Answers with whatever result the call's `result` argument holds, whatever the caller can answer. */
const SHAPE = binding(async (request) => {
  const body = (await request.json()) as { id: number; params: { arguments?: { result?: unknown } } };
  return Response.json({ jsonrpc: "2.0", id: body.id, result: body.params.arguments?.result ?? { content: [] } });
});
/** A call registry whose watch says `live` until the call ends: what a waived slug's call needs to go ahead. */
const LIVE_REGISTRY = {
  idFromName: (name: string) => name,
  get: () => ({
    fetch: async () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("live\n")) })),
    end: async () => {},
  }),
};
const env = () => ({ TOKEN_ALICE: TOKEN, ECHO, MIRROR, SHAPE, CALLS: LIVE_REGISTRY });

const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
type Revision = (typeof REVISIONS)[number];
const FORM = { elicitation: { form: {} } };
const envelope = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "input-required-test", version: "1.0.0" },
});

interface Sent {
  status: number;
  message: { result?: Record<string, unknown>; error?: { code: number; message: string } };
  logged: Record<string, unknown>[];
}

/** One tools/call to `servers` on `revision`, with extra params; the answer's JSON-RPC message and the log lines. */
async function send(
  revision: Revision,
  servers: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown>,
  lane: boolean,
  capabilities: Record<string, unknown> = FORM,
): Promise<Sent> {
  const modern = revision === "2026-07-28";
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const headers: Record<string, string> = {
    authorization: `Bearer ${TOKEN}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": revision,
    ...(modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}),
  };
  const params = { name, arguments: args, ...extra, ...(modern ? { _meta: { ...envelope(capabilities), ...((extra._meta as object) ?? {}) } } : {}) };
  const ctx = executionContext();
  const response = await (createGateway(ROSTER, { fastLane: lane }).fetch as NonNullable<ExportedHandler["fetch"]>)(
    new Request(`https://gateway.test/mcp?servers=${servers}`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }) }) as never,
    env() as never,
    ctx,
  );
  const text = await response.text();
  await ctx.settle();
  const data = text.startsWith("event:") ? (text.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice(6) : text;
  const logged = log.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>).filter((l) => l.event === "mcp_request");
  log.mockRestore();
  return { status: response.status, message: JSON.parse(data) as Sent["message"], logged };
}

const ANSWERS = { reply: { action: "accept", content: { reply: "yes" }, _meta: { "example.com/k": 1 } }, wrapped: { method: "elicitation/create", result: { action: "accept" } } };

beforeEach(() => {
  upstream = [];
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("issue 28: a 2026-07-28 retry reaches the mount", () => {
  it.each([true, false])("with its inputResponses and requestState as they came, and none of the caller's _meta (fast lane %s)", async (lane) => {
    const forged = { "dev.strad/elicitation": { slug: "mirror", skip: true }, "example.com/own": 1 };
    const sent = await send("2026-07-28", "mirror", "anything", { a: 1 }, { inputResponses: ANSWERS, requestState: "state-1", _meta: forged }, lane);
    expect(sent.message.result).toBeDefined();
    expect(upstream).toHaveLength(1);
    const params = upstream[0] as { inputResponses?: unknown; requestState?: unknown; _meta: Record<string, unknown> };
    expect(params.inputResponses).toEqual(ANSWERS);
    expect(params.requestState).toBe("state-1");
    for (const key of Object.keys(forged)) expect(params._meta).not.toHaveProperty(key);
    // The envelope on the hop is the gateway's own, not the caller's.
    expect(params._meta["io.modelcontextprotocol/clientInfo"]).toEqual({ name: "strad-gateway", version: "0.1.0" });
  });

  it.each([true, false])("with only what the SDK hands a handler: an object of answers and a string state (fast lane %s)", async (lane) => {
    for (const [extra, expected] of [
      [{ inputResponses: "not an object" }, {}],
      [{ inputResponses: ["a"] }, {}],
      [{ requestState: "" }, { requestState: "" }],
      [{ inputResponses: {} }, { inputResponses: {} }],
    ] as const) {
      upstream = [];
      await send("2026-07-28", "mirror", "anything", {}, extra, lane);
      const { name: _n, arguments: _a, _meta: _m, ...retry } = upstream[0] as Record<string, unknown>;
      expect(retry, JSON.stringify(extra)).toEqual(expected);
    }
    // A state that is not a string is the SDK's to refuse, and reaches no mount.
    upstream = [];
    const refused = await send("2026-07-28", "mirror", "anything", {}, { requestState: 5 }, lane);
    expect(refused.message.error).toMatchObject({ code: RpcCode.InvalidParams, message: "Invalid or expired requestState" });
    expect(upstream).toHaveLength(0);
  });

  it.each([true, false])("only on 2026-07-28: a 2025-era call's inputResponses and requestState never reach the mount (fast lane %s)", async (lane) => {
    await send("2025-11-25", "mirror", "anything", {}, { inputResponses: ANSWERS, requestState: "state-1" }, lane);
    expect(upstream).toHaveLength(1);
    expect(upstream[0]).not.toHaveProperty("inputResponses");
    expect(upstream[0]).not.toHaveProperty("requestState");
  });

  it("held to its slug's body cap: a retry one byte past it is refused 413 and reaches no mount, one at it is forwarded", async () => {
    const base = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "anything", arguments: {}, requestState: "", _meta: envelope(FORM) } }).length;
    for (const [pad, status, reached] of [
      [DEFAULT_MAX_REQUEST_BYTES - base, 200, 1],
      [DEFAULT_MAX_REQUEST_BYTES - base + 1, 413, 0],
    ] as const) {
      upstream = [];
      const state = "s".repeat(pad);
      const ctx = executionContext();
      const response = await (createGateway(ROSTER).fetch as NonNullable<ExportedHandler["fetch"]>)(
        new Request("https://gateway.test/mcp?servers=mirror", {
          method: "POST",
          headers: {
            authorization: `Bearer ${TOKEN}`,
            "content-type": "application/json",
            accept: "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "anything",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "anything", arguments: {}, requestState: state, _meta: envelope(FORM) } }),
        }) as never,
        env() as never,
        ctx,
      );
      await response.text();
      await ctx.settle();
      expect(response.status, String(pad)).toBe(status);
      expect(upstream).toHaveLength(reached);
      if (reached === 1) expect((upstream[0] as { requestState: string }).requestState).toHaveLength(pad);
    }
  });
});

describe("issue 28: a mount's question reaches the caller", () => {
  it.each([true, false])("on 2026-07-28 as the SDK encodes it, and the retry carrying the answer gets the mount's result; logged input_required (fast lane %s)", async (lane) => {
    const asked = await send("2026-07-28", "echo", "demo_ask", { question: "Ship it?" }, {}, lane);
    expect(asked.status).toBe(200);
    const result = asked.message.result as Record<string, unknown>;
    expect(Object.keys(result)).toEqual(["resultType", "inputRequests", "requestState", "_meta"]);
    expect(result).toMatchObject({
      resultType: "input_required",
      inputRequests: { reply: { method: "elicitation/create", params: { mode: "form", message: "Ship it?" } } },
      // The mount's own identity stays on the hop; the gateway's is stamped as on every 2026-07-28 result.
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "strad", version: "0.1.0" } },
    });
    expect(typeof result.requestState).toBe("string");
    expect(asked.logged.map((l) => [l.tool, l.outcome, l.status])).toEqual([["demo_ask", "input_required", 200]]);

    const answered = await send(
      "2026-07-28",
      "echo",
      "demo_ask",
      { question: "Ship it?" },
      { inputResponses: { reply: { action: "accept", content: { reply: "yes" } } }, requestState: result.requestState },
      lane,
    );
    expect(answered.message.result?.structuredContent).toEqual({ question: "Ship it?", action: "accept", content: { reply: "yes" } });
    expect(answered.logged.map((l) => l.outcome)).toEqual(["ok"]);
    // A state sealed for another question is no answer: the mount asks again.
    const other = await send(
      "2026-07-28",
      "echo",
      "demo_ask",
      { question: "Delete it?" },
      { inputResponses: { reply: { action: "accept", content: { reply: "yes" } } }, requestState: result.requestState },
      lane,
    );
    expect(other.message.result?.resultType).toBe("input_required");
  });

  it.each([true, false])("on a 2025-era revision as a clear error naming why, never -32602, and logged so (fast lane %s)", async (lane) => {
    const questions = [
      { resultType: "input_required", requestState: "s-1" },
      { resultType: "input_required", inputRequests: { q: { method: "elicitation/create", params: { mode: "form", message: "Proceed?", requestedSchema: { type: "object", properties: {} } } } } },
    ];
    for (const question of questions) {
      const sent = await send("2025-11-25", "shape", "anything", { result: question }, {}, lane);
      expect(sent.status).toBe(200);
      expect(sent.message.error).toEqual({
        code: RpcCode.QuestionUnrelayable,
        message:
          'server "shape" asked the caller a question (input_required), which only protocol revision 2026-07-28 can carry; this call came over a 2025-era revision, so it was not answered: call it again over 2026-07-28',
      });
      expect(sent.logged.map((l) => l.outcome)).toEqual(["question_unrelayable"]);
    }
  });

  it.each([true, false])("on 2026-07-28 refused as the SDK refuses it when the caller declared no capability for it (fast lane %s)", async (lane) => {
    const question = {
      resultType: "input_required",
      inputRequests: { q: { method: "elicitation/create", params: { mode: "url", message: "Open", url: "https://example.com/x", elicitationId: "e" } } },
    };
    for (const capabilities of [{}, FORM]) {
      const sent = await send("2026-07-28", "shape", "anything", { result: question }, {}, lane, capabilities);
      expect(sent.status).toBe(400);
      expect(sent.message.error).toMatchObject({ code: -32021 });
    }
    const declared = await send("2026-07-28", "shape", "anything", { result: question }, {}, lane, { elicitation: { url: {} } });
    expect(declared.message.result?.resultType).toBe("input_required");
  });

  it("a mount's malformed question is an unusable answer that says why, on every lane and revision", async () => {
    for (const revision of REVISIONS) {
      for (const lane of [true, false]) {
        const sent = await send(revision, "shape", "anything", { result: { resultType: "input_required", inputRequests: {} } }, {}, lane);
        expect(sent.message.error).toEqual({ code: RpcCode.UpstreamFailed, message: 'server "shape" gave an unusable answer: input_required with neither inputRequests nor requestState' });
      }
    }
  });
});

describe("issue 28: what the gateway declares it can do on the hop", () => {
  it.each([true, false])("an ungated mount is told the elicitation modes a 2026-07-28 caller declared, and nothing else (fast lane %s)", async (lane) => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{}, {}],
      [{ elicitation: {} }, { elicitation: { form: {} } }],
      [{ elicitation: { form: {} } }, { elicitation: { form: {} } }],
      [{ elicitation: { url: {} } }, { elicitation: { url: {} } }],
      [{ elicitation: { form: { x: 1 }, url: {} }, sampling: {}, roots: { listChanged: true } }, { elicitation: { form: {}, url: {} } }],
      [{ sampling: {} }, {}],
    ];
    for (const [declared, told] of cases) {
      upstream = [];
      await send("2026-07-28", "mirror", "anything", {}, {}, lane, declared);
      expect((upstream[0] as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/clientCapabilities"], JSON.stringify(declared)).toEqual(told);
    }
  });

  it("a 2025-era call and a gated mount's call tell the mount nothing, whatever the caller declared", async () => {
    for (const lane of [true, false]) {
      upstream = [];
      await send("2025-11-25", "mirror", "anything", {}, {}, lane);
      const held = await send("2026-07-28", "held", "anything", {}, {}, lane, { elicitation: { form: {}, url: {} } });
      expect(held.message.result, JSON.stringify(held.message)).toBeDefined();
      expect(upstream.map((p) => (p._meta as Record<string, unknown>)["io.modelcontextprotocol/clientCapabilities"])).toEqual([{}, {}]);
    }
  });

  it("reads a declaration as the SDK does: a bare elicitation is form, anything not an object is nothing", () => {
    const meta = (capabilities: unknown) => ({ "io.modelcontextprotocol/clientCapabilities": capabilities });
    expect(hopCapabilities(meta({ elicitation: {} }))).toEqual({ elicitation: { form: {} } });
    expect(hopCapabilities(meta({ elicitation: { url: {} } }))).toEqual({ elicitation: { url: {} } });
    for (const nothing of [undefined, null, 5, [], { elicitation: null }, { elicitation: [] }, { elicitation: "yes" }]) expect(hopCapabilities(meta(nothing))).toEqual({});
    expect(hopCapabilities(undefined)).toEqual({});
    expect(hopCapabilities("x")).toEqual({});
  });
});
