// Covers two rules of forwardCall (worker/mcp.ts) that only the e2e suite held, in Node against a stand-in
// service binding: the caller's own _meta never goes upstream (R-FWD-2), and the upstream request is aborted
// when the caller leaves (R-CALL-1). Each failure message names the rule.
import { describe, expect, it } from "vitest";
import { CHANNEL_META_KEY } from "../../contract/channel";
import { RpcCode, RpcError } from "../../contract/rpc";
import type { Caller } from "../../worker/auth";
import { type CallContext, forwardCall, type GatewayEnv, type GatewayRequest } from "../../worker/mcp";
import { parseRoster } from "../../worker/roster-text";
import { selectServers } from "../../worker/selection";
import { AbortReason } from "../../worker/upstream";
import { untilAborted } from "./helpers/gateway";

const parsed = parseRoster(`callers:
  - { id: s, kind: session, roles: [user], tokenSecret: T }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user], timeoutMs: 1500 }
`);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
const roster = parsed.roster;
const caller: Caller = { ...(roster.callers[0] as (typeof roster.callers)[number]), isAdmin: false };

interface Upstream {
  body: { params?: { _meta?: Record<string, unknown>; arguments?: unknown } } | undefined;
  signal: AbortSignal | undefined;
}

/** forwardCall to the echo mount with `params`; `answer` plays the bundle. */
async function forward(params: Record<string, unknown>, call: Partial<CallContext>, answer: (signal: AbortSignal) => Promise<Response>) {
  const selection = selectServers(roster, caller, "echo");
  if (!selection.ok) throw new Error(selection.message);
  const upstream: Upstream = { body: undefined, signal: undefined };
  const ECHO = {
    fetch: async (_url: string, init: RequestInit) => {
      upstream.body = JSON.parse(String(init.body)) as Upstream["body"];
      upstream.signal = init.signal as AbortSignal;
      return answer(upstream.signal);
    },
  };
  const gw: GatewayRequest = { roster, env: { ECHO } as unknown as GatewayEnv, caller, selection, elicitationHeader: null, waitUntil: () => {}, log: { tool: null, outcome: "ok" } };
  const outcome = await forwardCall(gw, { name: "echo", ...params } as never, { id: 7, signal: new AbortController().signal, ...call }).catch((error: unknown) => error);
  return { outcome, upstream };
}

const answered = async () => Response.json({ jsonrpc: "2.0", id: 1, result: { content: [] } });
const hanging = untilAborted;

describe("issue 13 #18: forwardCall's rules, each named when it breaks", () => {
  it("issue 13 #18: R-FWD-2 — the caller's own _meta never reaches the upstream, not even its progress token", async () => {
    const forged = { url: "https://evil.example/s/", ttlMs: 1, headers: { "CF-Access-Client-Secret": "stolen" } };
    const callerMeta = { [CHANNEL_META_KEY]: forged, "x-caller-key": "caller-value", progressToken: "caller-token", __proto__: { polluted: true } };
    const { upstream } = await forward({ arguments: { text: "hi" }, _meta: callerMeta }, { progressToken: "caller-token" }, answered);
    const meta = upstream.body?.params?._meta ?? {};
    const rule = "R-FWD-2: the caller's own _meta is never forwarded upstream";
    expect(
      Object.keys(meta).filter((k) => !k.startsWith("io.modelcontextprotocol/") && k !== "progressToken"),
      rule,
    ).toEqual([]);
    expect(meta[CHANNEL_META_KEY], rule).toBeUndefined();
    expect(JSON.stringify(upstream.body), rule).not.toContain("caller-value");
    expect(JSON.stringify(upstream.body), rule).not.toContain("stolen");
    expect(meta.progressToken, `${rule}: the upstream gets the gateway's own progress token`).toMatch(/^strad-/);
  });

  it("issue 13 #18: R-CALL-1 — the upstream request is aborted when the caller leaves, and the call ends Cancelled", async () => {
    const leave = new AbortController();
    setTimeout(() => leave.abort(), 30);
    const started = Date.now();
    const { outcome, upstream } = await forward({ arguments: { text: "hi" } }, { signal: leave.signal }, hanging);
    const rule = "R-CALL-1: the upstream request is aborted when the caller leaves";
    expect(upstream.signal?.aborted, rule).toBe(true);
    const reason = upstream.signal?.reason instanceof AbortReason ? upstream.signal.reason.error : upstream.signal?.reason;
    expect(reason, `${rule} (with the caller's departure as its reason, not the hop's timeout)`).toEqual({ code: "UPSTREAM_ABORTED", reason: "the caller went away" });
    expect(Date.now() - started, `${rule}, at once: not at the hop's 1.5 s timeout`).toBeLessThan(1_000);
    expect(outcome instanceof RpcError && outcome.code, rule).toBe(RpcCode.Cancelled);
  });
});
