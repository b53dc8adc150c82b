// Covers bundles/kit/lane.ts (and contract/tool-call.ts as the kit uses it): the kit's lane answers every request,
// valid and invalid, exactly as the SDK's path does (status, content type, body byte for byte), takes the everyday
// call without building an SDK server, leaves everything else to the SDK, and never runs a tool twice.
import { McpServer, ProtocolError, ProtocolErrorCode, UrlElicitationRequiredError } from "@modelcontextprotocol/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import manifest from "../../../bundles/echo/bundle.json";
import { echoServer } from "../../../bundles/echo/echo.tools";
import googleManifest from "../../../bundles/google/bundle.json";
import { gmailServer } from "../../../bundles/google/google.tools";
import { listResultOf } from "../../../bundles/kit/lane";
import { serveBundle } from "../../../bundles/kit/mount";
import { currentScope } from "../../../bundles/kit/scope";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../../../bundles/kit/tools";
import { answer, both as bothWith, call, callHeaders, ctx, ENV, envelope, type Handler, list, params, type Raw, withBody, withHeaders } from "./helpers/lane";

afterEach(() => vi.restoreAllMocks());

// A bundle of plain tools whose results take every shape a handler can give, each counting its runs.
const runs = new Map<string, number>();
const counted =
  <A>(name: string, answer: (args: A) => unknown) =>
  async (args: A) => {
    runs.set(name, (runs.get(name) ?? 0) + 1);
    return answer(args) as never;
  };
const TEXT = jsonSchemaOnce(z.object({ text: z.string().max(20) }));
const NONE = jsonSchemaOnce(z.object({}));
const SHAPES: Record<string, (args: { text: string }) => unknown> = {
  text: ({ text }) => ({ content: [{ type: "text", text }] }),
  structured: ({ text }) => ({ content: [{ type: "text", text }], structuredContent: { text, n: 1, nested: { a: [1, 2] } } }),
  is_error: ({ text }) => ({ content: [{ type: "text", text }], isError: true }),
  is_error_false: ({ text }) => ({ content: [{ type: "text", text }], isError: false }),
  meta: ({ text }) => ({ _meta: { "dev.example/x": text }, content: [{ type: "text", text }] }),
  meta_last: ({ text }) => ({ content: [{ type: "text", text }], _meta: { "dev.example/x": 1 } }),
  meta_progress: ({ text }) => ({ content: [{ type: "text", text }], _meta: { progressToken: "p" } }),
  meta_server_info: ({ text }) => ({ content: [{ type: "text", text }], _meta: { "io.modelcontextprotocol/serverInfo": { name: "other", version: "9" } } }),
  meta_proto: () => JSON.parse('{"content":[{"type":"text","text":"x"}],"_meta":{"__proto__":{"a":1}}}'),
  structured_proto: () => JSON.parse('{"content":[],"structuredContent":{"__proto__":{"a":1},"b":2}}'),
  text_first: ({ text }) => ({ content: [{ text, type: "text" }] }),
  empty_content: () => ({ content: [] }),
  contentless: ({ text }) => ({ structuredContent: { text } }),
  structured_array: () => ({ content: [], structuredContent: [1, 2] }),
  structured_string: () => ({ content: [{ type: "text", text: "s" }], structuredContent: "s" }),
  image: () => ({ content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] }),
  text_extra: ({ text }) => ({ content: [{ type: "text", text, annotations: { priority: 1 } }] }),
  extra_member: ({ text }) => ({ content: [{ type: "text", text }], extra: true }),
  result_type: ({ text }) => ({ content: [{ type: "text", text }], resultType: "complete" }),
  is_error_string: ({ text }) => ({ content: [{ type: "text", text }], isError: "yes" }),
  not_object: () => "just text",
  null_result: () => null,
  throws: () => {
    throw new Error("the tool failed: reason given");
  },
  throws_string: () => {
    throw "a bare string";
  },
  throws_protocol: () => {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "refused by the tool");
  },
  throws_url_elicitation: () => {
    throw new UrlElicitationRequiredError([{ mode: "url", message: "sign in", url: "https://example.com/", elicitationId: "e1" }]);
  },
  scope_mount: () => ({ content: [{ type: "text", text: currentScope().mount }] }),
  meta_undefined: ({ text }) => ({ content: [{ type: "text", text }], _meta: undefined }),
  meta_inherited: ({ text }) => ({ content: [{ type: "text", text }], _meta: Object.create({ inherited: 1 }, { own: { value: 2, enumerable: true } }) }),
  class_block: ({ text }) => {
    class Block {
      type = "text";
      #text = text;
      get text() {
        return this.#text;
      }
    }
    return { content: [new Block()] };
  },
  block_to_json: ({ text }) => ({ content: [Object.assign(Object.create({ toJSON: () => ({ type: "text", text: "from toJSON" }) }), { type: "text", text })] }),
  content_to_json: ({ text }) => ({ content: Object.assign([{ type: "text", text }], { toJSON: () => [] }) }),
  content_getter_throws: () =>
    Object.defineProperty({}, "content", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    }),
};
const SHAPE_TOOLS: ToolEntry[] = [
  ...Object.entries(SHAPES).map(([name, answer]) => plainTool(name, { description: `answers ${name}`, inputSchema: TEXT }, counted(name, answer))),
  plainTool(
    "defaults",
    { inputSchema: jsonSchemaOnce(z.object({ text: z.string().default("the default") })) },
    counted("defaults", ({ text }: { text: string }) => ({ content: [{ type: "text", text }] })),
  ),
  plainTool(
    "no_args",
    { inputSchema: NONE },
    counted("no_args", () => ({ content: [{ type: "text", text: "none" }] })),
  ),
  plainTool(
    "strict",
    { inputSchema: jsonSchemaOnce(z.strictObject({ a: z.number().int() })) },
    counted("strict", ({ a }: { a: number }) => ({ content: [{ type: "text", text: String(a) }] })),
  ),
  plainTool(
    "mirrored",
    { inputSchema: jsonSchemaOnce(z.object({ region: z.string().meta({ "x-mcp-header": "Region" }) })) },
    counted("mirrored", ({ region }: { region: string }) => ({ content: [{ type: "text", text: region }] })),
  ),
  // Not plain: always the SDK's.
  {
    name: "sdk_only",
    register: (server) =>
      server.registerTool(
        "sdk_only",
        { inputSchema: TEXT },
        counted("sdk_only", ({ text }: { text: string }) => ({ content: [{ type: "text", text }] })),
      ),
  },
];
const shapeServer = (mount: string) => registerTools(new McpServer({ name: `shapes/${mount}`, version: "1.2.3" }), SHAPE_TOOLS);
const shapes = (fastLane: boolean) => serveBundle({ mounts: { "/shapes": shapeServer, "/other": shapeServer } }, { fastLane });
/**
 * A bundle whose one mount, /flagged, serves `text` only where the env's FLAG is "1"; `during` is a change the env
 * takes after the factory read it, before the SDK's answer is out.
 */
