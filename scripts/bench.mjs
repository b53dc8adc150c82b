// `npm run bench`: side-by-side measurements in one run, printed as ratios.
//   1. an echo tool called through the gateway vs directly against the echo bundle (target p50 ratio <= 1.3),
//      beside two references (a bare forwarder and a minimal 2026-07-28 reframer); on workerd without
//      `wrangler dev`'s inspector proxy (scripts/bench-runtime.mjs says why)
//   2. a confirmed write approved at once vs the same write on a waived mount: overhead per call
//      (target p50 <= 50 ms) and call-registry Durable Object requests per call (target <= 4: watch, claim, confirm, end)
//   3. decision-to-action (the write at the recorder) and decision-to-tool-result latency through the approval
//      service, long-poll vs plain polling; both include the claim's liveness hold (target p50 < 500 ms)
//   4. Approval Flow: decision to await_approval's answer, a person's decision landing while the agent's
//      await_approval is held (target p50 < 300 ms)
// Everything runs on 127.0.0.1; loops are bounded by N. Usage: npm run bench [-- N CONCURRENCY]
// (BENCH_ONLY=1 runs part 1 alone, for iterating on the gateway's hot path.)
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { buildWorker, closedLoop, referenceTo, startRuntime, timedCall } from "./bench-runtime.mjs";
import { PORTS, ROOT, startStack } from "./stack.mjs";
import { discoverWorkers } from "./workers.mjs";

const N = Number(process.argv[2] ?? process.env.BENCH_N ?? 2000);
const CONCURRENCY = Number(process.argv[3] ?? process.env.BENCH_CONCURRENCY ?? 16);
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

async function run(label, n, fn, concurrency = CONCURRENCY) {
  const { latencies, seconds } = await closedLoop(n, concurrency, fn);
  return summarise(label, latencies, seconds);
}

function summarise(label, latencies, seconds) {
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  const stats = { label, latencies, seconds, n: latencies.length, callsPerSec: latencies.length / seconds, p50: pct(50), p99: pct(99) };
  if (label !== null) {
    console.log(
      `${label.padEnd(34)} ${String(stats.n).padStart(5)} calls  ${stats.callsPerSec.toFixed(0).padStart(6)} calls/s  p50 ${stats.p50.toFixed(2).padStart(7)} ms  p99 ${stats.p99.toFixed(2).padStart(7)} ms`,
    );
  }
  return stats;
}

function merge(label, runs) {
  return summarise(
    label,
    runs.flatMap((r) => r.latencies),
    runs.reduce((t, r) => t + r.seconds, 0),
  );
}

/** Part 1: the same echo call through the gateway, through the two references, and straight to the bundle. */
async function gatewayVsDirect() {
  // The gateway with every bundle the tree holds, as the stack runs it; the measured call is echo's.
  const found = discoverWorkers();
  const gateway = buildWorker(found.gateway.config);
  const bundles = found.bundles.map((b) => ({ dir: b.dir, options: buildWorker(b.config) }));
  const echo = bundles.find((b) => b.dir === "echo")?.options;
  if (echo === undefined) throw new Error("the bench measures the echo bundle, and bundles/echo/wrangler.toml is missing");
  // The bundle on its own has no gateway beside it, so no call registry either; echo never touches it.
  const { durableObjects: _registry, ...echoAlone } = echo;
  const runtimes = [];
  const start = async (workers) => {
    const runtime = await startRuntime(workers);
    runtimes.push(runtime);
    return runtime;
  };
  try {
    const viaGatewayRt = await start([gateway, ...bundles.map((b) => b.options)]);
    const forwarderRt = await start([referenceTo("forwarder", echoAlone), echoAlone]);
    const reframerRt = await start([referenceTo("reframer", echoAlone), echoAlone]);
    const directRt = await start([echoAlone]);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const paths = {
      gateway: (i) => timedCall(`${viaGatewayRt.url}/mcp?servers=echo`, auth, i, "echo", { text: `bench ${i}` }),
      forwarder: (i) => timedCall(`${forwarderRt.url}/echo`, {}, i, "echo", { text: `bench ${i}` }),
      reframer: (i) => timedCall(`${reframerRt.url}/echo`, {}, i, "echo", { text: `bench ${i}` }),
      direct: (i) => timedCall(`${directRt.url}/echo`, {}, i, "echo", { text: `bench ${i}` }),
    };
    // Warm every path so that start-up cost is not measured.
    for (const fn of Object.values(paths)) await run(null, 200, fn);
    // Interleaved in short rounds, so that every path sees the same moments of a shared, noisy machine, and
    // in a rotating order, so that no path always runs first or always follows the same one.
    const rounds = 20;
    const names = Object.keys(paths);
    const runs = Object.fromEntries(names.map((name) => [name, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(r + k) % names.length];
        runs[name].push(await run(null, Math.ceil(N / rounds), paths[name]));
      }
    }
    const viaGateway = merge("gateway -> echo bundle", runs.gateway);
    const viaForwarder = merge("forwarder -> echo bundle", runs.forwarder);
    const viaReframer = merge("2026-07-28 reframer -> echo bundle", runs.reframer);
    const viaDirect = merge("echo bundle directly", runs.direct);
    const ratio = (a, b, key) => (a[key] / b[key]).toFixed(2);
    console.log(
      `   gateway/direct: p50 ratio ${ratio(viaGateway, viaDirect, "p50")} (target <= 1.3), p99 ratio ${ratio(viaGateway, viaDirect, "p99")}, throughput ratio ${ratio(viaGateway, viaDirect, "callsPerSec")}`,
    );
    console.log(
      `   references, p50 ratio to direct: forwarder (the service-binding hop alone) ${ratio(viaForwarder, viaDirect, "p50")}, reframer (the least a 2026-07-28 proxy does) ${ratio(viaReframer, viaDirect, "p50")}; gateway/reframer ${ratio(viaGateway, viaReframer, "p50")}`,
    );
  } finally {
    for (const r of runtimes) await r.stop();
  }
}

console.log(`strad bench: N=${N}, concurrency=${CONCURRENCY}, node ${process.version}`);
console.log("\n1. echo through the gateway vs directly against the bundle (workerd via Miniflare)");
await gatewayVsDirect();
if (process.env.BENCH_ONLY === "1") process.exit(0);

const stack = await startStack();
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
} finally {
  await stack.stop();
}

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
