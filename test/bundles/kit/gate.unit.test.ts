// Covers bundles/kit/gate.ts directly: what a write needs before it leaves, what binds it to the approved target, and that one in flight is aborted with its call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FingerprintInput, fingerprint } from "../../../bundles/kit/fingerprint";
import { describeRefusal, type GateCode, GateRefusal, gatedFetch, gatedWrite, WRITE_WORDS } from "../../../bundles/kit/gate";
import { type CallScope, type CallState, runInScope } from "../../../bundles/kit/scope";
import { fakeCalls } from "./helpers/bundle";
import { HostileServer, startSink } from "./helpers/hostile-server";

let sink: Awaited<ReturnType<typeof startSink>>;
let slow: HostileServer;
beforeAll(async () => {
  sink = await startSink();
  slow = await new HostileServer().start();
  slow.route("hang", { create: () => ({ hang: true }) });
});
afterAll(async () => {
  await sink.stop();
  await slow.stop();
});

function scopeWith(call: Partial<CallState> | undefined, env: Record<string, unknown>, signal = new AbortController().signal): CallScope {
  const base: CallState = { requestId: 1, toolName: "t", channel: { kind: "none" }, deadline: undefined, progressToken: undefined, notify: async () => {} };
  return { mount: "m", signal, waitUntil: () => {}, env, call: call === undefined ? undefined : { ...base, ...call } };
}

const ask = (key?: string) => ({
  kind: "ask" as const,
  channel: { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 1000, headers: {}, ...(key ? { call: { scope: "c", key, nonce: "test-nonce-0123456789" } } : {}) },
});

