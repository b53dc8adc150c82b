// Covers the CallRegistry Durable Object (durable-objects/call-registry.ts) on workerd, as the gateway build
// deploys it: a confirmed call's single claim, only with the call's own nonce and only while it is live, and
// what cancel, end and the deadline do to it. The kit's unit tests use a stand-in for it; this is the real one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAIM_HOLD_MS } from "../../contract/call-registry";
import type { CallRegistry } from "../../durable-objects/call-registry";
// @ts-expect-error: a plain ES module without types
import { buildWorker, startRuntime } from "../../scripts/bench-runtime.mjs";

interface Registry {
  fetch(url: string, init: RequestInit): Promise<Response>;
  claim: CallRegistry["claim"];
  end: CallRegistry["end"];
  cancel: CallRegistry["cancel"];
}

const built = mkdtempSync(join(tmpdir(), "strad-registry-"));
let runtime: { miniflare: { getDurableObjectNamespace(name: string): Promise<DurableObjectNamespace> }; stop: () => Promise<void> };
let scopes = 0;

beforeAll(async () => {
  // The gateway hosts the registry; its service bindings are left out, since no call is forwarded here.
  const gateway = buildWorker("wrangler.toml", { into: built });
  runtime = await startRuntime([{ ...gateway, serviceBindings: {} }]);
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(built, { recursive: true, force: true });
});

/** A registry of its own for each test (one object per caller scope, as the gateway names them). */
async function registry(): Promise<Registry> {
  const ns = await runtime.miniflare.getDurableObjectNamespace("CALLS");
  return ns.get(ns.idFromName(`test-scope-${++scopes}`)) as unknown as Registry;
}

/** Registers a call as the gateway does, and reads the words its watch stream says. */
async function watch(calls: Registry, key: string, nonce: string, deadline = Date.now() + 60_000) {
  const response = await calls.fetch("https://calls/watch", { method: "POST", body: JSON.stringify({ key, nonce, deadline }) });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  const next = async (): Promise<string | "closed"> => {
    if (reader === undefined) return "closed";
    const { done, value } = await reader.read();
    return done ? "closed" : decoder.decode(value).trim();
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
    expect(await calls.claim("n:1", "nonce-a")).toBe(true);
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
    expect(await calls.claim("s:7", "nonce-a")).toBe(true);
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
    expect(await calls.claim("n:5", "nonce-a")).toBe(true);
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
    expect(await calls.claim("n:6", "nonce-new")).toBe(true);
    await fresh.stop();
  });

  it("holds a claim before granting it and asks the watching gateway to probe its caller meanwhile", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:20", "nonce-a");
    expect(await w.next()).toBe("live");
    const started = Date.now();
    const claim = calls.claim("n:20", "nonce-a");
    expect(await w.next()).toBe("probe");
    expect(await claim).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(CLAIM_HOLD_MS.fallback - 5);
    await w.stop();
  });

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

  it("refuses a claim on hold when the deadline passes during the hold", async () => {
    const calls = await registry();
    const w = await watch(calls, "n:23", "nonce-a", Date.now() + CLAIM_HOLD_MS.fallback / 2);
    expect(await w.next()).toBe("live");
    const claim = calls.claim("n:23", "nonce-a");
    expect(await w.next()).toBe("probe");
    expect(await claim).toBe(false);
  });
});
