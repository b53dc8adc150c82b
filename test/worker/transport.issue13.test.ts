// Covers the gateway's transport edges (worker/app.ts, worker/fast-lane.ts, worker/mcp.ts, worker/selection.ts,
// worker/log.ts) in Node, with the real echo bundle's handler behind its service binding: JSON refusals on a
// gated mount, cancels checked like every request, one Accept rule on every lane, the Origin check, the revisions
// negotiated, what a caller that names no servers is told, and caps on caller-chosen names in the log.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { createGateway } from "../../worker/gateway";
import type { GatewayEnv } from "../../worker/mcp";
import { parseRoster } from "../../worker/roster-text";
import { ALICE_TOKEN, aliceRoster, executionContext } from "./helpers/gateway";
import { messageOf } from "./helpers/message";

const TOKEN = ALICE_TOKEN;
const ROSTER = aliceRoster([
  "{ slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }",
  "{ slug: echo-confirmed, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true, timeoutMs: 2000 }",
]);
const WITH_ORIGINS = ROSTER.replace("gateway:\n", 'gateway:\n  allowedOrigins: [ app.example, "[::1]" ]\n');

const ECHO = { fetch: (url: string, init: RequestInit) => (echo.fetch as NonNullable<typeof echo.fetch>)(new Request(url, init) as never, {}, executionContext()) };

/** A call registry that records the cancels relayed to it and registers nothing else. */
function registry() {
  const cancels: string[] = [];
  return {
    cancels,
    calls: {
      idFromName: (name: string) => name,
      get: () => ({
        fetch: async () => new Response("in flight", { status: 409 }),
        cancel: async (key: string) => {
          cancels.push(key);
          return true;
        },
        claim: async () => false,
        end: async () => {},
      }),
    },
  };
}

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "transport-test", version: "0" },
};
const BOTH = "application/json, text/event-stream";

interface Post {
  servers?: string | null;
  headers?: Record<string, string | undefined>;
  roster?: string;
  calls?: unknown;
}

/** POSTs one message to /mcp; headers given as undefined are left out. */
async function post(body: unknown, { servers = "echo", headers = {}, roster = ROSTER, calls = registry().calls }: Post = {}) {
  const base: Record<string, string | undefined> = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", accept: BOTH, "mcp-protocol-version": "2025-11-25", ...headers };
  const sent = Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
  const url = servers === null ? "https://gateway.test/mcp" : `https://gateway.test/mcp?servers=${servers}`;
  const ctx = executionContext();
  const gateway = createGateway(roster);
  const response = await (gateway.fetch as NonNullable<ExportedHandler<GatewayEnv>["fetch"]>)(
    new Request(url, { method: "POST", headers: sent, body: typeof body === "string" ? body : JSON.stringify(body) }) as never,
    { TOKEN_ALICE: TOKEN, ECHO, CALLS: calls } as never,
    ctx,
  );
  const text = await response.text();
  await ctx.settle();
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text };
}

const call = (name: string, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name, arguments: { text: "hi" }, ...(meta === undefined ? {} : { _meta: meta }) },
});
const cancel = (requestId: unknown) => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } });
const initialize = (protocolVersion: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "transport-test", version: "0" } },
});

let logged: string[];
beforeEach(() => {
  logged = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    logged.push(String(line));
  });
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

const requestLines = () => logged.filter((l) => l.includes('"event":"mcp_request"'));

describe("issue 13 #9: the SDK's JSON refusals on a confirmed call", () => {
  it.each([
    ["an Accept without text/event-stream (406)", { accept: "application/json" }, 406],
    ["an unsupported MCP-Protocol-Version (400)", { "mcp-protocol-version": "1999-01-01" }, 400],
    ["a MCP-Protocol-Version no longer negotiated (400)", { "mcp-protocol-version": "2025-03-26" }, 400],
  ])("issue 13 #9: %s on a gated mount is one valid JSON body, with no frame appended", async (_label, headers, status) => {
    const r = await post(call("demo_write"), { servers: "echo-confirmed", headers: { ...headers, "x-elicitation-url": "http://127.0.0.1:9/s/x" } });
    expect(r.status).toBe(status);
    expect(r.contentType).toContain("application/json");
    expect(() => JSON.parse(r.text), `not JSON: ${r.text}`).not.toThrow();
    expect(JSON.parse(r.text)).toMatchObject({ jsonrpc: "2.0", error: { code: expect.any(Number) } });
  });
});

