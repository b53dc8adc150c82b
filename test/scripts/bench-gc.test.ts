// Covers how `npm run bench` judges "no call stalled over 50 ms by a collection" (scripts/bench-gc.mjs): V8 flags
// reach workerd through its config (scripts/workerd-v8-flags.mjs and .sh, startRuntime's `v8Flags`), --trace-gc lines
// are read into pauses exactly and a line that does not read is never dropped, and a real workerd's collections are
// all reported, the longest first.
import { serializeConfig } from "miniflare";
import { expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { mostWithin, readCollection, stallVerdict, TraceUnavailable, traceCollections } from "../../scripts/bench-gc.mjs";
// @ts-expect-error: plain ESM helper without types
import { closedLoop, startRuntime } from "../../scripts/bench-runtime.mjs";
// @ts-expect-error: plain ESM helper without types
import { LOCAL_V8_FLAGS } from "../../scripts/stack.mjs";
// @ts-expect-error: plain ESM helper without types
import { withV8Flags } from "../../scripts/workerd-v8-flags.mjs";

interface Collection {
  isolate: string;
  atMs: number;
  kind: string;
  pauseMs: number;
  markingMs: number;
  stallMs: number;
}

const PROBE = (script: string) => ({ name: "gc-probe", modules: true, script, compatibilityDate: "2026-04-26" });
const TYPEOF_GC = "export default { fetch() { return new Response(typeof globalThis.gc) } }";
// Each request allocates about 200 KB of strings it drops; a request for /full collects the whole heap (V8's gc(),
// there with --expose-gc).
const ALLOCATING = `
const base = Array.from({ length: 4096 }, () => "x").join("");
export default {
  fetch(request) {
    if (new URL(request.url).pathname === "/full") {
      gc();
      return new Response("collected");
    }
    const strings = [];
    for (let i = 0; i < 50; i++) strings.push(base.toUpperCase());
    return new Response(String(strings.length));
  },
};`;

const SWAPPED_ENV = ["MINIFLARE_WORKERD_PATH", "STRAD_WORKERD", "STRAD_NODE", "STRAD_V8_FLAGS", "STRAD_LINE_BUFFERED"] as const;

it("gives workerd every V8 flag asked for and none otherwise, and puts the environment back as it was", async () => {
  const theirs = SWAPPED_ENV.map((name) => process.env[name]);
  for (const name of SWAPPED_ENV) delete process.env[name];
  process.env.STRAD_V8_FLAGS = "left by someone else";
  try {
    for (const [v8Flags, seen] of [
      [[], "undefined"],
      // --expose-gc is the second of two: the list holds more than one flag.
      [["--trace-gc", "--expose-gc"], "function"],
      // Every local runtime's own flags: workerd takes them and serves.
      [[...LOCAL_V8_FLAGS, "--expose-gc"], "function"],
    ] as const) {
      const runtime = await startRuntime([PROBE(TYPEOF_GC)], { v8Flags });
      try {
        expect(await (await fetch(runtime.url)).text()).toBe(seen);
      } finally {
        await runtime.stop();
      }
      expect(process.env.MINIFLARE_WORKERD_PATH).toBeUndefined();
      expect(process.env.STRAD_WORKERD).toBeUndefined();
      expect(process.env.STRAD_NODE).toBeUndefined();
      expect(process.env.STRAD_LINE_BUFFERED).toBeUndefined();
      expect(process.env.STRAD_V8_FLAGS).toBe("left by someone else");
    }
  } finally {
    SWAPPED_ENV.forEach((name, i) => {
      const value = theirs[i];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    });
  }
});

/** The texts of the v8Flags list of a framed config, read by the Cap'n Proto encoding rules (first segment only). */
function flagsOf(message: Buffer): string[] {
  const segments = message.readUInt32LE(0) + 1;
  const base = Math.ceil((4 + 4 * segments) / 8) * 8;
  const word = (at: number) => message.readBigUInt64LE(base + at * 8);
  const offset = (pointer: bigint) => Number(BigInt.asIntN(30, (pointer >> 2n) & 0x3fffffffn));
  const root = word(0);
  expect(root & 3n).toBe(0n);
  const slot = 1 + offset(root) + Number((root >> 32n) & 0xffffn) + 2;
  const list = word(slot);
  if (list === 0n) return [];
  // A list pointer (kind 1) of pointers (element size 6).
  expect(list & 3n).toBe(1n);
  expect((list >> 32n) & 7n).toBe(6n);
  const first = slot + 1 + offset(list);
  return [...Array(Number(list >> 35n)).keys()].map((i) => {
    const text = word(first + i);
    // Each a list pointer of bytes (element size 2), NUL-terminated.
    expect(text & 3n).toBe(1n);
    expect((text >> 32n) & 7n).toBe(2n);
    const at = base + (first + i + 1 + offset(text)) * 8;
    const bytes = message.subarray(at, at + Number(text >> 35n));
    expect(bytes.at(-1)).toBe(0);
    return bytes.subarray(0, -1).toString("utf8");
  });
}

/** A config as Miniflare frames it, in one segment. */
const config = () => serializeConfig({ services: [{ name: "a", worker: { modules: [{ name: "a.js", esModule: "export default {}" }], compatibilityDate: "2026-04-26" } }], sockets: [] }) as Buffer;

it("appends the flags to the first segment and leaves every word already there, and every later segment, as it was", () => {
  const one = config();
  const words = one.readUInt32LE(4);
  // The same message framed as two segments: a later segment of one word, which nothing points into.
  const two = Buffer.concat([Buffer.from([1, 0, 0, 0, ...new Uint8Array(new Uint32Array([words, 1]).buffer), 0, 0, 0, 0]), one.subarray(8), Buffer.from("later!!\0")]);
  const flagged: Buffer = withV8Flags(two, ["--trace-gc", "--a"]);
  // Two list elements, then "--trace-gc\0" (11 bytes, two words) and "--a\0" (one word).
  expect(flagged.readUInt32LE(0)).toBe(1);
  expect(flagged.readUInt32LE(4)).toBe(words + 2 + 2 + 1);
  expect(flagged.readUInt32LE(8)).toBe(1);
  const first = flagged.subarray(16, 16 + (words + 5) * 8);
  const before = two.subarray(16, 16 + words * 8);
  const changed = [...Array(words).keys()].filter((w) => !first.subarray(w * 8, w * 8 + 8).equals(before.subarray(w * 8, w * 8 + 8)));
  // Only the null v8Flags pointer became a list pointer (its low two bits 01).
  expect(changed).toHaveLength(1);
  expect(first.readUInt8((changed[0] as number) * 8) & 3).toBe(1);
  expect(first.subarray((words + 2) * 8).toString("latin1")).toBe("--trace-gc\0\0\0\0\0\0--a\0\0\0\0\0");
  expect(flagged.subarray(16 + (words + 5) * 8).toString("latin1")).toBe("later!!\0");
  // Read back by the encoding's rules: the list and each text where its pointer says.
  expect(flagsOf(two)).toEqual([]);
  expect(flagsOf(flagged)).toEqual(["--trace-gc", "--a"]);
  expect(flagsOf(withV8Flags(config(), ["--x", "--expose-gc", "--max-semi-space-size=8"]))).toEqual(["--x", "--expose-gc", "--max-semi-space-size=8"]);
});

it("refuses a config that already has flags, one cut short, and one whose root has no room for them", () => {
  const flagged = withV8Flags(config(), ["--trace-gc"]);
  expect(() => withV8Flags(flagged, ["--expose-gc"])).toThrow("already sets v8Flags");
  expect(() => withV8Flags(config().subarray(0, 64), ["--trace-gc"])).toThrow("shorter than its segment table");
  // A root struct with no pointers at all.
  expect(() => withV8Flags(Buffer.from([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), ["--trace-gc"])).toThrow("no v8Flags field");
});

it("reads each kind of --trace-gc line into its pause, and a collection's incremental marking into the most it can stall a call", () => {
  expect(readCollection("[2314:0x72d2bfc68000]       98 ms: Scavenge 5.6 (6.6) -> 5.3 (7.3) MB, pooled: 0.0 MB, 2.89 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ")).toEqual(
    { isolate: "0x72d2bfc68000", atMs: 98, kind: "Scavenge", pauseMs: 2.89, markingMs: 0, stallMs: 2.89 },
  );
  expect(
    readCollection(
      "[2314:0x72d2bfc68000]    29765 ms: Mark-Compact 34.5 (48.1) -> 8.2 (42.3) MB, pooled: 5.8 MB, 28.11 / 0.00 ms (average mu = 0.998, current mu = 0.997) allocation failure; GC in old space requested",
    ),
  ).toEqual({ isolate: "0x72d2bfc68000", atMs: 29765, kind: "Mark-Compact", pauseMs: 28.11, markingMs: 0, stallMs: 28.11 });
  const incremental = readCollection(
    "[7:0x1f00a0000:0]     1520 ms: Mark-Compact (reduce) 16.1 (19.7) -> 14.8 (20.0) MB, 3.26 / 0.01 ms  (+ 11.3 ms in 113 steps since start of marking, biggest step 0.3 ms, walltime since start of marking 24 ms) (average mu = 0.99, current mu = 0.98) finalize incremental marking via task; GC in old space requested",
  ) as Collection;
  expect(incremental).toMatchObject({ isolate: "0x1f00a0000", atMs: 1520, kind: "Mark-Compact (reduce)", pauseMs: 3.26, markingMs: 11.3 });
  expect(incremental.stallMs).toBeCloseTo(14.56, 6);

  // A gateway log line, a blank line, workerd's own messages: not collections.
  for (const other of ['{"at":"2026-12-01T00:00:00.000Z","event":"mcp_request","durationMs":1}', "", "workerd/server/server.c++:1 info: 98 ms: not V8"]) expect(readCollection(other)).toBeUndefined();
  // One that holds a collection's start and does not read as one whole is kept, to fail the verdict: another format,
  // a marking clause that does not read (its time would be lost), a line torn by other output before it or cut short.
  for (const unread of [
    "[2314:0x72d2bfc68000]       98 ms: Scavenge 5.6 -> 5.3 MB, 2.89 ms",
    "[7:0x1f00a0000]     1520 ms: Mark-Compact 16.1 (19.7) -> 14.8 (20.0) MB, 3.26 / 0.01 ms  (+ 11.3 ms in marking, 113 steps) finalize incremental marking via task",
    '{"event":"mcp_request"}[2314:0x72d2bfc68000]       98 ms: Scavenge 5.6 (6.6) -> 5.3 (7.3) MB, pooled: 0.0 MB, 2.89 / 0.00 ms',
    "[2314:0x72d2bfc68000]       98 ms: Scavenge 5.6 (6.6) -> 5.3 (7.3) MB, pooled: 0.0 MB, 2.",
  ]) {
    expect(readCollection(unread)).toEqual({ unread });
  }
});

/** A collection in `isolate` at `atMs` that stalled for `stallMs`. */
const at = (isolate: string, atMs: number, stallMs: number): Collection => ({ isolate, atMs, kind: "Scavenge", pauseMs: stallMs, markingMs: 0, stallMs });

it("adds up one isolate's collections that fall within the window of each other, never two isolates'", () => {
  expect(mostWithin([], 50)).toBe(0);
  expect(mostWithin([at("0xa", 100, 30)], 50)).toBe(30);
  // 30 ms and 25 ms, 50 ms apart: one call of 50 ms can have waited on both; 50.01 ms apart, not.
  expect(mostWithin([at("0xa", 150, 25), at("0xa", 100, 30)], 50)).toBe(55);
  expect(mostWithin([at("0xa", 100, 30), at("0xa", 150.01, 25)], 50)).toBe(30);
  // The same times in two isolates: their clocks do not share a start, so they are not added.
  expect(mostWithin([at("0xa", 100, 30), at("0xb", 110, 25)], 50)).toBe(30);
  // A run of small ones: the window slides.
  const run = [0, 10, 20, 30, 40, 50, 60, 70].map((t) => at("0xa", t, 5));
  expect(mostWithin(run, 50)).toBe(30);
  expect(mostWithin(run, 1000)).toBe(40);
});

it("passes the stall target only on collections that all read and stay within the limit together", () => {
  expect(stallVerdict([at("0xa", 100, 30), at("0xa", 200, 45)], [], 50)).toBe("the most one isolate's collections took within any 50 ms 45.00 ms (target <= 50 ms): PASS");
  expect(stallVerdict([at("0xa", 100, 50)], [], 50)).toMatch(/50\.00 ms \(target <= 50 ms\): PASS$/);
  expect(stallVerdict([at("0xa", 100, 50.01)], [], 50)).toMatch(/50\.01 ms \(target <= 50 ms\): MISS$/);
  expect(stallVerdict([at("0xa", 100, 25.18), at("0xa", 120, 24.82)], [], 50)).toMatch(/50\.00 ms \(target <= 50 ms\): PASS$/);
  expect(stallVerdict([at("0xa", 100, 30), at("0xa", 140, 25)], [], 50)).toMatch(/55\.00 ms \(target <= 50 ms\): MISS$/);
  expect(stallVerdict([at("0xa", 100, 1)], ["[1:0xa] 5 ms: Scavenge ??"], 50)).toBe("1 trace lines did not read, so the target cannot be judged: MISS (the first: [1:0xa] 5 ms: Scavenge ??)");
  expect(stallVerdict([], [], 50)).toBe("no collection was reported, so --trace-gc did not reach workerd: MISS");
});

it("reports every collection of a real workerd's isolates from its start, the longest stall first, and stops the runtime", async () => {
  let url = "";
  const traced = await traceCollections(
    [PROBE(ALLOCATING)],
    async (runtime: { url: string }) => {
      url = runtime.url;
      const call = async (path: string, answer: string) => {
        const response = await fetch(`${runtime.url}${path}`);
        expect(await response.text()).toBe(answer);
      };
      for (let full = 0; full < 3; full++) {
        await closedLoop(100, 2, () => call("/", "50"));
        await call("/full", "collected");
      }
      return "the run's own result";
    },
    { v8Flags: ["--expose-gc"] },
  );
  expect(traced.result).toBe("the run's own result");
  expect(traced.unread).toEqual([]);
  const collections = traced.collections as Collection[];
  // 300 requests allocate about 60 MB between them: several young collections; and three full ones asked for.
  expect(collections.filter((c) => c.kind === "Scavenge").length).toBeGreaterThan(2);
  expect(collections.filter((c) => c.kind.startsWith("Mark-Compact")).length).toBeGreaterThanOrEqual(3);
  for (const c of collections) {
    expect(c.isolate).toMatch(/^0x[0-9a-f]+$/);
    expect(c.pauseMs).toBeGreaterThan(0);
    expect(c.stallMs).toBeCloseTo(c.pauseMs + c.markingMs, 9);
  }
  expect(collections.map((c) => c.stallMs)).toEqual(collections.map((c) => c.stallMs).sort((a, b) => b - a));
  await expect(fetch(url)).rejects.toThrow();
}, 60_000);

it("stops the runtime when the run fails, and passes the failure on", async () => {
  let url = "";
  await expect(
    traceCollections([PROBE(TYPEOF_GC)], async (runtime: { url: string }) => {
      url = runtime.url;
      throw new Error("the run broke");
    }),
  ).rejects.toThrow("the run broke");
  for (const name of SWAPPED_ENV) expect(process.env[name]).toBeUndefined();
  await expect(fetch(url)).rejects.toThrow();
});

it("says it cannot trace where stdbuf is missing, and starts nothing", async () => {
  const path = process.env.PATH;
  process.env.PATH = "/nonexistent";
  let ran = false;
  try {
    await expect(
      traceCollections([PROBE(TYPEOF_GC)], async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(TraceUnavailable);
  } finally {
    process.env.PATH = path;
  }
  expect(ran).toBe(false);
});
