// Covers issue 13 #16 in the gateway app (worker/app.ts, worker/mcp.ts, worker/calls.ts) in Node: two sessions that
// share one caller token but ask over their own approval URLs never collide on a JSON-RPC id, and one session's cancel
// never reaches the other's call. The call registry is a stand-in that keeps live keys as the real one does.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createGateway } from "../../worker/app";
import { ALICE_TOKEN, aliceRoster, binding, executionContext, LOOPBACK_PREFIX } from "./helpers/gateway";

const TOKEN = ALICE_TOKEN;
const A = `${LOOPBACK_PREFIX}session-a`;
const B = `${LOOPBACK_PREFIX}session-b`;
const ROSTER = aliceRoster(["{ slug: held, kind: bundle, bundle: SLOW, path: /held, entitlements: [user], confirmations: true, timeoutMs: 20000 }"]);

/** A mount that never answers until its request is aborted. */
const SLOW = binding((request) => new Promise((_resolve, reject) => request.signal.addEventListener("abort", () => reject(new Error("aborted")))));

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

function post(body: unknown, approvalUrl: string): Request {
  return new Request("https://gateway.test/mcp?servers=held", {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      "x-elicitation-url": approvalUrl,
    },
    body: JSON.stringify(body),
  });
}

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
    const a = await serve(post(call, A));
    const b = await serve(post(call, B));
    await vi.waitFor(() => expect(calls.live.size, "R-CALL-11: both sessions' calls with id 1 are live at once").toBe(2));
    const [keyA, keyB] = [...calls.live.keys()];
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
