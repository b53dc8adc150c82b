// Covers the confirmed call's answer stream (worker/caller-stream.ts): probes are written while a claim is on hold
// and only then, never inside an event, and a caller gone (the stream cancelled) cancels the SDK's stream behind it.
import { describe, expect, it } from "vitest";
import { probedStream } from "../../worker/caller-stream";

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  })();
  return { seen, done, reader };
}

describe("probedStream", () => {
  it("writes no probe until a claim is on hold, then one every interval for the hold, then none", async () => {
    const src = source();
    const p = probedStream(10);
    const out = drain(src.stream.pipeThrough(p.transform));
    src.push('event: message\ndata: {"a":1}\n\n');
    await sleep(50);
    expect(out.seen.filter((s) => s === ": probe\n\n")).toHaveLength(0);
    p.probe(60);
    await sleep(120);
    const probes = out.seen.filter((s) => s === ": probe\n\n").length;
    expect(probes).toBeGreaterThanOrEqual(4);
    expect(probes).toBeLessThanOrEqual(9);
    await sleep(60);
    expect(out.seen.filter((s) => s === ": probe\n\n").length).toBe(probes);
    src.close();
    await out.done;
  });

  it("never writes a probe inside an event that arrived in pieces", async () => {
    const src = source();
    const p = probedStream(5);
    const out = drain(src.stream.pipeThrough(p.transform));
    src.push('event: message\ndata: {"par');
    p.probe(40);
    await sleep(30);
    src.push('t":2}\n\n');
    await sleep(30);
    src.close();
    await out.done;
    const text = out.seen.join("");
    const event = 'event: message\ndata: {"part":2}\n\n';
    // Probes may come before or after the event, never between its pieces.
    expect(text).toContain(event);
    expect(text.replaceAll(": probe\n\n", "")).toBe(event);
    expect(text.length).toBeGreaterThan(event.length);
  });

  it("stops probing without an error once the caller is gone, and cancels the SDK's stream behind it", async () => {
    const src = source();
    const p = probedStream(5);
    const out = drain(src.stream.pipeThrough(p.transform));
    src.push(": keepalive\n\n");
    await sleep(10);
    await out.reader.cancel(new Error("the caller went away"));
    await sleep(10);
    expect(src.cancelled()).toBe(true);
    expect(() => p.probe(50)).not.toThrow();
    await sleep(30);
  });
});
