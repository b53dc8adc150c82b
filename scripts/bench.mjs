// `npm run bench`: side-by-side measurements in one run, printed as ratios.
//   1. an echo tool called through the gateway vs directly against the echo bundle (target p50 ratio <= 1.3), with
//      the CPU per call of the workerd process serving each path (one process per path, read from /proc),
//      beside three references (a bare forwarder, the forwarder writing the gateway's one log line per request,
//      and a minimal 2026-07-28 reframer), in both revisions, and on 2026-07-28 a fourth, the reframer writing the log
//      line too (the floor under issue 31's target 1: what a gateway that did nothing else would cost): the
//      gateway within 1.05 of the forwarder's p50 in each, and its 2026-07-28 p50 within 1.05 of its 2025-11-25
//      one; on workerd without `wrangler dev`'s inspector proxy (scripts/bench-runtime.mjs says why). Then the
//      gateway one call at a time on a workerd that reports every collection's pause (V8's --trace-gc,
//      scripts/bench-gc.mjs; target: none that could stall a call over 50 ms), the bundle called directly beside it;
//      and, through workerd's inspector, the bytes allocated per call in the gateway's and the bundle's isolates and
//      their heaps after a forced collection, warm and after a long run: growth beyond 4 MiB is retention and makes
//      the bench exit non-zero
//   2. a confirmed write approved at once vs the same write on a waived mount: overhead per call
//      (target p50 <= 50 ms) and call-registry Durable Object requests per call (target <= 4: watch, claim, confirm, end)
//   3. decision-to-action (the write at the recorder) and decision-to-tool-result latency through the approval
//      service, long-poll vs plain polling; both include the claim's liveness hold (target p50 < 500 ms)
//   4. Approval Flow: decision to await_approval's answer, a person's decision landing while the agent's
//      await_approval is held (target p50 < 300 ms)
//   5. the mailbox: a search_messages + get_message pair through the gateway against the stack's Dovecot (p50), what
//      one IMAP connection costs (connect, greeting, LOGIN, LOGOUT, from Node to the same Dovecot) against a call, and
//      the connections to Dovecot still open after the run (target 0: one per call, none held across requests)
//   6. cold starts: each deployed Worker started on workerd, global scope to first answer, minus a trivial stand-in
//      started the same way (scripts/bench-cold.mjs; target median <= 100 ms, the 1Password SDK build against
//      Cloudflare's 1 s start limit). BENCH_COLD=1 runs it alone; BENCH_COLD_STARTS (9) starts each Worker that often;
//      BENCH_COLD_ONLY=echo,gateway starts only the Workers whose names hold one of those words.
//      BENCH_MAILBOX=1 runs part 5 alone.
//   7. each bundle's hot read through the gateway on the stack, in 2026-07-28 as the gateway speaks to its mounts:
//      the bytes allocated per call in that bundle's isolate (target <= 8 KiB), beside the floor for its upstream
//      exchange: a bare tool server (scripts/bench-floor-bundle.mjs) answering from the call alone, after one or four
//      subrequests, or after one IMAP connection. BENCH_BUNDLES=1 runs it alone; BENCH_BUNDLES_ONLY=pads,google
//      measures only those bundles' reads (the floors always); BENCH_HEAP_SAMPLING=<bytes> samples more finely.
// Everything runs on 127.0.0.1; loops are bounded by N. Usage: npm run bench [-- N CONCURRENCY]
// (BENCH_ONLY=1 runs part 1 alone, for iterating on the gateway's hot path. BENCH_STALL_CALLS, 10 x N by
// default, and BENCH_RETENTION_CALLS, 50 x N, size the stall and retention runs: 20k and 100k at the default N.)
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { coldStarts } from "./bench-cold.mjs";
import { stallVerdict, TraceUnavailable, traceCollections } from "./bench-gc.mjs";
import { allocatedPerCall, functionsIn, HEAP_GROWTH_LIMIT, heapAfterCollection, inspectIsolate, retained } from "./bench-heap.mjs";
import { buildWorker, closedLoop, gatewayPropsFor, measuredLoop, REVISIONS, referenceTo, startMeasuredRuntime, startRuntime, timedCall, timedList, totalCpu } from "./bench-runtime.mjs";
import { PORTS, ROOT, startStack } from "./stack.mjs";
import { discoverWorkers } from "./workers.mjs";

const N = Number(process.argv[2] ?? process.env.BENCH_N ?? 2000);
const CONCURRENCY = Number(process.argv[3] ?? process.env.BENCH_CONCURRENCY ?? 16);
const STALL_CALLS = Number(process.env.BENCH_STALL_CALLS ?? 10 * N);
const STALL_MS = 50;
const RETENTION_CALLS = Number(process.env.BENCH_RETENTION_CALLS ?? 50 * N);
// The heap is first read warm, after this many calls through the gateway.
const WARMUP_CALLS = 1000;
const BUNDLES_TITLE = "7. each bundle's hot read through the gateway (2026-07-28 on the hop): bytes allocated per call in the bundle's isolate";
/** Methods of the SDK's per-request server and transport, by the names a minified build keeps: part 7's sign of the SDK's path. */
const SDK_PATH_METHODS = ["registerTool", "_onrequest", "handleMessage"];
/** Issue 31 target 1 on 2026-07-28: p50 ratios to the reframer and to the bundle called directly, and the gateway's own CPU per call. */
const TARGET1 = { reframer: 1.15, direct: 1.25, ownCpuMs: 0.15 };
/** Part 7's target, per call in the bundle's isolate (issue 31). */
const BUNDLE_BYTES_PER_CALL = 8 * 1024;

