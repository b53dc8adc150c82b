// Covers the gateway Worker's app (worker/app.ts) in Node, with the real echo bundle's handler standing
// behind its service binding: the dev-only route's guard, the refusal when a roster secret is missing,
// tools/list across mounts that hang or fail, and the log line of calls that take the SDK's path.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { RpcCode } from "../../contract/rpc";
import { isMcpUrl } from "../../worker/app";
import { createGateway } from "../../worker/gateway";
import { type GatewayEnv, MAX_LISTING_BYTES } from "../../worker/mcp";
import { binding, executionContext, untilAborted } from "./helpers/gateway";
import { messageOf } from "./helpers/message";

const TOKEN = "alice-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: slow, kind: bundle, bundle: SLOW, path: /slow, entitlements: [user], timeoutMs: 1000 }
  - { slug: broken, kind: bundle, bundle: BROKEN, path: /broken, entitlements: [user] }
  - { slug: keyed, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user], headers: { X-Key: "\${KEYED_KEY}" } }
  - { slug: guarded, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true, confirmationHeaders: { CF-Access-Client-Id: "\${GUARD_ID}" } }
  - { slug: paged, kind: bundle, bundle: PAGED, path: /paged, entitlements: [user] }
  - { slug: odd, kind: bundle, bundle: ODD, path: /odd, entitlements: [user] }
gateway:
  elicitation:
    allowedUrlPrefixes: [ "http://127.0.0.1:9/s/" ]
`;

const noCtx = executionContext();
/** The echo bundle's own Worker handler behind a stand-in service binding. */
const ECHO = binding((request) => Promise.resolve((echo.fetch as NonNullable<typeof echo.fetch>)(request as never, {}, noCtx)));
/** A mount that never answers until its request is aborted. */
const SLOW = binding((request) => untilAborted(request.signal));
/** A mount that fails with a body that must never reach a caller. */
const BROKEN = binding(async () => new Response("broken-secret-body", { status: 502 }));
/** A mount whose tools/list never ends: a page of about 1 MiB of tools after another, each naming a next one; what it sent, counted. */
const paged = { sent: 0 };
const PAGED = binding(async () => {
  const tools = Array.from({ length: 64 }, (_, i) => ({ name: `t${i}`, description: "d".repeat(16 * 1024), inputSchema: { type: "object" } }));
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools, nextCursor: "more" } });
  paged.sent += body.length;
  return new Response(body, { headers: { "content-type": "application/json" } });
});
/** A mount whose list holds entries that are not tools beside one that is. */
const ODD = binding(async () => Response.json({ jsonrpc: "2.0", id: 1, result: { tools: [null, 5, "x", [], { name: 7 }, { name: "fine", inputSchema: { type: "object" } }] } }));
/** The call registry must not be touched by anything here. */
const CALLS = new Proxy(
  {},
  {
    get() {
      throw new Error("the call registry was touched");
    },
  },
);

function env(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { TOKEN_ALICE: TOKEN, KEYED_KEY: "keyed-value-0123", ECHO, SLOW, BROKEN, PAGED, ODD, CALLS, ...extra };
}

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "app-test", version: "0" },
};

/** One 2026-07-28 request to /mcp. */
function modern(servers: string, method: string, params: Record<string, unknown>, name?: string): Request {
  return new Request(`https://gateway.test/mcp?servers=${servers}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(name === undefined ? {} : { "mcp-name": name }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: MODERN_META } }),
  });
}

/** The JSON-RPC message of an answer, whether it came as JSON or as an event stream. */
const messageIn = async (response: Response): Promise<Record<string, unknown>> => messageOf(await response.text());

let logged: string[];
beforeEach(() => {
  logged = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    logged.push(String(line));
  });
  vi.spyOn(console, "error").mockImplementation((line: unknown) => {
    logged.push(String(line));
  });
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

const requestLines = () => logged.filter((l) => l.includes('"event":"mcp_request"')).map((l) => JSON.parse(l) as Record<string, unknown>);

async function serve(gateway: ExportedHandler<GatewayEnv>, request: Request, e: Record<string, unknown>): Promise<Response> {
  const ctx = executionContext();
  const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, e, ctx);
  await response.clone().text();
  await ctx.settle();
  return response;
}

