// Holds the fast lane to the SDK's path: the same request, sent to a gateway with the lane and to one without it,
// gets the same status, content type and body, byte for byte, on both revisions, for valid requests and for every
// way a request can be malformed; and the lane does take the calls it exists for.
import { Server } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { createGateway } from "../../worker/gateway";
import { binding, executionContext, gatewayServersIn } from "./helpers/gateway";

const TOKEN = "alice-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: shape, kind: bundle, bundle: SHAPE, path: /shape, entitlements: [user] }
  - { slug: broken, kind: bundle, bundle: BROKEN, path: /broken, entitlements: [user] }
  - { slug: relay, kind: bundle, bundle: RELAY, path: /relay, entitlements: [user] }
  - { slug: held, kind: bundle, bundle: SHAPE, path: /held, entitlements: [user], skipConfirmations: true }
  - { slug: raw, kind: bundle, bundle: RAW, path: /raw, entitlements: [user] }
  - { slug: mirror, kind: bundle, bundle: MIRROR, path: /mirror, entitlements: [user] }
`;

const ECHO = binding((request) => Promise.resolve((echo.fetch as NonNullable<typeof echo.fetch>)(request as never, {}, executionContext())));
/** Answers with whatever result the call's `result` argument holds, as an upstream with results of every shape would. */
let shapeCalls = 0;
const SHAPE = binding(async (request) => {
  shapeCalls++;
  const body = (await request.json()) as { id: number; params: { arguments?: { result?: unknown } } };
  return Response.json({ jsonrpc: "2.0", id: body.id, result: body.params.arguments?.result ?? { content: [] } });
});
/** Answers with the result text its `raw` argument holds, as written: a result JSON.stringify cannot make. */
const RAW = binding(async (request) => {
  const body = (await request.json()) as { id: number; params: { arguments?: { raw?: string } } };
  return new Response(`{"jsonrpc":"2.0","id":${body.id},"result":${body.params.arguments?.raw ?? "{}"}}`, { headers: { "content-type": "application/json" } });
});
/** What each upstream request carried, for the tests that compare what reaches upstream too. */
let upstreamBodies: string[] = [];
/** Answers with the arguments it received, as text. */
const MIRROR = binding(async (request) => {
  const text = await request.text();
  upstreamBodies.push(text);
  const body = JSON.parse(text) as { id: number };
  return Response.json({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text }] } });
});
const BROKEN = binding(async () => new Response("broken-secret-body", { status: 502 }));
const RELAY = binding(async (request) => {
  const body = (await request.json()) as { id: number; params: { arguments?: { code?: number } } };
  return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: body.params.arguments?.code ?? -32011, message: "the upstream's own error" } });
});
const env = () => ({ TOKEN_ALICE: TOKEN, ECHO, SHAPE, RAW, MIRROR, BROKEN, RELAY, CALLS: {} });

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "fast-lane-test", version: "1.0.0" },
};

interface Case {
  servers: string;
  headers: Record<string, string | undefined>;
  body: Record<string, unknown>;
  /** The body as sent, when it holds what JSON.stringify cannot write (an own __proto__ member). */
  raw?: string;
}

/** A valid tools/call on `revision`, as a conforming client sends it. */
function call(revision: "2025-11-25" | "2026-07-28", servers: string, name: string, args: Record<string, unknown> | undefined): Case {
  const modern = revision === "2026-07-28";
  return {
    servers,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": revision,
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}),
    },
    body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, ...(args === undefined ? {} : { arguments: args }), ...(modern ? { _meta: { ...ENVELOPE } } : {}) } },
  };
}

type Answer = { status: number; type: string | null; body: string; servers: number };

/**
 * The JSON-RPC message an answer carries. The SDK's 2025-era leg streams a call's answer as one SSE event where the
 * lane answers the same message as a JSON body (Streamable HTTP lets a server do either), so on that revision the
 * message is compared, byte for byte; on 2026-07-28 both answer JSON, and the whole body and its type are compared.
 */
function messageOf(answer: Answer): string {
  if (!(answer.type ?? "").startsWith("text/event-stream")) return answer.body;
  const data = answer.body.split("\n").filter((line) => line.startsWith("data: "));
  expect(data).toHaveLength(1);
  return (data[0] as string).slice("data: ".length);
}

async function send(c: Case, fastLane: boolean): Promise<Answer> {
  const gateway = createGateway(ROSTER, { fastLane });
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
  for (const [k, v] of Object.entries(c.headers)) if (v !== undefined) headers[k] = v;
  const before = gatewayServers();
  const ctx = executionContext();
  const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(
    new Request(`https://gateway.test/mcp?servers=${c.servers}`, { method: "POST", headers, body: c.raw ?? JSON.stringify(c.body) }) as never,
    env() as never,
    ctx,
  );
  const body = await response.text();
  await ctx.settle();
  return { status: response.status, type: response.headers.get("content-type"), body, servers: gatewayServers() - before };
}

