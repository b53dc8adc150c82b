// Covers what `npm run bench` reads inside an isolate (scripts/bench-heap.mjs) against a Worker of its own whose
// allocation per request is known: the bytes per call it finds, and retention found when and only when kept.
import { afterAll, beforeAll, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { allocatedPerCall, functionsIn, HEAP_GROWTH_LIMIT, heapAfterCollection, inspectIsolate, retained } from "../../scripts/bench-heap.mjs";
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
function allocateStrings() {
  const strings = [];
  for (let i = 0; i < ${STRINGS}; i++) strings.push(base.toUpperCase());
  return strings;
}
export default {
  fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/light") return new Response("ok");
    if (path === "/release") kept.length = 0;
    const strings = allocateStrings();
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
});

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
});

it("hands over each isolate's profile, which names the function that allocated (how part 7 tells the kit's lane from the SDK's path)", async () => {
  const seen: Set<string>[] = [];
  const keep = (_: number, profile: unknown) => seen.push(functionsIn(profile));
  await allocatedPerCall([isolate], 200, () => calls(200, "/alloc"), keep);
  await allocatedPerCall([isolate], 200, () => calls(200, "/light"), keep);
  expect(seen).toHaveLength(2);
  expect(seen[0]?.has("allocateStrings")).toBe(true);
  expect(seen[1]?.has("allocateStrings")).toBe(false);
});

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
});
