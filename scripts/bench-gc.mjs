// The collections of every isolate in a workerd process, as V8 itself reports them: `npm run bench` judges "no call
// stalled over 50 ms by a collection" on these. V8's --trace-gc prints one line per collection with the time its
// main thread was paused, measured, not sampled (workerd's CPU profiler samples a busy two-core machine only every
// few milliseconds). The flag reaches workerd through its config (startRuntime's `v8Flags`, scripts/stack.mjs).
import { startRuntime } from "./stack.mjs";

/** The start of a --trace-gc line: "[pid:0xISOLATE] T ms: " (a third, numeric field on some builds). */
const TRACE_LINE = /^\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+[\d.]+ ms: /;
/**
 * The rest of it: "Kind A (B) -> C (D) MB, pooled: P MB, PAUSE / EXTERNAL ms", and for a mark-compact that marked
 * incrementally "(+ I ms in S steps since start of marking, biggest step X ms, ...)".
 */
const COLLECTION =
  /ms: (.+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms(?:\s+\(\+ ([\d.]+) ms in \d+ steps since start of marking, biggest step ([\d.]+) ms)?/;

/**
 * One line of workerd's output as a collection: the isolate (V8's address for it), the kind, `pauseMs` (the main
 * thread stopped for it), `markingMs` (the incremental marking steps it took earlier, between other work; 0 for a
 * collection that did not mark incrementally), `stallMs`, at most what it can have added to any one call (all of
 * both, as if every step had fallen in the same call). `undefined` for any other line; a line that starts as a
 * collection's but does not read as one is `{ unread: line }`, so that a change in V8's format is never a silent pass.
 */
export function readCollection(line) {
  const start = TRACE_LINE.exec(line);
  if (start === null) return undefined;
  const parts = COLLECTION.exec(line);
  if (parts === null) return { unread: line };
  const pauseMs = Number(parts[2]);
  const markingMs = parts[3] === undefined ? 0 : Number(parts[3]);
  return { isolate: start[1], kind: parts[1], pauseMs, markingMs, stallMs: pauseMs + markingMs };
}

/**
 * `workers` on a workerd traced with --trace-gc (and `v8Flags`, more V8 flags); `run(runtime)` makes the calls.
 * Resolves to run's result and every collection of every isolate in the process from its start to the end of the
 * run (start-up included, so the figure can only err long), the longest stall first, and the lines that did not read.
 */
export async function traceCollections(workers, run, { v8Flags = [] } = {}) {
  const collections = [];
  const unread = [];
  let partial = "";
  const runtime = await startRuntime(workers, {
    v8Flags: ["--trace-gc", ...v8Flags],
    onOutput(stdout, stderr) {
      stdout.on("data", (chunk) => {
        const lines = (partial + chunk.toString()).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) {
          const read = readCollection(line);
          if (read === undefined) continue;
          if ("unread" in read) unread.push(read.unread);
          else collections.push(read);
        }
      });
      stderr.resume();
    },
  });
  try {
    const result = await run(runtime);
    // workerd writes each line as it happens; the last may still be on its way through the pipe.
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { result, collections: [...collections].sort((a, b) => b.stallMs - a.stallMs), unread };
  } finally {
    await runtime.stop();
  }
}