const vars = Object.fromEntries(
  readFileSync(join(ROOT, ".dev.vars.example"), "utf8")
    .split("\n")
    .map((l) => /^([A-Z0-9_]+)="(.*)"$/.exec(l.trim()))
    .filter(Boolean)
    .map((m) => [m[1], m[2]]),
);
const TOKEN = vars.STRAD_TOKEN_DEV_SESSION;
const APPROVAL_URL = "http://127.0.0.1:8790/scripted/bench/";
const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 20);
// The dev stack's poll interval lives in the echo bundle's dev overlay (production uses the kit's 5000 ms).
const POLL_INTERVAL_MS = /^STRAD_POLL_INTERVAL_MS="?(\d+)"?/m.exec(readFileSync(join(ROOT, "bundles/echo/.dev.vars.example"), "utf8"))?.[1] ?? "5000";

/** An approval endpoint under the scripted prefix that answers every poll with accept at once. */
function instantApprover() {
  return new Promise((resolve) => {
    let n = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        if (req.method === "POST") res.end(JSON.stringify({ requestId: `bench-${++n}` }));
        else res.end(JSON.stringify({ action: "accept", content: { confirm: true }, _meta: {} }));
      });
    });
    server.listen(8790, "127.0.0.1", () => resolve(server));
  });
}

/**
 * `n` calls of `fn`, `concurrency` at a time. With `pid`, the workerd process that serves them, the CPU time it
 * used meanwhile is theirs too: part 1 runs one path at a time, each path in a workerd process of its own.
 */
async function run(label, n, fn, concurrency = CONCURRENCY, pid = undefined) {
  const { latencies, seconds, cpu } = await measuredLoop(n, concurrency, fn, pid);
  return summarise(label, latencies, seconds, cpu);
}

function summarise(label, latencies, seconds, cpu) {
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  const stats = { label, latencies, seconds, cpu, n: latencies.length, callsPerSec: latencies.length / seconds, p50: pct(50), p99: pct(99) };
  // CPU per call, in ms, of the workerd process serving the path: its isolates, their hops and its HTTP handling.
  if (cpu !== undefined) stats.cpuPerCall = cpu / 1e6 / stats.n;
  if (label !== null) {
    const cpuColumn = stats.cpuPerCall === undefined ? "" : `  CPU ${stats.cpuPerCall.toFixed(3)} ms/call`;
    console.log(
      `${label.padEnd(34)} ${String(stats.n).padStart(5)} calls  ${stats.callsPerSec.toFixed(0).padStart(6)} calls/s  p50 ${stats.p50.toFixed(2).padStart(7)} ms  p99 ${stats.p99.toFixed(2).padStart(7)} ms${cpuColumn}`,
    );
  }
  return stats;
}

function merge(label, runs) {
  return summarise(
    label,
    runs.flatMap((r) => r.latencies),
    runs.reduce((t, r) => t + r.seconds, 0),
    totalCpu(runs),
  );
}

/** Part 1: the same echo call through the gateway, through the two references and straight to the bundle, in both revisions. */
async function gatewayVsDirect() {
  // The gateway with every bundle the tree holds, as the stack runs it; the measured call is echo's.
  const found = discoverWorkers();
  const gateway = buildWorker(found.gateway.config);
  const bundles = found.bundles.map((b) => ({ dir: b.dir, options: buildWorker(b.config) }));
  const echo = bundles.find((b) => b.dir === "echo")?.options;
  if (echo === undefined) throw new Error("the bench measures the echo bundle, and bundles/echo/wrangler.toml is missing");
  // The bundle on its own has no gateway beside it, so no call registry either; echo never touches it.
  const { durableObjects: _registry, ...echoAlone } = echo;
  const viaGateway = [gateway, ...bundles.map((b) => b.options)];
  // The bundle answers only a binding carrying the gateway's props (docs/rules.md R-CHAN-13): every reference, and
  // "directly", reach it over one.
  const props = gatewayPropsFor(gateway, echo);
  await latencies(viaGateway, echoAlone, props);
  await isolateCosts(viaGateway, gateway.name, echoAlone, props);
}

/** An echo tools/call to `url` in `revision`, as `fn(i)` for closedLoop. */
const echoCall = (url, headers, revision) => (i) => timedCall(url, headers, i, "echo", { text: `bench ${i}` }, revision);
const gatewayEchoUrl = (runtime) => `${runtime.url}/mcp?servers=echo`;
// A ratio of two figures; "n/a" where one was not measured (CPU per call, off Linux).
const ratio = (a, b, key) => (a[key] === undefined || b[key] === undefined ? "n/a" : (a[key] / b[key]).toFixed(2));
const pass = (met) => (met ? "PASS" : "MISS");
const verdict = (value, target) => `${value} (target <= ${target}): ${pass(Number(value) <= target)}`;
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
/**
 * Bytes allocated per unconfirmed echo call, gateway plus bundle, before issue 19 (commit d8a6f19), measured the same
 * way (1,000 calls, one run): 15.8 + 137.9 KiB on 2025-11-25, 57.1 + 132.9 KiB on 2026-07-28, where the gateway still
 * built an SDK server for each modern call. The target is a third of it or less.
 */
const ALLOCATED_BEFORE = { "2025-11-25": (15.8 + 137.9) * 1024, "2026-07-28": (57.1 + 132.9) * 1024 };
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
const signedMib = (bytes) => `${bytes < 0 ? "-" : "+"}${mib(Math.abs(bytes))}`;

