// Covers the run's shared Worker builds (scripts/stack.mjs buildWorker with a cache folder, which `npm test` names in
// STRAD_BUILD_CACHE): a Worker of the checked-in tree is built once per configuration and each caller gets a copy in its
// own folder, byte for byte a build into that folder (its source map pointing there); another configuration of the same
// Worker is a build of its own; a tree copied elsewhere is never shared.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { buildWorker } from "../../scripts/stack.mjs";
import { copyTree } from "./helpers/tree";

const CONFIG = "approvals/wrangler.toml";
const scratch = mkdtempSync(join(tmpdir(), "strad-build-cache-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The cache's finished builds (one folder per configuration; locks and builds under way are named apart). */
const entries = (cache: string) => readdirSync(cache).filter((f) => /^[0-9a-f]{24}$/.test(f));
const files = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f !== "README.md")
    .sort();

// Four builds of about 2.5 s each, quiet; several times that beside the rest of the suite.
const BUILDS_MS = 180_000;

it(
  "builds a Worker once per configuration: the second caller gets the first build, in its own folder, as a build there would be",
  () => {
    const cache = join(scratch, "cache");
    const first = buildWorker(CONFIG, { into: join(scratch, "a"), cache }) as { scriptPath: string; modulesRoot: string };
    expect(entries(cache)).toHaveLength(1);
    const [entry] = entries(cache) as [string];
    // Planted in the cached build: a second build that ran wrangler again would not carry it.
    writeFileSync(join(cache, entry, "planted.txt"), "from the cache");
    const second = buildWorker(CONFIG, { into: join(scratch, "b", "deeper"), cache }) as { scriptPath: string; modulesRoot: string };
    expect(entries(cache)).toHaveLength(1);
    expect(readFileSync(join(second.modulesRoot, "planted.txt"), "utf8")).toBe("from the cache");
    expect(second.modulesRoot).toBe(join(scratch, "b", "deeper", "strad-approvals"));
    expect(second.scriptPath.startsWith(second.modulesRoot)).toBe(true);

    // Against a build straight into a folder, without the cache: the same files, the same modules byte for byte, and
    // the source map with the same sources, resolved from where the copy is.
    const straight = buildWorker(CONFIG, { into: join(scratch, "c"), cache: "" }) as { modulesRoot: string };
    expect(files(second.modulesRoot).filter((f) => f !== "planted.txt")).toEqual(files(straight.modulesRoot));
    for (const f of files(straight.modulesRoot).filter((f) => !f.endsWith(".map"))) {
      expect(readFileSync(join(second.modulesRoot, f)).equals(readFileSync(join(straight.modulesRoot, f))), f).toBe(true);
    }
    const maps = files(straight.modulesRoot).filter((f) => f.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(0);
    for (const f of maps) {
      const copied = JSON.parse(readFileSync(join(second.modulesRoot, f), "utf8"));
      const built = JSON.parse(readFileSync(join(straight.modulesRoot, f), "utf8"));
      expect(copied.sourceRoot).toBe(second.modulesRoot);
      expect(copied.sources.map((s: string) => resolve(copied.sourceRoot, s))).toEqual(built.sources.map((s: string) => resolve(built.sourceRoot, s)));
      expect(copied.sources.every((s: string) => existsSync(resolve(copied.sourceRoot, s)))).toBe(true);
      expect({ ...copied, sourceRoot: null, sources: null }).toEqual({ ...built, sourceRoot: null, sources: null });
    }
    expect(first.scriptPath).not.toBe(second.scriptPath);
  },
  BUILDS_MS,
);

it(
  "builds another configuration of the same Worker apart, and never shares a tree copied elsewhere",
  () => {
    const cache = join(scratch, "cache2");
    buildWorker(CONFIG, { into: join(scratch, "d"), cache });
    buildWorker(CONFIG, { into: join(scratch, "e"), cache, production: true });
    expect(entries(cache)).toHaveLength(2);
    const copy = copyTree();
    try {
      const elsewhere = buildWorker(CONFIG, { into: join(scratch, "f"), cache, root: copy }) as { modulesRoot: string };
      expect(entries(cache)).toHaveLength(2);
      expect(existsSync(elsewhere.modulesRoot)).toBe(true);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
    // Nothing left behind but the builds: no lock, no build under way.
    expect(readdirSync(cache).sort()).toEqual(entries(cache).sort());
  },
  BUILDS_MS,
);

it(
  "two processes asking at once for the same Worker share one build: one builds while the other waits for it",
  async () => {
    const cache = join(scratch, "cache3");
    const stack = resolve("scripts/stack.mjs");
    const ask = (into: string) =>
      new Promise<{ code: number | null; out: string }>((done) => {
        // Each process counts the builds it ran itself: node:child_process's execFileSync, wrapped before the module
        // reads it (syncBuiltinESMExports carries the wrapper to ESM importers), prints one line per wrangler build.
        const script = [
          `import cp from "node:child_process"; import { syncBuiltinESMExports } from "node:module";`,
          `const real = cp.execFileSync; cp.execFileSync = (file, args, options) => { if (args?.includes("--dry-run")) console.log("built"); return real(file, args, options); }; syncBuiltinESMExports();`,
          `const { buildWorker } = await import(${JSON.stringify(stack)}); buildWorker(${JSON.stringify(CONFIG)}, { into: ${JSON.stringify(into)}, cache: ${JSON.stringify(cache)} });`,
        ].join("\n");
        execFile(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: BUILDS_MS }, (error, out, err) => done({ code: error === null ? 0 : 1, out: `${out}${err}` }));
      });
    const [a, b] = await Promise.all([ask(join(scratch, "g")), ask(join(scratch, "h"))]);
    expect(a).toMatchObject({ code: 0 });
    expect(b).toMatchObject({ code: 0 });
    expect(`${a.out}${b.out}`.match(/^built$/gm)).toEqual(["built"]);
    expect(entries(cache)).toHaveLength(1);
    expect(readdirSync(cache)).toEqual(entries(cache));
    // wrangler stamps each build's README with its time: one build, two copies of it.
    const stamp = (dir: string) => readFileSync(join(dir, "strad-approvals", "README.md"), "utf8");
    expect(stamp(join(scratch, "g"))).toMatch(/generated at \d{4}-/);
    expect(stamp(join(scratch, "g"))).toBe(stamp(join(scratch, "h")));
    expect(files(join(scratch, "g", "strad-approvals"))).toEqual(files(join(scratch, "h", "strad-approvals")));
  },
  BUILDS_MS,
);
