// Covers the CallRegistry Durable Object (durable-objects/call-registry.ts) on workerd, as the gateway build
// deploys it: a confirmed call's single claim, only with the call's own nonce and only while it is live, and
// what cancel, end and the deadline do to it. The kit's unit tests use a stand-in for it; this is the real one.
import { describe, expect, it } from "vitest";
import { type CallRegistryNamespace, CLAIM_CONFIRM_MAX_MS, CLAIM_HOLD_MS, MAX_LIVE_CALLS, MAX_QUESTION_ROUNDS, questionTag } from "../../contract/call-registry";
import type { CallRegistry } from "../../durable-objects/call-registry";
import { watchCall } from "../../worker/calls";
import { useCallRegistry } from "./helpers";

interface Registry {
  fetch(url: string, init: RequestInit): Promise<Response>;
  claim: CallRegistry["claim"];
  confirm: CallRegistry["confirm"];
  end: CallRegistry["end"];
  cancel: CallRegistry["cancel"];
  stats: CallRegistry["stats"];
  answer: CallRegistry["answer"];
}

const namespace = useCallRegistry();
let scopes = 0;

/** A registry of its own for each test (one object per caller scope, as the gateway names them), with its scope. */
async function scoped(): Promise<{ calls: Registry; scope: string }> {
  const ns = await namespace();
  const scope = `test-scope-${++scopes}`;
  return { calls: ns.get(ns.idFromName(scope)) as unknown as Registry, scope };
}

async function registry(): Promise<Registry> {
  return (await scoped()).calls;
}

/**
 * A claim as the gateway answers it for a caller that is still there: its probes went out, so it confirms. Two
 * calls from Node need not reach the object in the order they were made, so the word is repeated until the claim
 * is answered (a confirm before the claim is on hold is ignored).
 */
async function confirmedClaim(calls: Registry, key: string, nonce: string): Promise<boolean> {
  let answered = false;
  const claim = calls.claim(key, nonce).finally(() => {
    answered = true;
  });
  while (!answered) {
    await calls.confirm(key, nonce);
    await new Promise((r) => setTimeout(r, 20));
  }
  return claim;
}

/** Registers a call as the gateway does, and reads the words its watch stream says. */
async function watch(calls: Registry, key: string, nonce: string, deadline = Date.now() + 60_000) {
  const response = await calls.fetch("https://calls/watch", { method: "POST", body: JSON.stringify({ key, nonce, deadline }) });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  // Word by word, as watchCall reads them: on a loaded machine two words can come in one chunk ("live\ndeadline").
  let buffered = "";
  const next = async (): Promise<string | "closed"> => {
    for (;;) {
      const at = buffered.indexOf("\n");
      if (at !== -1) {
        const word = buffered.slice(0, at).trim();
        buffered = buffered.slice(at + 1);
        return word;
      }
      if (reader === undefined) return "closed";
      const { done, value } = await reader.read();
      if (done) return buffered.trim() === "" ? "closed" : buffered.trim();
      buffered += decoder.decode(value, { stream: true });
    }
  };
  return { status: response.status, next, stop: () => reader?.cancel().catch(() => {}) };
}