/** Part 1's latencies: every path in each revision it speaks, and the gateway one call at a time for stalls. */
async function latencies(viaGateway, echoAlone, props) {
  const runtimes = [];
  const start = async (workers) => {
    const runtime = await startMeasuredRuntime(workers);
    runtimes.push(runtime);
    return runtime;
  };
  try {
    const viaGatewayRt = await start(viaGateway);
    const forwarderRt = await start([referenceTo("forwarder", echoAlone, props), echoAlone]);
    const reframerRt = await start([referenceTo("reframer", echoAlone, props), echoAlone]);
    const loggerRt = await start([referenceTo("logger", echoAlone, props), echoAlone]);
    const directRt = await start([referenceTo("direct", echoAlone, props), echoAlone]);
    const floorRt = await start([referenceTo("reframer-logged", echoAlone, props), echoAlone]);
    const auth = { authorization: `Bearer ${TOKEN}` };
    // The forwarder hands a call to the bundle as it came. The reframer reads it and makes its own 2026-07-28 call
    // of it, as the gateway does, and answers in the caller's revision.
    const paths = [
      { name: "gateway", label: "gateway -> echo bundle", call: (rev) => echoCall(gatewayEchoUrl(viaGatewayRt), auth, rev), revisions: REVISIONS, pid: viaGatewayRt.pid },
      { name: "forwarder", label: "forwarder -> echo bundle", call: (rev) => echoCall(`${forwarderRt.url}/echo`, {}, rev), revisions: REVISIONS, pid: forwarderRt.pid },
      { name: "logger", label: "forwarder + log line -> echo bundle", call: (rev) => echoCall(`${loggerRt.url}/echo`, {}, rev), revisions: REVISIONS, pid: loggerRt.pid },
      { name: "reframer", label: "reframer -> echo bundle", call: (rev) => echoCall(`${reframerRt.url}/echo`, {}, rev), revisions: REVISIONS, pid: reframerRt.pid },
      { name: "direct", label: "echo bundle directly", call: (rev) => echoCall(`${directRt.url}/echo`, {}, rev), revisions: REVISIONS, pid: directRt.pid },
      // The floor under target 1: what a gateway that only reframes and keeps the one log line per request costs.
      { name: "floor", label: "reframer + log line -> echo bundle", call: (rev) => echoCall(`${floorRt.url}/echo`, {}, rev), revisions: ["2026-07-28"], pid: floorRt.pid },
    ];
    const series = paths.flatMap((p) => p.revisions.map((revision) => ({ key: `${p.name} ${revision}`, revision, label: `${revision}  ${p.label.padEnd(34)}`, fn: p.call(revision), pid: p.pid })));
    // Each path must answer each revision before any is timed; then warm every one so that start-up cost is not measured.
    for (const s of series) await s.fn(0).catch((error) => Promise.reject(new Error(`${s.label.trim()}: ${error.message}`)));
    for (const s of series) await run(null, 200, s.fn);
    // Interleaved in short rounds, so that every series sees the same moments of a shared, noisy machine, and
    // in a rotating order, so that none always runs first or always follows the same one.
    const rounds = 20;
    const runs = Object.fromEntries(series.map((s) => [s.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < series.length; k++) {
        const s = series[(r + k) % series.length];
        runs[s.key].push(await run(null, Math.ceil(N / rounds), s.fn, CONCURRENCY, s.pid));
      }
    }
    const stats = {};
    for (const rev of REVISIONS) for (const s of series.filter((s) => s.revision === rev)) stats[s.key] = merge(s.label, runs[s.key]);
    for (const rev of REVISIONS) {
      const [gw, fwd, direct] = ["gateway", "forwarder", "direct"].map((p) => stats[`${p} ${rev}`]);
      console.log(
        `   ${rev} gateway/direct: p50 ratio ${ratio(gw, direct, "p50")} (target <= 1.3), p99 ratio ${ratio(gw, direct, "p99")}, throughput ratio ${ratio(gw, direct, "callsPerSec")}: ${pass(Number(ratio(gw, direct, "p50")) <= 1.3)}`,
      );
      console.log(
        `   ${rev} gateway/forwarder (the service-binding hop alone): p50 ratio ${verdict(ratio(gw, fwd, "p50"), 1.05)}, p99 ratio ${ratio(gw, fwd, "p99")}, CPU per call ratio ${ratio(gw, fwd, "cpuPerCall")} (the gateway's own: ${gw.cpuPerCall === undefined ? "n/a" : `${(gw.cpuPerCall - fwd.cpuPerCall).toFixed(3)} ms`})`,
      );
      const logged = stats[`logger ${rev}`];
      console.log(
        `   ${rev} gateway/(forwarder + the gateway's one log line per request): p50 ratio ${ratio(gw, logged, "p50")}, p99 ratio ${ratio(gw, logged, "p99")}; the log line alone, (forwarder + log line)/forwarder: p50 ratio ${ratio(logged, fwd, "p50")}, CPU per call ratio ${ratio(logged, fwd, "cpuPerCall")}`,
      );
      // What reading each call and making a call of one's own costs before anything else a gateway does.
      const reframer = stats[`reframer ${rev}`];
      console.log(
        `   ${rev} the reframer (the least a proxy that reads each call and speaks 2026-07-28 to its bundle does)/forwarder: p50 ratio ${ratio(reframer, fwd, "p50")}, CPU per call ratio ${ratio(reframer, fwd, "cpuPerCall")}; gateway/reframer: p50 ratio ${ratio(gw, reframer, "p50")}, CPU per call ratio ${ratio(gw, reframer, "cpuPerCall")}; forwarder/direct p50 ratio ${ratio(fwd, direct, "p50")}`,
      );
    }
    const old = (p) => stats[`${p} 2025-11-25`];
    const modern = (p) => stats[`${p} 2026-07-28`];
    // Issue 31 target 1, the 2026-07-28 lane at a re-framer's cost: judged on this run's figures.
    const own = modern("gateway").cpuPerCall === undefined ? undefined : modern("gateway").cpuPerCall - modern("forwarder").cpuPerCall;
    console.log(
      `   issue 31 target 1, 2026-07-28: gateway/reframer p50 ratio ${verdict(ratio(modern("gateway"), modern("reframer"), "p50"), TARGET1.reframer)}; gateway/direct p50 ratio ${verdict(ratio(modern("gateway"), modern("direct"), "p50"), TARGET1.direct)}; the gateway's own CPU per call (gateway minus forwarder) ${own === undefined ? "n/a" : `${own.toFixed(3)} ms (target <= ${TARGET1.ownCpuMs} ms): ${pass(own <= TARGET1.ownCpuMs)}`}`,
    );
    // The same three figures for a reframer that also writes the log line: where a gateway doing nothing else would stand.
    const floorOwn = modern("floor").cpuPerCall === undefined ? undefined : modern("floor").cpuPerCall - modern("forwarder").cpuPerCall;
    console.log(
      `   the floor under target 1, 2026-07-28, a reframer that also writes the gateway's one log line per request: its p50 against the reframer ${ratio(modern("floor"), modern("reframer"), "p50")} (target 1: 1.15) and against direct ${ratio(modern("floor"), modern("direct"), "p50")} (target 1: 1.25), its own CPU per call (minus the forwarder) ${floorOwn === undefined ? "n/a" : `${floorOwn.toFixed(3)} ms`} (target 1: 0.15 ms); gateway/floor: p50 ratio ${ratio(modern("gateway"), modern("floor"), "p50")}, CPU per call ratio ${ratio(modern("gateway"), modern("floor"), "cpuPerCall")}`,
    );
    console.log(
      `   2026-07-28/2025-11-25 through the gateway: p50 ratio ${verdict(ratio(modern("gateway"), old("gateway"), "p50"), 1.05)}, p99 ratio ${ratio(modern("gateway"), old("gateway"), "p99")}, CPU per call ratio ${ratio(modern("gateway"), old("gateway"), "cpuPerCall")}; directly against the bundle: p50 ratio ${ratio(modern("direct"), old("direct"), "p50")}`,
    );
    await gatewayStalls(viaGateway, auth);
    const direct = REVISIONS.map((rev) => echoCall(`${directRt.url}/echo`, {}, rev));
    console.log(`   stalls, echo bundle directly one call at a time (the reference), ${await stalls(direct)}`);
  } finally {
    for (const r of runtimes) await r.stop();
  }
}

/**
 * `fns` (one per revision) called one at a time, the revisions alternating: any call that waits on a pause (a
 * collection, a compile, the machine) stands out. Each stalled call is also matched against the collections of this
 * Node process (the client, and Miniflare, which drains workerd's output), seen through perf_hooks: a pause there
 * holds the answer's reading, whatever workerd did. Resolves to the run in words.
 */
async function stalls(fns) {
  const collections = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push({ start: entry.startTime, end: entry.startTime + entry.duration });
  });
  observer.observe({ entryTypes: ["gc"] });
  const stalled = [];
  const timed = async (i) => {
    const start = performance.now();
    const ms = await fns[i % fns.length](i);
    if (ms > STALL_MS) stalled.push({ start, end: performance.now() });
    return ms;
  };
  let latencies;
  try {
    ({ latencies } = await closedLoop(STALL_CALLS, 1, timed));
    // The observer is told of a collection after it ended: let the last ones arrive.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    observer.disconnect();
  }
  const overlapping = stalled.filter((call) => collections.some((gc) => gc.start < call.end && gc.end > call.start)).length;
  return `${latencies.length} calls: max ${Math.max(...latencies).toFixed(2)} ms, ${stalled.length} over ${STALL_MS} ms (${overlapping} of them during a collection in the bench's own Node process)`;
}

