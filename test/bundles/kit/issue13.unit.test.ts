// Covers issue 13 #18 in the kit: the approval client's deadline abort and redirect refusal, and the gate's check after its claim, each failing by an assertion that names its rule rather than by a test timeout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApprovalRequest, type ApprovalResult, type FetchLike, requestApproval } from "../../../bundles/kit/approval-client";
import { GateRefusal, gatedWrite } from "../../../bundles/kit/gate";
import { type CallScope, type CallState, runInScope } from "../../../bundles/kit/scope";
import { HostileServer, startSink } from "./helpers/hostile-server";

let hostile: HostileServer;
let sink: Awaited<ReturnType<typeof startSink>>;
let n = 0;
const name = () => `issue13-${++n}`;

beforeAll(async () => {
  hostile = await new HostileServer().start();
  sink = await startSink();
});
afterAll(async () => {
  await hostile.stop();
  await sink.stop();
});

function ask(url: string, over: Partial<ApprovalRequest> = {}): Promise<ApprovalResult> {
  return requestApproval({
    url,
    headers: { "CF-Access-Client-Id": "edge-id.access", "CF-Access-Client-Secret": "edge-secret-0123456789" },
    message: "demo: This will record a note.",
    toolName: "demo_write",
    deadline: Date.now() + 5_000,
    signal: new AbortController().signal,
    pollIntervalMs: 50,
    ...over,
  });
}

/** The promise's value, or "still waiting" once `ms` passed: a rule that fails shows up as an assertion, not a test timeout. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | "still waiting"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"still waiting">((r) => (timer = setTimeout(() => r("still waiting"), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("issue 13 #18: the approval client", () => {
  it("issue 13 #18: aborts a create and a poll that hang, at the deadline, and answers expired", async () => {
    for (const [what, handlers] of [
      ["create", { create: () => ({ hang: true }) }],
      ["poll", { poll: () => ({ hang: true }) }],
    ] as const) {
      const started = Date.now();
      const outcome = await within(ask(hostile.route(name(), handlers), { deadline: started + 300 }), 3_000);
      expect(outcome, `R-CLIENT-5: a ${what} that hangs is aborted at the channel's deadline`).toMatchObject({ ok: true, answer: "expired" });
      expect(Date.now() - started, `R-CLIENT-5: the ${what} ends at the deadline, not later`).toBeLessThan(1_500);
    }
  });

  it("issue 13 #18: asks fetch never to follow a redirect, and a redirect to an accept never approves", async () => {
    // The redirect's target answers accept: following it would approve the call.
    const target = hostile.route(name(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    const redirects: RequestInit["redirect"][] = [];
    const recording: FetchLike = (input, init) => {
      redirects.push(init.redirect);
      return fetch(input, init);
    };
    const onCreate = hostile.route(name(), { create: () => ({ status: 302, headers: { location: target } }) });
    const onPoll = hostile.route(name(), { poll: () => ({ status: 307, headers: { location: `${target}any-id` } }) });
    const before = sink.requests.length;
    for (const url of [onCreate, onPoll]) {
      const result = await within(ask(url, { fetch: recording }), 3_000);
      expect(result, "R-CLIENT-3: a redirect is an error, never followed to an answer").toMatchObject({ ok: false, error: { code: "APPROVAL_REDIRECT" } });
    }
    expect(redirects.length).toBeGreaterThan(0);
    expect(
      redirects.every((r) => r === "manual"),
      "R-CLIENT-3: every request to the approval service says redirect: manual",
    ).toBe(true);
    expect(sink.requests.length).toBe(before);
  });
});

describe("issue 13 #18: the gate", () => {
  it("issue 13 #18: never starts a write whose call dropped while its claim was in flight, even through a fetch that ignores the signal", async () => {
    const drop = new AbortController();
    // The registry grants the claim, and the caller leaves during that round trip.
    const ns = {
      idFromName: (id: string) => id,
      get: () => ({
        claim: async () => {
          drop.abort();
          return true;
        },
      }),
    };
    const base: CallState = { requestId: 1, toolName: "t", channel: { kind: "none" }, deadline: undefined, progressToken: undefined, notify: async () => {} };
    const channel = { kind: "ask" as const, channel: { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 1000, headers: {}, call: { scope: "c", key: "k", nonce: "test-nonce-0123456789" } } };
    const scope: CallScope = { mount: "m", signal: drop.signal, waitUntil: () => {}, env: { CALLS: ns }, call: { ...base, channel, approval: { fingerprint: "f", approved: true } } };
    const started: string[] = [];
    const deaf = async (input: RequestInfo | URL) => {
      started.push(String(input));
      return new Response("sent");
    };
    let refusal = "none";
    try {
      await runInScope(scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { fetch: deaf as typeof fetch }));
    } catch (error) {
      refusal = error instanceof GateRefusal ? error.code : `other: ${String(error)}`;
    }
    expect(started, "R-GATE-3: a write whose call dropped during its claim never starts").toEqual([]);
    expect(refusal, "R-GATE-3: the gate refuses it as a dropped call").toBe("CALL_DROPPED");
  });
});
