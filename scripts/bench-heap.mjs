// What `npm run bench` reads inside a Worker's isolate: the bytes it allocates per call and the heap it keeps
// after a forced collection. It speaks the Chrome DevTools Protocol to workerd's inspector, which Miniflare
// opens to each Worker started with `unsafeInspectorProxy` (startRuntime's `inspect` option, scripts/stack.mjs).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";

/**
 * V8's sampling heap profiler records one allocation per `samplingInterval` bytes on average and scales each
 * sample back up, so the sum over many calls is the bytes allocated. Objects a later collection freed are
 * kept in the profile: a call's garbage is its cost too.
 */
// BENCH_HEAP_SAMPLING=<bytes> samples more finely (slower), to tell which code allocated a few hundred bytes.
const SAMPLING = { samplingInterval: Number(process.env.BENCH_HEAP_SAMPLING ?? 4096), includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };

/** How much the heap left after a collection may grow over a long run before it counts as retention. */
export const HEAP_GROWTH_LIMIT = 4 * 1024 * 1024;

/** One Worker's isolate in a runtime started with workerd's inspector on `inspectorPort`. */
export async function inspectIsolate(inspectorPort, worker) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
  const target = targets.find((t) => t.webSocketDebuggerUrl.endsWith(`/${worker}`));
  if (target === undefined) throw new Error(`${worker} is not open to the inspector on ${inspectorPort} (start it with unsafeInspectorProxy)`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const pending = new Map();
  let nextId = 0;
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString());
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    if (message.error !== undefined) waiting.reject(new Error(`${worker}: ${waiting.method}: ${message.error.message}`));
    else waiting.resolve(message.result);
  });
  socket.on("close", () => {
    for (const waiting of pending.values()) waiting.reject(new Error(`${worker}: the inspector closed during ${waiting.method}`));
    pending.clear();
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { method, resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send("HeapProfiler.enable");
  return { worker, send, close: () => socket.close() };
}

const sampledBytes = (node) => node.selfSize + node.children.reduce((sum, child) => sum + sampledBytes(child), 0);

/** Every function name in a sampled profile's tree. */
export function functionsIn(profile) {
  const names = new Set();
  const walk = (node) => {
    names.add(node.callFrame.functionName);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return names;
}

/**
 * The bytes each of `isolates` allocated per call while `run()` made `calls` calls, collected objects included.
 * `onProfile(i, profile)` sees each isolate's sampled profile (V8's SamplingHeapProfile), to tell which code allocated.
 */
export async function allocatedPerCall(isolates, calls, run, onProfile = () => {}) {
  await Promise.all(isolates.map((isolate) => isolate.send("HeapProfiler.startSampling", SAMPLING)));
  await run();
  const profiles = await Promise.all(isolates.map((isolate) => isolate.send("HeapProfiler.stopSampling")));
  // BENCH_HEAP_PROFILES=<dir> keeps each profile, as Chrome's DevTools open it, to see where a call's bytes go.
  const dir = process.env.BENCH_HEAP_PROFILES;
  if (dir !== undefined) for (const [i, { profile }] of profiles.entries()) writeFileSync(join(dir, `${isolates[i].worker}-${Date.now()}.heapprofile`), JSON.stringify(profile));
  for (const [i, { profile }] of profiles.entries()) onProfile(i, profile);
  return profiles.map(({ profile }) => sampledBytes(profile.head) / calls);
}

/**
 * Each of `isolates`' used heap, in bytes, right after a full collection. workerd runs an inspector command
 * that needs the isolate only once the isolate next takes its lock, that is when a request arrives: `poke()`
 * sends one request that reaches every one of them, and is repeated until each has collected.
 */
export async function heapAfterCollection(isolates, poke) {
  let collected = 0;
  const collections = isolates.map((isolate) => isolate.send("HeapProfiler.collectGarbage").then(() => collected++));
  for (let attempt = 0; collected < isolates.length; attempt++) {
    if (attempt === 20) throw new Error(`no forced collection ran in ${isolates.map((i) => i.worker).join(", ")} after ${attempt} requests`);
    await poke();
    await Promise.race([Promise.all(collections), new Promise((resolve) => setTimeout(resolve, 100))]);
  }
  return Promise.all(isolates.map(async (isolate) => (await isolate.send("Runtime.getHeapUsage")).usedSize));
}

/** Whether the heap left after collections grew by more than HEAP_GROWTH_LIMIT from `before` to `after`. */
export const retained = (before, after) => after - before > HEAP_GROWTH_LIMIT;
