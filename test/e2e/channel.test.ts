// The approval channel and per-call state: which slugs get which _meta, every refusal reason, teardown of
// a confirmed call (caller drop, cancel, deadline), single claim, progress relay, Durable Object cost.
import { describe, expect, it } from "vitest";
import { bearer, callsEnded, connectLegacy, connectModern, DEV_VARS, mcpUrl, quiet, rawPost, registryStats as readStats, recorder, sha256, TOKENS, textOf, waitFor } from "./helpers";

// Under the approval service's prefix, the one echo-confirmed and echo-brief may use; no test here asks it anything.
const APPROVAL_URL = "http://127.0.0.1:8788/api/v1/elicitations/session/channel-test/";
const SCRIPTED_URL = "http://127.0.0.1:8790/scripted/channel-test/";
const legacy = { "mcp-protocol-version": "2025-11-25" };

interface MetaReport {
  mount: string;
  keys: string[];
  channel: null | {
    fields: string[];
    slug: string | null;
    urlSha256: string | null;
    ttlMs: number | null;
    headers: Record<string, string>;
    refused: string | null;
    skip: boolean | null;
    call: { scope: string; key: string; nonce: string } | null;
  };
}

async function reportMeta(slug: string, headers: Record<string, string>, meta?: Record<string, unknown>): Promise<MetaReport> {
  const r = await rawPost({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "report_meta", arguments: {}, ...(meta ? { _meta: meta } : {}) } }, { ...legacy, ...headers }, slug);
  const result = (r.json as { result?: { content: { text: string }[] } }).result;
  if (result === undefined) throw new Error(`no result: ${r.text}`);
  return JSON.parse(result.content[0]?.text ?? "null") as MetaReport;
}

async function registryStats(scope: string): Promise<{ served: number; live: number }> {
  const stats = await readStats(scope);
  expect(stats).toEqual({ served: expect.any(Number), live: expect.any(Number) });
  return stats;
}

/** Waits (bounded) until exactly `n` confirmed calls of `scope` are registered and live. */
const liveCalls = (n: number, scope = "dev-session") => waitFor(async () => ((await readStats(scope)).live === n ? true : undefined));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

