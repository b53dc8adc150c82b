// Covers bundles/kit/keepalive.ts: progress ticks against the call's token at the configured interval, strictly increasing, until stopped or dropped.
import { describe, expect, it, vi } from "vitest";
import { askPerson, msFromEnv } from "../../../bundles/kit/confirm";
import { DEFAULT_KEEPALIVE_MS, startKeepalive } from "../../../bundles/kit/keepalive";
import { type CallState, type ProgressNotification, runInScope } from "../../../bundles/kit/scope";
import { HostileServer } from "./helpers/hostile-server";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("keepalive", () => {
  it("ticks every interval with a strictly increasing progress, until stopped", async () => {
    const sent: ProgressNotification[] = [];
    const started = performance.now();
    const stop = startKeepalive({ progressToken: "t", notify: async (n) => void sent.push(n), intervalMs: 40, signal: new AbortController().signal });
    // A loaded machine's timers fire late, never early: wait for the third tick, however late, then check it did not
    // come before three intervals (a timer may round down by a millisecond).
    await vi.waitFor(() => expect(sent.length).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 5 });
    const third = performance.now() - started;
    stop();
    const count = sent.length;
    expect(third).toBeGreaterThanOrEqual(3 * 40 - 1);
    for (const [i, n] of sent.entries()) expect(n).toEqual({ method: "notifications/progress", params: { progressToken: "t", progress: i + 1, message: "waiting for a person to approve" } });
    await sleep(100);
    expect(sent.length).toBe(count);
  });

  it("stops when the call drops", async () => {
    const sent: ProgressNotification[] = [];
    const drop = new AbortController();
    startKeepalive({ progressToken: 7, notify: async (n) => void sent.push(n), intervalMs: 30, signal: drop.signal });
    await sleep(100);
    drop.abort();
    const count = sent.length;
    await sleep(100);
    expect(sent.length).toBe(count);
  });

  it("sends nothing without a progress token, and survives a failing notify", async () => {
    const sent: ProgressNotification[] = [];
    const stop = startKeepalive({ progressToken: undefined, notify: async (n) => void sent.push(n), intervalMs: 20, signal: new AbortController().signal });
    await sleep(80);
    stop();
    expect(sent).toEqual([]);
    let calls = 0;
    const stopFailing = startKeepalive({
      progressToken: "t",
      notify: async () => {
        calls++;
        throw new Error("closed");
      },
      intervalMs: 20,
      signal: new AbortController().signal,
    });
    // A second notify shows the first one's throw did not stop the ticks (waited for: a loaded machine's timers run late).
    await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 5 });
    stopFailing();
  });

  it("defaults to 30 s and to 5 s between polls; a test var may shorten either within bounds", () => {
    expect(DEFAULT_KEEPALIVE_MS).toBe(30_000);
    expect(msFromEnv({}, "STRAD_KEEPALIVE_MS", 30_000, 20, 60_000)).toBe(30_000);
    expect(msFromEnv({ STRAD_POLL_INTERVAL_MS: "100" }, "STRAD_POLL_INTERVAL_MS", 5_000, 20, 60_000)).toBe(100);
    expect(msFromEnv({ STRAD_POLL_INTERVAL_MS: "1" }, "STRAD_POLL_INTERVAL_MS", 5_000, 20, 60_000)).toBe(20);
    expect(msFromEnv({ STRAD_POLL_INTERVAL_MS: "soon" }, "STRAD_POLL_INTERVAL_MS", 5_000, 20, 60_000)).toBe(5_000);
    expect(msFromEnv({ STRAD_POLL_INTERVAL_MS: "-5" }, "STRAD_POLL_INTERVAL_MS", 5_000, 20, 60_000)).toBe(5_000);
  });

  it("stops ticking once the person has answered, though the call is still open", async () => {
    const approver = await new HostileServer().start();
    const open = new AbortController();
    try {
      const url = approver.route("slow", { poll: () => ({ delayMs: 150, body: { action: "accept", content: { confirm: true } } }) });
      const sent: ProgressNotification[] = [];
      const call: CallState = {
        requestId: 1,
        toolName: "t",
        channel: { kind: "ask", channel: { slug: "s", url, ttlMs: 10_000, headers: {} } },
        deadline: Date.now() + 10_000,
        progressToken: "t",
        notify: async (n) => void sent.push(n),
      };
      const scope = { mount: "m", signal: open.signal, waitUntil: () => {}, env: { STRAD_KEEPALIVE_MS: "20", STRAD_POLL_INTERVAL_MS: "20" }, call };
      const decision = await runInScope(scope, () => askPerson({ message: "go?" }));
      expect(decision.kind).toBe("approved");
      const count = sent.length;
      expect(count).toBeGreaterThanOrEqual(2);
      await sleep(120);
      expect(sent.length).toBe(count);
    } finally {
      open.abort();
      await approver.stop();
    }
  });
});