/**
 * The stall target: no call through the gateway stalled over STALL_MS by a collection, at concurrency 1 over
 * STALL_CALLS calls. The calls run on a workerd of their own that reports every collection of every isolate in it
 * (bench-gc.mjs), and the target is judged on those: the most one isolate's collections (each its main-thread pause
 * and the incremental marking V8 counts for it) took within any STALL_MS. Calls over STALL_MS are counted beside it: on
 * a shared machine a call can also wait for a core, which the bundle called directly shows as often.
 */
async function gatewayStalls(viaGateway, auth) {
  const traced = await traceCollections(viaGateway, async (runtime) => {
    const fns = REVISIONS.map((rev) => echoCall(gatewayEchoUrl(runtime), auth, rev));
    for (const fn of fns) await closedLoop(200, CONCURRENCY, fn);
    return stalls(fns);
  }).catch((error) => (error instanceof TraceUnavailable ? error : Promise.reject(error)));
  if (traced instanceof TraceUnavailable) {
    console.log(`   stalls and collections, gateway path one call at a time: n/a (${traced.message})`);
    return;
  }
  const { result, collections, unread } = traced;
  console.log(`   stalls, gateway path one call at a time, ${result} (the target, no stall by a collection, is judged on the next line)`);
  const isolates = new Set(collections.map((c) => c.isolate)).size;
  const longest = collections
    .slice(0, 5)
    .map((c) => `${c.stallMs.toFixed(2)} ms (${c.kind}${c.markingMs > 0 ? `: ${c.pauseMs.toFixed(2)} paused, ${c.markingMs.toFixed(2)} marking before` : ""})`)
    .join(", ");
  console.log(
    `   collections in that run's workerd from its start (V8's --trace-gc, every isolate, each pause measured): ${collections.length} in ${isolates} isolates, the longest ${longest || "none"}; ${stallVerdict(collections, unread, STALL_MS)}`,
  );
}