/** "aborted" if the request ends in an error within `ms`, "answered" if it resolves, "still running" if neither. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((r) => (timer = setTimeout(() => r("still running"), ms)));
  const outcome = await Promise.race([
    p.then(
      () => "answered",
      () => "aborted",
    ),
    late,
  ]);
  clearTimeout(timer);
  return outcome;
}

async function refusalOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "none";
  } catch (error) {
    return error instanceof GateRefusal ? error.code : `other: ${String(error)}`;
  }
}

describe("a gated write", () => {
  it("does not start without an approval in its call", async () => {
    const calls = fakeCalls();
    const before = sink.requests.length;
    expect(await refusalOf(runInScope(scopeWith({ channel: ask("k") }, { CALLS: calls.ns }), () => gatedWrite(`${sink.base}/w`, { method: "POST" })))).toBe("NOT_APPROVED");
    expect(await refusalOf(runInScope(scopeWith(undefined, {}), () => gatedWrite(`${sink.base}/w`, { method: "POST" })))).toBe("NOT_APPROVED");
    expect(sink.requests.length).toBe(before);
  });

  it("does not start when the call has already been dropped", async () => {
    const drop = new AbortController();
    drop.abort();
    const calls = fakeCalls();
    calls.live("c", "k");
    const before = sink.requests.length;
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: calls.ns }, drop.signal);
    expect(await refusalOf(runInScope(scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" })))).toBe("CALL_DROPPED");
    expect(calls.claims).toEqual([]);
    expect(sink.requests.length).toBe(before);
  });

  it("does not start when the call drops while its claim is in flight", async () => {
    const drop = new AbortController();
    const calls = fakeCalls();
    calls.live("c", "k");
    const before = sink.requests.length;
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: calls.ns }, drop.signal);
    const write = runInScope(scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }));
    drop.abort();
    expect(await refusalOf(write)).toBe("CALL_DROPPED");
    expect(sink.requests.length).toBe(before);
  });

  it("claims once per call however many requests the write takes, and fails closed without a registry", async () => {
    const calls = fakeCalls();
    calls.live("c", "k");
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: calls.ns });
    await runInScope(scope, async () => {
      await (await gatedWrite(`${sink.base}/upload`, { method: "POST" })).text();
      await (await gatedWrite(`${sink.base}/send`, { method: "POST" })).text();
    });
    expect(calls.claims).toEqual([{ scope: "c", key: "k", won: true }]);
    const orphan = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, {});
    expect(await refusalOf(runInScope(orphan, () => gatedWrite(`${sink.base}/w`, { method: "POST" })))).toBe("CLAIM_FAILED");
  });

  it("is aborted in flight when the call drops", async () => {
    const drop = new AbortController();
    const calls = fakeCalls();
    calls.live("c", "k");
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: calls.ns }, drop.signal);
    const write = runInScope(scope, () => gatedWrite(`${slow.base}/hang/`, { method: "POST", body: "{}" }));
    await new Promise((r) => setTimeout(r, 150));
    expect(slow.requestsTo("hang")).toHaveLength(1);
    const started = Date.now();
    drop.abort();
    await expect(write).rejects.toThrow();
    // The upstream never answers: a write the drop did not abort would hang to the test's timeout. The bound leaves a
    // machine whose cores the rest of the suite holds its stalls (one CI run answered a 2 ms round trip 487 ms late).
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("fails closed when the call registry throws: the write is refused and nothing is sent", async () => {
    const throwing = { idFromName: (name: string) => name, get: () => ({ claim: async () => Promise.reject(new Error("registry unreachable")) }) };
    const before = sink.requests.length;
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: throwing });
    expect(await refusalOf(runInScope(scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" })))).toBe("CLAIM_FAILED");
    expect(sink.requests.length).toBe(before);
  });

  it("is aborted in flight when the call drops even if the write carries its own signal", async () => {
    slow.route("hang-own", { create: () => ({ hang: true }) });
    const drop = new AbortController();
    const own = new AbortController();
    const calls = fakeCalls();
    calls.live("c", "k");
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: calls.ns }, drop.signal);
    const write = runInScope(scope, () => gatedWrite(`${slow.base}/hang-own/`, { method: "POST", body: "{}", signal: own.signal }));
    await new Promise((r) => setTimeout(r, 150));
    expect(slow.requestsTo("hang-own")).toHaveLength(1);
    drop.abort();
    expect(await settledWithin(write, 1000)).toBe("aborted");
    expect(own.signal.aborted).toBe(false);
  });

  it.each<[string, RequestInit]>([
    ["does not follow a redirect", {}],
    ["does not follow a redirect even when its init asks to follow", { redirect: "follow" }],
  ])("%s", async (_name, init) => {
    const redirecting = new HostileServer();
    await redirecting.start();
    redirecting.route("r", { create: () => ({ status: 307, headers: { location: `${sink.base}/elsewhere` } }) });
    const calls = fakeCalls();
    calls.live("c", "k");
    const before = sink.requests.length;
    const scope = scopeWith({ channel: ask("k"), approval: { fingerprint: "f", approved: true } }, { CALLS: calls.ns });
    try {
      const response = await runInScope(scope, () => gatedWrite(`${redirecting.base}/r/`, { method: "POST", body: "{}", ...init }));
      expect(response.status).toBe(307);
      expect(sink.requests.length).toBe(before);
    } finally {
      await redirecting.stop();
    }
  });
});

describe("a gated write bound to its target", () => {
  const target: FingerprintInput = { operation: "send", target: { to: { set: ["ada@example.com"] }, subject: "hello" } };
  /** An approved call whose approval was given for `approvedFor`, live in a fresh registry. */
  async function approvedCall(approvedFor: FingerprintInput, opts: { approved?: boolean; key?: string; signal?: AbortSignal } = {}) {
    const calls = fakeCalls();
    calls.live("c", "k");
    const approval = { fingerprint: await fingerprint(approvedFor), approved: opts.approved ?? true };
    const scope = scopeWith({ channel: ask(opts.key ?? "k"), approval }, { CALLS: calls.ns }, opts.signal);
    return { calls, scope };
  }

  it("goes out for the target its approval was given for, and for no other, before claiming anything", async () => {
    const other = await approvedCall({ ...target, target: { ...target.target, subject: "something else" } });
    const before = sink.requests.length;
    expect(await refusalOf(runInScope(other.scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { binds: target })))).toBe("TARGET_MISMATCH");
    expect(other.calls.claims).toEqual([]);
    expect(sink.requests.length).toBe(before);
    const same = await approvedCall(target);
    expect((await runInScope(same.scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { binds: target }))).status).toBe(200);
    expect(sink.requests.length).toBe(before + 1);
  });

  it("goes out once per approval: a second bound write in the same call is refused, while unbound requests of the write still go", async () => {
    const { calls, scope } = await approvedCall(target);
    const before = sink.requests.length;
    await runInScope(scope, async () => {
      await (await gatedWrite(`${sink.base}/upload`, { method: "POST" })).text();
      await (await gatedWrite(`${sink.base}/send`, { method: "POST" }, { binds: target })).text();
      expect(await refusalOf(gatedWrite(`${sink.base}/send`, { method: "POST" }, { binds: target }))).toBe("SPENT");
      await (await gatedWrite(`${sink.base}/upload`, { method: "POST" })).text();
    });
    expect(sink.requests.slice(before).map((r) => r.path)).toEqual(["/upload", "/send", "/upload"]);
    expect(calls.claims).toEqual([{ scope: "c", key: "k", won: true }]);
  });

  it("lets one of two bound writes racing in one call through, and refuses the other", async () => {
    const { scope } = await approvedCall(target);
    const before = sink.requests.length;
    const outcomes = await runInScope(scope, () => Promise.all([1, 2].map(() => refusalOf(gatedWrite(`${sink.base}/send`, { method: "POST" }, { binds: target })))));
    expect(outcomes.sort()).toEqual(["SPENT", "none"]);
    expect(sink.requests.length).toBe(before + 1);
  });

  it("refuses a write that needs a person's yes on a tool's declaration that it never asks, which still covers a write that does not", async () => {
    const needs = await approvedCall(target, { approved: false });
    const before = sink.requests.length;
    expect(await refusalOf(runInScope(needs.scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { binds: target, needsApproval: true })))).toBe("NOT_APPROVED");
    expect(needs.calls.claims).toEqual([]);
    expect(sink.requests.length).toBe(before);
    const plain = await approvedCall(target, { approved: false });
    expect((await runInScope(plain.scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { binds: target }))).status).toBe(200);
    expect(sink.requests.length).toBe(before + 1);
  });

  it("refuses an approved write when the call names no record to claim, while a never-asking write without one still goes", async () => {
    const approval = { fingerprint: await fingerprint(target), approved: true };
    const before = sink.requests.length;
    expect(await refusalOf(runInScope(scopeWith({ channel: ask(), approval }, {}), () => gatedWrite(`${sink.base}/w`, { method: "POST" })))).toBe("NO_CALL_RECORD");
    expect(sink.requests.length).toBe(before);
    const unasked = { fingerprint: await fingerprint(target), approved: false };
    expect((await runInScope(scopeWith({ channel: { kind: "none" }, approval: unasked }, {}), () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { binds: target }))).status).toBe(200);
    expect(sink.requests.length).toBe(before + 1);
  });

  it("builds a lazy request only once every check has passed and the claim is won, and never for a refused write", async () => {
    const built: string[] = [];
    const lazy = (label: string) => () => {
      built.push(label);
      return { method: "POST" };
    };
    const dropped = new AbortController();
    dropped.abort();
    const refused = [
      await approvedCall(target, { signal: dropped.signal }),
      await approvedCall({ ...target, operation: "other" }),
      await approvedCall(target, { approved: false }),
      await approvedCall(target, { key: "not-live" }),
    ];
    const before = sink.requests.length;
    const codes: string[] = [];
    for (const [i, { scope }] of refused.entries()) codes.push(await refusalOf(runInScope(scope, () => gatedWrite(`${sink.base}/w`, lazy(`refused ${i}`), { binds: target, needsApproval: true }))));
    expect(codes).toEqual(["CALL_DROPPED", "TARGET_MISMATCH", "NOT_APPROVED", "CLAIM_FAILED"]);
    expect(built).toEqual([]);
    const { calls, scope } = await approvedCall(target);
    const claimsWhenBuilt: number[] = [];
    await runInScope(scope, () =>
      gatedWrite(
        `${sink.base}/w`,
        async () => {
          claimsWhenBuilt.push(calls.claims.length);
          return lazy("passed")();
        },
        { binds: target, needsApproval: true },
      ),
    );
    expect(built).toEqual(["passed"]);
    expect(claimsWhenBuilt).toEqual([1]);
    expect(sink.requests.length).toBe(before + 1);
  });

  it("does not start when the call drops while its lazy request is being built", async () => {
    const drop = new AbortController();
    const { scope } = await approvedCall(target, { signal: drop.signal });
    const before = sink.requests.length;
    const write = runInScope(scope, () =>
      gatedWrite(`${sink.base}/w`, async () => {
        drop.abort();
        return { method: "POST" };
      }),
    );
    expect(await refusalOf(write)).toBe("CALL_DROPPED");
    expect(sink.requests.length).toBe(before);
  });

  it("words a refusal in the write's own terms", async () => {
    const send = { act: "send", done: "sent", target: "message" };
    const { scope } = await approvedCall({ ...target, operation: "other" });
    const refusal = await runInScope(scope, () => gatedWrite(`${sink.base}/w`, { method: "POST" }, { binds: target, words: send })).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GateRefusal);
    expect((refusal as GateRefusal).message).toBe("the approval covers a different message; nothing was sent");
    const codes: GateCode[] = ["CALL_DROPPED", "NOT_APPROVED", "TARGET_MISMATCH", "SPENT", "NO_CALL_RECORD", "CLAIM_FAILED"];
    expect(codes.map((code) => describeRefusal(code, WRITE_WORDS))).toEqual([
      "the call was dropped before the write started; nothing was written",
      "no approval covers this write; nothing was written",
      "the approval covers a different target; nothing was written",
      "this call has already written once; nothing more was written",
      "the call carries no record to claim, so it cannot write safely; nothing was written",
      "the call is no longer live or was already used for a write; nothing was written",
    ]);
  });
});

