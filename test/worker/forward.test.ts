// Covers forwardCall (worker/mcp.ts) against a stand-in service binding: whatever ends a call, an upstream
// request still open ends with it, so a bundle never keeps working (or waiting for a yes) for a call that is over.
import { afterEach, describe, expect, it, vi } from "vitest";
import { RpcCode, RpcError } from "../../contract/rpc";
import type { Caller } from "../../worker/auth";
import { forwardCall, type GatewayEnv, type GatewayRequest } from "../../worker/mcp";
import { parseRoster } from "../../worker/roster-text";
import { selectServers } from "../../worker/selection";
import { AbortReason } from "../../worker/upstream";
import { untilAborted } from "./helpers/gateway";

const parsed = parseRoster(`callers:
  - { id: s, kind: session, roles: [user], tokenSecret: T }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user], timeoutMs: 1000 }
  - slug: keyed
    kind: bundle
    bundle: ECHO
    path: /keyed
    entitlements: [user]
    headers: { Authorization: "Bearer \${KEYED_TOKEN}" }
    mayBeUnseeded: [KEYED_TOKEN]
`);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
const roster = parsed.roster;
const caller: Caller = { ...(roster.callers[0] as (typeof roster.callers)[number]), isAdmin: false };

/** Calls the echo tool through forwardCall; `answer` plays the bundle and sees the upstream request's signal. */
async function forward(answer: (signal: AbortSignal) => Promise<Response>, slug = "echo"): Promise<{ outcome: unknown; upstream: AbortSignal }> {
  const { outcome, upstream } = await forwardTo(slug, answer);
  if (upstream === undefined) throw new Error("the bundle was never called");
  return { outcome, upstream };
}

async function forwardTo(slug: string, answer: (signal: AbortSignal) => Promise<Response>): Promise<{ outcome: unknown; upstream: AbortSignal | undefined }> {
  const selection = selectServers(roster, caller, slug);
  if (!selection.ok) throw new Error(selection.message);
  let upstream: AbortSignal | undefined;
  const ECHO = {
    fetch: (_url: string, init: RequestInit) => {
      upstream = init.signal as AbortSignal;
      return answer(upstream);
    },
  };
  const gw: GatewayRequest = {
    roster,
    env: { ECHO } as unknown as GatewayEnv,
    caller,
    selection,
    elicitationHeader: null,
    waitUntil: () => {},
    log: { tool: null, outcome: "ok" },
  };
  const outcome = await forwardCall(gw, { name: "echo", arguments: { text: "hi" } }, { id: 7, signal: new AbortController().signal }).catch((error: unknown) => error);
  return { outcome, upstream };
}

/** A bundle that answers only when its request is aborted, with the abort's reason. */
const hanging = untilAborted;

/** An event stream that sends `frames` and then stays open, as a bundle still working would. */
function openStream(frames: string): Response {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(frames));
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream" } });
}

const reasonOf = (signal: AbortSignal) => (signal.reason instanceof AbortReason ? signal.reason.error : signal.reason);

describe("forwardCall ends the upstream request with the call", () => {
  it("aborts an event stream still open once its answer is in", async () => {
    const { outcome, upstream } = await forward(async () => openStream('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n'));
    expect(outcome).toEqual({ content: [] });
    expect(upstream.aborted).toBe(true);
    expect(reasonOf(upstream)).toEqual({ code: "UPSTREAM_ABORTED", reason: "the call has ended" });
  });

  it("aborts an upstream whose event stream turned unusable while it was still working", async () => {
    const { outcome, upstream } = await forward(async () => openStream("event: message\ndata: {not json\n\n"));
    expect(String(outcome)).toContain('server "echo" gave an unusable answer');
    expect(upstream.aborted).toBe(true);
  });

  it("aborts the fetch itself when the hop's timeoutMs passes, and says so", async () => {
    const { outcome, upstream } = await forward(hanging);
    expect(outcome).toBeInstanceOf(RpcError);
    expect((outcome as RpcError).code).toBe(RpcCode.UpstreamTimeout);
    expect(String(outcome)).toContain('server "echo" timed out after 1000 ms');
    expect(reasonOf(upstream)).toEqual({ code: "UPSTREAM_TIMEOUT", timeoutMs: 1000 });
  });

  it("leaves an exchange whose JSON answer was read to its end as it is: nothing of it is open", async () => {
    const { outcome, upstream } = await forward(async () => Response.json({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "hi" }] } }));
    expect(outcome).toEqual({ content: [{ type: "text", text: "hi" }] });
    expect(upstream.aborted).toBe(false);
  });
});

describe("forwardCall's bounds and refusals", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives the hop exactly its timeoutMs: not aborted a millisecond before, aborted at it", async () => {
    vi.useFakeTimers();
    let upstream: AbortSignal | undefined;
    const pending = forward((signal) => {
      upstream = signal;
      return hanging(signal);
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(upstream?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(upstream?.aborted).toBe(true);
    expect(String((await pending).outcome)).toContain("timed out after 1000 ms");
  });

  it("relays an upstream's own JSON-RPC error code", async () => {
    const { outcome } = await forward(async () => Response.json({ jsonrpc: "2.0", id: 1, error: { code: -32011, message: "no such item" } }));
    expect((outcome as RpcError).code).toBe(-32011);
    expect(String(outcome)).toContain('server "echo": no such item');
  });

  it("refuses a call whose server header needs a secret that is not seeded, naming it, and never calls the bundle", async () => {
    const { outcome, upstream } = await forwardTo("keyed", async () => Response.json({ jsonrpc: "2.0", id: 1, result: {} }));
    expect(upstream).toBeUndefined();
    expect((outcome as RpcError).code).toBe(RpcCode.UpstreamFailed);
    expect(String(outcome)).toContain('server "keyed" needs secret KEYED_TOKEN, which is not seeded');
  });
});
