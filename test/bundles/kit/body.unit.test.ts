// The shared capped body reader: what fits is read whole; a declared or streamed excess is refused unread.
import { describe, expect, it } from "vitest";
import { readCappedBytes, readCappedText } from "../../../bundles/kit/body";

function streamOf(chunks: string[]): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(new TextEncoder().encode(chunks[i++]));
      else controller.close();
    },
  });
  return { stream, pulled: () => i };
}

describe("readCapped", () => {
  it("reads a body that fits, across chunks, as bytes and as text", async () => {
    expect(await readCappedText(new Response(streamOf(["héllo ", "wörld"]).stream), 64)).toEqual({ ok: true, value: "héllo wörld" });
    const bytes = await readCappedBytes(new Response("abc"), 3);
    expect(bytes.ok && new TextDecoder().decode(bytes.value)).toBe("abc");
  });

  it("refuses a declared length over the cap without reading", async () => {
    const { stream, pulled } = streamOf(["x".repeat(10)]);
    const response = new Response(stream, { headers: { "content-length": "100" } });
    expect(await readCappedText(response, 50)).toEqual({ ok: false, tooLarge: true });
    expect(pulled()).toBeLessThanOrEqual(1);
  });

  it("reads a declared length within the cap whole, and refuses a body longer than it declared", async () => {
    const fits = new Response(streamOf(["ab", "cd"]).stream, { headers: { "content-length": "4" } });
    expect(await readCappedText(fits, 4)).toEqual({ ok: true, value: "abcd" });
    const lying = new Response(streamOf(["abcd", "efgh"]).stream, { headers: { "content-length": "4" } });
    expect(await readCappedText(lying, 64)).toEqual({ ok: false, tooLarge: true });
  });

  it("treats a malformed declared length as none, and still stops past the cap", async () => {
    for (const length of ["1e3", "-1", " 4", "0x10", "99999999999"]) {
      const response = new Response(streamOf(["aaaa", "bbbb", "cccc"]).stream, { headers: { "content-length": length } });
      expect(await readCappedBytes(response, 6), length).toEqual({ ok: false, tooLarge: true });
    }
  });

  it("stops one chunk past the cap of an undeclared stream and reads no further", async () => {
    const { stream, pulled } = streamOf(["aaaa", "bbbb", "cccc", "dddd", "eeee"]);
    expect(await readCappedBytes(new Response(stream), 6)).toEqual({ ok: false, tooLarge: true });
    expect(pulled()).toBeLessThan(5);
  });

  it("fails invalid UTF-8 only when asked to be strict", async () => {
    const bad = () => new Response(new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(await readCappedText(bad(), 10, true)).toEqual({ ok: false, tooLarge: false });
    expect(await readCappedText(bad(), 10)).toEqual({ ok: true, value: "{\uFFFD}" });
  });
});