describe("a gated fetch for an upstream client", () => {
  it("sends reads as they are, tied to the call, and routes writes through the gate", async () => {
    const scope = scopeWith({ channel: ask("k") }, { CALLS: fakeCalls().ns });
    const fetcher = gatedFetch((url, method) => method === "POST" && url.pathname === "/send");
    const before = sink.requests.length;
    await runInScope(scope, async () => {
      expect((await fetcher(`${sink.base}/read`)).status).toBe(200);
      expect(await refusalOf(fetcher(`${sink.base}/send`, { method: "POST" }))).toBe("NOT_APPROVED");
      expect(await refusalOf(fetcher(new Request(`${sink.base}/send`, { method: "post" })))).toBe("NOT_APPROVED");
    });
    expect(sink.requests.slice(before).map((r) => r.path)).toEqual(["/read"]);
  });

  it("treats a lowercase method in init as the same method: a lowercase write still needs approval", async () => {
    const scope = scopeWith({ channel: ask("k") }, { CALLS: fakeCalls().ns });
    const fetcher = gatedFetch((url, method) => (method === "POST" || method === "DELETE") && url.pathname === "/send");
    const before = sink.requests.length;
    await runInScope(scope, async () => {
      expect(await refusalOf(fetcher(`${sink.base}/send`, { method: "post" }))).toBe("NOT_APPROVED");
      expect(await refusalOf(fetcher(`${sink.base}/send`, { method: "delete" }))).toBe("NOT_APPROVED");
    });
    expect(sink.requests.length).toBe(before);
  });

  it("aborts a read in flight when the call drops", async () => {
    slow.route("hang-read", { poll: () => ({ hang: true }) });
    const drop = new AbortController();
    const scope = scopeWith({ channel: ask("k") }, { CALLS: fakeCalls().ns }, drop.signal);
    const fetcher = gatedFetch((_url, method) => method !== "GET");
    const read = runInScope(scope, () => fetcher(`${slow.base}/hang-read/item`));
    await new Promise((r) => setTimeout(r, 150));
    expect(slow.requestsTo("hang-read")).toHaveLength(1);
    drop.abort();
    expect(await settledWithin(read, 1000)).toBe("aborted");
  });
});
