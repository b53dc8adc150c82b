// Covers bundles/pads/pads.client.ts's reads: a read whose connection failed before any answer is made once more,
// never a third time, never after an answer and never once the call was dropped; an answer is read up to
// MAX_HTTP_BYTES, declared or not, and refused one byte past it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_HTTP_BYTES, readPadText } from "../../../bundles/pads/pads.client";

const BASE = new URL("https://pads.example.com/");

afterEach(() => vi.unstubAllGlobals());

/** A global fetch that throws before any answer for its first `failures` calls, then answers `answer()`; counts its calls. */
function flaky(failures: number, answer: () => Response = () => new Response("the text")): string[] {
  const calls: string[] = [];
  vi.stubGlobal("fetch", async (input: string | URL | Request) => {
    calls.push(String(input));
    if (calls.length <= failures) throw new TypeError("Network connection lost.");
    return answer();
  });
  return calls;
}

describe("a Rustpad read", () => {
  it("is tried once more when its connection failed before any answer (a kept-alive connection the server closed)", async () => {
    const calls = flaky(1);
    expect(await readPadText(BASE, "abc123", new AbortController().signal)).toBe("the text");
    expect(calls).toEqual(["https://pads.example.com/api/text/abc123", "https://pads.example.com/api/text/abc123"]);
  });

  it("is refused, naming Rustpad, when the second try fails too, and is never tried a third time", async () => {
    const calls = flaky(2);
    await expect(readPadText(BASE, "abc123", new AbortController().signal)).rejects.toThrow("Rustpad could not be reached");
    expect(calls).toHaveLength(2);
  });

  it("is not tried again after an answer, whatever its status, nor once the call was dropped", async () => {
    const answered = flaky(0, () => new Response("busy", { status: 503 }));
    await expect(readPadText(BASE, "abc123", new AbortController().signal)).rejects.toThrow("Rustpad answered HTTP 503");
    expect(answered).toHaveLength(1);
    const dropped = new AbortController();
    const calls: string[] = [];
    vi.stubGlobal("fetch", async (input: string | URL | Request) => {
      calls.push(String(input));
      dropped.abort();
      throw new TypeError("aborted");
    });
    await expect(readPadText(BASE, "abc123", dropped.signal)).rejects.toThrow("Rustpad could not be reached");
    expect(calls).toHaveLength(1);
  });

  /** An answer of `bytes` bytes ("é" is two), its length declared (as Rustpad declares it) or streamed in 64 KiB chunks without one. */
  const answerOf = (bytes: number, declared: boolean): Response => {
    const text = "é".repeat(Math.floor(bytes / 2)) + "a".repeat(bytes % 2);
    if (declared) return new Response(text, { headers: { "content-length": String(bytes) } });
    const encoded = new TextEncoder().encode(text);
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= encoded.byteLength) return controller.close();
        controller.enqueue(encoded.subarray(at, at + 65_536));
        at += 65_536;
      },
    });
    return new Response(body);
  };

  it("reads an answer of exactly MAX_HTTP_BYTES, declared or streamed, and refuses one byte more, naming the cap", async () => {
    for (const declared of [true, false]) {
      flaky(0, () => answerOf(MAX_HTTP_BYTES, declared));
      const text = await readPadText(BASE, "abc123", new AbortController().signal);
      expect(new TextEncoder().encode(text).byteLength).toBe(MAX_HTTP_BYTES);
      flaky(0, () => answerOf(MAX_HTTP_BYTES + 1, declared));
      await expect(readPadText(BASE, "abc123", new AbortController().signal)).rejects.toThrow(`Rustpad's answer is larger than ${MAX_HTTP_BYTES} bytes`);
    }
  });

  it("refuses a declared length over the cap without reading the body, and cancels it", async () => {
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
      },
      cancel() {
        cancelled = true;
      },
    });
    flaky(0, () => new Response(body, { headers: { "content-length": String(MAX_HTTP_BYTES + 1) } }));
    await expect(readPadText(BASE, "abc123", new AbortController().signal)).rejects.toThrow(`Rustpad's answer is larger than ${MAX_HTTP_BYTES} bytes`);
    expect(cancelled).toBe(true);
    // A stream pulls once to fill its queue when it is made; nothing more was read.
    expect(pulled).toBeLessThanOrEqual(1);
  });
});
