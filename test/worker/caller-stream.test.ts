// Covers the confirmed call's answer stream (worker/caller-stream.ts): probes are written only while a claim is on
// hold, never inside an event, each only once the one before was taken; the caller is vouched for only after enough
// probes went out, never when the stream is gone, over, or nobody takes what it writes.
import { describe, expect, it } from "vitest";
import { probedStream } from "../../worker/caller-stream";

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PROBE = ": probe\n\n";

/** A source standing in for the SDK's event stream: push chunks, see whether it was cancelled. */
function source() {
  let ctl: ReadableStreamDefaultController<Uint8Array> | undefined;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      ctl = c;
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, push: (text: string) => ctl?.enqueue(enc.encode(text)), close: () => ctl?.close(), cancelled: () => cancelled };
}

/** Reads everything the caller would see into `seen`, in the background. */
function drain(readable: ReadableStream<Uint8Array>) {
  const reader = readable.getReader();
  const seen: string[] = [];
  const done = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      seen.push(dec.decode(value));
    }
  })().catch(() => {});
  return { seen, done, reader, probes: () => seen.filter((s) => s === PROBE).length };
}

describe("probedStream", () => {
  it("writes no probe until a claim is on hold, then vouches for the caller once enough probes went out, and stops", async () => {
    const src = source();
    // No hold and no grace: the round alone.
    const p = probedStream(5, 4, 0, 0);
    const out = drain(src.stream.pipeThrough(p.transform));
    src.push('event: message\ndata: {"a":1}\n\n');
    await sleep(40);
    expect(out.probes()).toBe(0);
    expect(await p.probe()).toBe(true);
    const probes = out.probes();
    expect(probes).toBeGreaterThanOrEqual(4);
    expect(probes).toBeLessThanOrEqual(5);
    await sleep(40);
    expect(out.probes(), "no probe after the round").toBe(probes);
    src.close();
    await out.done;
  });

  it("keeps probing through the registry's hold after vouching, so a caller that leaves later in the hold is still noticed", async () => {
    const src = source();
    // A hold long beside the two probes' 10 ms, so that the verdict's bound leaves a loaded machine room (a CI run saw
    // a 2 ms round trip answered 487 ms late) and still fails a verdict that waited for the hold.
    const hold = 600;
    const p = probedStream(5, 2, hold, 0);
    const out = drain(src.stream.pipeThrough(p.transform));
    const started = Date.now();
    expect(await p.probe()).toBe(true);
    const atVerdict = out.probes();
    expect(Date.now() - started, "the verdict comes with the probes, not at the hold's end").toBeLessThan(hold / 2);
    await sleep(100);
    expect(out.probes(), "R-GATE-10: probes go on after the verdict while the hold runs").toBeGreaterThan(atVerdict + 3);
    await sleep(Math.max(0, hold + 100 - (Date.now() - started)));
    const afterHold = out.probes();
    await sleep(50);
    expect(out.probes(), "no probe long after the hold and the grace").toBe(afterHold);
    src.close();
    await out.done;
  });

  it("keeps probing past the hold for as long as the registry may still grant the claim late, and stops there or when the answer ends the stream", async () => {
    const src = source();
    // A 200 ms hold and 600 ms in which a late grant may still come (CLAIM_CONFIRM_MAX_MS in the gateway): the checks
    // fall well inside and well past that window, with room for a machine the rest of the suite keeps busy.
    const hold = 200;
    const grace = 600;
    const p = probedStream(5, 2, hold, grace);
    const out = drain(src.stream.pipeThrough(p.transform));
    const started = Date.now();
    expect(await p.probe()).toBe(true);
    await sleep(Math.max(0, hold + 100 - (Date.now() - started)));
    const pastHold = out.probes();
    await sleep(100);
    expect(Date.now() - started, "the check fell inside the window").toBeLessThan(hold + grace);
    expect(out.probes(), "R-GATE-10: probes go on after the hold while a grant may still come").toBeGreaterThan(pastHold + 3);
    await sleep(Math.max(0, hold + grace + 150 - (Date.now() - started)));
    const pastGrace = out.probes();
    await sleep(50);
    expect(out.probes(), "no probe once no grant can come").toBe(pastGrace);
    // A second claim's round starts a window of its own; the call's answer ends it at once.
    expect(await p.probe()).toBe(true);
    src.push('event: message\ndata: {"result":1}\n\n');
    src.close();
    await out.done;
    const atEnd = out.probes();
    await sleep(40);
    expect(out.probes()).toBe(atEnd);
    expect(await p.probe(), "the stream is over: nobody to vouch for").toBe(false);
  });

  it("never writes a probe inside an event that arrived in pieces", async () => {
    const src = source();
    const p = probedStream(5, 4);
    const out = drain(src.stream.pipeThrough(p.transform));
    src.push('event: message\ndata: {"par');
    await sleep(10);
    const verdict = p.probe();
    await sleep(30);
    src.push('t":2}\n\n');
    expect(await verdict).toBe(true);
    src.close();
    await out.done;
    const text = out.seen.join("");
    const event = 'event: message\ndata: {"part":2}\n\n';
    expect(text).toContain(event);
    expect(text.replaceAll(PROBE, "")).toBe(event);
  });

  it("does not vouch for a caller whose runtime takes nothing: probes pile up unsent", async () => {
    const src = source();
    const p = probedStream(5, 4);
    // Nobody reads the stream: the first probe stays queued and no second is written.
    src.stream.pipeThrough(p.transform);
    const verdict = await Promise.race([p.probe(), sleep(300).then(() => "still waiting")]);
    expect(verdict).toBe("still waiting");
  });

  it("says the caller is gone once the stream was cancelled, and cancels the SDK's stream behind it", async () => {
    const src = source();
    const p = probedStream(5, 4);
    const out = drain(src.stream.pipeThrough(p.transform));
    src.push(": keepalive\n\n");
    await sleep(10);
    await out.reader.cancel(new Error("the caller went away"));
    await sleep(10);
    expect(src.cancelled()).toBe(true);
    expect(await p.probe()).toBe(false);
  });

  it("says no once the call's stream is over, also to a round already running", async () => {
    const src = source();
    const p = probedStream(50, 100);
    const out = drain(src.stream.pipeThrough(p.transform));
    const verdict = p.probe();
    await sleep(20);
    src.close();
    expect(await verdict).toBe(false);
    await out.done;
    expect(await p.probe()).toBe(false);
  });
});