/**
 * The case's answers with and without the lane, which must be equal; and who answered it with the lane on: the SDK
 * builds a server for each request it serves (the lane builds none), but refuses a malformed one before building any.
 */
async function both(c: Case): Promise<{ lane: Answer; by: "fast lane" | "SDK" | "refused before any server" }> {
  const lane = await send(c, true);
  const sdk = await send(c, false);
  const legacy = c.headers["mcp-protocol-version"] !== "2026-07-28";
  const seen = (a: Answer) => (legacy ? { status: a.status, message: messageOf(a) } : { status: a.status, type: a.type, body: a.body });
  expect(seen(lane), JSON.stringify(c)).toEqual(seen(sdk));
  return { lane, by: lane.servers > 0 ? "SDK" : sdk.servers > 0 ? "fast lane" : "refused before any server" };
}

const withHeaders = (c: Case, headers: Record<string, string | undefined>): Case => ({ ...c, headers: { ...c.headers, ...headers } });
const withParams = (c: Case, params: Record<string, unknown>): Case => ({ ...c, body: { ...c.body, params: { ...(c.body.params as object), ...params } } });
const withBody = (c: Case, body: Record<string, unknown>): Case => ({ ...c, body: { ...c.body, ...body } });
const withMeta = (c: Case, meta: Record<string, unknown> | undefined): Case => withParams(c, { _meta: meta });