describe("issue 13 #10: a cancel is checked like every request, and the fast lane takes the same Accept", () => {
  it.each([
    ["an unsupported MCP-Protocol-Version", { "mcp-protocol-version": "bogus" }, 400],
    ["MCP-Protocol-Version 2025-03-26", { "mcp-protocol-version": "2025-03-26" }, 400],
    ["no Accept", { accept: undefined }, 406],
    ["Accept: application/json alone", { accept: "application/json" }, 406],
    ["Accept: text/event-stream alone", { accept: "text/event-stream" }, 406],
  ])("issue 13 #10: a notifications/cancelled with %s is refused as a request would be, and relays nothing", async (_label, headers, status) => {
    const reg = registry();
    const refused = await post(cancel(7), { servers: "echo-confirmed", headers, calls: reg.calls });
    const asRequest = await post({ jsonrpc: "2.0", id: 8, method: "tools/list", params: {} }, { servers: "echo-confirmed", headers });
    expect(refused.status).toBe(status);
    expect(asRequest.status).toBe(status);
    expect(reg.cancels).toEqual([]);
  });

  it("issue 13 #10: a well-formed cancel is still answered 202 and relayed to the call it names, on both revisions", async () => {
    const reg = registry();
    expect((await post(cancel(7), { servers: "echo-confirmed", calls: reg.calls })).status).toBe(202);
    const modern = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "s-9", _meta: MODERN_META } };
    expect((await post(modern, { servers: "echo-confirmed", calls: reg.calls, headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "notifications/cancelled" } })).status).toBe(202);
    expect(reg.cancels).toEqual(["n:7", "s:s-9"]);
    // An odd-shaped id is acknowledged as before, and names no call.
    for (const odd of [[7], { n: 7 }, null]) expect((await post(cancel(odd), { servers: "echo-confirmed", calls: reg.calls })).status, JSON.stringify(odd)).toBe(202);
    expect(reg.cancels).toEqual(["n:7", "s:s-9"]);
  });

  it.each([
    ["Accept: application/json alone", "application/json"],
    ["Accept: text/event-stream alone", "text/event-stream"],
    ["Accept: */*", "*/*"],
  ])("issue 13 #10: a tools/call the fast lane would take, with %s, is answered 406 as every other path answers it", async (_label, accept) => {
    const fast = await post(call("echo"), { headers: { accept } });
    const list = await post({ jsonrpc: "2.0", id: 8, method: "tools/list", params: {} }, { headers: { accept } });
    expect(list.status).toBe(406);
    expect(fast.status, fast.text).toBe(406);
  });

  it("issue 13 #10: the fast lane still serves a call that accepts both", async () => {
    const r = await post(call("echo"));
    expect(r.status).toBe(200);
    // The fast lane answers JSON; the SDK's stateless 2025 leg would have answered an event stream.
    expect(r.contentType, "the call left the fast lane").toContain("application/json");
    expect(messageOf(r.text)).toMatchObject({ result: { content: [{ type: "text", text: "hi" }] } });
  });
});

describe("issue 13 #11: Origin", () => {
  it("issue 13 #11: with no allowedOrigins, any request carrying an Origin is refused 403; one without passes", async () => {
    for (const origin of ["https://evil.example", "http://127.0.0.1:8787", "null"]) {
      const r = await post(call("echo"), { headers: { origin } });
      expect(r.status, origin).toBe(403);
      expect(JSON.parse(r.text), origin).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    }
    expect((await post(call("echo"))).status).toBe(200);
  });

  it("issue 13 #11: an allowed origin hostname passes on any port; any other, a malformed one and the opaque null are refused", async () => {
    for (const origin of ["https://app.example", "http://app.example:8443", "http://[::1]:3000"]) {
      expect((await post(call("echo"), { roster: WITH_ORIGINS, headers: { origin } })).status, origin).toBe(200);
    }
    for (const origin of ["https://evil.example", "https://app.example.evil.example", "null", "not a url"]) {
      expect((await post(call("echo"), { roster: WITH_ORIGINS, headers: { origin } })).status, origin).toBe(403);
    }
  });

  it("issue 13 #11: the check holds for a cancel and a refused body too, before anything else is done", async () => {
    const reg = registry();
    expect((await post(cancel(7), { headers: { origin: "https://evil.example" }, calls: reg.calls })).status).toBe(403);
    expect(reg.cancels).toEqual([]);
    expect((await post(call("echo"), { headers: { origin: "https://evil.example", authorization: "Bearer nobody-0123456789abcdef" } })).status).toBe(403);
  });

  it("issue 13 #11: the roster takes hostnames only, and names the entry it refuses", () => {
    const parsed = parseRoster(ROSTER.replace("gateway:\n", 'gateway:\n  allowedOrigins: [ "https://app.example" ]\n'));
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.errors.map((e) => e.path)).toContain("gateway.allowedOrigins[0]");
    const fine = parseRoster(WITH_ORIGINS);
    expect(fine.ok && fine.roster.gateway.allowedOrigins).toEqual(["app.example", "[::1]"]);
    const none = parseRoster(ROSTER);
    expect(none.ok && none.roster.gateway.allowedOrigins).toEqual([]);
  });
});

