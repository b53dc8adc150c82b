#!/usr/bin/env node
// `npm test`'s runner, after the lint. The e2e project runs one file at a time against the one local stack on fixed
// ports, and most of its time is waiting (a person's clock, a deadline, a drop); the unit and processes projects run
// several files at a time; the typecheck is CPU alone. vitest runs its projects one group after another, so here the
// typecheck and the two halves of the suite run side by side as processes of their own, each line tagged with its
// part. The run fails when any part fails; Ctrl-C stops them all. The e2e files that only wait on a clock of their own
// (E2E_GUESTS) run in a second e2e vitest beside the first, on the same stack.
// With arguments (`npm test -- test/worker/codes.test.ts`), it is the typecheck, then one plain `vitest run` with them.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { prepare, withoutRoutes } from "./stack.mjs";
import { discoverWorkers } from "./workers.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const VITEST = fileURLToPath(new URL("../node_modules/.bin/vitest", import.meta.url));
const TSC = fileURLToPath(new URL("../node_modules/.bin/tsc", import.meta.url));
const args = process.argv.slice(2);
// The whole run's wall time, from this runner's start (after the lint) to its last part's end: the closing line's.
const started = performance.now();

// The files every local Worker start reads (each folder's .dev.vars, the route-free copy of a config with routes) are
// written once, here, before anything starts: written while test files run side by side, two would race to make them,
// and a `wrangler dev` already running reloads its Worker when one it watches is rewritten.
prepare();
const found = discoverWorkers();
for (const w of [found.gateway, ...found.bundles, found.approvals, found.fakes]) withoutRoutes(w.config);

/**
 * The e2e files that run beside the others, in a vitest of their own on the same stack (test/e2e/global-setup.ts says
 * how the two share it): each mostly waits on a clock nobody can hurry (Approval Flow's shortest expiry is the
 * seed's 60 s) and uses callers no other file uses, so no other file's checks see its calls.
 */
const E2E_GUESTS = ["test/bundles/approval-flow/approval-flow.e2e.test.ts"];

const lease = args.length > 0 ? undefined : mkdtempSync(join(tmpdir(), "strad-e2e-lease-"));
// The run's Worker builds, reused by every file of every part when built from the same files (scripts/build-memo.mjs);
// removed at the end.
const builds = args.length > 0 ? undefined : mkdtempSync(join(tmpdir(), "strad-builds-"));
if (builds !== undefined) process.env.STRAD_BUILD_CACHE = builds;
/**
 * The niceness of the typecheck and the unit half. The e2e half mostly waits (alone: 288 s of wall time, 112 s of CPU)
 * but each wait ends in work its next step waits on, and beside the unit half on two busy cores that work queued: the
 * e2e half took 481 s in a full run. Niced, the unit half still takes every cycle the e2e half leaves, and the e2e
 * half's turns come at once.
 */
const BACKGROUND_NICE = 10;
const typecheck = { tag: "[tsc] ", command: TSC, argv: ["-p", "."], nice: BACKGROUND_NICE };
const parts =
  args.length > 0
    ? [{ ...typecheck, tag: "" }]
    : [
        typecheck,
        {
          tag: "[e2e] ",
          command: VITEST,
          argv: ["run", "--project", "e2e", ...E2E_GUESTS.flatMap((file) => ["--exclude", file])],
          env: { STRAD_E2E_LEASE: lease, STRAD_E2E_ROLE: "owner" },
          role: "owner",
        },
        { tag: "[e2e+] ", command: VITEST, argv: ["run", "--project", "e2e", ...E2E_GUESTS], env: { STRAD_E2E_LEASE: lease, STRAD_E2E_ROLE: "guest" }, role: "guest" },
        { tag: "[unit] ", command: VITEST, argv: ["run", "--project", "unit", "--project", "unit-isolated", "--project", "processes"], nice: BACKGROUND_NICE },
      ];

// Each half's vitest summary ("Tests  2851 passed (2851)", "Tests  1 failed | 2850 passed (2851)"), added up into one
// plain closing line that any reader of the run can count by: "tests: N passed, N failed, in N s".
const totals = { passed: 0, failed: 0, skipped: 0 };
function count(line) {
  const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
  if (!/^\s*Tests\s+\d/.test(plain)) return;
  for (const key of Object.keys(totals)) {
    const found = new RegExp(`(\\d+) ${key}`).exec(plain);
    if (found !== null) totals[key] += Number(found[1]);
  }
}
// Each part's failure report (vitest's "Failed Tests" / "Failed Suites" / "Unhandled Errors" sections, up to its
// closing summary), kept to be printed again at the very end: a run's log is often read from its tail, where the halves'
// reports would otherwise be buried under whichever half finished last.
const REPORT_START = /⎯+ (Failed Tests|Failed Suites|Unhandled Errors?) \d*/;
const REPORT_END = /^\s*Test Files\s/;
const REPORT_LINES = 80;
function reporter() {
  const kept = [];
  let inside = false;
  return {
    kept,
    see(line) {
      const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
      if (REPORT_START.test(plain)) inside = true;
      else if (REPORT_END.test(plain)) inside = false;
      if (inside && kept.length < REPORT_LINES) kept.push(plain);
    },
  };
}
const closing = () => `tests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped > 0 ? `, ${totals.skipped} skipped` : ""}, in ${Math.round((performance.now() - started) / 1000)} s\n`;

const children = parts.map(({ tag, command, argv, env, role, nice }) => {
  const report = reporter();
  const child = spawn(command, argv, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  // Set before the child has started anything of its own (every process it starts inherits it); a system that refuses
  // only costs the speed.
  if (nice !== undefined && args.length === 0) {
    try {
      setPriority(child.pid, nice);
    } catch {}
  }
  // The owner keeps the stack until the guest has exited; a guest waits no longer for an owner that exited without one.
  if (role === "guest") child.on("close", () => writeFileSync(join(lease, "guest-done"), ""));
  if (role === "owner") child.on("close", () => existsSync(join(lease, "ready")) || writeFileSync(join(lease, "failed"), "the e2e owner exited before its stack was up"));
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    let rest = "";
    from.setEncoding("utf8");
    from.on("data", (text) => {
      const lines = (rest + text).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        count(line);
        report.see(line);
        to.write(`${tag}${line}\n`);
      }
    });
    from.on("end", () => {
      if (rest !== "") {
        count(rest);
        report.see(rest);
        to.write(`${tag}${rest}\n`);
      }
    });
  }
  return { tag, report, done: new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal === null ? 1 : 128)))), child };
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const { child } of children) child.kill(signal);
  });
}

const codes = await Promise.all(children.map((c) => c.done));
for (const folder of [lease, builds]) if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
const failed = children.filter((_, i) => codes[i] !== 0);
if (failed.length > 0) {
  for (const { tag, report } of failed) {
    if (report.kept.length === 0) continue;
    process.stderr.write(`\n${tag}what failed, again:\n${report.kept.map((line) => `${tag}${line}\n`).join("")}`);
  }
  process.stderr.write(`npm test: failed in ${failed.map((c) => c.tag.trim() || "the typecheck").join(", ")}\n`);
  if (args.length === 0) process.stdout.write(closing());
  process.exit(1);
}
if (args.length > 0) {
  const single = spawn(VITEST, ["run", ...args], { cwd: ROOT, stdio: "inherit", env: process.env });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => single.kill(signal));
  single.on("close", (code) => process.exit(code ?? 1));
} else {
  process.stdout.write(closing());
  process.exit(0);
}
