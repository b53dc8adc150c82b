// Covers sessions sharing one caller token in the gateway app (worker/app.ts, worker/mcp.ts, worker/calls.ts) in Node:
// issue 13 #16 (apart by their approval URLs) and issue 26 (apart by the Mcp-Session-Id handed out at initialize, or by a
// per-call nonce on 2026-07-28, on asking, waived and token calls alike): no collision on a JSON-RPC id, and a cancel
// reaches only its own session's call. The call registry is a stand-in that keeps live keys as the real one does.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createGateway } from "../../worker/gateway";
import { ALICE_TOKEN, aliceRoster, binding, executionContext, LOOPBACK_PREFIX, untilAborted } from "./helpers/gateway";

const TOKEN = ALICE_TOKEN;
const A = `${LOOPBACK_PREFIX}session-a`;
const B = `${LOOPBACK_PREFIX}session-b`;
const ROSTER = aliceRoster([
  "{ slug: held, kind: bundle, bundle: SLOW, path: /held, entitlements: [user], confirmations: true, timeoutMs: 20000 }",
  "{ slug: waived, kind: bundle, bundle: SLOW, path: /waived, entitlements: [user], skipConfirmations: true, timeoutMs: 20000 }",
  "{ slug: token, kind: bundle, bundle: SLOW, path: /token, entitlements: [user], fallback: token, timeoutMs: 20000 }",
]);

/** A mount that never answers until its request is aborted. */
const SLOW = binding((request) => untilAborted(request.signal));

/** The registry's rules that matter here: one live record per key, a cancel ends the live record it names and tells its watcher. */
function registry() {
  const live = new Map<string, (word: string) => void>();
  const cancelled: string[] = [];
  const encoder = new TextEncoder();
  const stub = {
    fetch: async (_url: string, init: RequestInit) => {
      const { key } = JSON.parse(String(init.body)) as { key: string };
      if (live.has(key)) return new Response("in flight", { status: 409 });
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("live\n"));
          live.set(key, (word) => {
            controller.enqueue(encoder.encode(`${word}\n`));
            controller.close();
          });
        },
      });
      return new Response(stream);
    },
    end: async (key: string) => {
      live.delete(key);
    },
    cancel: async (key: string) => {
      const say = live.get(key);
      if (say === undefined) return false;
      live.delete(key);
      cancelled.push(key);
      say("cancelled");
      return true;
    },
    claim: async () => false,
    confirm: async () => {},
  };
  return { ns: { idFromName: (name: string) => name, get: () => stub }, live, cancelled };
}

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "sessions-test", version: "0" },
};