const flaggedWith = (fastLane: boolean, during?: (env: Record<string, unknown>) => void) =>
  serveBundle(
    {
      mounts: {
        "/flagged": (mount, env) => {
          const server = registerTools(
            new McpServer({ name: mount, version: "0" }),
            SHAPE_TOOLS.filter((t) => t.name !== "text" || env.FLAG === "1"),
          );
          if (during !== undefined) queueMicrotask(() => during(env));
          return server;
        },
      },
    },
    { fastLane },
  );

const both = (raw: Raw, lanes: { on: Handler; off: Handler }, env: Record<string, unknown> = ENV) => bothWith(raw, lanes, env, runs);

const base = call("/shapes", "text", { text: "hi" });
const TTL = { ttlMs: 90_000, call: { scope: "dev-session", key: "c:n-1", nonce: "n-1" }, caller: "dev-session" };
/** What the gateway adds on a gated mount's hop (worker/mcp.ts), each kind of channel, and progress tokens the SDK takes or refuses. */
const HOP_METAS: [string, Record<string, unknown>][] = [
  ["the gateway's progress token", { progressToken: "strad-0b6a" }],
  ["an integer progress token", { progressToken: 7 }],
  ["progress token 0", { progressToken: 0 }],
  ["an empty progress token", { progressToken: "" }],
  ["a fractional progress token", { progressToken: 1.5 }],
  ["a progress token past the safe integers", { progressToken: 2 ** 53 }],
  ["a null progress token", { progressToken: null }],
  ["a boolean progress token", { progressToken: true }],
  ["an object progress token", { progressToken: { p: 1 } }],
  ["progress and an approval channel", { progressToken: "strad-1", "dev.strad/elicitation": { slug: "s", url: "https://approvals.example.com/api/v1/elicitations/session/t/", headers: {}, ...TTL } }],
  ["progress and a waiver", { progressToken: "strad-2", "dev.strad/elicitation": { slug: "s", skip: true, ...TTL } }],
  ["progress and a client question's channel", { progressToken: "strad-3", "dev.strad/elicitation": { slug: "s", ask: "client", ...TTL } }],
  ["progress and a refusal", { progressToken: "strad-4", "dev.strad/elicitation": { slug: "s", refused: "no approval URL", caller: "dev-session" } }],
  ["progress and a malformed channel", { progressToken: "strad-5", "dev.strad/elicitation": "nonsense" }],
  [
    "progress, a channel and URL elicitation declared",
    { progressToken: "strad-6", "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } }, "dev.strad/elicitation": { slug: "s", skip: true, ...TTL } },
  ],
  ["progress, a channel and a log level", { progressToken: "strad-7", "dev.strad/elicitation": { slug: "s", skip: true, ...TTL }, "io.modelcontextprotocol/logLevel": "debug" }],
];
const VARIANTS: Raw[] = [
  // Headers.
  withHeaders(base, { "mcp-method": undefined }, "no Mcp-Method"),
  withHeaders(base, { "mcp-method": "tools/list" }, "Mcp-Method naming another method"),
  withHeaders(base, { "mcp-name": undefined }, "no Mcp-Name"),
  withHeaders(base, { "mcp-name": "structured" }, "Mcp-Name naming another tool"),
  withHeaders(base, { "mcp-name": "=?base64?dGV4dA==?=" }, "Mcp-Name in Base64"),
  withHeaders(base, { "mcp-protocol-version": undefined }, "no version header"),
  withHeaders(base, { "mcp-protocol-version": "2025-11-25" }, "a 2025-era version header"),
  withHeaders(base, { "mcp-protocol-version": "2030-01-01" }, "an unknown version header"),
  withHeaders(base, { accept: "text/event-stream" }, "Accept without JSON"),
  withHeaders(base, { accept: undefined }, "no Accept"),
  withHeaders(base, { accept: "application/json" }, "Accept of JSON only"),
  withHeaders(base, { "content-type": "text/plain" }, "a text body"),
  withHeaders(base, { "content-type": "application/json; charset=utf-8" }, "JSON with a charset"),
  withHeaders(base, { "content-type": "Application/JSON" }, "JSON in capitals"),
  // The envelope.
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: undefined } }), "no envelope"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/protocolVersion": "2025-11-25" }) } }), "an envelope naming 2025-11-25"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ progressToken: "p-1" }) } }), "a progress token"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/logLevel": "debug" }) } }), "a log level"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } }) } }), "capabilities declared"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": "none" }) } }), "capabilities not an object"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/clientInfo": { name: "x", version: "1", title: "T" } }) } }), "clientInfo with a title"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/clientInfo": { name: 5 } }) } }), "clientInfo malformed"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/clientInfo": undefined }) } }), "no clientInfo"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "dev.strad/elicitation": { slug: "s", refused: "no channel" } }) } }), "the gateway's channel"),
  ...HOP_METAS.map(([label, extra]) => withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope(extra) } }), label)),
  withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "dev.example/other": 1 }) } }), "another _meta entry"),
  // The message.
  withBody(base, (b) => ({ ...b, id: "abc" }), "a string id"),
  withBody(base, (b) => ({ ...b, id: 0 }), "id 0"),
  withBody(base, (b) => ({ ...b, id: -7 }), "a negative id"),
  withBody(base, (b) => ({ ...b, id: 1.5 }), "a fractional id"),
  withBody(base, (b) => ({ ...b, id: 2 ** 53 }), "an id past the safe integers"),
  withBody(base, (b) => ({ ...b, id: null }), "a null id"),
  withBody(base, (b) => ({ ...b, id: true }), "a boolean id"),
  withBody(base, (b) => ({ ...b, id: undefined }), "no id (a notification)"),
  withBody(base, (b) => ({ ...b, jsonrpc: "1.0" }), "jsonrpc 1.0"),
  withBody(base, (b) => ({ ...b, extra: 1 }), "an extra JSON-RPC member"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), extra: 1 } }), "an extra params member"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), arguments: undefined } }), "no arguments"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), arguments: null } }), "null arguments"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), arguments: ["hi"] } }), "arguments an array"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), arguments: "hi" } }), "arguments a string"),
  withBody(base, (b) => ({ ...b, params: { ...params(b), name: 5 } }), "a name that is not a string"),
  withBody(base, (b) => ({ ...b, params: "x" }), "params a string"),
  withBody(base, (b) => [b], "a batch of one"),
  { ...base, label: "arguments with an own __proto__", body: JSON.stringify(base.body).replace('"arguments":{', '"arguments":{"__proto__":{"text":"x"},') },
  { ...base, label: "arguments with an own __proto__ alone", body: JSON.stringify(base.body).replace('"arguments":{"text":"hi"}', '"arguments":{"__proto__":{}}') },
  { ...base, label: "not JSON", body: "{" },
  { ...base, label: "an empty body", body: "" },
  withBody(base, (b) => ({ ...b, method: "tools/list", params: { _meta: envelope() } }), "tools/list"),
];

