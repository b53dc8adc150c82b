// Covers bundles/pads/pads.client.ts's reads: a read whose connection failed before any answer is made once more,
// never a third time, never after an answer and never once the call was dropped.
import { afterEach, describe, expect, it, vi } from "vitest";
import { readPadText } from "../../../bundles/pads/pads.client";

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
});