describe("which slugs receive the channel", () => {
  it("gives a confirmed slug the caller's URL, its ttlMs, its resolved confirmationHeaders and its call record", async () => {
    const report = await reportMeta("echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    expect(report.keys).toEqual(["dev.strad/elicitation", "progressToken"]);
    expect(report.channel).toMatchObject({
      slug: "echo-confirmed",
      urlSha256: await sha256(APPROVAL_URL),
      ttlMs: 120_000 - 15_000,
      refused: null,
      // The record key is the request id under a tag of the approval URL (docs/rules.md R-CALL-11).
      call: { scope: "dev-session", key: `${(await sha256(APPROVAL_URL)).slice(0, 16)}/n:1`, nonce: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      headers: {
        "CF-Access-Client-Id": await sha256(DEV_VARS.APPROVALS_CF_ACCESS_CLIENT_ID as string),
        "CF-Access-Client-Secret": await sha256(DEV_VARS.APPROVALS_CF_ACCESS_CLIENT_SECRET as string),
      },
    });
    expect(report.channel?.fields).toEqual(["call", "caller", "headers", "slug", "ttlMs", "url"]);
  });

  it("computes ttlMs as timeoutMs less a quarter of it when that is under 15 s", async () => {
    const report = await reportMeta("echo-brief", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    expect(report.channel?.ttlMs).toBe(6000 - 1500);
  });

  it("never gives the key to a sibling mount of the same bundle, whatever the caller sent", async () => {
    const report = await reportMeta("echo", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    expect(report.channel).toBeNull();
    expect(report.keys).toEqual([]);
  });

  it("never forwards the caller's own _meta: a forged channel and other keys do not arrive", async () => {
    const forged = { "dev.strad/elicitation": { slug: "echo", url: "http://169.254.169.254/latest/", ttlMs: 1000, headers: {} }, "x-caller-key": 1, progressToken: "caller-token" };
    const sibling = await reportMeta("echo", bearer(TOKENS.session), forged);
    expect(sibling.channel).toBeNull();
    expect(sibling.keys).toEqual(["progressToken"]);
    const confirmed = await reportMeta("echo-confirmed", bearer(TOKENS.session), forged);
    expect(confirmed.channel?.urlSha256).toBeNull();
    expect(confirmed.channel?.refused).toContain("no X-Elicitation-Url");
    expect(confirmed.keys).not.toContain("x-caller-key");
  });

  it("gives a waived slug { skip: true, slug } on every call, and never the caller's URL", async () => {
    for (const token of [TOKENS.session, TOKENS.admin, TOKENS.console, TOKENS.grant]) {
      const report = await reportMeta("echo-waived", { ...bearer(token), "x-elicitation-url": APPROVAL_URL });
      expect(report.channel).toMatchObject({ slug: "echo-waived", skip: true, urlSha256: null, refused: null });
      expect(report.channel?.fields).not.toContain("url");
      expect(report.channel?.fields).not.toContain("headers");
    }
  });
});

describe("refusals reach the bundle with a reason a person can act on", () => {
  const cases: [string, string, Record<string, string> | Headers, RegExp][] = [
    ["no header", "echo-confirmed", bearer(TOKENS.session), /no X-Elicitation-Url header, so there is no one to ask/],
    [
      "a URL outside the allowlist",
      "echo-confirmed",
      { ...bearer(TOKENS.session), "x-elicitation-url": "https://approvals.example.com/api/v1/elicitations/session/abc/" },
      /not under any of gateway\.elicitation\.allowedUrlPrefixes/,
    ],
    ["the prefix's sibling path", "echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": "http://127.0.0.1:8790/scripted-evil/x" }, /not under any/],
    ["a traversal out of the prefix", "echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": "http://127.0.0.1:8790/scripted/../admin/" }, /not under any/],
    [
      "a repeated header",
      "echo-confirmed",
      new Headers([
        ["authorization", `Bearer ${TOKENS.session}`],
        ["x-elicitation-url", APPROVAL_URL],
        ["x-elicitation-url", APPROVAL_URL],
      ]),
      /more than one value/,
    ],
    ["a console caller", "echo-confirmed", { ...bearer(TOKENS.console), "x-elicitation-url": APPROVAL_URL }, /console caller and has no session to ask/],
    ["a grant caller", "echo-confirmed", { ...bearer(TOKENS.grant), "x-elicitation-url": APPROVAL_URL }, /grant caller and has no session to ask/],
    ["an unseeded confirmationHeaders ref", "echo-unseeded", { ...bearer(TOKENS.session), "x-elicitation-url": SCRIPTED_URL }, /UNSEEDED_ACCESS_ID, which is not seeded/],
    [
      "a URL under another approval service's prefix",
      "echo-confirmed",
      { ...bearer(TOKENS.session), "x-elicitation-url": SCRIPTED_URL },
      /not under any of the approvalUrlPrefixes of "echo-confirmed"/,
    ],
    ["an admin that names no channel", "echo-confirmed", bearer(TOKENS.admin), /no X-Elicitation-Url/],
  ];

  it.each(cases)("refuses %s", async (_label, slug, headers, reason) => {
    const plain =
      headers instanceof Headers
        ? Object.fromEntries([
            ["authorization", headers.get("authorization") as string],
            ["x-elicitation-url", headers.get("x-elicitation-url") as string],
          ])
        : headers;
    const report = await reportMeta(slug, plain);
    expect(report.channel?.refused).toMatch(reason);
    expect(report.channel?.urlSha256).toBeNull();
    expect(report.channel?.call).toBeNull();
    // The refusal never repeats the credential.
    expect(report.channel?.refused).not.toContain("127.0.0.1:8790");
    expect(report.channel?.refused).not.toContain("127.0.0.1:8788");
    expect(report.channel?.refused).not.toContain("example.com");
  });

  it("gives an admin that names a channel the channel", async () => {
    const report = await reportMeta("echo-confirmed", { ...bearer(TOKENS.admin), "x-elicitation-url": APPROVAL_URL });
    expect(report.channel?.urlSha256).toBe(await sha256(APPROVAL_URL));
  });

  it("leaves the unseeded slug's unguarded tools working", async () => {
    const client = await connectLegacy("echo-unseeded", bearer(TOKENS.session));
    try {
      expect(textOf(await client.callTool("echo", { text: "still works" }))).toBe("still works");
    } finally {
      await client.close();
    }
  });
});

describe("a confirmed call is torn down with its caller", () => {
  async function startWait(tag: string, token = TOKENS.session, id: number | string = 1, slug = "echo-confirmed"): Promise<{ response: Promise<Response>; controller: AbortController }> {
    const controller = new AbortController();
    const response = fetch(mcpUrl(slug), {
      method: "POST",
      signal: controller.signal,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...legacy, ...bearer(token), "x-elicitation-url": APPROVAL_URL },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wait_for_abort", arguments: { ms: 30_000, tag } } }),
    });
    await response;
    return { response, controller };
  }

  const eventFor = (tag: string, timeoutMs = 10_000) => waitFor(async () => (await recorder.events()).find((e) => e.tag === tag), timeoutMs);

  it("fires the bundle's signal when the caller drops mid-wait (50 drops, p50/p95 printed)", async () => {
    await recorder.clear();
    const delays: number[] = [];
    const run = Date.now();
    for (let batch = 0; batch < 10; batch++) {
      // Each caller drops 150 ms after its call is registered (the gateway is forwarding it), so the bundle is
      // inside its wait when the caller leaves.
      await callsEnded("dev-session");
      const started = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => ({ tag: `drop-${run}-${batch}-${i}`, ...(await startWait(`drop-${run}-${batch}-${i}`, TOKENS.session, `drop-${batch}-${i}`)) })),
      );
      await liveCalls(5);
      await new Promise((r) => setTimeout(r, 150));
      const drops = started.map(({ tag, controller }) => {
        const droppedAt = Date.now();
        controller.abort();
        return { tag, droppedAt };
      });
      for (const { tag, droppedAt } of drops) {
        const event = await eventFor(tag);
        expect(event.outcome).toBe("aborted");
        delays.push((event.at as number) - droppedAt);
      }
    }
    delays.sort((a, b) => a - b);
    const p50 = percentile(delays, 50);
    const p95 = percentile(delays, 95);
    console.log(`caller drop -> bundle signal over ${delays.length} drops: p50 ${p50} ms, p95 ${p95} ms (target p95 <= 2000 ms)`);
    expect(delays).toHaveLength(50);
    expect(p95).toBeLessThanOrEqual(2000);
  });

  it("fires the bundle's signal when a 2026-07-28 caller closes its stream", async () => {
    const tag = `modern-drop-${Date.now()}`;
    await callsEnded("dev-session");
    const client = await connectModern("echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    const call = client.callTool("wait_for_abort", { ms: 30_000, tag });
    // The caller leaves 500 ms after its call is registered, while the bundle waits.
    await liveCalls(1);
    await new Promise((r) => setTimeout(r, 500));
    // On 2026-07-28 closing the response stream is the cancellation.
    await client.close();
    await expect(call).rejects.toThrow();
    expect((await eventFor(tag)).outcome).toBe("aborted");
  });

  it("aborts the call a notifications/cancelled names, on a new request, and no other caller's", async () => {
    const run = Date.now();
    await callsEnded("dev-session");
    await callsEnded("dev-session-2");
    const mine = await startWait(`cancel-mine-${run}`, TOKENS.session, 77);
    const theirs = await startWait(`cancel-theirs-${run}`, TOKENS.session2, 77);
    // Both calls are registered before any cancel is sent.
    await liveCalls(1, "dev-session");
    await liveCalls(1, "dev-session-2");
    // Another caller's cancel for the same id touches nothing.
    const stranger = await rawPost(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 77, reason: "not yours" } },
      { ...legacy, ...bearer(TOKENS.session2), "x-elicitation-url": APPROVAL_URL },
      "echo-confirmed",
    );
    expect(stranger.status).toBe(202);
    const cancelled = await rawPost(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 77, reason: "changed my mind" } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL },
      "echo-confirmed",
    );
    expect(cancelled.status).toBe(202);
    // session2's own cancel hit its own call: mine is aborted by my cancel.
    expect((await eventFor(`cancel-mine-${run}`)).outcome).toBe("aborted");
    const myAnswer = await (await mine.response).text();
    expect(myAnswer).toContain("cancelled");
    theirs.controller.abort();
  });

  it("leaves a call running when only another caller cancels that id", async () => {
    const run = Date.now();
    await callsEnded("dev-session");
    const mine = await startWait(`cancel-only-other-${run}`, TOKENS.session, 91);
    await liveCalls(1);
    const strangerBefore = (await registryStats("dev-session-2")).served;
    await rawPost({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 91 } }, { ...legacy, ...bearer(TOKENS.session2), "x-elicitation-url": APPROVAL_URL }, "echo-confirmed");
    // The other caller's cancel has reached that caller's own record; a misrouted abort would land within ms.
    await waitFor(async () => ((await registryStats("dev-session-2")).served > strangerBefore ? true : undefined));
    await quiet();
    expect((await recorder.events()).find((e) => e.tag === `cancel-only-other-${run}`)).toBeUndefined();
    expect((await registryStats("dev-session")).live).toBeGreaterThanOrEqual(1);
    mine.controller.abort();
    expect((await eventFor(`cancel-only-other-${run}`)).outcome).toBe("aborted");
  });

  it("ends a call at its deadline, cleanly, with a timeout error", async () => {
    const tag = `deadline-${Date.now()}`;
    const client = await connectLegacy("echo-brief", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    try {
      const started = Date.now();
      await expect(client.callTool("wait_for_abort", { ms: 30_000, tag })).rejects.toThrow(/timed out after 6000 ms/);
      expect(Date.now() - started).toBeLessThan(12_000);
      expect((await eventFor(tag)).outcome).toBe("aborted");
    } finally {
      await client.close();
    }
  });

  it("refuses a second call with the id of one still in flight for the same caller", async () => {
    await callsEnded("dev-session");
    const first = await startWait(`dup-${Date.now()}`, TOKENS.session, "dup-id");
    // The first call is registered before the second is sent.
    await liveCalls(1);
    const second = await rawPost(
      { jsonrpc: "2.0", id: "dup-id", method: "tools/call", params: { name: "echo", arguments: { text: "x" } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL },
      "echo-confirmed",
    );
    expect(second.text).toContain("already in flight");
    first.controller.abort();
  });
});