/** Every tool with good arguments, refused arguments and none; names no tool has. */
const TOOL_CALLS: Raw[] = [
  ...[...Object.keys(SHAPES), "sdk_only"].flatMap((name) => [call("/shapes", name, { text: "hello" }), call("/shapes", name, { text: 5 }), call("/shapes", name, { text: "x".repeat(21) })]),
  call("/other", "scope_mount", { text: "m" }),
  call("/shapes", "defaults", {}),
  call("/shapes", "defaults", { text: "given" }),
  call("/shapes", "no_args", {}),
  call("/shapes", "no_args", { ignored: true }),
  call("/shapes", "strict", { a: 1 }),
  call("/shapes", "strict", { a: 1, b: 2 }),
  call("/shapes", "strict", { a: 1.5 }),
  withHeaders(call("/shapes", "mirrored", { region: "eu" }), { "mcp-param-region": "eu" }, "a mirrored header that agrees"),
  call("/shapes", "mirrored", { region: "eu" }, "a mirrored header missing"),
  call("/shapes", "nope", { text: "x" }),
  call("/shapes", "constructor", {}),
  call("/shapes", "__proto__", {}),
  call("/shapes", "", {}),
  call("/nowhere", "text", { text: "hi" }),
];

/** The env an isolate is handed: one object for every request, as workerd hands it. */
describe("the kit's lane answers as the SDK does", () => {
  const lanes = { on: shapes(true), off: shapes(false) };
  beforeAll(async () => {
    for (const path of ["/shapes", "/other"]) await answer(lanes.on, list(path));
  });

  it("leaves a mount's first call under an env to the SDK, learns the mount's tools from it, and takes the next", async () => {
    const fresh = { on: shapes(true), off: shapes(false) };
    const env = { FRESH: "1" };
    const first = await both(call("/shapes", "text", { text: "one" }), fresh, env);
    expect(first.on.servers).toBe(1);
    expect(first.on.text).toBe(first.off.text);
    const next = await both(call("/shapes", "text", { text: "two" }), fresh, env);
    expect(next.on.servers).toBe(0);
    expect(next.on.text).toBe(next.off.text);
    // Another mount, or the same mount under another env object, is learnt anew.
    expect((await both(call("/other", "text", { text: "three" }), fresh, env)).on.servers).toBe(1);
    expect((await both(call("/shapes", "text", { text: "four" }), fresh, { FRESH: "1" })).on.servers).toBe(1);
  });

  it("serves under each env only the plain tools the factory gave the mount under that env", async () => {
    const lanesOf = { on: flaggedWith(true), off: flaggedWith(false) };
    const withFlag = { FLAG: "1" };
    const without = {};
    await answer(lanesOf.on, list("/flagged"), withFlag);
    const served = await both(call("/flagged", "text", { text: "a" }), lanesOf, withFlag);
    expect(served.on.servers).toBe(0);
    expect(served.on.runs).toEqual({ text: 1 });
    for (let i = 0; i < 3; i++) {
      const refused = await both(call("/flagged", "text", { text: "b" }), lanesOf, without);
      expect(refused.on.text).toBe(refused.off.text);
      expect(refused.on.text).toContain("Tool text not found");
      expect(refused.on.runs).toEqual({});
      expect(refused.on.servers).toBe(1);
    }
  });

  it("takes the everyday call without an SDK server, and answers it byte for byte", async () => {
    const cases = ["text", "structured", "is_error", "is_error_false", "meta", "meta_last", "text_first", "empty_content", "scope_mount"];
    for (const name of cases) {
      const { on, off } = await both(call(name === "scope_mount" ? "/other" : "/shapes", name, { text: "hello" }), lanes);
      expect(on.text, name).toBe(off.text);
      expect(on.text.startsWith("200 application/json\n"), name).toBe(true);
      expect(on.servers, `${name}: SDK servers the lane built`).toBe(0);
      expect(off.servers, name).toBe(1);
      expect(on.runs, name).toEqual({ [name]: 1 });
    }
    // The 2026-07-28 stamp, with the mount's own server identity, as the SDK gives it.
    const { on } = await both(call("/shapes", "text", { text: "hello" }), lanes);
    expect(JSON.parse(on.text.split("\n")[1] as string)).toEqual({
      result: { content: [{ type: "text", text: "hello" }], resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": { name: "shapes/shapes", version: "1.2.3" } } },
      jsonrpc: "2.0",
      id: 1,
    });
  });

  it("runs a tool once when its outcome is the SDK's to answer (thrown, or a result of another shape)", async () => {
    const handedOver = Object.keys(SHAPES).filter((name) => !["text", "structured", "is_error", "is_error_false", "meta", "meta_last", "text_first", "empty_content", "scope_mount"].includes(name));
    expect(handedOver.length).toBeGreaterThanOrEqual(18);
    for (const name of handedOver) {
      const { on, off } = await both(call("/shapes", name, { text: "hello" }), lanes);
      expect(on.text, name).toBe(off.text);
      expect(on.runs, `${name} ran once`).toEqual({ [name]: 1 });
      expect(off.runs, name).toEqual({ [name]: 1 });
      expect(on.servers, name).toBe(1);
    }
  });

  it.each(TOOL_CALLS.map((raw) => [raw.label, raw] as const))("answers %s as the SDK does, running the tool as often", async (_, raw) => {
    const { on, off } = await both(raw, lanes);
    expect(on.text).toBe(off.text);
    expect(on.runs).toEqual(off.runs);
  });

  it.each(VARIANTS.map((raw) => [raw.label, raw] as const))("answers a call with %s as the SDK does", async (_, raw) => {
    const { on, off } = await both(raw, lanes);
    expect(on.text).toBe(off.text);
    expect(on.runs).toEqual(off.runs);
  });

  it("declares its answer's length, which the gateway holds it to", async () => {
    const raw = call("/shapes", "text", { text: "h\u00e9llo \u2713 \u{1F600}" });
    const request = new Request("https://bundle.internal/shapes", { method: "POST", headers: raw.headers, body: JSON.stringify(raw.body) });
    const response = await (lanes.on.fetch as NonNullable<Handler["fetch"]>)(request as never, ENV, ctx);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(response.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(bytes.byteLength).toBeGreaterThan(new TextDecoder().decode(bytes).length);
  });

  it("leaves a call with a mirrored-header declaration, a progress token the SDK refuses or a log level to the SDK", async () => {
    const left = [
      withHeaders(call("/shapes", "mirrored", { region: "eu" }), { "mcp-param-region": "eu" }, "mirrored"),
      ...HOP_METAS.filter(([label]) => /fractional|past the safe|null|boolean|object|log level/.test(label)).map(([label, extra]) =>
        withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope(extra) } }), label),
      ),
      call("/shapes", "sdk_only", { text: "hi" }),
    ];
    expect(left).toHaveLength(8);
    for (const raw of left) {
      const { on, off } = await both(raw, lanes);
      expect(on.text, raw.label).toBe(off.text);
      expect(on.runs, raw.label).toEqual(off.runs);
      // The SDK's path answers: a refused progress token before any server is built, the rest with one.
      if (/progress token/.test(raw.label)) {
        expect(on.runs, raw.label).toEqual({});
        expect(on.text, raw.label).toMatch(/^400 application\/json\n\{"jsonrpc":"2.0","error":\{"code":-32600,/);
      } else expect(on.servers, raw.label).toBe(1);
    }
  });

  it("takes a plain tool's call carrying the gateway's progress token and any channel, as a gated mount's hop does, without an SDK server", async () => {
    const taken = HOP_METAS.filter(([label]) => !/fractional|past the safe|null|boolean|object|log level/.test(label));
    expect(taken).toHaveLength(10);
    for (const [label, extra] of taken) {
      const raw = withBody(base, (b) => ({ ...b, params: { ...params(b), _meta: envelope(extra) } }), label);
      const { on, off } = await both(raw, lanes);
      expect(on.servers, label).toBe(0);
      expect(off.servers, label).toBe(1);
      expect(on.text, label).toBe(off.text);
      expect(on.text, label).toMatch(/^200 application\/json\n/);
      expect(on.runs, label).toEqual({ text: 1 });
    }
  });

  it("answers 200 seeded random mixes of headers, envelopes, ids, tools and arguments as the SDK does", async () => {
    let seed = 0x5eed;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const pick = <T>(items: readonly T[]): T => items[next() % items.length] as T;
    const names = [...Object.keys(SHAPES), "defaults", "no_args", "strict", "sdk_only", "nope"];
    const argsOf = [{ text: "r" }, { text: 1 }, {}, { a: 2 }, { text: "y".repeat(25) }, undefined];
    const ids = [1, "s-1", 0, 9_007_199_254_740_991, 1.25, null];
    const headerChanges: Record<string, string | undefined>[] = [
      {},
      {},
      {},
      { "mcp-name": "other" },
      { accept: "text/event-stream" },
      { "mcp-protocol-version": "2025-11-25" },
      { "content-type": "application/json; charset=utf-8" },
    ];
    const metas = [
      envelope(),
      envelope(),
      envelope({ progressToken: 3 }),
      envelope({ progressToken: "strad-r", "dev.strad/elicitation": { slug: "s", skip: true, ...TTL } }),
      envelope({ progressToken: 2.5 }),
      envelope({ "io.modelcontextprotocol/clientInfo": { name: "n", version: "v", extra: 1 } }),
      envelope({ "io.modelcontextprotocol/protocolVersion": "2030-01-01" }),
    ];
    for (let i = 0; i < 200; i++) {
      const name = pick(names);
      const raw = withHeaders(
        {
          label: "",
          path: pick(["/shapes", "/shapes", "/other"]),
          headers: callHeaders(name),
          body: { jsonrpc: "2.0", id: pick(ids), method: "tools/call", params: { name, arguments: pick(argsOf), _meta: pick(metas) } },
        },
        pick(headerChanges),
        "",
      );
      const { on, off } = await both(raw, lanes);
      expect(on.text, `mix ${i}: ${JSON.stringify(raw)}`).toBe(off.text);
      expect(on.runs, `mix ${i}`).toEqual(off.runs);
    }
  });

  it("answers 499 and drops the result when the gateway's request ends while the tool runs, as the SDK does", async () => {
    let release: () => void = () => {};
    const slow = plainTool("slow", { inputSchema: NONE }, async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return { content: [{ type: "text", text: "late" }] };
    });
    const bundle = (fastLane: boolean) => serveBundle({ mounts: { "/slow": (mount) => registerTools(new McpServer({ name: mount, version: "0" }), [slow]) } }, { fastLane });
    for (const fastLane of [true, false]) {
      const served = bundle(fastLane);
      await answer(served, list("/slow"));
      const controller = new AbortController();
      const raw = call("/slow", "slow", {});
      const request = new Request("https://bundle.internal/slow", { method: "POST", headers: raw.headers, body: JSON.stringify(raw.body), signal: controller.signal });
      const connect = vi.spyOn(McpServer.prototype, "connect");
      const pending = (served.fetch as NonNullable<Handler["fetch"]>)(request as never, ENV, ctx);
      await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      release();
      const response = await pending;
      expect(response.status, `fastLane ${fastLane}`).toBe(499);
      expect(await response.text()).toBe("");
      expect(connect.mock.calls.length, `SDK servers with fastLane ${fastLane}`).toBe(fastLane ? 0 : 1);
      connect.mockRestore();
    }
  });
});

