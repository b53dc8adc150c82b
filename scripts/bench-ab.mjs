// Side by side of builds in one run, for work on the hot path: the same echo call through each kept build of the
// gateway and the echo bundle, each pair in its own workerd (scripts/bench-runtime.mjs), in rotating rounds.
//   node scripts/bench-ab.mjs build A   # build the gateway and the echo bundle as the tree is now, keep them as A
//   (change the gateway or the bundle kit)
//   node scripts/bench-ab.mjs build B
//   node scripts/bench-ab.mjs run       # B/A p50, throughput and CPU per call at concurrency 16 and 1
// Any label of letters, digits and dashes works, and `run` takes several, the first the reference: an ablation
// (a build with one piece of the hot path removed, one with another) is measured against the tree in one run:
//   node scripts/bench-ab.mjs run now no-log no-timer   # each of the others against `now`
// Two builds of the same tree differ by about ±4% in p50 on a two-core machine; read smaller effects as noise.
// CPU per call (each build's workerd process, read from /proc on Linux) is the steadiest of the three at
// concurrency 16 (two builds of the same tree within 1-2% in one run; at concurrency 1 it moved by 18% between
// them). The same build measured 530 to 880 us per call over one afternoon as the machine's neighbours came and
// went: only figures of one run compare. BENCH_CONCURRENCY=16 measures one concurrency only; BENCH_ROUNDS (12)
// sets the rounds; BENCH_REVISION the revision.
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { buildWorker, measuredLoop, startMeasuredRuntime, timedCall, totalCpu } from "./bench-runtime.mjs";
import { ROOT } from "./stack.mjs";
import { discoverWorkers } from "./workers.mjs";

const [command, ...named] = process.argv.slice(2);
const kept = (label) => join(ROOT, ".bench", `ab-${label}`);
const LABEL = /^[A-Za-z0-9-]{1,40}$/;

// The two Workers that differ between builds; every other bundle the tree holds runs beside them as built now.
const found = discoverWorkers();
const echoBundle = found.bundles.find((b) => b.dir === "echo");
if (echoBundle === undefined) throw new Error("bench-ab measures the echo bundle, and bundles/echo/wrangler.toml is missing");
const CONFIGS = { gateway: found.gateway.config, echo: echoBundle.config };

if (command === "build" && named.length === 1 && LABEL.test(named[0])) {
  const [which] = named;
  for (const [part, config] of Object.entries(CONFIGS)) {
    const built = buildWorker(config);
    rmSync(join(kept(which), part), { recursive: true, force: true });
    cpSync(built.modulesRoot, join(kept(which), part), { recursive: true });
  }
  console.log(`gateway and echo bundle builds kept as ${which}`);
  process.exit(0);
}
const labels = named.length === 0 ? ["A", "B"] : named;
const missing = command === "run" ? labels.filter((l) => !LABEL.test(l) || !existsSync(kept(l))) : [];
if (command !== "run" || labels.length < 2 || missing.length > 0) {
  console.error(
    `usage: node scripts/bench-ab.mjs build <label> (twice or more), then node scripts/bench-ab.mjs run [<reference> <label>...]${missing.length > 0 ? `\nno kept build named: ${missing.join(", ")}` : ""}`,
  );
  process.exit(2);
}

const TOKEN = /^STRAD_TOKEN_DEV_SESSION="(.*)"$/m.exec(readFileSync(join(ROOT, ".dev.vars.example"), "utf8"))?.[1];
const gateway = buildWorker(CONFIGS.gateway);
const echo = buildWorker(CONFIGS.echo);
const others = found.bundles.filter((b) => b !== echoBundle).map((b) => buildWorker(b.config));
const as = (label, part, options) => ({ ...options, modulesRoot: join(kept(label), part), scriptPath: join(kept(label), part, basename(options.scriptPath)) });
const start = (label) => startMeasuredRuntime([as(label, "gateway", gateway), as(label, "echo", echo), ...others]);
const runtimes = {};
for (const label of labels) runtimes[label] = await start(label);

const auth = { authorization: `Bearer ${TOKEN}` };
// BENCH_REVISION=2026-07-28 measures modern calls (2025-11-25 by default).
const REVISION = process.env.BENCH_REVISION ?? "2025-11-25";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const CONCURRENCIES = process.env.BENCH_CONCURRENCY === undefined ? [16, 1] : [Number(process.env.BENCH_CONCURRENCY)];
const round = ({ url, pid }, n, concurrency) => measuredLoop(n, concurrency, (i) => timedCall(`${url}/mcp?servers=echo`, auth, i, "echo", { text: `ab ${i}` }, REVISION), pid);

function summary(rounds) {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const cpu = totalCpu(rounds);
  return { p50: latencies[Math.floor(latencies.length / 2)], perSec: latencies.length / rounds.reduce((t, r) => t + r.seconds, 0), cpu: cpu === undefined ? undefined : cpu / 1e6 / latencies.length };
}
const cpuText = (s) => (s.cpu === undefined ? "" : `, CPU ${s.cpu.toFixed(3)} ms/call`);

try {
  for (const concurrency of CONCURRENCIES) {
    const rounds = Object.fromEntries(labels.map((l) => [l, []]));
    for (const label of labels) await round(runtimes[label], 200, concurrency);
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate which build goes first, so none always follows the same one.
      for (let k = 0; k < labels.length; k++) {
        const label = labels[(r + k) % labels.length];
        rounds[label].push(await round(runtimes[label], concurrency === 1 ? 200 : 400, concurrency));
      }
    }
    const [reference, ...rest] = labels;
    const a = summary(rounds[reference]);
    console.log(`concurrency ${concurrency}: ${reference} p50 ${a.p50.toFixed(2)} ms, ${a.perSec.toFixed(0)}/s${cpuText(a)}`);
    for (const label of rest) {
      const b = summary(rounds[label]);
      console.log(
        `concurrency ${concurrency}: ${label} p50 ${b.p50.toFixed(2)} ms, ${b.perSec.toFixed(0)}/s${cpuText(b)}; ${label}/${reference} p50 ${(b.p50 / a.p50).toFixed(3)}, throughput ${(b.perSec / a.perSec).toFixed(3)}${a.cpu === undefined || b.cpu === undefined ? "" : `, CPU per call ${(b.cpu / a.cpu).toFixed(3)} (${((b.cpu - a.cpu) * 1000).toFixed(1)} us)`}`,
      );
    }
  }
} finally {
  for (const runtime of Object.values(runtimes)) await runtime.stop();
}
