// Covers what `npm run bench` reads inside an isolate (scripts/bench-heap.mjs) against a Worker of its own whose
// allocation per request is known: the bytes per call it finds, retention found when and only when kept, and the
// collection pauses read from V8's CPU profiler, bounded by the samples around them.
import { afterAll, beforeAll, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { allocatedPerCall, collectionPauses, HEAP_GROWTH_LIMIT, heapAfterCollection, inspectIsolate, retained } from "../../scripts/bench-heap.mjs";
// @ts-expect-error: plain ESM helper without types
import { closedLoop, startRuntime } from "../../scripts/bench-runtime.mjs";

interface Isolate {
  close(): void;
}

const STRINGS = 25;
const LENGTH = 4096;
// Each of the strings is a fresh flat one-byte string of LENGTH bytes (toUpperCase of a lowercase one), whatever
// the isolate's pointer size; the request's own objects come on top.
const ALLOCATED = STRINGS * LENGTH;

const SCRIPT = `
const base = Array.from({ length: ${LENGTH} }, () => "x").join("");
const kept = [];
export default {
  fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/light") return new Response("ok");
    if (path === "/release") kept.length = 0;
    const strings = [];
    for (let i = 0; i < ${STRINGS}; i++) strings.push(base.toUpperCase());
    if (path === "/keep") kept.push(strings);
    return new Response(strings[strings.length - 1].slice(0, 8));
  },
};`;

let runtime: { url: string; inspectorPort: number; stop(): Promise<void> };
let isolate: Isolate;
const hit = async (path: string) => {
  const response = await fetch(`${runtime.url}${path}`);
  await response.text();
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status}`);
};
const calls = (n: number, path: string) => closedLoop(n, 4, () => hit(path));
const heap = async (): Promise<number> => (await heapAfterCollection([isolate], () => hit("/light")))[0];

beforeAll(async () => {
  runtime = await startRuntime([{ name: "heap-probe", modules: true, script: SCRIPT, compatibilityDate: "2026-04-26" }], { inspect: ["heap-probe"] });
  isolate = await inspectIsolate(runtime.inspectorPort, "heap-probe");
  await calls(50, "/alloc");
}, 30_000);

afterAll(async () => {
  isolate?.close();
  await runtime?.stop();
});

it("finds the bytes a request allocates, within a factor of two, and far fewer for a request that allocates little", async () => {
  const [heavy] = await allocatedPerCall([isolate], 200, () => calls(200, "/alloc"));
  const [light] = await allocatedPerCall([isolate], 200, () => calls(200, "/light"));
  expect(heavy).toBeGreaterThan(ALLOCATED / 2);
  expect(heavy).toBeLessThan(ALLOCATED * 2);
  expect(light).toBeLessThan(ALLOCATED / 4);
}, 20_000);

it("finds no retention while every request's garbage is collectable, finds it while each request keeps its strings, and none once they are let go", async () => {
  const start = await heap();
  await calls(300, "/alloc");
  const afterGarbage = await heap();
  expect(retained(start, afterGarbage)).toBe(false);
  expect(Math.abs(afterGarbage - start)).toBeLessThan(1024 * 1024);

  await calls(100, "/keep");
  const afterKeeping = await heap();
  expect(retained(afterGarbage, afterKeeping)).toBe(true);
  expect(afterKeeping - afterGarbage).toBeGreaterThan(Math.max(HEAP_GROWTH_LIMIT, (100 * ALLOCATED) / 2));
  expect(afterKeeping - afterGarbage).toBeLessThan(100 * ALLOCATED * 2);

  // The kept strings have outlived young collections by now: only the forced full collection frees them.
  await hit("/release");
  const afterRelease = await heap();
  expect(retained(start, afterRelease)).toBe(false);
  expect(Math.abs(afterRelease - start)).toBeLessThan(1024 * 1024);
}, 20_000);

interface Pause {
  atMost: number;
  atLeast: number;
}

/** collectionPauses for one isolate, typed. */
async function pausesIn(one: unknown, run: () => Promise<unknown>): Promise<{ pauses: Pause[]; resolutionMs: number }> {
  const [read] = (await collectionPauses([one], run)) as { pauses: Pause[]; resolutionMs: number }[];
  if (read === undefined) throw new Error("collectionPauses read no isolate");
  return read;
}

it("finds the collections a run of allocating requests causes, each bounded, the longest first", async () => {
  const { pauses, resolutionMs } = await pausesIn(isolate, () => calls(300, "/alloc"));
  // 300 requests allocate about 30 MB: more than one young generation's worth.
  expect(pauses.length).toBeGreaterThan(0);
  for (const pause of pauses) {
    expect(pause.atLeast).toBeGreaterThanOrEqual(0);
    expect(pause.atMost).toBeGreaterThan(pause.atLeast);
  }
  expect(pauses.map((p) => p.atMost)).toEqual(pauses.map((p) => p.atMost).sort((a, b) => b - a));
  expect(resolutionMs).toBeGreaterThan(0);
}, 20_000);

/** An isolate whose profiler hands back `profile`, as the inspector would. */
const profiled = (samples: string[], deltasUs: number[], endGapUs = 100) => {
  const ids: Record<string, number> = { "(root)": 1, "(program)": 2, "(garbage collector)": 3, handle: 4 };
  const nodes = Object.entries(ids).map(([functionName, id]) => ({ id, callFrame: { functionName } }));
  const startTime = 1_000_000;
  const endTime = startTime + deltasUs.reduce((a, b) => a + b, 0) + endGapUs;
  return {
    worker: "fake",
    send: async (method: string) => (method === "Profiler.stop" ? { profile: { nodes, startTime, endTime, samples: samples.map((n) => ids[n]), timeDeltas: deltasUs } } : {}),
  };
};

it("bounds a pause by the samples either side of it, so that a gap in sampling next to a collection counts against it", async () => {
  const GC = "(garbage collector)";
  // handle at 1 ms; a 30 ms gap; collecting at 31, 31.5 and 32 ms; handle at 32.5 ms; collecting at 40 ms; (program) at 41 ms;
  // collecting at 41.5 ms until the profile ends 0.1 ms later.
  const isolate = profiled(["handle", GC, GC, GC, "handle", GC, "(program)", GC], [1000, 30_000, 500, 500, 500, 7500, 1000, 500]);
  const { pauses, resolutionMs } = await pausesIn(isolate, async () => {});
  const rounded = pauses.map((p) => ({ atMost: Number(p.atMost.toFixed(3)), atLeast: Number(p.atLeast.toFixed(3)) }));
  expect(rounded).toEqual([
    { atMost: 31.5, atLeast: 1 },
    { atMost: 8.5, atLeast: 0 },
    { atMost: 0.6, atLeast: 0 },
  ]);
  expect(resolutionMs).toBeCloseTo(41.6 / 8, 6);

  const quiet = profiled(["handle", "(program)", "handle"], [500, 500, 500]);
  const none = await pausesIn(quiet, async () => {});
  expect(none.pauses).toEqual([]);
});

it("stops the profiler when the run fails, and passes the failure on", async () => {
  const sent: string[] = [];
  const isolate = {
    worker: "fake",
    send: async (method: string) => {
      sent.push(method);
      return method === "Profiler.stop" ? { profile: { nodes: [], samples: [], timeDeltas: [], startTime: 0, endTime: 0 } } : {};
    },
  };
  await expect(collectionPauses([isolate], () => Promise.reject(new Error("the run broke")))).rejects.toThrow("the run broke");
  expect(sent).toEqual(["Profiler.enable", "Profiler.setSamplingInterval", "Profiler.start", "Profiler.stop"]);
});