describe("issue 13 #12: 2025-03-26 is not negotiated", () => {
  it("issue 13 #12: an initialize asking for 2025-03-26 is answered with the newest 2025 revision; 2025-06-18 and 2025-11-25 as asked", async () => {
    const answered = async (version: string) =>
      (messageOf((await post(initialize(version), { headers: { "mcp-protocol-version": undefined } })).text).result as { protocolVersion: string }).protocolVersion;
    expect(await answered("2025-03-26")).toBe("2025-11-25");
    expect(await answered("2025-06-18")).toBe("2025-06-18");
    expect(await answered("2025-11-25")).toBe("2025-11-25");
  });

  it("issue 13 #12: a request whose MCP-Protocol-Version is 2025-03-26 gets the SDK's unsupported-version error, on the fast lane too", async () => {
    for (const body of [call("echo"), { jsonrpc: "2.0", id: 8, method: "tools/list", params: {} }]) {
      const r = await post(body, { headers: { "mcp-protocol-version": "2025-03-26" } });
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ error: { message: expect.stringContaining("Unsupported protocol version: 2025-03-26") } });
    }
  });
});

describe("issue 13 #13: the instructions say which servers were selected", () => {
  const initInstructions = async (servers: string | null) =>
    (messageOf((await post(initialize("2025-11-25"), { servers, headers: { "mcp-protocol-version": undefined } })).text).result as { instructions?: string }).instructions;
  const discoverInstructions = async (servers: string | null) => {
    const body = { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: MODERN_META } };
    const r = await post(body, { servers, headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" } });
    return (messageOf(r.text).result as { instructions?: string }).instructions;
  };

  it.each([
    ["initialize (2025-11-25)", initInstructions],
    ["server/discover (2026-07-28)", discoverInstructions],
  ])("issue 13 #13: %s without ?servers= names every selected slug and the <slug>__<tool> naming", async (_label, instructions) => {
    const text = await instructions(null);
    expect(text).toContain("No ?servers= was given");
    expect(text).toContain("echo, echo-confirmed");
    expect(text).toContain("<slug>__<tool>");
  });

  it.each([
    ["initialize (2025-11-25)", initInstructions],
    ["server/discover (2026-07-28)", discoverInstructions],
  ])("issue 13 #13: %s with ?servers= names the selection and says tool names are the server's own", async (_label, instructions) => {
    const text = await instructions("echo");
    expect(text).toContain("Selected servers: echo.");
    expect(text).toContain("Tool names are the server's own.");
    expect(text).not.toContain("No ?servers=");
  });
});

describe("issue 13 #14: caller-chosen names in the request log", () => {
  const huge = `\u0000\u001b[31m\r\n${"x".repeat(900_000)}`;
  const parsedLine = () => {
    const line = requestLines().at(-1) ?? "";
    return { line, value: JSON.parse(line) as { method: string; tool: string | null } };
  };

  it.each([
    ["the fast lane", undefined],
    ["the SDK's 2025-11-25 leg", { progressToken: "p-1" }],
  ])("issue 13 #14: a 900 KB tool name on %s is logged as one short line with no control character", async (_label, meta) => {
    await post(call(huge, meta));
    const { line, value } = parsedLine();
    expect(line.length).toBeLessThan(1_000);
    expect(value.tool).toMatch(/^\uFFFD+\[31m\uFFFD+x+… \[cut: 900008 characters in all\]$/);
    expect(/[\u0000-\u001f\u007f-\u009f]/.test(value.tool ?? "")).toBe(false);
  });

  it("issue 13 #14: a 900 KB method is logged as one short line with no control character", async () => {
    await post({ jsonrpc: "2.0", id: 1, method: huge, params: {} });
    const { line, value } = parsedLine();
    expect(line.length).toBeLessThan(1_000);
    expect(value.method.length).toBeLessThan(200);
    expect(/[\u0000-\u001f\u007f-\u009f]/.test(value.method)).toBe(false);
  });
});