/** A bundle with one mount served by `factory`, with and without the lane, its table learnt from a tools/list. */
async function lanesFor(factory: (mount: string, env: Record<string, unknown>) => McpServer) {
  const lanes = { on: serveBundle({ mounts: { "/m": factory } }), off: serveBundle({ mounts: { "/m": factory } }, { fastLane: false }) };
  await answer(lanes.on, list("/m"));
  return lanes;
}

describe("the kit's lane where the SDK's answer depends on more than the tool's result", () => {
  it("leaves to the SDK a call whose argument check throws (a transform that fails), and answers as it does", async () => {
    const tool = plainTool(
      "url",
      { inputSchema: z.object({ u: z.string().transform((u) => new URL(u).href) }) },
      counted("url", ({ u }: { u: string }) => ({ content: [{ type: "text", text: u }] })),
    );
    const lanes = await lanesFor((mount) => registerTools(new McpServer({ name: mount, version: "0" }), [tool]));
    for (const u of ["not a url", "https://example.com/a"]) {
      const { on, off } = await both(call("/m", "url", { u }), lanes);
      expect(on.text, u).toBe(off.text);
      expect(on.runs, u).toEqual(off.runs);
    }
    expect((await both(call("/m", "url", { u: "https://example.com/a" }), lanes)).on.servers).toBe(0);
  });

  it("serves a mount whose plain tool's schema cannot be put as JSON Schema, leaving that tool to the SDK", async () => {
    const dated = plainTool(
      "dated",
      { inputSchema: z.object({ d: z.date().optional() }) },
      counted("dated", () => ({ content: [{ type: "text", text: "dated" }] })),
    );
    const text = SHAPE_TOOLS.find((t) => t.name === "text") as ToolEntry;
    const lanes = await lanesFor((mount) => registerTools(new McpServer({ name: mount, version: "0" }), [dated, text]));
    for (const raw of [call("/m", "dated", {}), call("/m", "text", { text: "hi" }), list("/m")]) {
      const { on, off } = await both(raw, lanes);
      expect(on.text, raw.label).toBe(off.text);
    }
    expect((await both(call("/m", "dated", {}), lanes)).on.servers).toBe(1);
    expect((await both(call("/m", "text", { text: "hi" }), lanes)).on.servers).toBe(0);
  });

  it("stamps the server's identity exactly as it was given, whatever it holds and in its order", async () => {
    const text = SHAPE_TOOLS.find((t) => t.name === "text") as ToolEntry;
    const identities = [
      { version: "2", name: "reordered" },
      { name: "titled", version: "1", title: "A title", description: "d", websiteUrl: "https://example.com/" },
    ];
    for (const identity of identities) {
      const lanes = await lanesFor(() => registerTools(new McpServer(identity), [text]));
      const { on, off } = await both(call("/m", "text", { text: "hi" }), lanes);
      expect(on.text, identity.name).toBe(off.text);
      expect(on.servers).toBe(0);
    }
  });

  it("leaves to the SDK every call to a server that caps its tools' arguments by count", async () => {
    const text = SHAPE_TOOLS.find((t) => t.name === "text") as ToolEntry;
    const lanes = await lanesFor((mount) => registerTools(new McpServer({ name: mount, version: "0" }, { maxToolInputElements: 2 }), [text]));
    for (const args of [{ text: "hi" }, { text: "hi", a: 1, b: 2, c: 3 }]) {
      const { on, off } = await both(call("/m", "text", args), lanes);
      expect(on.text).toBe(off.text);
      expect(on.runs).toEqual(off.runs);
      expect(on.servers).toBe(1);
    }
  });

  it("hands a result it cannot serialise (a BigInt) to the SDK, which holds it until the request ends, and runs the tool once", async () => {
    const big = plainTool(
      "big",
      { inputSchema: NONE },
      counted("big", () => ({ content: [], structuredContent: { n: 10n } })),
    );
    const lanes = await lanesFor((mount) => registerTools(new McpServer({ name: mount, version: "0" }), [big]));
    for (const [label, handler] of Object.entries(lanes)) {
      runs.clear();
      const connect = vi.spyOn(McpServer.prototype, "connect");
      const controller = new AbortController();
      const raw = call("/m", "big", {});
      const request = new Request("https://bundle.internal/m", { method: "POST", headers: raw.headers, body: JSON.stringify(raw.body), signal: controller.signal });
      const pending = (handler.fetch as NonNullable<Handler["fetch"]>)(request as never, ENV, ctx);
      setTimeout(() => controller.abort(), 50);
      const response = await pending;
      expect(response.status, label).toBe(499);
      expect(Object.fromEntries(runs), label).toEqual({ big: 1 });
      expect(connect.mock.calls.length, label).toBe(1);
      connect.mockRestore();
    }
  });

  it("serves the first of two tools of one name, as the SDK does, and leaves a tool the factory disabled to it", async () => {
    const first = {
      name: "d",
      register: (server: McpServer) =>
        server.registerTool(
          "d",
          { inputSchema: NONE },
          counted("sdk one", () => ({ content: [{ type: "text", text: "sdk one" }] })),
        ),
    };
    const second = plainTool(
      "d",
      { inputSchema: NONE },
      counted("plain one", () => ({ content: [{ type: "text", text: "plain one" }] })),
    );
    const twice = await lanesFor((mount) => registerTools(new McpServer({ name: mount, version: "0" }), [first, second]));
    const dup = await both(call("/m", "d", {}), twice);
    expect(dup.on.text).toBe(dup.off.text);
    expect(dup.on.runs).toEqual({ "sdk one": 1 });

    const text = SHAPE_TOOLS.find((t) => t.name === "text") as ToolEntry;
    const disabled = await lanesFor((mount) => {
      const server = registerTools(new McpServer({ name: mount, version: "0" }), [text]);
      (server as unknown as { _registeredTools: Record<string, { disable(): void }> })._registeredTools.text?.disable();
      return server;
    });
    const off = await both(call("/m", "text", { text: "hi" }), disabled);
    expect(off.on.text).toBe(off.off.text);
    expect(off.on.text).toContain("disabled");
    expect(off.on.runs).toEqual({});
  });

  it("leaves to the SDK a tool the factory disabled whichever call it learnt the mount from, and learns each tool from its own call's server", async () => {
    const tool = (name: string) =>
      plainTool(
        name,
        { inputSchema: NONE },
        counted(name, () => ({ content: [{ type: "text", text: `${name} acted` }] })),
      );
    const [x, y, z] = [tool("x"), tool("y"), tool("z")];
    const factory = (mount: string) => {
      const server = registerTools(new McpServer({ name: mount, version: "0" }), [x, y, z]);
      (server as unknown as { _registeredTools: Record<string, { disable(): void }> })._registeredTools.x?.disable();
      return server;
    };
    // No list first: the mount is learnt from a call's server, which holds the called tool alone.
    const lanes = { on: serveBundle({ mounts: { "/m": factory } }), off: serveBundle({ mounts: { "/m": factory } }, { fastLane: false }) };
    const env = { FRESH: "x" };
    expect((await both(call("/m", "y", {}), lanes, env)).on.servers).toBe(1);
    expect((await both(call("/m", "y", {}), lanes, env)).on.servers).toBe(0);
    for (let i = 0; i < 2; i++) {
      const refused = await both(call("/m", "x", {}), lanes, env);
      expect(refused.on.text).toBe(refused.off.text);
      expect(refused.on.text).toContain("Tool x disabled");
      expect(refused.on.runs).toEqual({});
      expect(refused.on.servers).toBe(1);
    }
    // z is learnt from its own first call and kept beside y.
    expect((await both(call("/m", "z", {}), lanes, env)).on.servers).toBe(1);
    for (const name of ["z", "y"]) {
      const taken = await both(call("/m", name, {}), lanes, env);
      expect(taken.on.text, name).toBe(taken.off.text);
      expect(taken.on.servers, name).toBe(0);
      expect(taken.on.runs, name).toEqual({ [name]: 1 });
    }
  });

  it("leaves to the SDK a plain tool the factory changed after registering it, one given an output schema, and every tool of a server whose tool execution it wrapped", async () => {
    type Registered = { update(changes: Record<string, unknown>): void };
    const registered = (server: McpServer) => (server as unknown as { _registeredTools: Record<string, Registered> })._registeredTools;
    const acted = () =>
      plainTool(
        "x",
        { inputSchema: NONE },
        counted("x", () => ({ content: [{ type: "text", text: "x acted" }] })),
      );
    const cases: [string, (mount: string) => McpServer][] = [
      [
        "its callback swapped (a gate of the factory's own)",
        (mount) => {
          const server = registerTools(new McpServer({ name: mount, version: "0" }), [acted()]);
          registered(server).x?.update({ callback: counted("gate", () => ({ content: [{ type: "text", text: "Refused: gated" }], isError: true })) });
          return server;
        },
      ],
      [
        "its input schema replaced",
        (mount) => {
          const server = registerTools(new McpServer({ name: mount, version: "0" }), [acted()]);
          registered(server).x?.update({ paramsSchema: z.object({ must: z.string() }) });
          return server;
        },
      ],
      [
        "an output schema passed past PlainToolConfig's type",
        (mount) =>
          registerTools(new McpServer({ name: mount, version: "0" }), [
            plainTool(
              "x",
              { inputSchema: NONE, outputSchema: z.object({ n: z.number() }) } as never,
              counted("x", () => ({ content: [{ type: "text", text: "no structured" }] })),
            ),
          ]),
      ],
      [
        "the server's tool execution wrapped",
        (mount) => {
          const server = registerTools(new McpServer({ name: mount, version: "0" }), [acted()]);
          const seam = server as unknown as { executeToolHandler: (...args: unknown[]) => Promise<unknown> };
          const execute = seam.executeToolHandler;
          seam.executeToolHandler = async (...args) => ({ ...((await execute.apply(server, args)) as object), content: [{ type: "text", text: "rewritten" }] });
          return server;
        },
      ],
    ];
    for (const [label, factory] of cases) {
      const lanes = await lanesFor(factory);
      for (let i = 0; i < 2; i++) {
        const { on, off } = await both(call("/m", "x", {}), lanes);
        expect(on.text, label).toBe(off.text);
        expect(on.servers, label).toBe(1);
        expect(on.runs, label).toEqual(off.runs);
      }
    }
  });

  it("hands to the SDK a call whose tool put a question to the client, which answers with the question, and runs the tool once", async () => {
    const question = {
      resultType: "input_required",
      inputRequests: { q: { method: "elicitation/create", params: { mode: "form", message: "sure?", requestedSchema: { type: "object", properties: {} } } } },
    };
    const asking = plainTool(
      "asks",
      { inputSchema: NONE },
      counted("asks", () => {
        const call = currentScope().call;
        if (call !== undefined) call.question = question;
        return { content: [{ type: "text", text: "not approved" }] };
      }),
    );
    const lanes = await lanesFor((mount) => registerTools(new McpServer({ name: mount, version: "0" }), [asking]));
    const asked = withBody(
      call("/m", "asks", {}),
      (b) => ({ ...b, params: { ...params(b), _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } }) } }),
      "a call from a client that takes form questions",
    );
    const { on, off } = await both(asked, lanes);
    expect(on.text).toBe(off.text);
    expect(on.text).toContain('"resultType":"input_required"');
    expect(on.text).not.toContain("not approved");
    expect(on.runs).toEqual({ asks: 1 });
  });
});