describe("CallRegistry", () => {
  it("lets a live call be claimed once, and only with the nonce it was registered with", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:1", "nonce-a");
    expect(w.status).toBe(200);
    expect(await w.next()).toBe("live");
    expect(await calls.claim("n:1", "nonce-b")).toBe(false);
    expect(await confirmedClaim(calls, "n:1", "nonce-a")).toBe(true);
    expect(await calls.claim("n:1", "nonce-a")).toBe(false);
    expect(await calls.claim("n:2", "nonce-a")).toBe(false);
    await w.stop();
  });

  it("refuses a second registration of a call that is still live", async () => {
    const calls = await registry();
    const first = await watch(calls, "s:7", "nonce-a");
    const second = await watch(calls, "s:7", "nonce-b");
    expect(second.status).toBe(409);
    expect(await calls.claim("s:7", "nonce-b")).toBe(false);
    expect(await confirmedClaim(calls, "s:7", "nonce-a")).toBe(true);
    await first.stop();
  });

  it("tells the watcher of a cancelled call, which can then never be claimed", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:3", "nonce-a");
    expect(await w.next()).toBe("live");
    expect(await calls.cancel("n:3")).toBe(true);
    expect(await w.next()).toBe("cancelled");
    expect(await calls.claim("n:3", "nonce-a")).toBe(false);
    expect(await calls.cancel("n:3")).toBe(false);
    expect(await calls.cancel("n:unknown")).toBe(false);
  });

  it("tells the watcher when the deadline passes, and a call past it can never be claimed", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:4", "nonce-a", Date.now() + 300);
    expect(await w.next()).toBe("live");
    expect(await w.next()).toBe("deadline");
    expect(await calls.claim("n:4", "nonce-a")).toBe(false);
  });

  it("ends a call only for the nonce that registered it", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:5", "nonce-a");
    expect(await w.next()).toBe("live");
    await calls.end("n:5", "nonce-b");
    expect(await confirmedClaim(calls, "n:5", "nonce-a")).toBe(true);
    expect(await w.next()).toBe("probe");
    await calls.end("n:5", "nonce-a");
    expect(await w.next()).toBe("closed");
    expect(await calls.cancel("n:5")).toBe(false);
  });

  it("gives an id reused after its call ended to the new call alone: the old call can neither claim nor end it", async () => {
    const calls = await registry();
    const old = await watch(calls, "n:6", "nonce-old");
    await calls.end("n:6", "nonce-old");
    expect(await calls.claim("n:6", "nonce-old")).toBe(false);
    await old.stop();
    const fresh = await watch(calls, "n:6", "nonce-new");
    expect(fresh.status).toBe(200);
    expect(await calls.claim("n:6", "nonce-old")).toBe(false);
    await calls.end("n:6", "nonce-old");
    expect(await confirmedClaim(calls, "n:6", "nonce-new")).toBe(true);
    await fresh.stop();
  });

  it("holds a claim before granting it and asks the watching gateway to probe its caller meanwhile", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:20", "nonce-a");
    expect(await w.next()).toBe("live");
    const started = Date.now();
    const claim = calls.claim("n:20", "nonce-a");
    expect(await w.next()).toBe("probe");
    // The gateway's confirmation comes early; the hold still runs its course.
    await calls.confirm("n:20", "nonce-a");
    expect(await claim).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(CLAIM_HOLD_MS.fallback - 5);
    await w.stop();
  });

  it("refuses a claim its gateway never confirms (a caller it could not vouch for), once the wait runs out", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:24", "nonce-a");
    expect(await w.next()).toBe("live");
    const started = Date.now();
    const claim = calls.claim("n:24", "nonce-a");
    expect(await w.next()).toBe("probe");
    await calls.confirm("n:24", "nonce-other");
    expect(await claim, "R-GATE-10: an unconfirmed claim is refused").toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(CLAIM_CONFIRM_MAX_MS - 50);
    expect(await calls.claim("n:24", "nonce-a"), "the refused claim is spent").toBe(false);
    await w.stop();
  }, 20_000);

  it("grants a claim confirmed late, as soon as the word comes, when the hold is long over", async () => {
    const calls = await registry();
    // The claim's answer follows the word by about one round trip to the object, not by the CLAIM_CONFIRM_MAX_MS (5 s)
    // a claim waits at most, nor by some polling interval. One sample is at the mercy of a machine whose two cores the
    // rest of the suite holds (a CI run saw the answer come 487 ms after a 2 ms confirm), so up to three calls are
    // confirmed at different moments past the hold: the fastest answer is held to 200 ms (or three of its own confirm
    // round trips), and every answer to half the 5 s.
    const latencies: number[] = [];
    for (let trial = 0; trial < 3; trial++) {
      const key = `n:25-${trial}`;
      const w = await watch(calls, key, "nonce-a");
      expect(await w.next()).toBe("live");
      const claim = calls.claim(key, "nonce-a");
      expect(await w.next()).toBe("probe");
      await new Promise((r) => setTimeout(r, CLAIM_HOLD_MS.fallback + 300 + trial * 110));
      const confirmedAt = Date.now();
      await calls.confirm(key, "nonce-a");
      const roundTrip = Date.now() - confirmedAt;
      expect(await claim).toBe(true);
      const latency = Date.now() - confirmedAt;
      await w.stop();
      expect(latency).toBeLessThan(CLAIM_CONFIRM_MAX_MS / 2);
      latencies.push(latency);
      if (latency < Math.max(200, 3 * roundTrip)) return;
    }
    expect.fail(`no claim answered within 200 ms of its late confirmation: ${latencies.join(", ")} ms`);
  }, 20_000);

  it("refuses a claim on hold when the gateway ends the call before the hold runs out (its caller left)", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:21", "nonce-a");
    expect(await w.next()).toBe("live");
    const claim = calls.claim("n:21", "nonce-a");
    expect(await w.next()).toBe("probe");
    await new Promise((r) => setTimeout(r, CLAIM_HOLD_MS.fallback / 2));
    await calls.end("n:21", "nonce-a");
    expect(await claim).toBe(false);
  });

  it("refuses a claim on hold when the call is cancelled during the hold, and a second claim while the first is held", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:22", "nonce-a");
    expect(await w.next()).toBe("live");
    const claim = calls.claim("n:22", "nonce-a");
    expect(await w.next()).toBe("probe");
    expect(await calls.claim("n:22", "nonce-a")).toBe(false);
    expect(await calls.cancel("n:22")).toBe(true);
    expect(await w.next()).toBe("cancelled");
    expect(await claim).toBe(false);
  });
});