describe("the gateway app", () => {
  it("hides the dev-only registry route unless STRAD_DEV_ROUTES is 1", async () => {
    const gateway = createGateway(ROSTER);
    const off = await serve(gateway, new Request("https://gateway.test/_dev/calls/alice"), env());
    expect(off.status).toBe(404);
    const on = await serve(
      gateway,
      new Request("https://gateway.test/_dev/calls/alice"),
      env({ STRAD_DEV_ROUTES: "1", CALLS: { idFromName: (n: string) => n, get: () => ({ stats: async () => ({ served: 3, live: 0 }) }) } }),
    );
    expect(on.status).toBe(200);
    expect(await on.json()).toEqual({ served: 3, live: 0 });
  });

  it("issue 26: a server's unseeded header secret makes only that server's calls refuse, naming the variable; every other server answers, and the log names the path once", async () => {
    const gateway = createGateway(ROSTER);
    const { KEYED_KEY: _unseeded, ...without } = env();
    // Another server's call goes through (this was a 503 for every request before issue 26).
    const other = await serve(gateway, modern("echo", "tools/call", { name: "echo", arguments: { text: "hi" } }, "echo"), without);
    expect(other.status).toBe(200);
    expect(await messageIn(other)).toMatchObject({ result: { content: [{ type: "text", text: "hi" }] } });
    // The server needing the secret refuses, naming the variable and never a value.
    const keyed = await serve(gateway, modern("keyed", "tools/call", { name: "echo", arguments: { text: "hi" } }, "echo"), without);
    expect(keyed.status).toBe(200);
    expect(await messageIn(keyed)).toMatchObject({ error: { code: RpcCode.UpstreamFailed, message: 'server "keyed" needs secret KEYED_KEY, which is not seeded' } });
    // tools/list without ?servers= answers with the servers that can list; with only the keyed one, it names the variable.
    const listed = await messageIn(await serve(gateway, modern("echo,keyed", "tools/list", {}), without));
    expect((listed.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain("echo__echo");
    expect(JSON.stringify(listed)).not.toContain("keyed__");
    expect(await messageIn(await serve(gateway, modern("keyed", "tools/list", {}), without))).toMatchObject({ error: { message: 'server "keyed" needs secret KEYED_KEY, which is not seeded' } });
    const problems = logged.filter((l) => l.includes('"event":"secrets_unseeded"'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("servers[3].headers.X-Key: secret KEYED_KEY is not seeded");
    expect(problems[0]).toContain("servers[4].confirmationHeaders.CF-Access-Client-Id: secret GUARD_ID is not seeded");
    expect(logged.join("\n")).not.toContain(TOKEN);
    expect(logged.join("\n")).not.toContain("keyed-value-0123");
  });

  it("issue 26: an unseeded confirmationHeaders secret makes only that slug's guarded tools refuse, naming the variable; its list and its other tools answer", async () => {
    const gateway = createGateway(ROSTER);
    const asked = { "x-elicitation-url": "http://127.0.0.1:9/s/session" };
    const withUrl = (request: Request) => {
      for (const [k, v] of Object.entries(asked)) request.headers.set(k, v);
      return request;
    };
    const listed = await messageIn(await serve(gateway, withUrl(modern("guarded", "tools/list", {})), env()));
    expect((listed.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain("demo_write");
    const guarded = await messageIn(await serve(gateway, withUrl(modern("guarded", "tools/call", { name: "demo_write", arguments: { note: "n" } }, "demo_write")), env()));
    const text = JSON.stringify(guarded);
    expect(text).toContain('confirmationHeaders of \\"guarded\\" need secret GUARD_ID, which is not seeded');
    expect((guarded.result as { isError?: boolean }).isError).toBe(true);
    const plain = await messageIn(await serve(gateway, withUrl(modern("guarded", "tools/call", { name: "echo", arguments: { text: "still here" } }, "echo")), env()));
    expect(plain).toMatchObject({ result: { content: [{ type: "text", text: "still here" }] } });
    expect(logged.join("\n")).not.toContain("keyed-value-0123");
  });

  it("lists the mounts that answer when another hangs past its timeoutMs, and logs the list as partial", async () => {
    const gateway = createGateway(ROSTER);
    const started = Date.now();
    const response = await serve(gateway, modern("echo,slow", "tools/list", {}), env());
    expect(Date.now() - started).toBeLessThan(5_000);
    const message = await messageIn(response);
    const names = ((message.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
    expect(names).toContain("echo__echo");
    expect(names.some((n) => n.startsWith("slow__"))).toBe(false);
    expect(requestLines().at(-1)).toMatchObject({ method: "tools/list", slugs: ["echo", "slow"], outcome: "partial" });
  });

  it("reads at most its share of MAX_LISTING_BYTES of a mount whose pages never end, and lists the others beside it", async () => {
    const gateway = createGateway(ROSTER);
    paged.sent = 0;
    const alone = await messageIn(await serve(gateway, modern("paged", "tools/list", {}), env()));
    expect(JSON.stringify(alone.error)).toContain(`server \\"paged\\" lists more than the ${MAX_LISTING_BYTES} bytes of tools a listing reads of it`);
    // One page past the share is read, and nothing after it.
    expect(paged.sent).toBeLessThanOrEqual(MAX_LISTING_BYTES + 1.1 * 1024 * 1024);
    expect(paged.sent).toBeGreaterThan(MAX_LISTING_BYTES);
    paged.sent = 0;
    const beside = await messageIn(await serve(gateway, modern("echo,paged", "tools/list", {}), env()));
    expect((beside.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain("echo__echo");
    expect(paged.sent).toBeLessThanOrEqual(MAX_LISTING_BYTES / 2 + 1.1 * 1024 * 1024);
    expect(requestLines().at(-1)).toMatchObject({ method: "tools/list", outcome: "partial" });
  });

  it("hands a tool name past ASCII or with a space at an end to the mount, which answers for it, never 'could not be reached'", async () => {
    const gateway = createGateway(ROSTER);
    for (const name of ["日本", " echo"]) {
      const encoded = `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode(name)))}?=`;
      const message = await messageIn(await serve(gateway, modern("echo", "tools/call", { name, arguments: {} }, encoded), env()));
      const text = JSON.stringify(message);
      expect(text, name).not.toContain("could not be reached");
      expect(text, name).toContain(`Tool ${name} not found`);
    }
  });

  it("passes over list entries that are not tools, and lists the tool beside them", async () => {
    const gateway = createGateway(ROSTER);
    const message = await messageIn(await serve(gateway, modern("odd", "tools/list", {}), env()));
    expect((message.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(["fine"]);
  });

  it("says why when every selected mount fails to list, naming the slug and status and nothing of the body", async () => {
    const gateway = createGateway(ROSTER);
    const response = await serve(gateway, modern("broken", "tools/list", {}), env());
    const message = await messageIn(response);
    expect(JSON.stringify(message.error)).toContain('server \\"broken\\" answered HTTP 502');
    expect(JSON.stringify(message)).not.toContain("broken-secret-body");
    expect(requestLines().at(-1)).toMatchObject({ method: "tools/list", outcome: "upstream_failed" });
  });

  it("logs a call on the SDK's path (2026-07-28) with its tool and outcome, and none of its arguments", async () => {
    const gateway = createGateway(ROSTER);
    const marker = `marker-${Date.now()}`;
    const response = await serve(gateway, modern("echo", "tools/call", { name: "echo", arguments: { text: marker } }, "echo"), env());
    expect(await messageIn(response)).toMatchObject({ result: { content: [{ type: "text", text: marker }] } });
    expect(requestLines().at(-1)).toMatchObject({ caller: "alice", slugs: ["echo"], method: "tools/call", tool: "echo", outcome: "ok", status: 200 });
    expect(logged.join("\n")).not.toContain(marker);
  });
});

describe("the gateway's fetch: a POST to exactly /mcp skips the router", () => {
  it("takes /mcp with or without a query string, on any origin, and nothing else", () => {
    for (const url of ["https://gw.example.com/mcp", "https://gw.example.com/mcp?servers=echo", "http://127.0.0.1:8787/mcp?", "https://gw.example.com:443/mcp?servers=a,b&x=%2F"]) {
      expect(isMcpUrl(url), url).toBe(true);
    }
    for (const url of [
      "https://gw.example.com/",
      "https://gw.example.com/mcp/",
      "https://gw.example.com/mcpx",
      "https://gw.example.com/MCP",
      "https://gw.example.com/%6Dcp",
      "https://gw.example.com/admin/mcp",
      "https://gw.example.com//mcp",
      "https://gw.example.com/mcp/../mcp",
      "https://mcp.example.com/healthz",
    ]) {
      expect(isMcpUrl(url), url).toBe(false);
    }
  });
});
