// What `npm run bench` measures with: Workers on workerd through Miniflare, built as they are deployed and
// without `wrangler dev`'s proxy and inspector (scripts/stack.mjs builds and starts them: buildWorker,
// startRuntime), the reference proxies, and the timed call and closed loop.
//
// Why not `wrangler dev` for the latency comparison: its inspector proxy reports every subrequest of the
// primary Worker (four Network events each) to wrangler's Node process, one loopback request per event, and
// wrangler appends each to a debug log file (wrangler 4.86, templates/startDevWorker/InspectorProxyWorker.ts
// sends its debug log unconditionally). Only the gateway path makes a subrequest, so on a two-core machine
// it alone was charged about 2.5 ms of CPU per call by the harness. The Workers here are the same: built by
// `wrangler deploy --dry-run` from the same configs, with the bindings, Durable Objects and .dev.vars that
// `wrangler dev` would give them (wrangler's own unstable_getMiniflareWorkerOptions), on the same workerd.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, startRuntime } from "./stack.mjs";

// Building and running Workers on workerd is the local stack's too (the e2e suite runs on it); it lives there.
export { buildWorker, startRuntime } from "./stack.mjs";

/**
 * The forwarder, and one JSON log line per request of the gateway's shape (worker/log.ts) once the answer came:
 * the hop plus the one thing every call through the gateway also costs whatever the gateway does. Locally a
 * console.log line costs about as much whatever it says: workerd writes it to a pipe the bench's own Node process
 * (Miniflare) drains, on the same cores.
 */
const LOGGER = `export default { async fetch(request, env) {
  const started = Date.now();
  const response = await env.BUNDLE.fetch(request);
  console.log(JSON.stringify({ at: new Date().toISOString(), event: "mcp_request", caller: "bench", slugs: ["echo"], method: "tools/call", tool: "echo", outcome: "ok", status: response.status, durationMs: Date.now() - started }));
  return response;
} };`;

/**
 * The references the gateway is measured against, each in front of `bundle` over a service binding:
 * "forwarder" hands the request on untouched (the hop alone); "logger" is the forwarder writing the gateway's
 * one log line per request; "reframer" is scripts/bench-reframer.mjs (the hop plus the least a
 * 2026-07-28-speaking proxy must do to each call), "reframer-logged" the same writing that log line too (its LOG_LINE
 * binding); "direct" is the forwarder under its own name, the nearest any caller now comes to a bundle, which
 * answers only a binding carrying the gateway's props (docs/rules.md R-CHAN-13).
 * `props` are those props, as the gateway's build binds the bundle (gatewayPropsFor).
 */
export function referenceTo(kind, bundle, props) {
  if (props === undefined) throw new Error(`the ${kind} reference needs the gateway's binding props: the bundle answers nothing without them`);
  const script =
    kind === "forwarder" || kind === "direct"
      ? { script: "export default { fetch: (request, env) => env.BUNDLE.fetch(request) };" }
      : kind === "logger"
        ? { script: LOGGER }
        : { scriptPath: join(ROOT, "scripts/bench-reframer.mjs") };
  return {
    name: `bench-${kind}`,
    modules: true,
    ...script,
    ...(kind === "reframer-logged" ? { bindings: { LOG_LINE: "1" } } : {}),
    compatibilityDate: bundle.compatibilityDate,
    compatibilityFlags: bundle.compatibilityFlags,
    serviceBindings: { BUNDLE: { name: bundle.name, props } },
  };
}

/** The props the gateway's build gives its binding to `bundle` (both built by buildWorker). */
export const gatewayPropsFor = (gateway, bundle) => Object.values(gateway.serviceBindings ?? {}).find((b) => typeof b === "object" && b?.name === bundle.name)?.props;

export const REVISIONS = ["2025-11-25", "2026-07-28"];

/** What a 2026-07-28 client puts on every request: the revision and the call's method and name travel as headers too. */
export const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "0" },
};