/**
 * Part 1 inside the isolates, on runtimes with workerd's inspector open (bench-heap.mjs): bytes allocated per
 * call in the gateway's and the echo bundle's isolates, each revision, through the gateway and directly; then
 * each isolate's heap after a forced collection once warm and again after RETENTION_CALLS calls. A heap that
 * grows by more than HEAP_GROWTH_LIMIT is retention, and fails the bench.
 */
async function isolateCosts(viaGateway, gatewayName, echoAlone, props) {
  const runtimes = [];
  const isolates = [];
  try {
    const viaGatewayRt = await startRuntime(viaGateway, { inspect: [gatewayName, echoAlone.name], v8Flags: [] });
    runtimes.push(viaGatewayRt);
    const directRt = await startRuntime([referenceTo("direct", echoAlone, props), echoAlone], { inspect: [echoAlone.name], v8Flags: [] });
    runtimes.push(directRt);
    const inspect = async (runtime, worker) => {
      const isolate = await inspectIsolate(runtime.inspectorPort, worker);
      isolates.push(isolate);
      return isolate;
    };
    const gatewayIsolates = [await inspect(viaGatewayRt, gatewayName), await inspect(viaGatewayRt, echoAlone.name)];
    const directIsolate = await inspect(directRt, echoAlone.name);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const viaGatewayCalls = REVISIONS.map((rev) => echoCall(gatewayEchoUrl(viaGatewayRt), auth, rev));
    const directCalls = REVISIONS.map((rev) => echoCall(`${directRt.url}/echo`, {}, rev));
    // Every call through the gateway counts towards the retention run, the revisions alternating unless one is sampled.
    let made = 0;
    const throughGateway = (n, fn = (i) => viaGatewayCalls[i % 2](i)) => closedLoop(n, CONCURRENCY, () => fn(made++));
    const poke = () => viaGatewayCalls[0](0);

    await throughGateway(WARMUP_CALLS);
    for (const fn of directCalls) await closedLoop(200, CONCURRENCY, fn);
    const warm = { calls: made, heaps: await heapAfterCollection(gatewayIsolates, poke) };

    const allocCalls = Math.max(500, N);
    console.log(`   bytes allocated per call (V8's sampling heap profiler, collected objects included), ${allocCalls} calls each:`);
    for (const [r, rev] of REVISIONS.entries()) {
      const [gw, bundle] = await allocatedPerCall(gatewayIsolates, allocCalls, () => throughGateway(allocCalls, viaGatewayCalls[r]));
      const [direct] = await allocatedPerCall([directIsolate], allocCalls, () => closedLoop(allocCalls, CONCURRENCY, directCalls[r]));
      console.log(`   ${rev}  through the gateway: gateway isolate ${kib(gw)}, echo isolate ${kib(bundle)}, gateway plus bundle ${kib(gw + bundle)}; directly: echo isolate ${kib(direct)}`);
      const before = ALLOCATED_BEFORE[rev];
      console.log(`   ${rev}  gateway plus bundle against the same call before issue 19 (${kib(before)}): ${verdict(((gw + bundle) / before).toFixed(2), 0.33)}`);
    }

    await throughGateway(Math.max(0, RETENTION_CALLS - made));
    const end = { calls: made, heaps: await heapAfterCollection(gatewayIsolates, poke) };
    console.log(`   heap after a forced collection, after ${warm.calls} calls through the gateway and after ${end.calls}:`);
    for (const [k, isolate] of gatewayIsolates.entries()) {
      const grew = retained(warm.heaps[k], end.heaps[k]);
      if (grew) process.exitCode = 1;
      console.log(`   ${isolate.worker.padEnd(18)} ${mib(warm.heaps[k])} -> ${mib(end.heaps[k])} (${signedMib(end.heaps[k] - warm.heaps[k])}, limit ${signedMib(HEAP_GROWTH_LIMIT)}): ${pass(!grew)}`);
    }
  } finally {
    for (const isolate of isolates) isolate.close();
    for (const r of runtimes) await r.stop();
  }
}

console.log(`strad bench: N=${N}, concurrency=${CONCURRENCY}, node ${process.version}`);
const COLD_STARTS = Number(process.env.BENCH_COLD_STARTS ?? 9);
const coldPart = async () => {
  console.log(`\n6. cold starts: each deployed Worker on a fresh workerd, runtime start to its first answer minus a trivial stand-in's, ${COLD_STARTS} starts each`);
  await coldStarts(COLD_STARTS);
};
// BENCH_COLD=1 runs part 6 alone.
if (process.env.BENCH_COLD === "1") {
  await coldPart();
  process.exit();
}
// BENCH_MAILBOX=1 runs part 5 alone, on a stack of its own.
if (process.env.BENCH_MAILBOX === "1") {
  const stack = await startStack();
  try {
    console.log("\n5. the mailbox: search_messages + get_message through the gateway against the stack's Dovecot (one pair at a time)");
    await mailboxCalls(`http://127.0.0.1:${PORTS.gateway}/mcp?servers=mailbox`, { authorization: `Bearer ${TOKEN}` });
  } finally {
    await stack.stop();
  }
  process.exit();
}
// BENCH_BUNDLES=1 runs part 7 alone, on a stack of its own.
if (process.env.BENCH_BUNDLES === "1") {
  const stack = await startStack({ inspect: true });
  try {
    console.log(`\n${BUNDLES_TITLE}`);
    await bundleReads(stack, { authorization: `Bearer ${TOKEN}` });
  } finally {
    await stack.stop();
  }
  process.exit();
}
console.log("\n1. echo through the gateway vs directly against the bundle, in both revisions (workerd via Miniflare)");
await gatewayVsDirect();
// A retention found in part 1 has set the exit code already.
if (process.env.BENCH_ONLY === "1") process.exit();

