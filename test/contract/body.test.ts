// The shared capped body reader: what fits is read whole; a declared or streamed excess is refused unread.
import { describe, expect, it } from "vitest";
import { dropUnauthenticatedBody, readCappedBytes, readCappedText, UNAUTHENTICATED_DRAIN_BYTES } from "../../contract/body";

function streamOf(chunks: (string | Uint8Array)[]): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk !== undefined) controller.enqueue(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
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

  it("holds a claimed length as a cap: reads a body that keeps to it, and refuses one longer one chunk past it", async () => {
    const fits = new Response(streamOf(["ab", "cd"]).stream, { headers: { "content-length": "4" } });
    expect(await readCappedText(fits, 64, false, "claimed")).toEqual({ ok: true, value: "abcd" });
    const strict = new Response(streamOf(["\u20AC"]).stream, { headers: { "content-length": "3" } });
    expect(await readCappedText(strict, 64, true, "claimed")).toEqual({ ok: true, value: "\u20AC" });

    const chunks = ["abcd", "efgh", "ijkl", "mnop", "qrst"];
    const claimed = streamOf(chunks);
    expect(await readCappedBytes(new Response(claimed.stream, { headers: { "content-length": "4" } }), 1024, "claimed")).toEqual({ ok: false, tooLarge: true });
    expect(claimed.pulled()).toBeLessThanOrEqual(3);
    // A claimed 0 holds nothing; no body reads as empty; a body shorter than it claimed is what it is.
    expect(await readCappedBytes(new Response(streamOf(["a"]).stream, { headers: { "content-length": "0" } }), 1024, "claimed")).toEqual({ ok: false, tooLarge: true });
    expect(await readCappedText(new Response(null, { headers: { "content-length": "0" } }), 1024, false, "claimed")).toEqual({ ok: true, value: "" });
    expect(await readCappedText(new Response(streamOf(["ab"]).stream, { headers: { "content-length": "9" } }), 1024, false, "claimed")).toEqual({ ok: true, value: "ab" });
    // Where framing would end it, the same body is read natively, to its end, before it is refused.
    const framed = streamOf(chunks);
    expect(await readCappedBytes(new Response(framed.stream, { headers: { "content-length": "4" } }), 1024, "framed")).toEqual({ ok: false, tooLarge: true });
    expect(framed.pulled()).toBeGreaterThanOrEqual(chunks.length);
  });

  it("goes by no declared length for a body with a Content-Encoding, whose length is the encoded one, but by the cap", async () => {
    // fetch() decodes a gzip answer as it is read and keeps its encoded Content-Length (146 bytes read as 100,010).
    for (const length of ["framed", "claimed"] as const) {
      const decoded = new Response(streamOf(['{"pad":', '"xxxxxxxx"}']).stream, { headers: { "content-encoding": "gzip", "content-length": "4" } });
      expect(await readCappedText(decoded, 64, false, length), length).toEqual({ ok: true, value: '{"pad":"xxxxxxxx"}' });
      const bomb = streamOf(["aaaa", "bbbb", "cccc", "dddd", "eeee", "ffff"]);
      expect(await readCappedBytes(new Response(bomb.stream, { headers: { "content-encoding": "br", "content-length": "4" } }), 6, length), length).toEqual({ ok: false, tooLarge: true });
      expect(bomb.pulled(), length).toBeLessThan(5);
    }
    // "identity" is no encoding: the length holds.
    const identity = new Response(streamOf(["abcd", "efgh"]).stream, { headers: { "content-encoding": "identity", "content-length": "4" } });
    expect(await readCappedText(identity, 64, false, "claimed")).toEqual({ ok: false, tooLarge: true });
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

  it.each([false, true])("fails invalid UTF-8 only when asked to be strict (declared length: %s)", async (declared) => {
    const bad = () => new Response(new Uint8Array([0x7b, 0xff, 0x7d]), declared ? { headers: { "content-length": "3" } } : undefined);
    expect(await readCappedText(bad(), 10, true)).toEqual({ ok: false, tooLarge: false });
    expect(await readCappedText(bad(), 10)).toEqual({ ok: true, value: "{\uFFFD}" });
  });

  it("decodes each body on its own: a failed or truncated sequence never carries into the next read", async () => {
    // Undeclared streams, so the shared decoders (not the runtime's text()) do the decoding.
    const streamed = (...parts: number[][]) => new Response(streamOf(parts.map((p) => new Uint8Array(p))).stream);
    expect(await readCappedText(streamed([0x61, 0xe2, 0x82]), 10, true)).toEqual({ ok: false, tooLarge: false });
    expect(await readCappedText(streamed([0xac, 0x62]), 10, true)).toEqual({ ok: false, tooLarge: false });
    expect(await readCappedText(streamed([0x61, 0xe2, 0x82]), 10)).toEqual({ ok: true, value: "a\uFFFD" });
    expect(await readCappedText(streamed([0xe2], [0x82, 0xac]), 10, true)).toEqual({ ok: true, value: "\u20AC" });
  });
});

describe("issue 26: the body of a request refused before its caller is known", () => {
  /** A request whose body is `total` bytes in 1 KiB chunks, declared or not; `pulled` counts the chunks read. */
  function strangerRequest(total: number, declared: boolean) {
    const chunk = new Uint8Array(1024);
    const { stream, pulled } = streamOf(Array.from({ length: Math.ceil(total / 1024) }, (_, i) => (i === Math.ceil(total / 1024) - 1 && total % 1024 !== 0 ? chunk.subarray(0, total % 1024) : chunk)));
    const request = new Request("https://gateway.test/mcp", {
      method: "POST",
      body: stream,
      headers: declared ? { "content-length": String(total) } : {},
      duplex: "half",
    } as RequestInit);
    return { request, pulled };
  }

  it("is not read at all when it declares more than the drain, one byte past it included", async () => {
    for (const total of [UNAUTHENTICATED_DRAIN_BYTES + 1, 8 * 1024 * 1024]) {
      const { request, pulled } = strangerRequest(total, true);
      expect(await dropUnauthenticatedBody(request)).toBe(false);
      // A stream pulls its first chunk when it is built, before anyone reads it; nothing more is pulled.
      expect(pulled(), `${total} bytes declared`).toBeLessThanOrEqual(1);
    }
  });

  it("is read to its end when it declares the drain or less, so its connection carries the next request", async () => {
    for (const total of [0, 1, UNAUTHENTICATED_DRAIN_BYTES - 1, UNAUTHENTICATED_DRAIN_BYTES]) {
      const { request, pulled } = strangerRequest(total, true);
      expect(await dropUnauthenticatedBody(request), `${total} bytes`).toBe(true);
      expect(pulled()).toBe(Math.ceil(total / 1024) + 1);
    }
  });

  it("undeclared, is read at most to the drain and cancelled past it", async () => {
    const within = strangerRequest(UNAUTHENTICATED_DRAIN_BYTES, false);
    expect(await dropUnauthenticatedBody(within.request)).toBe(true);
    const past = strangerRequest(UNAUTHENTICATED_DRAIN_BYTES + 1, false);
    expect(await dropUnauthenticatedBody(past.request)).toBe(false);
    const long = strangerRequest(4 * 1024 * 1024, false);
    expect(await dropUnauthenticatedBody(long.request)).toBe(false);
    // One chunk past the drain is the most ever read.
    expect(long.pulled()).toBeLessThanOrEqual(UNAUTHENTICATED_DRAIN_BYTES / 1024 + 2);
  });

  it("takes a smaller drain when asked, and a request without a body is nothing to drop", async () => {
    expect(await dropUnauthenticatedBody(strangerRequest(100, true).request, 99)).toBe(false);
    expect(await dropUnauthenticatedBody(strangerRequest(100, true).request, 100)).toBe(true);
    expect(await dropUnauthenticatedBody(new Request("https://gateway.test/mcp", { method: "POST" }))).toBe(true);
  });
});
