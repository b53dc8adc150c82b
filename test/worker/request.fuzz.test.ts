// Property-based test of the gateway's request handling (worker/app.ts and what it hands to the SDK and the fast
// lane): arbitrary JSON-RPC-shaped bodies, headers and encodings never give a 5xx, a hang or an unhandled rejection.
// Every address it could reach is on 127.0.0.1 (a closed port): nothing leaves the machine.
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { createGateway } from "../../worker/gateway";
import { ALICE_TOKEN, aliceRoster, executionContext } from "./helpers/gateway";

const TOKEN = ALICE_TOKEN;
const ROSTER = aliceRoster([
  "{ slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }",
  "{ slug: echo-confirmed, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true, timeoutMs: 2000 }",
]);

const ECHO = { fetch: (url: string, init: RequestInit) => (echo.fetch as NonNullable<typeof echo.fetch>)(new Request(url, init) as never, {}, executionContext()) };
/** A call registry that registers every call and grants no claim: nothing here may write. */
const CALLS = {
  idFromName: (name: string) => name,
  get: () => ({
    fetch: async () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("live\n")) })),
    claim: async () => false,
    end: async () => {},
    cancel: async () => false,
  }),
};
const ENV = { TOKEN_ALICE: TOKEN, ECHO, CALLS };
const gateway = createGateway(ROSTER);

const METHODS = ["initialize", "notifications/initialized", "tools/list", "tools/call", "ping", "server/discover", "notifications/cancelled", "resources/list", "", "tools/call\u0000", "__proto__"];
const TOOLS = ["echo", "demo_write", "echo-confirmed__demo_write", "nope", "", "x".repeat(300)];
const VERSIONS = [undefined, "2025-11-25", "2026-07-28", "2025-03-26", "2024-11-05", "bogus", ""];
const ACCEPTS = [undefined, "application/json, text/event-stream", "application/json", "text/event-stream", "*/*", ""];
const TYPES = [undefined, "application/json", "application/json; charset=utf-8", "text/plain", "application/json; charset=latin1", ""];
const SERVERS = [undefined, "echo", "echo-confirmed", "echo,echo-confirmed", "nope", "", "echo,echo"];

const json = fc.jsonValue({ maxDepth: 3 });
const params = fc.oneof(
  json,
  fc.record(
    {
      name: fc.constantFrom(...TOOLS),
      arguments: fc.oneof(json, fc.dictionary(fc.string(), json)),
      _meta: fc.oneof(json, fc.constant({ progressToken: 1 }), fc.constant({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} })),
    },
    { requiredKeys: [] },
  ),
  fc.record({ requestId: fc.oneof(fc.integer(), fc.string(), json) }, { requiredKeys: [] }),
);
const message = fc.record(
  { jsonrpc: fc.constantFrom("2.0", "1.0", undefined), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), json), method: fc.oneof(fc.constantFrom(...METHODS), fc.string()), params },
  { requiredKeys: [] },
);
const body = fc.oneof(
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { maxLength: 3 }).map((m) => JSON.stringify(m)),
  json.map((j) => JSON.stringify(j)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }),
);
/** Mostly the valid value, sometimes any of the others: the generator must get past the front door often. */
function mostly<T>(valid: T, ...others: T[]): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constant(valid), weight: 6 }, { arbitrary: fc.constantFrom(valid, ...others), weight: 2 });
}
const validCall = fc.record({
  jsonrpc: fc.constant("2.0"),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
  method: fc.constantFrom("tools/call", "tools/list", "ping", "initialize"),
  params: fc.record({ name: fc.constantFrom("echo", "echo", "demo_write", "nope"), arguments: fc.record({ text: fc.string({ maxLength: 20 }) }) }),
});
const request = fc.record({
  body: fc.oneof({ arbitrary: validCall.map((m) => JSON.stringify(m)), weight: 3 }, { arbitrary: body, weight: 2 }),
  version: mostly<string | undefined>("2025-11-25", ...VERSIONS),
  accept: mostly<string | undefined>("application/json, text/event-stream", ...ACCEPTS),
  type: mostly<string | undefined>("application/json", ...TYPES),
  servers: mostly<string | undefined>("echo", ...SERVERS),
  encoding: mostly<string | undefined>(undefined, "gzip", "identity", "br"),
  elicitation: fc.constantFrom(undefined, "http://127.0.0.1:9/s/tok", "http://127.0.0.1:9/elsewhere/", "%%%"),
  method: mostly("POST", "GET", "DELETE"),
  mcpMethod: fc.constantFrom(undefined, "tools/call", "tools/list", "x"),
  auth: mostly<string | undefined>(`Bearer ${TOKEN}`, `bearer ${TOKEN}`, "Bearer wrong-token-0123456789", undefined),
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("the gateway under generated requests", () => {
  it("answers every request with a status below 500 and a readable body, in bounded time", async () => {
    const statuses = new Map<number, number>();
    let results = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = {};
        if (r.auth !== undefined) headers.authorization = r.auth;
        if (r.type !== undefined) headers["content-type"] = r.type;
        if (r.accept !== undefined) headers.accept = r.accept;
        if (r.version !== undefined) headers["mcp-protocol-version"] = r.version;
        if (r.encoding !== undefined) headers["content-encoding"] = r.encoding;
        if (r.elicitation !== undefined) headers["x-elicitation-url"] = r.elicitation;
        if (r.mcpMethod !== undefined) headers["mcp-method"] = r.mcpMethod;
        const url = `https://gateway.test/mcp${r.servers === undefined ? "" : `?servers=${encodeURIComponent(r.servers)}`}`;
        const init: RequestInit = { method: r.method, headers };
        if (r.method === "POST") init.body = r.body;
        const ctx = executionContext();
        const response = await within(5_000, Promise.resolve((gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(new Request(url, init) as never, ENV, ctx)));
        expect(response.status, `HTTP ${response.status} for ${JSON.stringify(r).slice(0, 300)}`).toBeLessThan(500);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const text = await within(5_000, response.text());
        if (text.includes('"result"')) results++;
        if (response.status !== 202 && text !== "") {
          const type = response.headers.get("content-type") ?? "";
          expect(type, text.slice(0, 200)).toMatch(/^(application\/json|text\/event-stream)/);
        }
        await within(5_000, ctx.settle());
      }),
      { numRuns: 600 },
    );
    // The generator must reach past the front door: answered requests, not only refusals, were exercised.
    expect(statuses.get(200) ?? 0, JSON.stringify([...statuses])).toBeGreaterThan(20);
    expect(results).toBeGreaterThan(10);
  }, 120_000);
});