// The inspector is open on every Worker of the stack for part 7; parts 2-5 measure against human-scale targets.
const stack = await startStack({ inspect: true });
try {
  const gatewayUrl = (slug) => `http://127.0.0.1:${PORTS.gateway}/mcp?servers=${slug}`;
  const auth = { authorization: `Bearer ${TOKEN}` };

  // Latency, not throughput: one call at a time, so that queueing on two cores does not hide the cost.
  console.log("\n2. a confirmed call's own cost, excluding the human: an approver that answers accept at once (one at a time)");
  const confirmedN = Math.max(100, Math.floor(N / 8));
  const stats = async () => (await fetch(`http://127.0.0.1:${PORTS.gateway}/_dev/calls/dev-session`)).json();
  const served = async () => (await stats()).served;
  // Each call's `end` is sent after its answer: count once no call is live (bounded).
  const ended = async () => {
    for (const deadline = Date.now() + 10_000; (await stats()).live !== 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  };
  const approver = await instantApprover();
  try {
    const waived = await run("demo_write, waived (asks nobody)", confirmedN, (i) => timedCall(gatewayUrl("echo-waived"), auth, `w-${i}`, "demo_write", { note: `bench ${i}` }), 1);
    const before = await served();
    const confirmed = await run(
      "demo_write, confirmed",
      confirmedN,
      (i) => timedCall(gatewayUrl("echo-scripted"), { ...auth, "x-elicitation-url": APPROVAL_URL }, `c-${i}`, "demo_write", { note: `bench ${i}` }),
      1,
    );
    await ended();
    const perCall = ((await served()) - before) / confirmedN;
    console.log(
      `   overhead per confirmed call: p50 ${(confirmed.p50 - waived.p50).toFixed(2)} ms (target <= 50 ms); call-registry requests per call: ${perCall.toFixed(2)} (target <= 4: watch, claim, confirm, end)`,
    );
  } finally {
    approver.close();
  }

  console.log(`\n3. decision to action (the write) and to tool result through the approval service, with and without Prefer: wait; the claim's hold is STRAD_CLAIM_HOLD_MS, 250 ms unless set`);
  const { mintSession, waitForPendingPrompt, decidePrompt } = await import("../approvals/dev-api.mjs");
  const decisions = async (label, longPoll) => {
    const latencies = [];
    const toAction = [];
    for (let i = 0; i < DECISIONS; i++) {
      const session = await mintSession({ longPoll });
      const note = `decision ${longPoll} ${i} ${Date.now()}`;
      const result = timedCall(gatewayUrl("echo-confirmed"), { ...auth, "x-elicitation-url": session.elicitationUrl }, `d-${longPoll}-${i}`, "demo_write", { note });
      const prompt = await waitForPendingPrompt(session.sessionId, { timeoutMs: 30_000, intervalMs: 20 });
      // Let the bundle settle into its wait (a held poll, or the pause between polls) before deciding.
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 200));
      const decided = performance.now();
      const decidedAt = Date.now();
      await decidePrompt(session.sessionId, prompt.requestId, "accept");
      await result;
      latencies.push(performance.now() - decided);
      const events = await (await fetch(`http://127.0.0.1:${PORTS.fakes}/recorder/events`)).json();
      const write = events.find((e) => e.kind === "demo_write" && e.note === note);
      if (write === undefined) throw new Error("an accepted decision wrote nothing");
      toAction.push(write.at - decidedAt);
    }
    const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)];
    const out = { result: pct(latencies, 50), action: pct(toAction, 50), action95: pct(toAction, 95) };
    console.log(
      `${label.padEnd(34)} ${String(DECISIONS).padStart(5)} decisions  to action p50 ${out.action.toFixed(0).padStart(5)} ms p95 ${out.action95.toFixed(0).padStart(5)} ms  to result p50 ${out.result.toFixed(2).padStart(7)} ms p95 ${pct(latencies, 95).toFixed(2)} ms`,
    );
    return out;
  };
  const held = await decisions("with Prefer: wait (long-poll)", true);
  const plain = await decisions("plain polling", false);
  console.log(
    `   long-poll decision-to-action p50 ${held.action.toFixed(0)} ms, p95 ${held.action95.toFixed(0)} ms (target p50 < 500 ms, the claim's hold included); plain polling p50 ${plain.action.toFixed(0)} ms, bounded by the bundle's poll interval (${POLL_INTERVAL_MS} ms in the dev stack, 5000 ms by default)`,
  );

  console.log("\n4. Approval Flow: decision to await_approval's answer, the decision landing while await_approval is held (one at a time)");
  await flowDecisions(gatewayUrl("approval-flow"), auth, { mintSession, listPrompts: (await import("../approvals/dev-api.mjs")).listPrompts, decidePrompt });

  console.log("\n5. the mailbox: search_messages + get_message through the gateway against the stack's Dovecot (one pair at a time)");
  await mailboxCalls(gatewayUrl("mailbox"), auth);

  console.log(`\n${BUNDLES_TITLE}`);
  await bundleReads(stack, auth);
} finally {
  await stack.stop();
}

// With the stack stopped: each start has the machine to itself.
await coldPart();

/** One tools/call through the gateway, answered as JSON or an event stream: the tool's result, parsed. */
async function toolResult(url, headers, id, name, args) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", "accept-encoding": "identity", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
  });
  const text = await response.text();
  const line = text.startsWith("{")
    ? text
    : text
        .split("\n")
        .find((l) => l.startsWith("data:") && l.includes('"result"'))
        ?.slice(5);
  const result = line === undefined ? undefined : JSON.parse(line).result;
  if (response.status !== 200 || result === undefined || result.isError === true) throw new Error(`${name} failed: HTTP ${response.status}`);
  return JSON.parse(result.content[0].text);
}