describe("the kit's lane answers tools/list as the SDK does", () => {
  const withId = (raw: Raw, id: unknown) => withBody(raw, (b) => ({ ...b, id }), `${raw.label} id ${JSON.stringify(id)}`);
  const toolNames = (text: string) => (JSON.parse(text.split("\n")[1] as string).result.tools as { name: string }[]).map((t) => t.name);

  it("leaves a mount's first list under an env to the SDK, keeps its answer, and gives it again under each id without a server", async () => {
    const fresh = { on: shapes(true), off: shapes(false) };
    const env = { LIST: "1" };
    const first = await both(list("/shapes"), fresh, env);
    expect(first.on.servers).toBe(1);
    expect(first.on.text).toBe(first.off.text);
    expect(first.on.text.startsWith("200 application/json\n")).toBe(true);
    expect(toolNames(first.on.text)).toContain("text");
    for (const id of [7, "list-7", 0, Number.MAX_SAFE_INTEGER, -3, "", "é"]) {
      const next = await both(withId(list("/shapes"), id), fresh, env);
      expect(next.on.servers, `id ${JSON.stringify(id)}`).toBe(0);
      expect(next.on.text, `id ${JSON.stringify(id)}`).toBe(next.off.text);
    }
    // Another mount, or the same mount under another env object, is learnt anew.
    expect((await both(list("/other"), fresh, env)).on.servers).toBe(1);
    expect((await both(list("/shapes"), fresh, { LIST: "1" })).on.servers).toBe(1);
  });

  it("gives each env the list the mount's factory made under it, envs alternating", async () => {
    const lanesOf = { on: flaggedWith(true), off: flaggedWith(false) };
    const withFlag = { FLAG: "1" };
    const without = {};
    for (let i = 0; i < 6; i++) {
      const env = i % 3 === 2 ? without : withFlag;
      const { on, off } = await both(withId(list("/flagged"), i + 1), lanesOf, env);
      expect(on.text, `round ${i}`).toBe(off.text);
      expect(toolNames(on.text).includes("text"), `round ${i}`).toBe(env === withFlag);
    }
  });

  it("answers by the env's values, not its object alone: a list or a call after the same env object changed in place, even while the first list was answered", async () => {
    // Changed in place between requests: the call lane's table and the kept list are learnt again.
    const lanesOf = { on: flaggedWith(true), off: flaggedWith(false) };
    const env: Record<string, unknown> = { FLAG: "1" };
    await answer(lanesOf.on, list("/flagged"), env);
    delete env.FLAG;
    const called = await both(call("/flagged", "text", { text: "hi" }), lanesOf, env);
    expect(called.on.text).toBe(called.off.text);
    expect(called.on.text).toContain("Tool text not found");
    const listed = await both(withId(list("/flagged"), 2), lanesOf, env);
    expect(listed.on.text).toBe(listed.off.text);
    expect(toolNames(listed.on.text)).not.toContain("text");
    // Changed while the SDK answered the first list: that answer is not kept for the env's new values.
    const racing = { on: flaggedWith(true, (e) => delete e.FLAG), off: flaggedWith(false) };
    const raced: Record<string, unknown> = { FLAG: "1" };
    expect(toolNames(await answer(racing.on, list("/flagged"), raced).then((t) => t))).toContain("text");
    expect(raced.FLAG).toBeUndefined();
    const after = await both(withId(list("/flagged"), 3), racing, raced);
    expect(after.on.text).toBe(after.off.text);
    expect(toolNames(after.on.text)).not.toContain("text");
  });

  it("answers 300 seeded random mixes of list requests as the SDK does, and takes only the plain ones", async () => {
    const lanesOf = { on: shapes(true), off: shapes(false) };
    await answer(lanesOf.on, list("/shapes"));
    let seed = 0x11575;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const pick = <T>(items: readonly T[]): T => items[next() % items.length] as T;
    const ids = [3, "l-3", 0, 9_007_199_254_740_991, 1.5, null, true];
    const headerChanges: Record<string, string | undefined>[] = [
      {},
      {},
      {},
      { "mcp-name": "text" },
      { "mcp-method": "tools/call" },
      { "mcp-method": undefined },
      { accept: "text/event-stream" },
      { "mcp-protocol-version": "2025-11-25" },
      { "content-type": "application/json; charset=utf-8" },
      { "content-type": "Application/JSON" },
      { "content-type": "text/plain" },
    ];
    const paramsOf: (Record<string, unknown> | undefined)[] = [
      { _meta: envelope() },
      { _meta: envelope() },
      { _meta: envelope(), cursor: "c1" },
      { _meta: envelope(), extra: 1 },
      {},
      undefined,
      { _meta: envelope({ progressToken: 1 }) },
      { _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } }) },
      { _meta: envelope({ "io.modelcontextprotocol/protocolVersion": "2030-01-01" }) },
      { _meta: envelope({ "io.modelcontextprotocol/clientInfo": { name: "n", version: "v", extra: 1 } }) },
      { _meta: envelope({ "io.modelcontextprotocol/clientInfo": undefined }) },
      { _meta: envelope({ "dev.example/x": 1 }) },
    ];
    const bodies = [
      (b: Record<string, unknown>) => b,
      (b: Record<string, unknown>) => b,
      (b: Record<string, unknown>) => ({ ...b, extra: 1 }),
      (b: Record<string, unknown>) => ({ ...b, jsonrpc: "1.0" }),
    ];
    let taken = 0;
    for (let i = 0; i < 300; i++) {
      const chosen = pick(paramsOf);
      const raw = withHeaders(
        withBody(list(pick(["/shapes", "/shapes", "/other"])), (b) => pick(bodies)({ ...b, id: pick(ids), params: chosen }), ""),
        pick(headerChanges),
        "",
      );
      const { on, off } = await both(raw, lanesOf);
      expect(on.text, `mix ${i}: ${JSON.stringify(raw)}`).toBe(off.text);
      // Taken by the lane: the SDK's path built a server for it, the lane none (a request the SDK refuses before
      // building one costs neither a server).
      if (on.servers === 0 && off.servers === 1) taken++;
    }
    // The plain list came up often enough to be taken, and most mixes were not plain.
    expect(taken).toBeGreaterThan(10);
    expect(taken).toBeLessThan(150);
  });

  it("learns only an answer its own would repeat byte for byte", () => {
    const result = { tools: [{ name: "a", inputSchema: { type: "object" } }], resultType: "complete" };
    const exact = JSON.stringify({ result, jsonrpc: "2.0", id: 4 });
    expect(listResultOf(exact, 4)).toEqual(result);
    expect(listResultOf(exact, "4"), "another id").toBeUndefined();
    expect(listResultOf(JSON.stringify({ jsonrpc: "2.0", id: 4, result }), 4), "members in another order").toBeUndefined();
    expect(listResultOf(JSON.stringify({ result, jsonrpc: "2.0", id: 4 }, null, 1), 4), "spaced").toBeUndefined();
    expect(listResultOf(JSON.stringify({ result: { ...result, nextCursor: "c" }, jsonrpc: "2.0", id: 4 }), 4), "a page of more").toBeUndefined();
    expect(listResultOf(JSON.stringify({ result: { tools: [] }, jsonrpc: "2.0", id: 4 }), 4), "no resultType").toBeUndefined();
    expect(listResultOf(JSON.stringify({ error: { code: 1, message: "x" }, jsonrpc: "2.0", id: 4 }), 4), "an error").toBeUndefined();
    expect(listResultOf("{", 4), "not JSON").toBeUndefined();
  });
});