describe("CallRegistry with a 2 s hold (STRAD_CLAIM_HOLD_MS)", () => {
  // The deadline must fall inside the hold: with the default 250 ms hold it had to come 125 ms after the watch, and on
  // a loaded machine the claim itself came later than that. A 2 s hold leaves the claim 1 s to arrive.
  const HOLD_MS = 2_000;
  const longHold = useCallRegistry({ STRAD_CLAIM_HOLD_MS: String(HOLD_MS) });

  it("refuses a claim on hold when the deadline passes during the hold", async () => {
    const ns = await longHold();
    const calls = ns.get(ns.idFromName("test-scope-long-hold")) as unknown as Registry;
    const w = await watch(calls, "n:23", "nonce-a", Date.now() + HOLD_MS / 2);
    expect(await w.next()).toBe("live");
    const claim = calls.claim("n:23", "nonce-a");
    expect(await w.next()).toBe("probe");
    expect(await w.next()).toBe("deadline");
    expect(await claim).toBe(false);
  });
});

describe("a caller's live calls are capped, and deadlines are found among many records", () => {
  it("issue 13 #14: refuses a watch past 256 live calls of one caller, which watchCall reports as its own outcome naming the cap; an ended or cancelled call frees its place", async () => {
    const { calls, scope } = await scoped();
    const open: Awaited<ReturnType<typeof watch>>[] = [];
    for (let i = 0; i < MAX_LIVE_CALLS; i += 32) {
      open.push(...(await Promise.all(Array.from({ length: Math.min(32, MAX_LIVE_CALLS - i) }, (_, j) => watch(calls, `n:${i + j}`, `nonce-${i + j}`)))));
    }
    expect(open.every((w) => w.status === 200)).toBe(true);
    expect(MAX_LIVE_CALLS).toBe(256);
    expect((await calls.stats()).live).toBe(MAX_LIVE_CALLS);

    const over = await watch(calls, "n:overflow", "nonce-overflow");
    expect(over.status, `R-CALL-10: a caller holds at most ${MAX_LIVE_CALLS} live calls`).toBe(429);
    const result = await watchCall((await namespace()) as unknown as CallRegistryNamespace, { scope, key: "n:overflow-2", nonce: "nonce-x" }, Date.now() + 60_000, { abort: () => {} }, 60_000);
    expect(result, "R-CALL-10: the gateway hears a distinct too-many outcome naming the cap").toEqual({ ok: false, inFlight: false, tooMany: MAX_LIVE_CALLS });

    await calls.end("n:0", "nonce-0");
    expect(await calls.cancel("n:1")).toBe(true);
    const a = await watch(calls, "n:overflow", "nonce-overflow");
    const b = await watch(calls, "n:overflow-2", "nonce-overflow-2");
    expect([a.status, b.status], "R-CALL-10: an ended or cancelled call no longer counts toward the cap").toEqual([200, 200]);
    expect((await watch(calls, "n:overflow-3", "nonce-overflow-3")).status).toBe(429);
    // Claim and the rest still work at the cap.
    expect(await confirmedClaim(calls, "n:overflow", "nonce-overflow")).toBe(true);
    for (const w of [...open, a, b]) await w.stop();
  }, 120_000);

  it("issue 13 #14: tells the watcher of the one record due among many far-off ones, at its deadline, and frees its place", async () => {
    const calls = await registry();
    const far = await Promise.all(Array.from({ length: 64 }, (_, i) => watch(calls, `s:far-${i}`, `nonce-${i}`)));
    const near = await watch(calls, "s:near", "nonce-near", Date.now() + 400);
    expect(await near.next()).toBe("live");
    const started = Date.now();
    expect(await near.next(), "R-CALL-7: the deadline alarm reaches the record due, whatever else the object holds").toBe("deadline");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await calls.claim("s:near", "nonce-near")).toBe(false);
    expect((await calls.stats()).live).toBe(64);
    expect(await confirmedClaim(calls, "s:far-3", "nonce-3"), "the far-off records are still live").toBe(true);
    for (const w of far) await w.stop();
  }, 60_000);
});