/**
 * Part 7: each bundle's most frequent read, called through the gateway against the stack's fakes (Gmail, 1Password
 * Connect, Rustpad, Dovecot), and V8's sampling heap profiler in the bundle's isolate over the calls. Approval Flow has
 * no read that asks nobody: its hot call is check_status on a pending request, which the SDK's path serves.
 */
async function bundleReads(stack, auth) {
  // The Connect fake's finance vault (test/fakes/onepassword/seed.ts, IDS.finance).
  const FINANCE_VAULT = "financevault00000000000001";
  const gatewayUrl = (slug) => `http://127.0.0.1:${PORTS.gateway}/mcp?servers=${slug}`;
  const reads = [
    // `floor`: the reference of floorReads its upstream exchange is measured beside (Gmail's search with 3 results
    // reads a list and three messages; the mailbox opens one IMAP connection; the others make one request).
    { bundle: "google", slug: "gmail-ro", tool: "search_messages", args: { max_results: 3 }, floor: "four" },
    { bundle: "onepassword", slug: "onepassword", tool: "onepassword_list_items", args: { vault_id: FINANCE_VAULT }, floor: "one" },
    { bundle: "pads", slug: "pads", tool: "get_document", args: { pad_id: "bench7" }, floor: "one" },
    { bundle: "mailbox", slug: "mailbox", tool: "search_messages", args: { mailbox: "INBOX", subject: "Lunch" }, floor: "imap" },
  ];
  const { mintSession } = await import("../approvals/dev-api.mjs");
  const session = await mintSession();
  const flowHeaders = { ...auth, "x-elicitation-url": session.elicitationUrl };
  const { elicitationId } = await toolResult(gatewayUrl("approval-flow"), flowHeaders, "b7-flow", "request_approval", { purpose: "bench part 7", payload: {} });
  reads.push({ bundle: "approval-flow", slug: "approval-flow", tool: "check_status", args: { elicitationId }, headers: { "x-elicitation-url": session.elicitationUrl }, floor: "one" });

  const n = Math.max(100, Math.floor(N / 10));
  const floors = await floorReads(n);
  const names = Object.fromEntries(discoverWorkers().bundles.map((b) => [b.dir, b.name]));
  // BENCH_BUNDLES_ONLY=pads,google measures only the reads of bundles whose folder names hold one of those words.
  const only = process.env.BENCH_BUNDLES_ONLY?.split(",");
  for (const read of reads.filter((r) => only === undefined || only.some((word) => r.bundle.includes(word)))) {
    const worker = names[read.bundle];
    const port = stack.inspectors[worker];
    if (port === undefined) throw new Error(`the stack did not open ${worker} to the inspector`);
    const headers = { ...auth, ...read.headers };
    // A read that failed would measure the failure: the first answer must be the tool's result.
    const first = await toolResult(gatewayUrl(read.slug), headers, `b7-${read.bundle}`, read.tool, read.args);
    if (first === undefined) throw new Error(`${read.tool} on ${read.slug} answered nothing`);
    const call = (i) => timedCall(gatewayUrl(read.slug), headers, `b7-${read.bundle}-${i}`, read.tool, read.args, "2026-07-28");
    // Warm: the bundle's first call under an env is the SDK's (it learns the lane's table), and its code is compiled.
    await closedLoop(50, 4, call);
    const isolate = await inspectIsolate(port, worker);
    try {
      let path = "n/a";
      // The SDK's per-request server allocated in the run (registering its tools, handling the message): the calls
      // were not the kit's lane's. Class methods keep their names in a minified build; the SDK's inner functions
      // (serveModern, read here before 2026-12-04) do not, so every read had printed "the kit's lane" since then.
      const [bytes] = await allocatedPerCall(
        [isolate],
        n,
        () => closedLoop(n, 4, call),
        (_, profile) => {
          const seen = functionsIn(profile);
          path = SDK_PATH_METHODS.some((name) => seen.has(name)) ? "the SDK's path" : "the kit's lane";
        },
      );
      console.log(
        `   ${`${read.bundle} ${read.tool} (${read.slug})`.padEnd(52)} ${String(n).padStart(5)} calls, served by ${path.padEnd(14)} ${kib(bytes).padStart(10)} per call (target <= ${kib(BUNDLE_BYTES_PER_CALL)}): ${pass(bytes <= BUNDLE_BYTES_PER_CALL)}; the floor for its upstream exchange ${kib(floors[read.floor])}`,
      );
      // The mount's tools/list through the gateway, as every session's list reaches it: beside the read, no target.
      const list = (i) => timedList(gatewayUrl(read.slug), headers, `b7-list-${read.bundle}-${i}`);
      await closedLoop(20, 2, list);
      const lists = Math.max(50, Math.floor(n / 4));
      let listPath = "n/a";
      const [listBytes] = await allocatedPerCall(
        [isolate],
        lists,
        () => closedLoop(lists, 4, list),
        (_, profile) => {
          const seen = functionsIn(profile);
          listPath = SDK_PATH_METHODS.some((name) => seen.has(name)) ? "the SDK's path" : "the kit's lane";
        },
      );
      console.log(`   ${`${read.bundle} tools/list (${read.slug})`.padEnd(52)} ${String(lists).padStart(5)} lists, served by ${listPath.padEnd(14)} ${kib(listBytes).padStart(10)} per list`);
    } finally {
      isolate.close();
    }
  }
}

/**
 * Part 7's references: scripts/bench-floor-bundle.mjs, the least a tool server on Workers allocates per call, on a
 * runtime of its own with pads' compatibility settings and the stack's V8 flags, called directly as part 7 calls the
 * bundles (2026-07-28, concurrency 4): answering from the call alone, and reading one upstream (the Rustpad fake's
 * pad that pads' get_document reads below) and answering with its text. Printed beside the target, no verdict.
 */
