// `npm run bench`: side-by-side measurements in one run, printed as ratios.
//   1. an echo tool called through the gateway vs directly against the echo bundle (target p50 ratio <= 1.3)
//   2. a confirmed call (channel, call record, claim) vs the same tool unconfirmed: overhead per call
//      (target p50 <= 50 ms) and call-registry Durable Object requests per call (target <= 3)
// Everything runs on 127.0.0.1; loops are bounded by N. Usage: npm run bench [-- N CONCURRENCY]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, PORTS, startStack, startWorkers } from "./stack.mjs";

const N = Number(process.argv[2] ?? process.env.BENCH_N ?? 2000);
const CONCURRENCY = Number(process.argv[3] ?? process.env.BENCH_CONCURRENCY ?? 16);
const vars = Object.fromEntries(
  readFileSync(join(ROOT, ".dev.vars.example"), "utf8").split("\n").map((l) => /^([A-Z0-9_]+)="(.*)"$/.exec(l.trim())).filter(Boolean).map((m) => [m[1], m[2]]),
);
const TOKEN = vars.STRAD_TOKEN_DEV_SESSION;
const APPROVAL_URL = "http://127.0.0.1:8790/scripted/bench/";

function body(id, name, args) {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

async function call(url, headers, id, name, args) {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", ...headers },
    body: body(id, name, args),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"result"')) throw new Error(`call failed: HTTP ${response.status}`);
  return performance.now() - started;
}

async function run(label, n, fn) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        latencies.push(await fn(i));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  const stats = { label, n, callsPerSec: n / seconds, p50: pct(50), p99: pct(99) };
  console.log(`${label.padEnd(34)} ${String(n).padStart(5)} calls  ${stats.callsPerSec.toFixed(0).padStart(6)} calls/s  p50 ${stats.p50.toFixed(2).padStart(7)} ms  p99 ${stats.p99.toFixed(2).padStart(7)} ms`);
  return stats;
}

const stack = await startStack();
const direct = await startWorkers([{ name: "echo-direct", port: 0, configs: ["bundles/echo/wrangler.toml"] }]);
try {
  const gatewayUrl = (slug) => `http://127.0.0.1:${PORTS.gateway}/mcp?servers=${slug}`;
  const directUrl = `http://127.0.0.1:${direct.ports["echo-direct"]}/echo`;
  const auth = { authorization: `Bearer ${TOKEN}` };
  console.log(`strad bench: N=${N}, concurrency=${CONCURRENCY}, node ${process.version}\n`);

  // Warm both paths so that start-up cost is not measured.
  await run("warm-up", 200, (i) => call(gatewayUrl("echo"), auth, i, "echo", { text: "warm" }));
  await run("warm-up", 200, (i) => call(directUrl, {}, i, "echo", { text: "warm" }));

  console.log("\n1. echo through the gateway vs directly against the bundle");
  const viaGateway = await run("gateway -> echo bundle", N, (i) => call(gatewayUrl("echo"), auth, i, "echo", { text: `bench ${i}` }));
  const viaDirect = await run("echo bundle directly", N, (i) => call(directUrl, {}, i, "echo", { text: `bench ${i}` }));
  const ratio = viaGateway.p50 / viaDirect.p50;
  console.log(`   gateway/direct: p50 ratio ${ratio.toFixed(2)} (target <= 1.3), p99 ratio ${(viaGateway.p99 / viaDirect.p99).toFixed(2)}, throughput ratio ${(viaGateway.callsPerSec / viaDirect.callsPerSec).toFixed(2)}`);

  console.log("\n2. a confirmed call's own cost (channel, call record, claim), excluding the human");
  const confirmedN = Math.max(100, Math.floor(N / 4));
  const stats = async () => (await (await fetch(`http://127.0.0.1:${PORTS.gateway}/_dev/calls/dev-session`)).json()).served;
  const plain = await run("unconfirmed claim_race (sibling)", confirmedN, (i) => call(gatewayUrl("echo"), auth, `p-${i}`, "report_meta", {}));
  const before = await stats();
  const confirmed = await run("confirmed claim_race", confirmedN, (i) => call(gatewayUrl("echo-confirmed"), { ...auth, "x-elicitation-url": APPROVAL_URL }, `c-${i}`, "claim_race", { n: 1 }));
  await new Promise((r) => setTimeout(r, 1000));
  const perCall = ((await stats()) - before) / confirmedN;
  console.log(`   overhead per confirmed call: p50 ${(confirmed.p50 - plain.p50).toFixed(2)} ms (target <= 50 ms); call-registry requests per call: ${perCall.toFixed(2)} (target <= 3)`);
} finally {
  await direct.stop();
  await stack.stop();
}
