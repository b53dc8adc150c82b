// What `npm run bench` reads inside a Worker's isolate: the bytes it allocates per call and the heap it keeps
// after a forced collection. It speaks the Chrome DevTools Protocol to workerd's inspector, which Miniflare
// opens to each Worker started with `unsafeInspectorProxy` (startRuntime's `inspect` option, scripts/stack.mjs).
import WebSocket from "ws";

/**
 * V8's sampling heap profiler records one allocation per `samplingInterval` bytes on average and scales each
 * sample back up, so the sum over many calls is the bytes allocated. Objects a later collection freed are
 * kept in the profile: a call's garbage is its cost too.
 */
const SAMPLING = { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };

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

/** The bytes each of `isolates` allocated per call while `run()` made `calls` calls, collected objects included. */
export async function allocatedPerCall(isolates, calls, run) {
  await Promise.all(isolates.map((isolate) => isolate.send("HeapProfiler.startSampling", SAMPLING)));
  await run();
  const profiles = await Promise.all(isolates.map((isolate) => isolate.send("HeapProfiler.stopSampling")));
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

/**
 * The collections each of `isolates` paused for while `run()` ran, read from V8's CPU profiler: the samples taken
 * while the isolate's thread was collecting are attributed to "(garbage collector)", and a run of them in a row
 * is one pause. `intervalUs` is the sampling interval asked for, but on a busy machine samples come further apart
 * (on two cores, gaps of 20 ms and more are common), so each pause is given as bounds: at most from the last other
 * sample before the run to the first other sample after it, at least from the run's first sample to its last.
 * Resolves to each isolate's pauses, `{ atMost, atLeast }` in ms, the longest `atMost` first, and the mean time
 * between its samples in ms.
 */
export async function collectionPauses(isolates, run, intervalUs = 500) {
  for (const isolate of isolates) {
    await isolate.send("Profiler.enable");
    await isolate.send("Profiler.setSamplingInterval", { interval: intervalUs });
  }
  await Promise.all(isolates.map((isolate) => isolate.send("Profiler.start")));
  const stop = () => Promise.all(isolates.map((isolate) => isolate.send("Profiler.stop")));
  try {
    await run();
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  const profiles = await stop();
  return profiles.map(({ profile }) => {
    const collecting = new Set(profile.nodes.filter((node) => node.callFrame.functionName === "(garbage collector)").map((node) => node.id));
    const pauses = [];
    let at = profile.startTime;
    let lastOther = at;
    let collection;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i];
      if (collecting.has(profile.samples[i])) {
        collection ??= { before: lastOther, first: at };
        collection.last = at;
      } else {
        if (collection !== undefined) pauses.push({ atMost: (at - collection.before) / 1000, atLeast: (collection.last - collection.first) / 1000 });
        collection = undefined;
        lastOther = at;
      }
    }
    if (collection !== undefined) pauses.push({ atMost: (profile.endTime - collection.before) / 1000, atLeast: (collection.last - collection.first) / 1000 });
    return { pauses: pauses.sort((a, b) => b.atMost - a.atMost), resolutionMs: (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length) };
  });
}