/**
 * One tools/call in `revision` (REVISIONS); resolves to its latency in ms, throws unless it answered a result
 * (and, in 2026-07-28, a complete one).
 * It asks for an uncompressed answer. Miniflare's entry Worker stands in for Cloudflare's front line and
 * gzips application/json for a client that accepts it, inside the same workerd; the gateway answers JSON
 * where the bundle on its own answers an event stream, so only the gateway's path would be charged for
 * compressing (in workerd) and decompressing (in the bench's own process), on the same two cores. In
 * production that compression is the front line's, outside the Worker.
 */
export async function timedCall(url, headers, id, name, args, revision = "2025-11-25") {
  const modern = revision === "2026-07-28";
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: requestHeaders(revision, modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}, headers),
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, ...(modern ? { _meta: MODERN_META } : {}) } }),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"result"') || (modern && !text.includes('"resultType":"complete"'))) {
    throw new Error(`${revision} call failed: HTTP ${response.status} ${text.slice(0, 200)}`);
  }
  return performance.now() - started;
}

/** A 2026-07-28 tools/list to `url`, uncompressed as timedCall asks; resolves to its latency in ms, throws unless it listed. */
export async function timedList(url, headers, id) {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: requestHeaders("2026-07-28", { "mcp-method": "tools/list" }, headers),
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list", params: { _meta: MODERN_META } }),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"tools"')) throw new Error(`tools/list failed: HTTP ${response.status} ${text.slice(0, 200)}`);
  return performance.now() - started;
}

/** A bench request's headers in `revision`: JSON, both answer types accepted, no compression, then `method`'s and the caller's. */
function requestHeaders(revision, method, headers) {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": revision,
    ...method,
    "accept-encoding": "identity",
    ...headers,
  };
}

/** `n` calls of `fn(i)` with `concurrency` in flight; their latencies and the seconds the whole loop took. */
export async function closedLoop(n, concurrency, fn) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) latencies.push(await fn(next++));
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

/**
 * The workerd processes this process started (Miniflare spawns each runtime's as a child), by PID; undefined
 * where there is no /proc to read them from (not Linux).
 */
function workerdChildren() {
  if (!existsSync("/proc/self/task")) return undefined;
  const children = new Set();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name is in parentheses and may hold spaces; the parent's PID is the second field after it.
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && name === "workerd") children.add(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

/**
 * The CPU time process `pid` has used, in ns, summed over its threads from the scheduler's own accounting
 * (/proc/PID/task/TID/schedstat, nanoseconds; /proc/PID/stat counts 10 ms ticks). workerd's threads live as long
 * as it does, so the difference of two readings is what the process used between them.
 */
function cpuNs(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended while the list was read.
    }
  }
  return total;
}

/**
 * startRuntime, with `pid`: the runtime's own workerd process, for cpuNs, or undefined off Linux. Runtimes are
 * started one at a time here, so the one new workerd child is this runtime's.
 */
export async function startMeasuredRuntime(workers, options) {
  const before = workerdChildren();
  // Measured as deployed: V8 with its background threads (scripts/stack.mjs LOCAL_V8_FLAGS says what local runs change).
  const runtime = await startRuntime(workers, { v8Flags: [], ...options });
  if (before === undefined) return runtime;
  const started = [...(workerdChildren() ?? [])].filter((pid) => !before.has(pid));
  if (started.length !== 1) {
    await runtime.stop();
    throw new Error(`expected one new workerd process for ${workers.map((w) => w.name).join(", ")}, found ${started.length}`);
  }
  return { ...runtime, pid: started[0] };
}

/** closedLoop, and with `pid` the CPU time in ns that process used meanwhile (`cpu`, else undefined). */
export async function measuredLoop(n, concurrency, fn, pid) {
  const cpuBefore = pid === undefined ? undefined : cpuNs(pid);
  const result = await closedLoop(n, concurrency, fn);
  return { ...result, cpu: cpuBefore === undefined ? undefined : cpuNs(pid) - cpuBefore };
}

/** The CPU time in ns of `loops` (measuredLoop's results) together, or undefined unless every one was measured. */
export const totalCpu = (loops) => (loops.every((l) => l.cpu !== undefined) ? loops.reduce((t, l) => t + l.cpu, 0) : undefined);
