// A/B of two builds in one run, for work on the hot path: the same echo call through build A and build B of
// the gateway and the echo bundle, each pair in its own workerd (scripts/bench-runtime.mjs), in alternating rounds.
//   node scripts/bench-ab.mjs build A   # build the gateway and the echo bundle as the tree is now, keep them as A
//   (change the gateway or the bundle kit)
//   node scripts/bench-ab.mjs build B
//   node scripts/bench-ab.mjs run       # B/A p50, throughput and CPU per call at concurrency 16 and 1
// Two builds of the same tree differ by about ±4% in p50 on a two-core machine; read smaller effects as noise.
// CPU per call (each build's workerd process, read from /proc on Linux) is the steadiest of the three at
// concurrency 16 (two builds of the same tree within 1%); at concurrency 1 it moved by 18% between them.
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { buildWorker, measuredLoop, startMeasuredRuntime, timedCall, totalCpu } from "./bench-runtime.mjs";
import { ROOT } from "./stack.mjs";
import { discoverWorkers } from "./workers.mjs";

const [command, which] = process.argv.slice(2);
const kept = (label) => join(ROOT, ".bench", `ab-${label}`);

// The two Workers that differ between A and B; every other bundle the tree holds runs beside them as built now.
const found = discoverWorkers();
const echoBundle = found.bundles.find((b) => b.dir === "echo");
if (echoBundle === undefined) throw new Error("bench-ab measures the echo bundle, and bundles/echo/wrangler.toml is missing");
const CONFIGS = { gateway: found.gateway.config, echo: echoBundle.config };

if (command === "build" && (which === "A" || which === "B")) {
  for (const [part, config] of Object.entries(CONFIGS)) {
    const built = buildWorker(config);
    rmSync(join(kept(which), part), { recursive: true, force: true });
    cpSync(built.modulesRoot, join(kept(which), part), { recursive: true });
  }
  console.log(`gateway and echo bundle builds kept as ${which}`);
  process.exit(0);
}
if (command !== "run" || !existsSync(kept("A")) || !existsSync(kept("B"))) {
  console.error("usage: node scripts/bench-ab.mjs build A|B, then node scripts/bench-ab.mjs run");
  process.exit(2);
}

const TOKEN = /^STRAD_TOKEN_DEV_SESSION="(.*)"$/m.exec(readFileSync(join(ROOT, ".dev.vars.example"), "utf8"))?.[1];
const gateway = buildWorker(CONFIGS.gateway);
const echo = buildWorker(CONFIGS.echo);
const others = found.bundles.filter((b) => b !== echoBundle).map((b) => buildWorker(b.config));
const as = (label, part, options) => ({ ...options, modulesRoot: join(kept(label), part), scriptPath: join(kept(label), part, basename(options.scriptPath)) });
const start = (label) => startMeasuredRuntime([as(label, "gateway", gateway), as(label, "echo", echo), ...others]);
const runtimes = { A: await start("A"), B: await start("B") };

const auth = { authorization: `Bearer ${TOKEN}` };
// BENCH_REVISION=2026-07-28 measures modern calls (2025-11-25 by default).
const REVISION = process.env.BENCH_REVISION ?? "2025-11-25";
const round = ({ url, pid }, n, concurrency) => measuredLoop(n, concurrency, (i) => timedCall(`${url}/mcp?servers=echo`, auth, i, "echo", { text: `ab ${i}` }, REVISION), pid);

function summary(rounds) {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const cpu = totalCpu(rounds);
  return { p50: latencies[Math.floor(latencies.length / 2)], perSec: latencies.length / rounds.reduce((t, r) => t + r.seconds, 0), cpu: cpu === undefined ? undefined : cpu / 1e6 / latencies.length };
}
const cpuText = (s) => (s.cpu === undefined ? "" : `, CPU ${s.cpu.toFixed(3)} ms/call`);

try {
  for (const concurrency of [16, 1]) {
    const rounds = { A: [], B: [] };
    for (const label of ["A", "B"]) await round(runtimes[label], 200, concurrency);
    for (let r = 0; r < 12; r++) {
      // Alternate which build goes first, so neither always follows the other.
      for (const label of r % 2 === 0 ? ["A", "B"] : ["B", "A"]) rounds[label].push(await round(runtimes[label], concurrency === 1 ? 200 : 400, concurrency));
    }
    const a = summary(rounds.A);
    const b = summary(rounds.B);
    console.log(
      `concurrency ${concurrency}: A p50 ${a.p50.toFixed(2)} ms, ${a.perSec.toFixed(0)}/s${cpuText(a)}; B p50 ${b.p50.toFixed(2)} ms, ${b.perSec.toFixed(0)}/s${cpuText(b)}; B/A p50 ${(b.p50 / a.p50).toFixed(3)}, throughput ${(b.perSec / a.perSec).toFixed(3)}${a.cpu === undefined || b.cpu === undefined ? "" : `, CPU per call ${(b.cpu / a.cpu).toFixed(3)}`}`,
    );
  }
} finally {
  for (const runtime of Object.values(runtimes)) await runtime.stop();
}
