// The collections of every isolate in a workerd process, as V8 itself reports them: `npm run bench` judges "no call
// stalled over 50 ms by a collection" on these. V8's --trace-gc prints one line per collection with the time its
// main thread was paused, measured, not sampled (workerd's CPU profiler samples a busy two-core machine only every
// few milliseconds). The flag reaches workerd through its config (startRuntime's `v8Flags`, scripts/stack.mjs).
import { execFileSync } from "node:child_process";
import { startRuntime } from "./stack.mjs";

/** The start of a --trace-gc line: "[pid:0xISOLATE] T ms: " (a third, numeric field on some builds). */
const TRACE_START = /\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+([\d.]+) ms: /;
/** The rest of it: "Kind A (B) -> C (D) MB, pooled: P MB, PAUSE / EXTERNAL ms". */
const COLLECTION = /^(.+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms(.*)$/;
/** After it, for a collection that marked incrementally: "(+ I ms in S steps since start of marking, biggest step X ms, ...)". */
const MARKING = /^\s+\(\+ ([\d.]+) ms in \d+ steps since start of marking, biggest step [\d.]+ ms/;

/**
 * One line of workerd's output as a collection: the isolate (V8's address for it), `atMs` (since that isolate
 * started), the kind, `pauseMs` (its main-thread pause), `markingMs` (the incremental marking steps V8 counts for it,
 * taken earlier between other work; 0 when it did not mark incrementally) and `stallMs`, both together, as if every
 * step had fallen in one call. `undefined` for any other line. A line that holds a collection's start anywhere but
 * does not read as one whole (another format, a marking clause that does not read, text stuck before it) is
 * `{ unread: line }`, so that a change in V8's format or a torn line is never a silent pass.
 */
export function readCollection(line) {
  const start = TRACE_START.exec(line);
  if (start === null) return undefined;
  const parts = start.index === 0 ? COLLECTION.exec(line.slice(start[0].length)) : null;
  if (parts === null) return { unread: line };
  const rest = parts[3];
  const marking = MARKING.exec(rest);
  if (marking === null && rest.includes("(+")) return { unread: line };
  const pauseMs = Number(parts[2]);
  const markingMs = marking === null ? 0 : Number(marking[1]);
  return { isolate: start[1], atMs: Number(start[2]), kind: parts[1], pauseMs, markingMs, stallMs: pauseMs + markingMs };
}

/**
 * The most collections in one isolate took within any `windowMs` (by the isolate's own clock, each collection's
 * stallMs): what one call of up to `windowMs` can have waited on collections in that isolate, however close
 * together they came. Collections in two isolates are not added up: their clocks do not share a start.
 */
export function mostWithin(collections, windowMs) {
  let most = 0;
  for (const isolate of new Set(collections.map((c) => c.isolate))) {
    const inOrder = collections.filter((c) => c.isolate === isolate).sort((a, b) => a.atMs - b.atMs);
    let sum = 0;
    let first = 0;
    for (const c of inOrder) {
      sum += c.stallMs;
      while (c.atMs - inOrder[first].atMs > windowMs) sum -= inOrder[first++].stallMs;
      most = Math.max(most, sum);
    }
  }
  return most;
}

/**
 * The stall target's verdict on a traced run: PASS only when every line read, some collection was reported, and no
 * isolate's collections within `limitMs` of each other add up to more than `limitMs`.
 */
export function stallVerdict(collections, unread, limitMs) {
  if (unread.length > 0) return `${unread.length} trace lines did not read, so the target cannot be judged: MISS (the first: ${unread[0].slice(0, 160)})`;
  if (collections.length === 0) return "no collection was reported, so --trace-gc did not reach workerd: MISS";
  // V8 prints hundredths of a millisecond: judged on the sum to that, so that float noise in adding them up does not
  // turn 25.18 + 24.82 into a MISS.
  const most = mostWithin(collections, limitMs).toFixed(2);
  return `the most one isolate's collections took within any ${limitMs} ms ${most} ms (target <= ${limitMs} ms): ${Number(most) <= limitMs ? "PASS" : "MISS"}`;
}

/** This machine cannot trace workerd's collections (off Linux, say); the bench says so instead of judging. */
export class TraceUnavailable extends Error {}

/**
 * `workers` on a workerd traced with --trace-gc (and `v8Flags`, more V8 flags); `run(runtime)` makes the calls.
 * Resolves to run's result and every collection of every isolate in the process from its start to the end of the
 * run (start-up included, so the figure can only err long), the longest stall first, and the lines that did not read.
 */
export async function traceCollections(workers, run, { v8Flags = [] } = {}) {
  try {
    execFileSync("stdbuf", ["--version"], { stdio: "ignore" });
  } catch {
    throw new TraceUnavailable("reading V8's trace as workerd writes it needs stdbuf (GNU coreutils), which this machine lacks");
  }
  const collections = [];
  const unread = [];
  let partial = "";
  const read = (line) => {
    const collection = readCollection(line);
    if (collection === undefined) return;
    if ("unread" in collection) unread.push(collection.unread);
    else collections.push(collection);
  };
  const runtime = await startRuntime(workers, {
    v8Flags: ["--trace-gc", ...v8Flags],
    lineBuffered: true,
    onOutput(stdout, stderr) {
      stdout.on("data", (chunk) => {
        const lines = (partial + chunk.toString()).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) read(line);
      });
      stderr.resume();
    },
  });
  try {
    const result = await run(runtime);
    // workerd writes each line as it happens; the last may still be on its way through the pipe.
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A line still unfinished then is read as it stands: a torn collection line is unread, never dropped.
    if (partial !== "") read(partial);
    return { result, collections: [...collections].sort((a, b) => b.stallMs - a.stallMs), unread };
  } finally {
    await runtime.stop();
  }
}