describe("the echo bundle on the lane", () => {
  const lanes = { on: serveBundle({ manifest, server: echoServer }), off: serveBundle({ manifest, server: echoServer }, { fastLane: false }) };
  const ENVS: Record<string, Record<string, unknown>> = { "as deployed": {}, "with the dev probes": { STRAD_DEV_PROBES: "1", ECHO_WAIVED__GREETING: "hello" } };

  const ECHO_CALLS: Raw[] = ["echo", "echo-waived", "echo-confirmed"].flatMap((mount) => [
    call(`/${mount}`, "echo", { text: "hi" }),
    call(`/${mount}`, "echo", { text: "x".repeat(10_000) }),
    call(`/${mount}`, "echo", { text: "x".repeat(10_001) }),
    call(`/${mount}`, "echo", { text: 5 }),
    call(`/${mount}`, "about", {}),
    call(`/${mount}`, "add", { a: 1, b: 2 }),
    call(`/${mount}`, "add", { a: 1e308, b: 1e308 }),
    call(`/${mount}`, "add", { a: "1", b: 2 }),
    call(`/${mount}`, "report_meta", {}),
    call(`/${mount}`, "progress_demo", { steps: 1, ms: 0 }),
    call(`/${mount}`, "nope", {}),
  ]);

  it.each(Object.entries(ENVS))("answers every call %s as the SDK does, and takes echo, about and add with good arguments", async (_, env) => {
    // The lane keeps one table per mount, for the env it was last handed: it learns each mount's under this env first.
    for (const mount of ["echo", "echo-waived", "echo-confirmed"]) await answer(lanes.on, list(`/${mount}`), env);
    let taken = 0;
    for (const raw of ECHO_CALLS) {
      const { on, off } = await both(raw, lanes, env);
      expect(on.text, raw.label).toBe(off.text);
      if (on.servers === 0) taken++;
    }
    // echo (two lengths), about and add (two) on three mounts; the refused arguments and every other tool are the SDK's.
    expect(taken).toBe(15);
  });

  it.each(Object.entries(ENVS))("answers every mount's tools/list %s as the SDK does, without a server after the first", async (_, env) => {
    const fresh = { on: serveBundle({ manifest, server: echoServer }), off: serveBundle({ manifest, server: echoServer }, { fastLane: false }) };
    for (const mount of ["echo", "echo-waived", "echo-confirmed"]) {
      for (const [i, id] of [1, 2, "three"].entries()) {
        const { on, off } = await both(
          withBody(list(`/${mount}`), (b) => ({ ...b, id }), ""),
          fresh,
          env,
        );
        expect(on.text, `${mount} list ${i}`).toBe(off.text);
        expect(on.servers, `${mount} list ${i}`).toBe(i === 0 ? 1 : 0);
      }
    }
  });

  it("answers about from the request's own env on the lane", async () => {
    const env = { ECHO_WAIVED__GREETING: "one" };
    const greeting = async () => {
      const { on, off } = await both(call("/echo-waived", "about", {}), lanes, env);
      expect(on.text).toBe(off.text);
      return { servers: on.servers, said: JSON.parse(JSON.parse(on.text.split("\n")[1] as string).result.content[0].text) };
    };
    expect(await greeting()).toEqual({ servers: 1, said: { mount: "echo-waived", greeting: "one" } });
    expect(await greeting()).toEqual({ servers: 0, said: { mount: "echo-waived", greeting: "one" } });
  });
});