describe("claim-once on the real registry", () => {
  it("issue 13 #18: grants one of 20 concurrent claims of a live call, and none after, naming the rule when it does not", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:1", "nonce-a");
    expect(await w.next()).toBe("live");
    const asked = Array.from({ length: 20 }, () => calls.claim("n:1", "nonce-a"));
    // The probe word comes once one of them is on hold; its gateway then vouches for the caller.
    expect(await w.next()).toBe("probe");
    await calls.confirm("n:1", "nonce-a");
    const claims = await Promise.all(asked);
    expect(claims.filter(Boolean).length, "R-GATE-4: a call's claim is granted exactly once, however many ask at once").toBe(1);
    expect(await calls.claim("n:1", "nonce-a"), "R-GATE-4: a claim after the granted one is refused").toBe(false);
    await calls.end("n:1", "nonce-a");
    expect(await calls.claim("n:1", "nonce-a"), "R-GATE-4: an ended call is never claimed").toBe(false);
    await w.stop();
  });

  it("issue 13 #18: refuses a claim with another nonce, naming the rule", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:2", "nonce-a");
    expect(await w.next()).toBe("live");
    expect(await calls.claim("n:2", "nonce-b"), "R-CALL-6: only the nonce that registered the call can claim it").toBe(false);
    expect(await confirmedClaim(calls, "n:2", "nonce-a"), "R-GATE-4: the registered nonce claims a live call").toBe(true);
    await w.stop();
  });
});

