import { defineConfig } from "vitest/config";
// @ts-expect-error: plain ESM list without types
import { PROCESS_TEST_FILES, UNIT_ISOLATED } from "./test/processes.mjs";
// @ts-expect-error: plain ESM module without types
import SlowestFirst from "./test/sequencer.mjs";

// Four projects: "unit" runs pure modules in Node, sharing each worker's modules between files, and "unit-isolated"
// the few of them that replace a module (vi.mock), each with modules of its own; "processes" runs the unit-level files that start a process or a
// runtime (the CallRegistry Durable Object and single Workers on workerd through Miniflare, wrangler, tsx scripts,
// Dovecot); "e2e" drives the whole local stack (real Workers, real Durable Objects, real service bindings), built as
// deployed and run on workerd through Miniflare by its global setup.
// vitest's default is one worker fewer than the cores: one on this 2-core machine, so every file ran alone while the
// machine mostly waited (load about 1 through a whole run: files that start wrangler, workerd or Dovecot spend most
// of their time waiting for them). Three files at a time keep both cores busy. The unit and processes projects share
// the number, as vitest runs projects with the same number side by side in one group. The e2e project runs one file
// at a time (one stack, fixed ports); `npm test` (scripts/test.mjs) runs it in a vitest of its own beside the others,
// and its E2E_GUESTS in a second one on the same stack (test/e2e/global-setup.ts).
const UNIT_WORKERS = Number(process.env.STRAD_TEST_WORKERS ?? 3);

const UNIT_FILES = [
  "test/contract/**/*.test.ts",
  "test/worker/**/*.test.ts",
  "test/durable-objects/**/*.test.ts",
  "test/bundles/**/*.unit.test.ts",
  "test/approvals/**/*.unit.test.ts",
  "test/scripts/**/*.test.ts",
];

export default defineConfig({
  test: {
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        test: {
          name: "unit",
          include: UNIT_FILES,
          exclude: [...PROCESS_TEST_FILES, ...UNIT_ISOLATED],
          // The unit files share each worker's modules: importing the SDK, zod and the bundles anew for each of some
          // ninety files was half of this project's CPU (41 s of 88 s, measured alone). A unit file keeps nothing of
          // its own past its tests: it restores its spies and globals after each (vi.restoreAllMocks,
          // vi.unstubAllGlobals) and no module it reaches holds state a test depends on unless the test resets it.
          isolate: false,
          maxWorkers: UNIT_WORKERS,
          // A unit test is quick alone, but `npm test` runs this project three files at a time beside the e2e half and
          // the typecheck on two cores, where a property test of many rounds took past vitest's 5 s default. A test that
          // is about time asserts its own bound; this clock only ends a test that hangs.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          // The unit files that replace a module (vi.mock): a shared module graph would hand the mock to other files,
          // or the real module to them.
          name: "unit-isolated",
          include: UNIT_ISOLATED,
          maxWorkers: UNIT_WORKERS,
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "processes",
          include: PROCESS_TEST_FILES,
          // Starting workerd, wrangler or a tsx script takes 1-10 s on this 2-core machine while the rest of the suite
          // runs beside it (measured: a tsx script 1-4 s, a Worker's first answer up to 10 s at load 10), and a test
          // often starts two. vitest's 5 s default failed such tests under load though nothing was wrong, so a test
          // here gets 60 s and a hook (which starts the runtime a file shares) 180 s, several times the slowest start
          // seen; a test that needs longer says so itself, with its reason.
          testTimeout: 60_000,
          hookTimeout: 180_000,
          maxWorkers: UNIT_WORKERS,
          // These files share each worker's modules too: most start workerd through Miniflare or read configs through
          // wrangler's API, and loading those two anew in a fresh process for each of some sixty files was the largest
          // share of the suite's CPU after the builds. A file stops what it started in its own hooks; a helper's
          // per-file cleanup runs from a setup file (a helper's top-level hook would run for the first file only).
          isolate: false,
          setupFiles: ["test/setup/tree-copies.ts"],
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts", "test/bundles/**/*.e2e.test.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          retry: 0,
        },
      },
    ],
  },
});