async function floorReads(n) {
  const floors = {};
  const pads = readFileSync(join(ROOT, "bundles/pads/wrangler.toml"), "utf8");
  const worker = {
    name: "bench-floor-bundle",
    modules: true,
    scriptPath: join(ROOT, "scripts/bench-floor-bundle.mjs"),
    compatibilityDate: /^compatibility_date\s*=\s*"([^"]+)"/m.exec(pads)[1],
    compatibilityFlags: JSON.parse(/^compatibility_flags\s*=\s*(\[[^\]]*\])/m.exec(pads)[1]),
    bindings: { UPSTREAM: `http://127.0.0.1:${PORTS.rustpad}/api/text/bench7`, IMAP: `127.0.0.1:${PORTS.dovecot}` },
  };
  const runtime = await startRuntime([worker], { inspect: [worker.name] });
  let isolate;
  try {
    isolate = await inspectIsolate(runtime.inspectorPort, worker.name);
    for (const [path, what] of [
      ["none", "from the call alone"],
      ["one", "one subrequest (pads' read makes one)"],
      ["four", "four subrequests (Gmail's search makes four)"],
      ["imap", "one IMAP connection, greeting to LOGOUT"],
    ]) {
      const call = (i) => timedCall(`${runtime.url}/${path}`, {}, `b7-floor-${i}`, "get_document", { pad_id: "bench7" }, "2026-07-28");
      await closedLoop(50, 4, call);
      const [bytes] = await allocatedPerCall([isolate], n, () => closedLoop(n, 4, call));
      floors[path] = bytes;
      console.log(`   ${`the floor, a bare tool server answering ${what}`.padEnd(90)} ${kib(bytes).padStart(10)} per call (the platform's own: no target)`);
    }
  } finally {
    isolate?.close();
    await runtime.stop();
  }
  return floors;
}

/** Part 4: request_approval, then await_approval held at the approval service while the decision lands. */
async function flowDecisions(url, auth, api) {
  const latencies = [];
  for (let i = 0; i < DECISIONS; i++) {
    const session = await api.mintSession();
    const headers = { ...auth, "x-elicitation-url": session.elicitationUrl };
    const { elicitationId } = await toolResult(url, headers, `f-${i}`, "request_approval", { purpose: "bench", payload: { i } });
    const [prompt] = await api.listPrompts(session.sessionId);
    let answeredAt;
    const waited = toolResult(url, headers, `fa-${i}`, "await_approval", { elicitationId }).then((r) => {
      answeredAt = performance.now();
      return r;
    });
    // Let await_approval settle into its held poll before deciding.
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 200));
    const decided = performance.now();
    await api.decidePrompt(session.sessionId, prompt.requestId, "accept");
    const { status } = await waited;
    if (status !== "approved") throw new Error(`await_approval answered ${status}`);
    latencies.push(answeredAt - decided);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  console.log(
    `${"decision -> await_approval answer".padEnd(34)} ${String(DECISIONS).padStart(5)} decisions  p50 ${pct(50).toFixed(2).padStart(7)} ms  p95 ${pct(95).toFixed(2)} ms (target p50 < 300 ms)`,
  );
}

/** Part 5: a search and a get through the gateway, the cost of one IMAP connection beside it, and none left open. */
async function mailboxCalls(url, auth) {
  const { DEV_USERS, DOVECOT_PORT } = await import("../test/servers/dovecot/dovecot.mjs");
  const { ImapAdmin } = await import("../test/servers/dovecot/imap-admin.mjs");
  const n = Math.max(50, Math.floor(N / 20));
  const p50 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length / 2) - 1];
  const pairs = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const found = await toolResult(url, auth, `ms-${i}`, "search_messages", { mailbox: "INBOX", subject: "Lunch" });
    const got = await toolResult(url, auth, `mg-${i}`, "get_message", { mailbox: "INBOX", uid: found.messages[0].uid });
    if (got.subject !== "Lunch") throw new Error("get_message answered another message");
    pairs.push(performance.now() - started);
  }
  // What each call pays for its own connection: the bundle opens one per call and closes it (docs/rules.md R-MAIL-8).
  const connections = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const admin = await ImapAdmin.login({ port: DOVECOT_PORT, user: "alice", password: DEV_USERS.alice });
    await admin.close();
    connections.push(performance.now() - started);
  }
  const open = await establishedTo(DOVECOT_PORT);
  const pair = p50(pairs);
  const connection = p50(connections);
  console.log(`${"search + get (two calls)".padEnd(34)} ${String(n).padStart(5)} pairs  p50 ${pair.toFixed(2).padStart(7)} ms`);
  console.log(
    `   one IMAP connection (connect, greeting, LOGIN, LOGOUT) p50 ${connection.toFixed(2)} ms: ${((200 * connection) / pair).toFixed(0)}% of a pair's p50 (two connections, one per call); connections to Dovecot open after the run: ${open ?? "n/a (no ss here)"} (target 0: ${open === undefined ? "n/a" : pass(open === 0)})`,
  );
}

/** Established TCP connections to 127.0.0.1:`port` (iproute2's ss), or undefined where ss is missing. */
async function establishedTo(port) {
  const { execFileSync } = await import("node:child_process");
  try {
    // The bundle closes each connection when its call ends; give the last LOGOUT a moment to land.
    await new Promise((r) => setTimeout(r, 500));
    const out = execFileSync("ss", ["-Htn", "state", "established", `( dport = :${port} )`], { encoding: "utf8" });
    return out.split("\n").filter((l) => l.trim() !== "").length;
  } catch {
    return undefined;
  }
}
