// Covers the run's build memo (scripts/build-memo.mjs, used by scripts/stack.mjs buildWorker and deploy-check's dry
// runs when `npm test` names a folder in STRAD_BUILD_CACHE): a Worker built again from the same files, by the same
// wrangler arguments, is a copy of the first build in the caller's own folder, byte for byte a build into that folder
// (its source map pointing there), whichever tree copy asks; a change to any file it was made from (a source, a
// module wrangler attaches by its rules, the roster its [build] step compiles) builds again and carries the change;
// a change to a file it was not made from does not; other arguments, or a CLOUDFLARE_ENV or NODE_ENV of its own, are a
// build of their own.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { dryRun, envFilesOf } from "../../scripts/build-memo.mjs";
// @ts-expect-error: plain ESM helper without types
import { buildWorker } from "../../scripts/stack.mjs";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "../../scripts/workers.mjs";
import { copyTree, edit } from "./helpers/tree";

const CONFIG = "approvals/wrangler.toml";
const scratch = mkdtempSync(join(tmpdir(), "strad-build-cache-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Built = { scriptPath: string; modulesRoot: string };

/** The memo's kept builds, `<arguments>/<n>` (one folder per set of wrangler arguments, one entry per set of inputs). */
const kept = (cache: string) =>
  readdirSync(cache)
    .filter((f) => /^[0-9a-f]{24}$/.test(f))
    .flatMap((key) =>
      readdirSync(join(cache, key))
        .filter((n) => /^\d+$/.test(n) && existsSync(join(cache, key, n, "memo.json")))
        .map((n) => join(key, n)),
    )
    .sort();
/** Anything but kept builds: a lock or a build under way left behind. */
const leftovers = (cache: string) =>
  readdirSync(cache).flatMap((key) =>
    readdirSync(join(cache, key))
      .filter((n) => !/^\d+$/.test(n))
      .map((n) => join(key, n)),
  );
const files = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f !== "README.md")
    .sort();
/** Every file of a build but wrangler's README and esbuild's record, as text. */
const contents = (dir: string) =>
  files(dir)
    .filter((f) => f !== "build-meta.json")
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
/** Marks a kept build so a caller given a copy of it can tell (a build that ran wrangler again would not carry it). */
const plant = (cache: string, entry: string, mark: string) => writeFileSync(join(cache, entry, "out", "planted.txt"), mark);
const planted = (built: Built) => (existsSync(join(built.modulesRoot, "planted.txt")) ? readFileSync(join(built.modulesRoot, "planted.txt"), "utf8") : undefined);

// A dozen builds of about 2.5 s each, quiet; several times that beside the rest of the suite.
const BUILDS_MS = 240_000;

it(
  "builds a Worker once for the same files: the second caller gets the first build, in its own folder, as a build there would be",
  () => {
    const cache = join(scratch, "cache");
    const first = buildWorker(CONFIG, { into: join(scratch, "a"), cache }) as Built;
    expect(kept(cache)).toHaveLength(1);
    const [entry] = kept(cache) as [string];
    plant(cache, entry, "from the memo");
    const second = buildWorker(CONFIG, { into: join(scratch, "b", "deeper"), cache }) as Built;
    expect(kept(cache)).toEqual([entry]);
    expect(planted(second)).toBe("from the memo");
    expect(second.modulesRoot).toBe(join(scratch, "b", "deeper", "strad-approvals"));
    expect(second.scriptPath.startsWith(second.modulesRoot)).toBe(true);

    // Against a build straight into a folder, without the memo: the same files, the same modules byte for byte, and
    // the source map with the same sources, resolved from where the copy is.
    const straight = buildWorker(CONFIG, { into: join(scratch, "c"), cache: "" }) as Built;
    expect(files(second.modulesRoot).filter((f) => f !== "planted.txt")).toEqual(files(straight.modulesRoot));
    for (const f of files(straight.modulesRoot).filter((f) => !f.endsWith(".map") && f !== "build-meta.json")) {
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

    // The same arguments in an environment that changes what wrangler builds (its NODE_ENV define, the environment
    // CLOUDFLARE_ENV picks): a build of its own.
    const outdir = join(scratch, "c2");
    const output = dryRun({ root: ROOT, config: CONFIG, outdir, processEnv: { ...process.env, NODE_ENV: "production-like" }, cache });
    expect(output).toMatch(/--dry-run: exiting now/);
    expect(planted({ scriptPath: "", modulesRoot: outdir })).toBeUndefined();
    expect(kept(cache)).toHaveLength(2);
    expect(leftovers(cache)).toEqual([]);
  },
  BUILDS_MS,
);

it(
  "shares a build between tree copies with the same files, builds again for a changed source or attached module and carries the change, and not for a file the build never read",
  () => {
    const cache = join(scratch, "cache2");
    const one = copyTree();
    const two = copyTree();
    buildWorker(CONFIG, { into: join(scratch, "d"), cache, root: one });
    const [entry] = kept(cache) as [string];
    plant(cache, entry, "first");
    // Another copy, the same files: the first copy's build, its map naming this copy's sources.
    const shared = buildWorker(CONFIG, { into: join(scratch, "e"), cache, root: two }) as Built;
    expect(planted(shared)).toBe("first");
    const map = JSON.parse(readFileSync(`${shared.scriptPath}.map`, "utf8"));
    const sources = map.sources.map((s: string) => resolve(map.sourceRoot, s)).filter((s: string) => s.includes("approvals.app.ts"));
    expect(sources).toEqual([join(two, "approvals/approvals.app.ts")]);

    // A file no build of this Worker reads: still the same build.
    edit(two, "bundles/echo/echo.tools.ts", (t) => `${t}\n// ${randomUUID()}\n`);
    edit(two, "README.md", (t) => `${t}\n${randomUUID()}\n`);
    expect(planted(buildWorker(CONFIG, { into: join(scratch, "f"), cache, root: two }) as Built)).toBe("first");
    expect(kept(cache)).toEqual([entry]);

    // The review page's script, a Text module wrangler attaches beside the bundle under the SHA-1 of its content.
    const script = `// attached ${randomUUID()}`;
    edit(two, "approvals/page/review.client.js", (t) => `${t}\n${script}\n`);
    const attached = buildWorker(CONFIG, { into: join(scratch, "g"), cache, root: two }) as Built;
    expect(planted(attached)).toBeUndefined();
    expect(contents(attached.modulesRoot)).toContain(script);
    expect(kept(cache)).toHaveLength(2);

    // A source esbuild bundles.
    const text = `source ${randomUUID()}`;
    edit(two, "approvals/page/review-page.ts", (t) => `${t}\nexport const planted = ${JSON.stringify(text)};\n`);
    edit(two, "approvals/approvals.app.ts", (t) => `${t}\nexport { planted } from "./page/review-page";\n`);
    const source = buildWorker(CONFIG, { into: join(scratch, "h"), cache, root: two }) as Built;
    expect(planted(source)).toBeUndefined();
    expect(readFileSync(source.scriptPath, "utf8")).toContain(text);
    expect(kept(cache)).toHaveLength(3);

    // The first copy, unchanged, still gets its own build back.
    expect(planted(buildWorker(CONFIG, { into: join(scratch, "i"), cache, root: one }) as Built)).toBe("first");
    expect(kept(cache)).toHaveLength(3);
    expect(leftovers(cache)).toEqual([]);
  },
  BUILDS_MS,
);

it(
  "runs the gateway's [build] step before reusing a build, so a changed roster builds again; the dev entry and the production main are builds apart",
  () => {
    const cache = join(scratch, "cache3");
    const copy = copyTree();
    const dev = buildWorker("wrangler.toml", { into: join(scratch, "j"), cache, root: copy }) as Built;
    const production = buildWorker("wrangler.toml", { into: join(scratch, "k"), cache, root: copy, production: true }) as Built;
    expect(kept(cache)).toHaveLength(2);
    expect(dev.scriptPath).toMatch(/dev\.js$/);
    expect(production.scriptPath).toMatch(/index\.js$/);
    for (const entry of kept(cache)) plant(cache, entry, entry);
    expect(planted(buildWorker("wrangler.toml", { into: join(scratch, "l"), cache, root: copy }) as Built)).toBeDefined();

    // The roster is no input of esbuild's: the [build] step compiles it into .build/, which the entry imports.
    const prefix = `http://127.0.0.1:8790/planted-${randomUUID()}/`;
    edit(copy, "strad.dev.yaml", (t) => t.replaceAll("http://127.0.0.1:8790/scripted/", prefix));
    const rebuilt = buildWorker("wrangler.toml", { into: join(scratch, "m"), cache, root: copy }) as Built;
    expect(planted(rebuilt)).toBeUndefined();
    expect(readFileSync(rebuilt.scriptPath, "utf8")).toContain(prefix);
    expect(kept(cache)).toHaveLength(3);
    // The production roster did not change: its build is the kept one.
    expect(planted(buildWorker("wrangler.toml", { into: join(scratch, "n"), cache, root: copy, production: true }) as Built)).toBeDefined();
    expect(kept(cache)).toHaveLength(3);
    expect(leftovers(cache)).toEqual([]);
  },
  BUILDS_MS,
);

it(
  "two processes asking at once for the same Worker share one build: one builds while the other waits for it",
  async () => {
    const cache = join(scratch, "cache4");
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
    const [a, b] = await Promise.all([ask(join(scratch, "o")), ask(join(scratch, "p"))]);
    expect(a).toMatchObject({ code: 0 });
    expect(b).toMatchObject({ code: 0 });
    expect(`${a.out}${b.out}`.match(/^built$/gm)).toEqual(["built"]);
    expect(kept(cache)).toHaveLength(1);
    expect(leftovers(cache)).toEqual([]);
    // wrangler stamps each build's README with its time: one build, two copies of it.
    const stamp = (dir: string) => readFileSync(join(dir, "strad-approvals", "README.md"), "utf8");
    expect(stamp(join(scratch, "o"))).toMatch(/generated at \d{4}-/);
    expect(stamp(join(scratch, "o"))).toBe(stamp(join(scratch, "p")));
    expect(files(join(scratch, "o", "strad-approvals"))).toEqual(files(join(scratch, "p", "strad-approvals")));
  },
  BUILDS_MS,
);

it("names the .env files wrangler loads for a command: each --env-file given, else .env and .env.local, and those of the --env named", () => {
  expect(envFilesOf(["deploy", "--dry-run", "-c", CONFIG])).toEqual([".env", ".env.local"]);
  expect(envFilesOf(["deploy", "--dry-run", "-c", CONFIG, "--env", "staging"])).toEqual([".env", ".env.local", ".env.staging", ".env.staging.local"]);
  expect(envFilesOf(["deploy", "--dry-run", "--env=preview", "-c", CONFIG])).toEqual([".env", ".env.local", ".env.preview", ".env.preview.local"]);
  expect(envFilesOf(["deploy", "--env-file", "a.env", "--env", "staging", "--env-file=b.env"])).toEqual(["a.env", "b.env"]);
});

it(
  "builds again when a .env file wrangler loads appears or changes, and not for one it does not load",
  () => {
    const cache = join(scratch, "cache5");
    const copy = copyTree();
    buildWorker(CONFIG, { into: join(scratch, "q"), cache, root: copy });
    const [entry] = kept(cache) as [string];
    plant(cache, entry, "before any .env");
    // A file of another environment, which this build (no --env) never loads: the kept build.
    writeFileSync(join(copy, ".env.staging"), "NODE_ENV=staging\n");
    expect(planted(buildWorker(CONFIG, { into: join(scratch, "r"), cache, root: copy }) as Built)).toBe("before any .env");
    // .env.local, which wrangler loads into its own environment before every command (it could set NODE_ENV or
    // CLOUDFLARE_ENV behind the build): a build of its own.
    writeFileSync(join(copy, ".env.local"), "NODE_ENV=staging\n");
    expect(planted(buildWorker(CONFIG, { into: join(scratch, "s"), cache, root: copy }) as Built)).toBeUndefined();
    expect(kept(cache)).toHaveLength(2);
    expect(leftovers(cache)).toEqual([]);
  },
  BUILDS_MS,
);
