// The IMAP client's pure parts: literals read as exactly {n} octets and every read capped (R-MAIL-8), tokens,
// command literals; modified UTF-7 mailbox names both ways (R-MAIL-7); UID sets and paging (R-MAIL-2).
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { canonicalUids, countOf, MAX_UID, pageNewestFirst, parseSequenceSet, toSequenceSet } from "../../../bundles/mailbox/mailbox.uids";
import { decodeMailboxName, encodeMailboxName } from "../../../bundles/mailbox/mailbox.utf7";
import { bytesOf, commandChunks, ResponseReader, ResponseTooLarge, raw, str, tokenize } from "../../../bundles/mailbox/mailbox.wire";

/** A reader over `chunks`, delivered one at a time as a socket would. */
function readerOf(...chunks: (string | Uint8Array)[]): ResponseReader {
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === "string" ? enc.encode(c) : c);
      controller.close();
    },
  });
  return new ResponseReader(stream.getReader());
}
const LIMITS = { maxLine: 1000, maxBytes: 10_000 };

describe("reading responses", () => {
  it("reads a literal as exactly its octet count, CRLF and braces inside it included, split across chunks", async () => {
    const body = "a\r\n{5}\r\n)b";
    const r = readerOf(`* 1 FETCH (UID 7 BODY[] {${body.length}}\r\n`, body.slice(0, 4), body.slice(4), ")\r\n", "s1 OK done\r\n");
    const first = await r.read(LIMITS);
    expect(first.literals.map((l) => new TextDecoder().decode(l))).toEqual([body]);
    const tokens = tokenize(first);
    const list = (tokens[3] as { list: unknown[] }).list;
    expect(new TextDecoder().decode(bytesOf(list[3] as never))).toBe(body);
    expect((await r.read(LIMITS)).texts).toEqual(["s1 OK done"]);
  });

  it("counts a literal in bytes, not characters (UTF-8)", async () => {
    const text = "Grüße 日本";
    const bytes = new TextEncoder().encode(text);
    const r = readerOf(`* 1 FETCH (BODY[] {${bytes.length}}\r\n`, bytes, ")\r\n");
    const got = await r.read(LIMITS);
    expect(new TextDecoder().decode(got.literals[0])).toBe(text);
  });

  it("accepts a literal that fills the response's budget exactly and refuses one a byte larger before reading it", async () => {
    // 11 bytes of line, 100 of literal, 2 of the empty line after it.
    const ok = await readerOf(`* X {100}\r\n`, "x".repeat(100), "\r\n").read({ maxLine: 1000, maxBytes: 113 });
    expect(ok.literals[0]?.length).toBe(100);
    expect(ok.bytes).toBe(113);
    // The literal never comes: a reader that waited for it would say the connection closed in its middle.
    await expect(readerOf(`* X {101}\r\n`).read({ maxLine: 1000, maxBytes: 113 })).rejects.toThrow("the IMAP server's answer is larger than the 113 bytes this call reads");
    await expect(readerOf(`* X {100}\r\n`, "x".repeat(100), "\r\n").read({ maxLine: 1000, maxBytes: 112 })).rejects.toThrow("larger than the 112 bytes");
  });

  it("holds a whole response to its budget as it reads: literals each within it are refused once their sum would pass it, before the next is read", async () => {
    // A server that never ends its response: one literal of 1,000 bytes after another, each chunk counted as it is pulled.
    const enc = new TextEncoder();
    let pulled = 0;
    let k = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = enc.encode(k++ === 0 ? "* 1 FETCH (X {1000}\r\n" : `${"y".repeat(1000)} {1000}\r\n`);
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const reader = new ResponseReader(stream.getReader());
    await expect(reader.read({ maxLine: 1000, maxBytes: 20_000 })).rejects.toThrow(ResponseTooLarge);
    // 19 literals and their lines fit; the 20th is refused before it is read. What was pulled is the budget and at most two chunks.
    expect(pulled).toBeLessThanOrEqual(20_000 + 2 * 1010);
    // Lines with no literal at all are held to it too.
    const lines = readerOf(...Array.from({ length: 30 }, () => `${"z".repeat(998)}\r\n`));
    await expect(lines.read({ maxLine: 1000, maxBytes: 20_000 })).resolves.toMatchObject({ bytes: 1000, texts: ["z".repeat(998)] });
  });

  it("counts a line in bytes, not characters, against the response's budget", async () => {
    const line = "日".repeat(100); // 300 bytes in UTF-8, 100 UTF-16 units
    expect(await readerOf(`${line}\r\n`).read({ maxLine: 1000, maxBytes: 302 })).toEqual({ texts: [line], literals: [], bytes: 302 });
    await expect(readerOf(`${line}\r\n`).read({ maxLine: 1000, maxBytes: 301 })).rejects.toThrow("larger than the 301 bytes");
    await expect(readerOf(`${line}\r\n`).read({ maxLine: 299, maxBytes: 10_000 })).rejects.toThrow("a line longer than 299 bytes");
  });

  it("reads a literal whose count has any number of digits, leading zeros included, and refuses a count past the budget", async () => {
    const got = await readerOf("* 1 FETCH (BODY[] {00000000005}\r\n", "a)\r\nb", ")\r\n").read(LIMITS);
    expect(got.literals.map((l) => new TextDecoder().decode(l))).toEqual(["a)\r\nb"]);
    expect(got.texts).toEqual(["* 1 FETCH (BODY[] {00000000005}", ")"]);
    await expect(readerOf(`* 1 FETCH (BODY[] {${"9".repeat(40)}}\r\n`).read(LIMITS)).rejects.toThrow(ResponseTooLarge);
  });

  it("gathers a long line or literal sent in small chunks copying each byte a bounded number of times, not once per chunk", async () => {
    // Copying what was buffered again at every chunk made this quadratic: 4 MiB in 256-byte chunks took 4.7 s, a 1 MiB
    // line in 64-byte chunks longer. Counted in bytes copied (every TypedArray set), not in time, so a loaded machine
    // cannot make it fail: here the quadratic reader copied about 160 MB for 320 KiB.
    const enc = new TextEncoder();
    const literal = new Uint8Array(256 * 1024).fill(0x61);
    const chunks: Uint8Array[] = [enc.encode(`* 1 FETCH (BODY[] {${literal.length}}\r\n`)];
    for (let at = 0; at < literal.length; at += 256) chunks.push(literal.subarray(at, at + 256));
    const line = enc.encode(`)${"b".repeat(64 * 1024 - 1)}\r\n`);
    for (let at = 0; at < line.length; at += 64) chunks.push(line.subarray(at, at + 64));
    const reader = readerOf(...chunks);
    let copied = 0;
    const set = Uint8Array.prototype.set;
    const spy = vi.spyOn(Uint8Array.prototype, "set").mockImplementation(function (this: Uint8Array, source: ArrayLike<number>, offset?: number) {
      copied += source.length;
      set.call(this, source, offset);
    });
    try {
      const got = await reader.read({ maxLine: 64 * 1024, maxBytes: 1024 * 1024 });
      expect(got.literals[0]?.length).toBe(literal.length);
      expect(got.texts[1]?.length).toBe(64 * 1024);
    } finally {
      spy.mockRestore();
    }
    expect(copied).toBeLessThanOrEqual(4 * (literal.length + line.length));
  });

  it("accepts a line of exactly the cap and refuses a longer one without waiting for its end", async () => {
    expect((await readerOf(`${"a".repeat(1000)}\r\n`).read(LIMITS)).texts[0]?.length).toBe(1000);
    // No CRLF ever comes: the reader gives up once the line is past the cap.
    await expect(readerOf("a".repeat(1002)).read(LIMITS)).rejects.toThrow("longer than 1000 bytes");
    await expect(readerOf(`${"a".repeat(1001)}\r\n`).read(LIMITS)).rejects.toThrow("longer than 1000 bytes");
  });

  it("says so when the server closes in the middle of a literal", async () => {
    await expect(readerOf("* X {10}\r\n", "abc").read(LIMITS)).rejects.toThrow("closed the connection in the middle of a literal");
  });

  it("reads back any run of responses, lines and literals, however the socket cuts it into chunks (a CR and its LF apart included)", async () => {
    const enc = new TextEncoder();
    const lineText = fc.stringMatching(/^[ -~]{0,40}$/).filter((t) => !/\{\d+\}$/.test(t));
    const literal = fc.uint8Array({ maxLength: 30 });
    const response = fc.record({ lines: fc.array(fc.tuple(lineText, literal), { maxLength: 3 }), last: lineText });
    await fc.assert(
      fc.asyncProperty(fc.array(response, { minLength: 1, maxLength: 5 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 20 }), async (responses, cuts) => {
        const parts: Uint8Array[] = [];
        for (const r of responses) {
          for (const [text, bytes] of r.lines) parts.push(enc.encode(`${text}{${bytes.length}}\r\n`), bytes);
          parts.push(enc.encode(`${r.last}\r\n`));
        }
        const wire = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const p of parts) {
          wire.set(p, at);
          at += p.length;
        }
        const chunks: Uint8Array[] = [];
        for (let from = 0, k = 0; from < wire.length; k++) {
          const to = Math.min(wire.length, from + (cuts[k % cuts.length] as number));
          chunks.push(wire.slice(from, to));
          from = to;
        }
        const reader = readerOf(...chunks);
        for (const r of responses) {
          const got = await reader.read(LIMITS);
          expect(got.bytes).toBe(r.lines.reduce((n, [text, bytes]) => n + enc.encode(`${text}{${bytes.length}}`).length + 2 + bytes.length, enc.encode(r.last).length + 2));
          expect(got.texts).toEqual([...r.lines.map(([text, bytes]) => `${text}{${bytes.length}}`), r.last]);
          expect(got.literals.map((l) => [...l])).toEqual(r.lines.map(([, bytes]) => [...bytes]));
        }
        await expect(reader.read(LIMITS)).rejects.toThrow("closed the connection");
      }),
      { numRuns: 300 },
    );
  });

  it("tokenizes any quoted string back to its text, escapes and all, beside atoms", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }).filter((t) => !/[\r\n]/.test(t)),
        fc.stringMatching(/^[A-Z0-9]{1,6}$/),
        (text, atom) => {
          const quoted = `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
          expect(tokenize({ texts: [`* ${atom} ${quoted} (${quoted}) ${atom}`], literals: [] })).toEqual([{ atom: "*" }, { atom }, { string: text }, { list: [{ string: text }] }, { atom }]);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("tokenizes quoted strings with escapes, NIL, nested lists and bracketed atoms", () => {
    const tokens = tokenize({ texts: ['* 2 FETCH (UID 9 FLAGS (\\Seen $X) BODY[HEADER.FIELDS (FROM)] NIL "a \\"q\\" \\\\ b")'], literals: [] });
    const list = (tokens[3] as { list: unknown[] }).list;
    expect(list).toEqual([
      { atom: "UID" },
      { atom: "9" },
      { atom: "FLAGS" },
      { list: [{ atom: "\\Seen" }, { atom: "$X" }] },
      { atom: "BODY[HEADER.FIELDS (FROM)]" },
      { nil: true },
      { string: 'a "q" \\ b' },
    ]);
  });
});

describe("writing commands", () => {
  it("quotes what a quoted string can carry, and sends anything else as a literal with its byte count", () => {
    const chunks = commandChunks("s1", [raw("LOGIN"), str('al"ice'), str("pässword\r\n")], false);
    expect(chunks[0]).toEqual({ head: 's1 LOGIN "al\\"ice" {11}\r\n', literal: new TextEncoder().encode("pässword\r\n") });
    expect(chunks[1]).toEqual({ head: "\r\n" });
    expect(commandChunks("s2", [raw("APPEND"), { literal: new Uint8Array(3) }], true)[0]?.head).toBe("s2 APPEND {3+}\r\n");
  });

  it("refuses a line break in an atom the client built", () => {
    expect(() => commandChunks("s1", [raw("SELECT x\r\ns2 DELETE INBOX")], false)).toThrow("line break");
  });
});

describe("modified UTF-7 mailbox names", () => {
  it.each([
    ["INBOX", "INBOX"],
    ["Entwürfe", "Entw&APw-rfe"],
    ["Größe & Maß", "Gr&APYA3w-e &- Ma&AN8-"],
    ["日本語", "&ZeVnLIqe-"],
    ["~peter/mail/台北/日本語", "~peter/mail/&U,BTFw-/&ZeVnLIqe-"],
    ["A&B", "A&-B"],
    ["😀", "&2D3eAA-"],
  ])("encodes %s as %s, and decodes it back", (name, wire) => {
    expect(encodeMailboxName(name)).toBe(wire);
    expect(decodeMailboxName(wire)).toBe(name);
  });

  it("round-trips any text without lone surrogates", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), (name) => decodeMailboxName(encodeMailboxName(name)) === name));
  });

  it.each([
    ["&ZeVnLIqe", "unterminated"],
    ["&AGE-", "printable ASCII"],
    ["&ZeU-&Zyw-", "adjacent"],
    ["&Z!-", "outside modified base64"],
    ["ü", "outside printable ASCII"],
    ["&2D0-", "lone surrogate"],
    ["&APw/-", "outside modified base64"],
  ])("refuses %s, which no conforming encoder writes (%s)", (wire, why) => {
    expect(() => decodeMailboxName(wire)).toThrow(why);
  });

  it("refuses to encode a lone surrogate", () => {
    expect(() => encodeMailboxName("a\ud800")).toThrow("lone surrogate");
  });
});

describe("UID sets", () => {
  it("sorts and drops duplicates, so [2, 1, 2] and [1, 2] are one set", () => {
    expect(canonicalUids([2, 1, 2])).toEqual([1, 2]);
  });

  it.each([0, -1, 1.5, MAX_UID + 1, Number.NaN])("refuses %s, which is not a UID", (uid) => {
    expect(() => canonicalUids([uid])).toThrow("is not a UID");
  });

  it("accepts the largest UID", () => {
    expect(canonicalUids([MAX_UID])).toEqual([MAX_UID]);
  });

  it("writes runs as ranges and parses them back, for any set", () => {
    expect(toSequenceSet([1, 2, 3, 7, 9, 10])).toBe("1:3,7,9:10");
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 500 }), { minLength: 1, maxLength: 60 }), (list) => {
        const sorted = canonicalUids(list);
        const ranges = parseSequenceSet(toSequenceSet(sorted));
        return countOf(ranges) === sorted.length && pageNewestFirst(ranges, 0, 1000).reverse().join() === sorted.join();
      }),
    );
  });

  it("pages newest first from ranges without expanding them, across range edges", () => {
    const ranges = parseSequenceSet("1:3,10:12,4000000000:4000000001");
    expect(countOf(ranges)).toBe(8);
    expect(pageNewestFirst(ranges, 0, 3)).toEqual([4000000001, 4000000000, 12]);
    expect(pageNewestFirst(ranges, 3, 3)).toEqual([11, 10, 3]);
    expect(pageNewestFirst(ranges, 6, 3)).toEqual([2, 1]);
    expect(pageNewestFirst(ranges, 8, 3)).toEqual([]);
  });

  it("refuses a sequence set with * or anything but numbers", () => {
    expect(() => parseSequenceSet("1:*")).toThrow();
    expect(() => parseSequenceSet("1,,2")).toThrow();
  });
});