describe("the Google bundle on the lane", () => {
  const lanes = { on: serveBundle({ manifest: googleManifest, server: gmailServer }), off: serveBundle({ manifest: googleManifest, server: gmailServer }, { fastLane: false }) };
  // A mount with credentials whose Gmail is a closed loopback port: every read that runs fails at once, the same way
  // on both paths, and nothing leaves the machine.
  const env: Record<string, unknown> = {
    MAIL__GMAIL_CLIENT_ID: "client-id",
    MAIL__GMAIL_CLIENT_SECRET: "client-secret-0123456789",
    MAIL__GMAIL_REFRESH_TOKEN: "refresh-token-0123456789",
    MAIL__GMAIL_ENABLED_TOOLGROUPS: "readwrite_external",
    GMAIL_API_BASE_URL: "http://127.0.0.1:9/gmail",
    GMAIL_TOKEN_URL: "http://127.0.0.1:9/token",
  };
  const READS: Raw[] = [
    call("/mail", "search_messages", {}),
    call("/mail", "search_messages", { query: "is:unread", label_ids: ["INBOX"], max_results: 25, cursor: "abc" }),
    call("/mail", "search_messages", { max_results: 26 }),
    call("/mail", "get_message", { message_id: "18c2f3a4b5c6d7e8" }),
    call("/mail", "get_message", { message_id: "../x" }),
    call("/mail", "get_thread", { thread_id: "18c2f3a4b5c6d7e8" }),
    call("/mail", "list_drafts", { query: "to:ada" }),
    call("/mail", "get_draft", { draft_id: "r-123" }),
    call("/mail", "get_draft", {}),
    call("/mail", "create_draft", { to: ["ada@example.com"], subject: "s", text: "t" }),
    call("/mail", "send_email", { to: ["ada@example.com"], subject: "s", text: "t" }),
    call("/mail", "nope", {}),
  ];

  it("answers every call as the SDK does, and takes the reads with good arguments without an SDK server", async () => {
    await answer(lanes.on, list("/mail"), env);
    const taken: string[] = [];
    for (const raw of READS) {
      const { on, off } = await both(raw, lanes, env);
      expect(on.text, raw.label).toBe(off.text);
      if (on.servers === 0) taken.push(raw.label);
    }
    // Six reads with good arguments; a refused argument, the guarded tools and an unknown name are the SDK's.
    expect(taken).toEqual(READS.filter((_, i) => [0, 1, 3, 5, 6, 7].includes(i)).map((r) => r.label));
    const { on } = await both(READS[0] as Raw, lanes, env);
    expect(on.text).toContain("Not done: ");
  });

  it("answers the mount's tools/list as the SDK does, without a server after the first", async () => {
    const fresh = { on: serveBundle({ manifest: googleManifest, server: gmailServer }), off: serveBundle({ manifest: googleManifest, server: gmailServer }, { fastLane: false }) };
    for (const [i, id] of [5, 6, "seven"].entries()) {
      const { on, off } = await both(
        withBody(list("/mail"), (b) => ({ ...b, id }), ""),
        fresh,
        env,
      );
      expect(on.text, `list ${i}`).toBe(off.text);
      expect(on.servers, `list ${i}`).toBe(i === 0 ? 1 : 0);
    }
  });

  it("builds each tool's schema once per isolate: two requests' servers hold the same schema objects", () => {
    const schemaOf = (server: McpServer, name: string) => (server as unknown as { _registeredTools: Record<string, { inputSchema: unknown }> })._registeredTools[name]?.inputSchema;
    const [a, b] = [gmailServer("mail", env), gmailServer("mail", env)];
    for (const name of ["search_messages", "get_message", "get_thread", "list_drafts", "get_draft", "create_draft", "send_email"]) {
      expect(schemaOf(a, name), name).toBeDefined();
      expect(schemaOf(a, name), name).toBe(schemaOf(b, name));
    }
  });
});