// A 2025-11-25 client's answer to a question the gateway pushed (docs/rules.md R-PUSH-2): the real watchCall follows the
// record, so what it hands the call is exactly what the gateway isolate holding the call would get.
describe("answers to a pushed question on the real registry", () => {
  async function watched(deadline = Date.now() + 60_000) {
    const { calls, scope } = await scoped();
    const ns = await namespace();
    const ref = { scope, key: "m:0123/n:7", nonce: `nonce-${crypto.randomUUID()}` };
    const heard: [number, string][] = [];
    const aborted: string[] = [];
    const w = await watchCall(ns as unknown as CallRegistryNamespace, ref, deadline, { abort: (r) => aborted.push(r.error.code), answer: (round, payload) => heard.push([round, payload]) }, 60_000);
    if (!w.ok) throw new Error("the call was not registered");
    return { calls, ref, heard, aborted, stop: w.stop };
  }
  const settle = () => new Promise((r) => setTimeout(r, 100));
  const PAYLOAD = JSON.stringify({ result: { action: "accept", content: { confirm: true } } });

  it("hands an answer with the call's own tag to the watching call, once a round", async () => {
    const c = await watched();
    expect(await c.calls.answer(c.ref.key, 1, await questionTag(c.ref.nonce, 1), PAYLOAD)).toBe(true);
    expect(await c.calls.answer(c.ref.key, 1, await questionTag(c.ref.nonce, 1), PAYLOAD), "a round is answered once").toBe(false);
    expect(await c.calls.answer(c.ref.key, 2, await questionTag(c.ref.nonce, 2), PAYLOAD)).toBe(true);
    await settle();
    expect(c.heard).toEqual([
      [1, PAYLOAD],
      [2, PAYLOAD],
    ]);
    c.stop();
  });

  it("refuses a tag one hex digit off, another call's tag, another round's tag, and rounds outside 1 to MAX_QUESTION_ROUNDS, handing nothing on", async () => {
    const c = await watched();
    const tag = await questionTag(c.ref.nonce, 1);
    const flipped = `${tag.slice(0, 5)}${tag[5] === "0" ? "1" : "0"}${tag.slice(6)}`;
    expect(await c.calls.answer(c.ref.key, 1, flipped, PAYLOAD)).toBe(false);
    expect(await c.calls.answer(c.ref.key, 1, await questionTag("nonce-of-another-call", 1), PAYLOAD)).toBe(false);
    expect(await c.calls.answer(c.ref.key, 1, await questionTag(c.ref.nonce, 2), PAYLOAD)).toBe(false);
    expect(await c.calls.answer(c.ref.key, 0, await questionTag(c.ref.nonce, 0), PAYLOAD)).toBe(false);
    const past = MAX_QUESTION_ROUNDS + 1;
    expect(await c.calls.answer(c.ref.key, past, await questionTag(c.ref.nonce, past), PAYLOAD)).toBe(false);
    expect(await c.calls.answer("m:0123/n:8", 1, tag, PAYLOAD), "another record key").toBe(false);
    expect(await c.calls.answer(c.ref.key, 1, tag, `${PAYLOAD}\nlive`), "a payload that would make two watch lines").toBe(false);
    await settle();
    expect(c.heard).toEqual([]);
    // The right answer still gets through afterwards: refusals spend nothing.
    expect(await c.calls.answer(c.ref.key, 1, tag, PAYLOAD)).toBe(true);
    c.stop();
  });

  it.each(["ended", "cancelled", "past its deadline"])("refuses an answer for a call that %s", async (how) => {
    const c = await watched(how === "past its deadline" ? Date.now() + 300 : Date.now() + 60_000);
    if (how === "ended") await c.calls.end(c.ref.key, c.ref.nonce);
    if (how === "cancelled") await c.calls.cancel(c.ref.key);
    if (how === "past its deadline") await new Promise((r) => setTimeout(r, 600));
    expect(await c.calls.answer(c.ref.key, 1, await questionTag(c.ref.nonce, 1), PAYLOAD)).toBe(false);
    await settle();
    expect(c.heard).toEqual([]);
    c.stop();
  });
});
