// Covers vitest.config.ts's "processes" project: every unit-level test file that starts a process or a runtime, itself
// or through a helper under test/, runs there with its argued timeouts instead of vitest's 5 s default.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM list without types
import { PROCESS_TEST_FILES, UNIT_ISOLATED } from "../processes.mjs";
// @ts-expect-error: plain ESM module without types
import { SLOWEST_FIRST, slowestFirst } from "../sequencer.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** What starts a process or a runtime in this tree's tests. */
const STARTS = /\b(?:execFile|execFileSync|spawn|spawnSync|fork)\s*\(|\bnew Miniflare\b|\b(?:startWorkers|startStack|startRuntime|startDovecot)\s*\(/;
const IMPORT = /\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** The file and the local modules under test/ it imports, transitively. */
function startsAProcess(file: string, seen = new Set<string>()): boolean {
  return reaches(STARTS, file, seen);
}

/** Whether the file or a local module under test/ it imports, transitively, holds a match of `pattern`. */
function reaches(pattern: RegExp, file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  if (pattern.test(text)) return true;
  for (const [, spec] of text.matchAll(IMPORT)) {
    const base = resolve(dirname(file), spec as string);
    const target = [base, `${base}.ts`, `${base}.mjs`, base.replace(/\.js$/, ".ts")].find((p) => {
      try {
        return statSync(p).isFile();
      } catch {
        return false;
      }
    });
    if (target !== undefined && relative(ROOT, target).startsWith("test/") && reaches(pattern, target, seen)) return true;
  }
  return false;
}

const globToRegExp = (glob: string) => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);
const inProcesses = (path: string) => (PROCESS_TEST_FILES as string[]).some((g) => globToRegExp(g).test(path));

describe("the processes project", () => {
  const tests = files(join(ROOT, "test"))
    .map((f) => relative(ROOT, f))
    .filter((f) => f.endsWith(".test.ts") && !f.startsWith("test/e2e/") && !f.endsWith(".e2e.test.ts"));

  it("holds every unit-level test file that starts a process or a runtime, itself or through a helper", () => {
    const spawning = tests.filter((f) => startsAProcess(join(ROOT, f)));
    // The detector finds the files known to start one, so an empty or shrunken match would show it broke.
    expect(spawning).toEqual(expect.arrayContaining(["test/scripts/posture.test.ts", "test/approvals/review.unit.test.ts", "test/durable-objects/call-registry.test.ts"]));
    expect(spawning.filter((f) => !inProcesses(f))).toEqual([]);
  });

  it("matches its globs as vitest does for the plain * it uses: one path segment, no more", () => {
    expect(inProcesses("test/scripts/posture.test.ts")).toBe(true);
    expect(inProcesses("test/scripts/helpers/x.test.ts")).toBe(false);
    expect(inProcesses("test/worker/oversized-bodies.workerd.test.ts")).toBe(true);
    expect(inProcesses("test/worker/app.test.ts")).toBe(false);
  });
});

describe("the unit project, which shares each worker's modules between files", () => {
  const units = files(join(ROOT, "test"))
    .map((f) => relative(ROOT, f))
    .filter((f) => f.endsWith(".test.ts") && !f.startsWith("test/e2e/") && !f.endsWith(".e2e.test.ts") && !inProcesses(f));
  const MOCKS = /\bvi\.(?:mock|doMock|unmock|doUnmock|resetModules)\s*\(/;

  it("leaves every file that replaces a module, itself or through a helper, to the unit-isolated project", () => {
    const mocking = units.filter((f) => reaches(MOCKS, join(ROOT, f)));
    // The detector finds the file known to mock a module, so an empty match would show it broke.
    expect(mocking).toContain("test/bundles/onepassword/sdk.unit.test.ts");
    expect(mocking.filter((f) => !(UNIT_ISOLATED as string[]).includes(f))).toEqual([]);
    for (const f of UNIT_ISOLATED as string[]) expect(statSync(join(ROOT, f)).isFile(), f).toBe(true);
  });

  it("has every file that replaces a global or the clock put it back, itself or through a helper", () => {
    const undo = [
      [/\bvi\.stubGlobal\s*\(/, /\bvi\.unstubAllGlobals\s*\(/],
      [/\bvi\.stubEnv\s*\(/, /\bvi\.unstubAllEnvs\s*\(/],
      [/\bvi\.useFakeTimers\s*\(/, /\bvi\.useRealTimers\s*\(/],
    ] as const;
    let found = 0;
    for (const f of units)
      for (const [does, undoes] of undo) {
        if (!reaches(does, join(ROOT, f))) continue;
        found += 1;
        expect(reaches(undoes, join(ROOT, f)), `${f} does ${does.source} and never ${undoes.source}`).toBe(true);
      }
    expect(found).toBeGreaterThan(3);
  });
});

describe("the order files start in (test/sequencer.ts)", () => {
  it("names only files that exist, each once", () => {
    for (const path of SLOWEST_FIRST) expect(statSync(join(ROOT, path)).isFile(), path).toBe(true);
    expect(new Set(SLOWEST_FIRST).size).toBe(SLOWEST_FIRST.length);
  });

  it("starts the listed files first, in their order, and keeps every other file in the order it came", () => {
    const others = ["/r/test/worker/a.test.ts", "/r/test/approvals/b.unit.test.ts", "/r/test/scripts/c.test.ts"];
    const listed = (SLOWEST_FIRST as string[]).map((path) => `/r/${path}`);
    const mixed = [others[0], listed[2], others[1], listed[0], others[2], listed[1]] as string[];
    expect(slowestFirst(mixed, (f: string) => f)).toEqual([listed[0], listed[1], listed[2], ...others]);
    // A file whose path merely ends like a listed one's name is not it.
    expect(slowestFirst(["/r/test/scripts/a", `/r/x${SLOWEST_FIRST[0]}`], (f: string) => f)).toEqual(["/r/test/scripts/a", `/r/x${SLOWEST_FIRST[0]}`]);
  });
});
