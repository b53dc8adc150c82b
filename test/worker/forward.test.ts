// Covers forwardCall (worker/mcp.ts) against a stand-in service binding: whatever ends a call, an upstream
// request still open ends with it, so a bundle never keeps working (or waiting for a yes) for a call that is over.
import { describe, expect, it } from "vitest";
import type { Caller } from "../../worker/auth";
import { forwardCall, type GatewayEnv, type GatewayRequest } from "../../worker/mcp";
import { parseRoster } from "../../worker/roster";
import { selectServers } from "../../worker/selection";
import { AbortReason } from "../../worker/upstream";

const parsed = parseRoster(`callers:
  - { id: s, kind: session, roles: [user], tokenSecret: T }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user], timeoutMs: 1000 }
`);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
const roster = parsed.roster;
const caller: Caller = { ...(roster.callers[0] as (typeof roster.callers)[number]), isAdmin: false };

/** Calls the echo tool through forwardCall; `answer` plays the bundle and sees the upstream request's signal. */
async function forward(answer: (signal: AbortSignal) => Promise<Response>): Promise<{ outcome: unknown; upstream: AbortSignal }> {
  const selection = selectServers(roster, caller, "echo");
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
  if (upstream === undefined) throw new Error("the bundle was never called");
  return { outcome, upstream };
}

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
    const { outcome, upstream } = await forward((signal) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))));
    expect(String(outcome)).toContain('server "echo" timed out after 1000 ms');
    expect(reasonOf(upstream)).toEqual({ code: "UPSTREAM_TIMEOUT", timeoutMs: 1000 });
  });

  it("leaves an exchange whose JSON answer was read to its end as it is: nothing of it is open", async () => {
    const { outcome, upstream } = await forward(async () => Response.json({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "hi" }] } }));
    expect(outcome).toEqual({ content: [{ type: "text", text: "hi" }] });
    expect(upstream.aborted).toBe(false);
  });
});