describe("claim", () => {
  it("succeeds exactly once under 20 concurrent attempts, and again for the next call", async () => {
    const client = await connectLegacy("echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    try {
      for (let round = 0; round < 2; round++) {
        const result = await client.callTool("claim_race", { n: 20 });
        expect(result.structuredContent).toEqual({ won: 1 });
      }
    } finally {
      await client.close();
    }
  });

  it("has nothing to claim on a refused channel", async () => {
    const client = await connectLegacy("echo-confirmed", bearer(TOKENS.session));
    try {
      const result = await client.callTool("claim_race", { n: 3 });
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe("progress", () => {
  it("relays the bundle's progress under the caller's own token", async () => {
    const client = await connectLegacy("echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    try {
      const seen: unknown[] = [];
      const result = await client.callTool("progress_demo", { steps: 3, ms: 50 }, { onprogress: (p) => seen.push(p) });
      expect(textOf(result)).toBe("done after 3 steps");
      expect(seen).toEqual([
        { progress: 1, total: 3, message: "step 1" },
        { progress: 2, total: 3, message: "step 2" },
        { progress: 3, total: 3, message: "step 3" },
      ]);
    } finally {
      await client.close();
    }
  });

  it("drops the bundle's progress when the caller sent no token", async () => {
    const r = await rawPost(
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "progress_demo", arguments: { steps: 2, ms: 20 } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL },
      "echo-confirmed",
    );
    expect(r.text).toContain("done after 2 steps");
    expect(r.text).not.toContain("notifications/progress");
    expect(r.text).not.toContain("strad-");
  });
});

describe("Durable Object cost", () => {
  it("spends no Durable Object request on a call to a slug without confirmations", async () => {
    const before = (await registryStats("dev-session")).served;
    const client = await connectLegacy("echo", bearer(TOKENS.session));
    try {
      for (let i = 0; i < 5; i++) await client.callTool("echo", { text: String(i) });
    } finally {
      await client.close();
    }
    expect((await registryStats("dev-session")).served).toBe(before);
  });

  it("spends at most 4 Durable Object requests on a confirmed call that claims", async () => {
    const client = await connectLegacy("echo-confirmed", { ...bearer(TOKENS.session), "x-elicitation-url": APPROVAL_URL });
    try {
      // Earlier calls' `end` requests are sent after their answers: count from when none is live and no
      // request has landed between two looks.
      let last = -1;
      const before = await waitFor(
        async () => {
          const { served, live } = await registryStats("dev-session");
          const steady = live === 0 && served === last;
          last = served;
          return steady ? served : undefined;
        },
        10_000,
        300,
      );
      await client.callTool("claim_race", { n: 1 });
      // watch + claim + the gateway's confirm of its caller (R-GATE-10) + end; end is sent after the answer:
      // once the call is no longer live it has landed, and anything more would land within the quiet time.
      await callsEnded("dev-session");
      await quiet();
      const spent = (await registryStats("dev-session")).served - before;
      expect(spent).toBeGreaterThanOrEqual(2);
      expect(spent).toBeLessThanOrEqual(4);
    } finally {
      await client.close();
    }
  });
});
