// Covers runtime tool selection (worker/roster.ts `tools`, worker/overlay.ts, worker/admin.ts): a runtime write may
// narrow the tools a slug serves, never widen or remove a checked-in selection; the gateway's tools/list leaves every
// other tool out and a tools/call of one is refused naming the slug and the tool, without reaching the server.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RpcCode } from "../../contract/rpc";
import { createGateway } from "../../worker/gateway";
import type { GatewayEnv } from "../../worker/mcp";
import { OVERLAY_TTL_MS } from "../../worker/overlay";
import { describeUnselected, toolAllowed } from "../../worker/roster";
import { parseRoster } from "../../worker/roster-text";
import { executionContext } from "./helpers/gateway";
import { MemoryOverlay, overlayBinding } from "./helpers/overlay";

const ADMIN = "admin-token-0123456789abcdef";
const ALICE = "alice-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: ops, kind: admin, roles: [], tokenSecret: TOKEN_ADMIN }
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: open, kind: remote-http, url: "https://open.example/mcp", entitlements: [user] }
  - { slug: picked, kind: remote-http, url: "https://picked.example/mcp", entitlements: [user], tools: [ ping, echo ] }
`;
/** What each remote server lists. */
const LISTED = ["ping", "echo", "delete_all"];

const env = (store: MemoryOverlay): Record<string, unknown> => ({ TOKEN_ADMIN: ADMIN, TOKEN_ALICE: ALICE, CALLS: {}, ROSTER_OVERLAY: overlayBinding(store) });

let called: { host: string; method: string; tool?: string }[];
beforeEach(() => {
  called = [];
  for (const level of ["log", "error", "warn"] as const) vi.spyOn(console, level).mockImplementation(() => {});
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const message = (await request.json()) as { id: number; method: string; params?: { name?: string } };
    called.push({ host: new URL(request.url).host, method: message.method, ...(message.params?.name === undefined ? {} : { tool: message.params.name }) });
    const result =
      message.method === "tools/list" ? { tools: LISTED.map((name) => ({ name, inputSchema: { type: "object" } })) } : { content: [{ type: "text", text: `ran ${message.params?.name}` }] };
    return Response.json({ jsonrpc: "2.0", id: message.id, result });
  });
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(1_000_000);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function serve(gateway: ExportedHandler<GatewayEnv>, request: Request, store: MemoryOverlay): Promise<Response> {
  const ctx = executionContext();
  const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env(store), ctx);
  await response.clone().text();
  await ctx.settle();
  return response;
}

const admin = (method: string, path: string, body?: unknown) =>
  new Request(`https://gateway.test/admin/roster${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const rpc = (servers: string, method: string, params: Record<string, unknown>) =>
  new Request(`https://gateway.test/mcp?servers=${servers}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });

/** The JSON-RPC answer, whether it came as JSON or as one server-sent event. */
async function answer(response: Response): Promise<{ result?: { tools?: { name: string }[]; content?: unknown[] }; error?: { code: number; message: string } }> {
  const text = await response.text();
  const data = text.startsWith("{") ? text : (text.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice("data: ".length);
  return JSON.parse(data);
}

const toolsOf = async (gateway: ExportedHandler<GatewayEnv>, servers: string, store: MemoryOverlay) =>
  ((await answer(await serve(gateway, rpc(servers, "tools/list", {}), store))).result?.tools ?? []).map((t) => t.name);

/** Past the isolate's overlay TTL, so the next request reads the write just made. */
const later = () => vi.setSystemTime(Date.now() + OVERLAY_TTL_MS);

describe("the roster's tool selection", () => {
  it("is every tool when absent, only the listed ones when set; a list naming a tool twice is refused", () => {
    const parsed = parseRoster(ROSTER);
    expect(parsed.ok).toBe(true);
    const [open, picked] = parsed.ok ? parsed.roster.servers : [];
    expect(LISTED.map((t) => toolAllowed(open as never, t))).toEqual([true, true, true]);
    expect(LISTED.map((t) => toolAllowed(picked as never, t))).toEqual([true, true, false]);
    const twice = parseRoster(ROSTER.replace("tools: [ ping, echo ]", "tools: [ ping, ping ]"));
    expect(!twice.ok && twice.errors[0]?.path).toBe("servers[1].tools");
  });
});

describe("a runtime write may narrow the tools a slug serves, never widen them", () => {
  it("narrows a slug without a selection to any list, and a checked-in selection to some of its tools", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    expect((await serve(gateway, admin("PATCH", "/servers/open", { tools: ["ping"] }), store)).status).toBe(200);
    expect((await serve(gateway, admin("PATCH", "/servers/picked", { tools: ["echo"] }), store)).status).toBe(200);
    expect(JSON.parse(store.text ?? "").change).toEqual([
      { slug: "open", tools: ["ping"] },
      { slug: "picked", tools: ["echo"] },
    ]);
  });

  it.each([
    ["PATCH naming a tool the checked-in selection leaves out", "PATCH", { tools: ["ping", "delete_all"] }, "delete_all"],
    ["PATCH removing the selection (null)", "PATCH", { tools: null }, null],
    ["PUT of the entry without its selection", "PUT", { slug: "picked", kind: "remote-http", url: "https://picked.example/mcp", entitlements: ["user"] }, null],
  ])("%s is refused, naming the key, and nothing is written", async (_what, method, body, tool) => {
    const store = new MemoryOverlay();
    const response = await serve(createGateway(ROSTER), admin(method, "/servers/picked", body), store);
    expect(response.status).toBe(422);
    const refusal = (await response.json()) as { code: string; key: string; error: string };
    expect(refusal).toMatchObject({ code: "WIDENS_TOOLS", key: "tools" });
    if (tool !== null) expect(refusal.error).toContain(`"${tool}" is not one of its tools`);
    expect(store.version).toBe(0);
  });

  it("a runtime entry of its own may name its tools", async () => {
    const store = new MemoryOverlay();
    const added = { slug: "added", kind: "remote-http", url: "https://added.example/mcp", entitlements: ["user"], tools: ["ping"] };
    expect((await serve(createGateway(ROSTER), admin("POST", "/servers", added), store)).status).toBe(200);
    expect(JSON.parse(store.text ?? "").add).toEqual([added]);
  });
});

describe("the gateway serves a slug's tool selection", () => {
  it("tools/list leaves out every tool a checked-in selection does not name", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    expect(await toolsOf(gateway, "picked", store)).toEqual(["ping", "echo"]);
    expect(await toolsOf(gateway, "open", store)).toEqual(LISTED);
  });

  it("a runtime narrowing is served within OVERLAY_TTL_MS: tools/list (one slug or several) leaves the others out, and removing it restores the base", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    expect(await toolsOf(gateway, "open", store)).toEqual(LISTED);
    expect((await serve(gateway, admin("PATCH", "/servers/open", { tools: ["echo"] }), store)).status).toBe(200);
    later();
    expect(await toolsOf(gateway, "open", store)).toEqual(["echo"]);
    expect(await toolsOf(gateway, "open,picked", store)).toEqual(["open__echo", "picked__ping", "picked__echo"]);
    expect((await serve(gateway, admin("DELETE", "/servers/open"), store)).status).toBe(200);
    later();
    expect(await toolsOf(gateway, "open", store)).toEqual(LISTED);
  });

  it("a tools/call of a tool the selection leaves out is refused naming the slug and the tool, and never reaches the server", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    expect((await serve(gateway, admin("PATCH", "/servers/open", { tools: ["ping"] }), store)).status).toBe(200);
    later();
    for (const [servers, name, slug, tool] of [
      ["open", "delete_all", "open", "delete_all"],
      ["picked", "delete_all", "picked", "delete_all"],
      ["open,picked", "open__echo", "open", "echo"],
    ] as const) {
      called = [];
      const refused = await answer(await serve(gateway, rpc(servers, "tools/call", { name, arguments: {} }), store));
      expect(refused.error).toEqual({ code: RpcCode.InvalidParams, message: describeUnselected(slug, tool) });
      expect(refused.error?.message).toContain(`"${slug}"`);
      expect(refused.error?.message).toContain(`"${tool}"`);
      expect(called.filter((c) => c.method === "tools/call")).toEqual([]);
    }
    // A tool it serves is called as before.
    const ran = await answer(await serve(gateway, rpc("open", "tools/call", { name: "ping", arguments: {} }), store));
    expect(ran.result?.content).toEqual([{ type: "text", text: "ran ping" }]);
    expect(called.filter((c) => c.method === "tools/call")).toEqual([{ host: "open.example", method: "tools/call", tool: "ping" }]);
  });
});