let servers: { mock: { contexts: unknown[] } };
const gatewayServers = () => gatewayServersIn(servers);
beforeEach(() => {
  servers = vi.spyOn(Server.prototype, "connect");
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

const REVISIONS = ["2025-11-25", "2026-07-28"] as const;

describe("the fast lane answers as the SDK's path does", () => {
  it.each(REVISIONS)("takes a valid %s call to an ungated mount, and answers it as the SDK does", async (revision) => {
    const { lane, by } = await both(call(revision, "echo", "echo", { text: "hello" }));
    expect(by).toBe("fast lane");
    expect(JSON.parse(lane.body)).toMatchObject({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "hello" }] } });
    // A string id and an id of 0 are ids too.
    expect((await both(withBody(call(revision, "echo", "echo", { text: "x" }), { id: "req-1" }))).by).toBe("fast lane");
    expect((await both(withBody(call(revision, "echo", "echo", { text: "x" }), { id: 0 }))).by).toBe("fast lane");
  });

  it("answers every result an upstream gives as the SDK does, on both revisions, and makes the call once", async () => {
    // The lane encodes the everyday results itself; any other it hands, already made, to the SDK's server to check,
    // normalise and encode.
    const everyday = [
      { content: [{ type: "text", text: "plain" }] },
      { content: [{ type: "text", text: "3" }], structuredContent: { sum: 3 } },
      { content: [{ type: "text", text: "failed" }], isError: true },
      { content: [], _meta: { "example.com/trace": "t-1" } },
      { _meta: { "example.com/first": 1 }, isError: false, content: [{ type: "text", text: "members out of order" }] },
      { content: [], _meta: { "io.modelcontextprotocol/serverInfo": { name: "upstream", version: "9" }, kept: true } },
      { content: [], resultType: "complete" },
      { content: [], _meta: "not an object" },
      { isError: true, structuredContent: { a: [1, { b: null }] }, content: [{ text: "members reversed", type: "text" }], _meta: { z: 1, a: 2 } },
      {
        content: [
          { type: "text", text: "in order" },
          { text: "reversed", type: "text" },
        ],
      },
    ];
    const handed = [
      {},
      { structuredContent: { only: true } },
      { content: [{ type: "text", text: "3" }], structuredContent: [3] },
      { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] },
      { content: [{ type: "text", text: "x", annotations: { audience: ["user"] } }] },
      { content: [{ type: "weird" }] },
      { content: "not a list" },
      { content: [], isError: "yes" },
      { content: [], extra: { member: 1 } },
      { content: [], task: { taskId: "t" } },
      { content: [], _meta: { progressToken: { not: "a token" } } },
      { content: [], _meta: { progressToken: "p-1" } },
    ];
    for (const revision of REVISIONS) {
      for (const [results, lane] of [
        [everyday, "fast lane"],
        [handed, "SDK"],
      ] as const) {
        for (const result of results) {
          const before = shapeCalls;
          const { by } = await both(call(revision, "shape", "anything", { result }));
          expect(by, JSON.stringify(result)).toBe(lane);
          // Once with the lane and once without it.
          expect(shapeCalls - before).toBe(2);
        }
      }
    }
  });

  it("answers an upstream's failure and its own error code as the SDK does, on both revisions", async () => {
    for (const revision of REVISIONS) {
      expect((await both(call(revision, "broken", "anything", {}))).by).toBe("fast lane");
      expect((await both(call(revision, "relay", "anything", { code: -32011 }))).by).toBe("fast lane");
      expect((await both(call(revision, "relay", "anything", { code: -32002 }))).by).toBe("fast lane");
      // The upstream's own refusal of a tool it does not have.
      expect((await both(call(revision, "echo", "no_such_tool", {}))).by).toBe("fast lane");
    }
  });

  it("leaves to the SDK, and so answers alike, a 2026-07-28 call whose headers disagree with its body or are missing", async () => {
    const valid = call("2026-07-28", "echo", "echo", { text: "hi" });
    const variants: Record<string, string | undefined>[] = [
      { "mcp-method": undefined },
      { "mcp-method": "tools/list" },
      { "mcp-name": undefined },
      { "mcp-name": "other" },
      { "mcp-name": "ECHO" },
      { "mcp-name": `=?base64?${btoa("echo")}?=` },
      { "mcp-name": "=?base64?!!!?=" },
      { "mcp-protocol-version": undefined },
      { "mcp-protocol-version": "2025-11-25" },
      { "mcp-protocol-version": "2099-01-01" },
      { accept: "application/json" },
      { accept: "text/event-stream" },
      { accept: undefined },
      { accept: "*/*" },
      { "mcp-param-region": "eu" },
    ];
    for (const headers of variants) await both(withHeaders(valid, headers));
  });

  it("leaves to the SDK, and so answers alike, every 2026-07-28 envelope that is not plainly valid", async () => {
    const valid = call("2026-07-28", "echo", "echo", { text: "hi" });
    const { "io.modelcontextprotocol/clientInfo": _info, ...noInfo } = ENVELOPE;
    const { "io.modelcontextprotocol/protocolVersion": _v, ...noVersion } = ENVELOPE;
    const { "io.modelcontextprotocol/clientCapabilities": _c, ...noCapabilities } = ENVELOPE;
    const metas: (Record<string, unknown> | undefined)[] = [
      undefined,
      {},
      noInfo,
      noVersion,
      noCapabilities,
      { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
      { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": 20260728 },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, roots: { listChanged: true } } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { roots: { listChanged: "yes" } } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { tasks: 5 } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { unheard: { of: 1 } } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": 5 },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": [] },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": null },
      { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: "only-a-name" } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: "x", version: "1", title: "A client" } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: 5, version: "1" } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": "x" },
      { ...ENVELOPE, progressToken: "p-1" },
      { ...ENVELOPE, "io.modelcontextprotocol/logLevel": "debug" },
      { ...ENVELOPE, "io.modelcontextprotocol/logLevel": "loudest" },
      { ...ENVELOPE, "example.com/own": 1 },
    ];
    const taken: boolean[] = [];
    for (const meta of metas) taken.push((await both(withMeta(valid, meta))).by === "fast lane");
    // The richer valid envelopes are put to the SDK's classifier and still take the lane.
    expect(taken[7]).toBe(true);
    expect(taken[15]).toBe(true);
    expect(taken[8]).toBe(false);
    expect(taken[14]).toBe(false);
  });

  it("leaves to the SDK, and so answers alike, ids, params and names of every other shape on both revisions", async () => {
    for (const revision of REVISIONS) {
      const valid = call(revision, "echo", "echo", { text: "hi" });
      const cases: Case[] = [
        withBody(valid, { id: 1.5 }),
        withBody(valid, { id: -3 }),
        withBody(valid, { id: null }),
        withBody(valid, { id: true }),
        withBody(valid, { id: 2 ** 53 }),
        withParams(valid, { arguments: [] }),
        withParams(valid, { arguments: null }),
        withParams(valid, { arguments: "text" }),
        withParams(valid, { arguments: { text: 5 } }),
        withParams(valid, { task: { ttl: 1000 } }),
        withParams(valid, { name: 5 }),
        withBody(valid, { params: [] }),
        withBody(valid, { params: "x" }),
        // A mount that asks a person streams; here its registry is absent, so both paths fail the same way.
        call(revision, "held", "anything", {}),
        call(revision, "nowhere", "echo", {}),
      ];
      for (const c of cases) await both(c);
    }
    const legacy = call("2025-11-25", "echo", "echo", { text: "hi" });
    for (const c of [
      withMeta(legacy, { progressToken: "p-1" }),
      withMeta(legacy, ENVELOPE),
      withMeta(legacy, { "example.com/own": 1 }),
      withHeaders(legacy, { accept: "application/json" }),
      withHeaders(legacy, { "mcp-protocol-version": "2025-03-26" }),
      withHeaders(legacy, { "mcp-protocol-version": undefined }),
    ])
      await both(c);
  });

  // From an adversarial review: each of these once got a different answer on the lane.
  it("leaves to the SDK a message with members a JSON-RPC request does not have, on both revisions", async () => {
    for (const revision of REVISIONS) {
      const valid = call(revision, "echo", "echo", { text: "hi" });
      for (const extra of [{ extra: 1 }, { result: {} }, { error: { code: 1, message: "x" } }]) expect((await both(withBody(valid, extra))).by).not.toBe("fast lane");
    }
  });

  it("sends upstream what the SDK's path sends when the arguments hold an own __proto__ member, on both revisions", async () => {
    for (const revision of REVISIONS) {
      const valid = call(revision, "mirror", "anything", { a: 1 });
      const raw = JSON.stringify(valid.body).replace('"arguments":{', '"arguments":{"__proto__":{"polluted":true},');
      upstreamBodies = [];
      await both({ ...valid, raw });
      expect(upstreamBodies).toHaveLength(2);
      expect(upstreamBodies[0]).toBe(upstreamBodies[1]);
      expect(upstreamBodies[0]).not.toContain("polluted");
    }
  });

  it("answers as the SDK does a result whose _meta or structuredContent holds an own __proto__ member", async () => {
    for (const revision of REVISIONS) {
      for (const raw of [
        '{"content":[],"_meta":{"__proto__":{"x":1},"k":1}}',
        '{"content":[],"_meta":{"__proto__":{}}}',
        '{"content":[],"structuredContent":{"__proto__":{"x":1},"k":1}}',
        '{"content":[{"type":"text","text":"t"}],"structuredContent":{"k":{"__proto__":{"x":1}}}}',
      ])
        await both(call(revision, "raw", "anything", { raw }));
    }
  });

  it("answers an upstream's hop-only codes (-32020, -32021, -32022, -32042) and a code that is no safe integer as the SDK does, on both revisions", async () => {
    for (const revision of REVISIONS) {
      for (const code of [-32021, 1.5, 1e300, -32601, -32600, -32042, -32020, -32022, -32002]) {
        const { by, lane } = await both(call(revision, "relay", "anything", { code }));
        expect(by).toBe("fast lane");
        expect(lane.status).toBe(200);
        const sent = (JSON.parse(messageOf(lane)) as { error: { code: number } }).error.code;
        expect(Number.isSafeInteger(sent)).toBe(true);
        // The hop's headers, revision and capabilities are the gateway's own, not the caller's, and a URL elicitation
        // the gateway does not relay would reach the caller without its URLs: each is the mount failing.
        if ([-32020, -32021, -32022, -32042].includes(code)) expect(sent).toBe(-32091);
        else if (code === -32002) expect(sent).toBe(-32602);
        else if (Number.isSafeInteger(code)) expect(sent).toBe(code);
        else expect(sent).toBe(-32603);
      }
    }
  });

  it.each(REVISIONS)("issue 26: answers a %s call that names an Mcp-Session-Id as the SDK does, and still takes it", async (revision) => {
    for (const session of ["session-0123456789abcdef", "x", "  padded  "]) {
      const plain = withHeaders(call(revision, "echo", "echo", { text: "with a session" }), { "mcp-session-id": session });
      expect((await both(plain)).by).toBe("fast lane");
      await both(withHeaders(call(revision, "echo", "missing", {}), { "mcp-session-id": session }));
      await both(withHeaders(call(revision, "echo,broken", "echo", {}), { "mcp-session-id": session }));
    }
  });

  it("issue 28: answers a mount's input_required as the SDK does on both revisions, handing it to the SDK's server, and makes the call once", async () => {
    const form = { method: "elicitation/create", params: { mode: "form", message: "Proceed?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } } };
    const url = { method: "elicitation/create", params: { mode: "url", message: "Open", url: "https://example.com/review", elicitationId: "e-1" } };
    const questions = [
      { resultType: "input_required", inputRequests: { q: form }, requestState: "s-1" },
      { resultType: "input_required", requestState: "only-state" },
      {
        requestState: "s",
        resultType: "input_required",
        inputRequests: { q: form, u: url },
        _meta: { "example.com/trace": "t", "io.modelcontextprotocol/serverInfo": { name: "bundle", version: "1" } },
        content: [],
      },
      { resultType: "input_required", inputRequests: { q: { method: "roots/list" } } },
      { resultType: "input_required", inputRequests: {} },
      { resultType: "input_required", inputRequests: { q: { method: "tools/call" } } },
      { resultType: "input_required", requestState: 3 },
    ];
    const capabilities = [{}, { elicitation: {} }, { elicitation: { form: {} } }, { elicitation: { form: {}, url: {} } }, { roots: {} }];
    for (const revision of REVISIONS) {
      for (const result of questions) {
        for (const declared of revision === "2026-07-28" ? capabilities : [undefined]) {
          let c = call(revision, "shape", "anything", { result });
          if (declared !== undefined) c = withMeta(c, { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": declared });
          const before = shapeCalls;
          const { lane, by } = await both(c);
          expect(shapeCalls - before).toBe(2);
          const message = JSON.parse(messageOf(lane)) as { error?: { code: number } };
          // Never the SDK's -32602 "Invalid tools/call result": the question is relayed or refused with a reason.
          expect(message.error?.code, JSON.stringify({ result, declared })).not.toBe(-32602);
          // A well-formed question is the SDK's to check against what the caller declared and to encode.
          if (message.error === undefined) expect(by).toBe("SDK");
        }
      }
    }
  });

  it("issue 28: answers a retry carrying inputResponses and requestState as the SDK does, on both revisions, and sends the same upstream", async () => {
    const answers = { q: { action: "accept", content: { ok: true } }, w: { method: "elicitation/create", result: {} }, s: "x" };
    const retries: Record<string, unknown>[] = [
      { inputResponses: answers, requestState: "s-1" },
      { inputResponses: answers },
      { requestState: "s-1" },
      { requestState: "" },
      { inputResponses: {} },
      { inputResponses: "not an object", requestState: "s" },
      { inputResponses: [1], requestState: "s" },
      { inputResponses: null },
      { requestState: 5 },
      { requestState: null },
      { requestState: { nested: true } },
    ];
    for (const revision of REVISIONS) {
      for (const retry of retries) {
        upstreamBodies = [];
        const { by } = await both(withParams(call(revision, "mirror", "anything", { a: 1 }), retry));
        expect(upstreamBodies[0], JSON.stringify(retry)).toBe(upstreamBodies[1]);
        // The lane takes a 2026-07-28 retry with a string state or none; anything else, and every 2025-era retry, is the SDK's.
        const taken = revision === "2026-07-28" && (retry.requestState === undefined || typeof retry.requestState === "string");
        expect(by === "fast lane", JSON.stringify({ revision, retry })).toBe(taken);
      }
    }
    // A retry whose state the SDK refuses reaches no mount on either lane.
    upstreamBodies = [];
    await both(withParams(call("2026-07-28", "mirror", "anything", {}), { requestState: 5 }));
    expect(upstreamBodies).toHaveLength(0);
    // The retry's answers reach the echo mount's own tool as they came, on both lanes (demo_ask is off there: no such tool).
    for (const revision of REVISIONS) await both(withParams(call(revision, "echo", "echo", { text: "hi" }), { inputResponses: answers, requestState: "s" }));
  });

  it("issue 28: answers alike on 60 random mixes of retries, questions and declared capabilities", async () => {
    let seed = 0x28;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const pick = <T>(options: readonly T[]): T => options[Math.floor(random() * options.length)] as T;
    const form = { method: "elicitation/create", params: { mode: "form", message: "?", requestedSchema: { type: "object", properties: {} } } };
    for (let i = 0; i < 60; i++) {
      const revision = pick(REVISIONS);
      const result = pick([{ content: [] }, { resultType: "input_required", inputRequests: { q: form } }, { resultType: "input_required", requestState: `s${i}` }, { resultType: "input_required" }]);
      let c = withBody(call(revision, pick(["shape", "mirror"]), "anything", { result }), { id: i });
      if (random() < 0.6) c = withParams(c, { inputResponses: pick([{ q: { action: pick(["accept", "decline", "cancel"]) } }, {}, "x"]), requestState: pick([undefined, "s", 7]) });
      if (revision === "2026-07-28" && random() < 0.7) c = withMeta(c, { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": pick([{}, { elicitation: {} }, { elicitation: { url: {} } }]) });
      await both(c);
    }
  }, 60_000);

  it("answers alike on 200 random mixes of the variations above", async () => {
    // A fixed seed, so that a failure names a case that can be replayed.
    let seed = 0x5eed;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const pick = <T>(options: readonly T[]): T => options[Math.floor(random() * options.length)] as T;
    const mutations: ((c: Case) => Case)[] = [
      (c) => withHeaders(c, { "mcp-protocol-version": pick(["2026-07-28", "2025-11-25", "2025-06-18", undefined, "2099-01-01"]) }),
      (c) => withHeaders(c, { "mcp-method": pick(["tools/call", undefined, "tools/list"]) }),
      (c) => withHeaders(c, { "mcp-name": pick(["echo", undefined, "add", "=?base64?ZWNobw==?="]) }),
      (c) => withHeaders(c, { accept: pick(["application/json", "text/event-stream", "application/json, text/event-stream"]) }),
      (c) => withMeta(c, pick([undefined, ENVELOPE, { ...ENVELOPE, progressToken: 3 }, { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { sampling: {} } }, { progressToken: "p" }])),
      (c) => withMeta(c, { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { sampling: pick([1, {}, null]) } }),
      (c) => withMeta(c, { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": pick(["2025-06-18", "2026-07-28"]) }),
      (c) => withBody(c, { id: pick([0, "s", 0.5, -1, null]) }),
      (c) => withParams(c, { arguments: pick([{ text: 1 }, { a: 1, b: 2 }, undefined, []]) }),
    ];
    let byLane = 0;
    for (let i = 0; i < 200; i++) {
      const revision = pick(REVISIONS);
      let c = withBody(call(revision, "echo", pick(["echo", "add", "missing"]), { text: `t${i}` }), { id: i });
      for (let k = Math.floor(random() * 4); k > 0; k--) c = pick(mutations)(c);
      if ((await both(c)).by === "fast lane") byLane++;
    }
    // A quarter of the mixes get no mutation at all, and are calls the lane takes.
    expect(byLane).toBeGreaterThan(40);
  }, 60_000);
});