/** One POST to /mcp?servers=<slug>: 2025-11-25 with an optional Mcp-Session-Id, or 2026-07-28 inside its envelope. */
function post(
  body: { method: string; params?: Record<string, unknown> } & Record<string, unknown>,
  approvalUrl: string,
  { slug = "held", session, modern = false }: { slug?: string; session?: string; modern?: boolean } = {},
): Request {
  const params = modern ? { ...body.params, _meta: MODERN_META } : body.params;
  const name = typeof body.params?.name === "string" ? body.params.name : undefined;
  return new Request(`https://gateway.test/mcp?servers=${slug}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": modern ? "2026-07-28" : "2025-11-25",
      ...(modern ? { "mcp-method": body.method, ...(name === undefined ? {} : { "mcp-name": name }) } : {}),
      ...(session === undefined ? {} : { "mcp-session-id": session }),
      "x-elicitation-url": approvalUrl,
    },
    body: JSON.stringify({ ...body, ...(params === undefined ? {} : { params }) }),
  });
}

/** How long a test waits for both calls to register: a loaded machine's SDK and registry round trips, not a second. */
const WAIT = { timeout: 10_000 };

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sessions-test", version: "0" } } };

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe("sessions sharing one caller token", () => {
  it("issue 13 #16: two sessions asking over their own approval URLs both run a call with id 1, and a cancel reaches only its own session's call", async () => {
    const gateway = createGateway(ROSTER);
    const calls = registry();
    const env = { TOKEN_ALICE: TOKEN, SLOW, CALLS: calls.ns };
    const serve = (request: Request) => (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env, executionContext());
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "anything", arguments: {} } };
    // Each call's key is known by waiting for it to register before the next starts: a call is registered after its
    // answer has begun, so the order of the registry's keys alone does not say whose is whose.
    const a = await serve(post(call, A));
    await vi.waitFor(() => expect(calls.live.size).toBe(1), WAIT);
    const [keyA] = [...calls.live.keys()] as [string];
    const b = await serve(post(call, B));
    await vi.waitFor(() => expect(calls.live.size, "R-CALL-11: both sessions' calls with id 1 are live at once").toBe(2), WAIT);
    const keyB = [...calls.live.keys()].find((k) => k !== keyA) as string;
    expect(keyA).not.toBe(keyB);

    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } };
    expect((await serve(post(cancel, B))).status).toBe(202);
    expect(calls.cancelled, "R-CALL-11: session B's cancel ends B's call only").toEqual([keyB]);
    expect(calls.live.has(keyA as string)).toBe(true);
    expect(await b.text()).toContain("cancelled");

    expect((await serve(post(cancel, A))).status).toBe(202);
    expect(calls.cancelled).toEqual([keyB, keyA]);
    expect(await a.text()).toContain("cancelled");
  });
});

describe("issue 26: sessions sharing one caller token, apart by the session the gateway hands out", () => {
  function setUp() {
    const gateway = createGateway(ROSTER);
    const calls = registry();
    const env = { TOKEN_ALICE: TOKEN, SLOW, CALLS: calls.ns };
    const serve = (request: Request) => (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env, executionContext());
    return { serve, calls };
  }

  it("issue 26: an initialize hands out a fresh, unguessable Mcp-Session-Id: 32 random bytes as visible ASCII, a new one each time", async () => {
    const { serve } = setUp();
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const response = await serve(post(INITIALIZE, A));
      expect(response.status).toBe(200);
      const id = response.headers.get("mcp-session-id") ?? "";
      expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      ids.add(id);
      await response.text();
    }
    expect(ids.size).toBe(20);
    // Nothing else hands one out: a later request is answered without it, on either revision.
    const listed = await serve(post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, A, { session: [...ids][0] }));
    expect(listed.headers.get("mcp-session-id")).toBeNull();
    const discover = await serve(post({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }, A, { modern: true }));
    expect(discover.headers.get("mcp-session-id")).toBeNull();
  });

  it.each([
    ["a waived call", "waived"],
    ["a call on the token fallback", "token"],
    ["a call that asks, both sessions over one approval URL", "held"],
  ])("issue 26: two 2025-11-25 sessions with one token both run %s with id 1, and a cancel from one reaches only its own", async (_case, slug) => {
    const { serve, calls } = setUp();
    // The token fallback registers only a call with nobody to ask: no approval URL for it.
    const url = slug === "token" ? "" : A;
    const sessionOf = async () => (await serve(post(INITIALIZE, url, { slug }))).headers.get("mcp-session-id") as string;
    const [one, two] = [await sessionOf(), await sessionOf()];
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "anything", arguments: {} } };
    // Each call's key is known by waiting for it to register before the next starts (see the R-CALL-11 test above).
    const a = await serve(post(call, url, { slug, session: one }));
    await vi.waitFor(() => expect(calls.live.size).toBe(1), WAIT);
    const [keyA] = [...calls.live.keys()] as [string];
    const b = await serve(post(call, url, { slug, session: two }));
    await vi.waitFor(() => expect(calls.live.size, "R-CALL-12: both sessions' calls with id 1 are live at once").toBe(2), WAIT);
    const keyB = [...calls.live.keys()].find((k) => k !== keyA) as string;
    // The record key names the session by a tag, never by its id.
    for (const key of [keyA, keyB]) {
      expect(key).toMatch(/^m:[0-9a-f]{32}\/n:1$/);
      expect(key).not.toContain(one);
      expect(key).not.toContain(two);
    }

    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } };
    expect((await serve(post(cancel, url, { slug, session: two }))).status).toBe(202);
    expect(calls.cancelled, "R-CALL-12: session two's cancel ends its own call only").toEqual([keyB]);
    expect(calls.live.has(keyA)).toBe(true);
    expect(await b.text()).toContain("cancelled");
    // A cancel with no session, or another session's, reaches neither.
    expect((await serve(post(cancel, url, { slug }))).status).toBe(202);
    expect((await serve(post(cancel, url, { slug, session: "another-session-0123456789" }))).status).toBe(202);
    expect(calls.cancelled).toEqual([keyB]);

    expect((await serve(post(cancel, url, { slug, session: one }))).status).toBe(202);
    expect(calls.cancelled).toEqual([keyB, keyA]);
    expect(await a.text()).toContain("cancelled");
  });

  it("issue 26: a second call with the id of a live one in the same session is still refused (R-CALL-5)", async () => {
    const { serve, calls } = setUp();
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "anything", arguments: {} } };
    const first = await serve(post(call, A, { slug: "waived", session: "session-one-0123456789" }));
    await vi.waitFor(() => expect(calls.live.size).toBe(1), WAIT);
    const second = await serve(post(call, A, { slug: "waived", session: "session-one-0123456789" }));
    expect(await second.text()).toContain("already in flight");
    await serve(post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, A, { slug: "waived", session: "session-one-0123456789" }));
    expect(await first.text()).toContain("cancelled");
  });

  it.each(["waived", "token", "held"])("issue 26: two 2026-07-28 calls of one token with id 1 on %s are keyed by their own nonces, and no notifications/cancelled can name them", async (slug) => {
    const { serve, calls } = setUp();
    const url = slug === "token" ? "" : A;
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "anything", arguments: {} } };
    const controllers = [new AbortController(), new AbortController()];
    const answers = controllers.map((c) => serve(new Request(post(call, url, { slug, modern: true }), { signal: c.signal })));
    await vi.waitFor(() => expect(calls.live.size).toBe(2), WAIT);
    const keys = [...calls.live.keys()];
    for (const key of keys) expect(key).toMatch(/^c:[0-9a-f-]{36}$/);
    // Whatever a cancel names, it is no record's key: on 2026-07-28 closing the stream is the cancel.
    await serve(post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, url, { slug, modern: true }));
    await serve(post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, url, { slug }));
    expect(calls.cancelled).toEqual([]);
    expect(calls.live.size).toBe(2);
    for (const c of controllers) c.abort();
    await Promise.allSettled(answers.map(async (r) => (await r).text()));
  });
});
