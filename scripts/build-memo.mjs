// The `wrangler deploy --dry-run` builds of one test run, kept by what each was built from, so a Worker built again
// from the same files (another test file's start, another tree copy's build gate, the next rehearsed deploy) is
// copied instead of built. `npm test` (scripts/test.mjs) names a folder of its own in STRAD_BUILD_CACHE and removes it
// after; without it (every operator's run) each build is a plain wrangler build.
//
// A build is reused only when everything it was made from is the same, byte for byte:
// - wrangler's arguments (config, environment, entry, each --var), CLOUDFLARE_ENV and NODE_ENV, and where the tree's
//   node_modules is from its root (esbuild names a module's path in the bundle's comments and in the size wrangler
//   reports);
// - every file esbuild read (its metafile's inputs: sources, the compiled roster, each node_modules file);
// - every module wrangler attached beside the bundle by its rules (text, CSS, WASM): esbuild names each by the SHA-1
//   of its content, and the memo keeps the source file that has that content, or keeps nothing;
// - the config itself, the tree's package.json and tsconfig.json, and each .env file wrangler loads (envFilesOf),
//   present or absent;
// - the output of the config's [build] command, which runs first, as wrangler runs it.
// A build with any other external import (a package left to the runtime) is not kept.
import { execFileSync, execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./workers.mjs";

/** The file each memoized build writes its esbuild metafile to, in its output folder (wrangler's --metafile). */
export const BUILD_META = "build-meta.json";

/** How long a build waits for another process's build of the same arguments before it builds for itself. */
const BUILD_LOCK_WAIT_MS = 180_000;

/** Files wrangler or esbuild may read beside the config that no metafile lists (the .env files: envFilesOf). */
const BESIDE = ["package.json", "tsconfig.json"];

/**
 * The .env files wrangler loads into its own process.env before a command (from its cwd, the tree's root): each
 * `--env-file` given, else `.env` and `.env.local`, and with `--env <name>` also `.env.<name>` and
 * `.env.<name>.local` (wrangler 4.86's getDefaultEnvFiles). They can set CLOUDFLARE_ENV, NODE_ENV and the account's
 * variables behind a build, so each is an input, present or absent.
 */
export function envFilesOf(args) {
  const valuesOf = (flag) => args.flatMap((arg, i) => (arg === flag && i + 1 < args.length ? [args[i + 1]] : arg.startsWith(`${flag}=`) ? [arg.slice(flag.length + 1)] : []));
  const given = valuesOf("--env-file");
  if (given.length > 0) return given;
  const environment = valuesOf("--env").at(-1);
  return [".env", ".env.local", ...(environment === undefined ? [] : [`.env.${environment}`, `.env.${environment}.local`])];
}

const digest = (data) => createHash("sha256").update(data).digest("hex");

/** The SHA-256 of a file's content, or null when it does not exist. */
function fileDigest(path) {
  try {
    return digest(readFileSync(path));
  } catch (error) {
    if (error.code === "ENOENT") return null;
    throw error;
  }
}

/**
 * `wrangler deploy --dry-run -c config [--env environment] ...extra` from `root` into `outdir`, with esbuild's record
 * of its inputs in `outdir`/BUILD_META; through the run's memo when there is one. Returns what wrangler printed (its
 * bindings and sizes); a failed build throws execFileSync's error, wrangler's stderr on it. `extra`: an entry script,
 * each `--var`; `processEnv`: the environment wrangler runs in.
 */
export function dryRun({ root, config, environment, extra = [], outdir, processEnv, cache = process.env.STRAD_BUILD_CACHE }) {
  const args = ["deploy", "--dry-run", "-c", config, ...(environment === undefined ? [] : ["--env", environment]), ...extra];
  const env = processEnv ?? process.env;
  return memoBuild({
    cache,
    root,
    config,
    args,
    // What else in wrangler's environment changes a build: the environment it picks without --env, and the
    // process.env.NODE_ENV it defines into the bundle.
    settings: [env.CLOUDFLARE_ENV ?? null, env.NODE_ENV ?? null],
    customBuild: cache ? createRequire(import.meta.url)("wrangler").unstable_readConfig({ config: join(root, config), env: environment }, { hideWarnings: true }).build : undefined,
    outdir,
    build: (to) =>
      execFileSync(join(ROOT, "node_modules/.bin/wrangler"), [...args, "--outdir", to, "--metafile", join(to, BUILD_META)], {
        cwd: root,
        env: processEnv,
        stdio: ["ignore", "pipe", "pipe"],
        encoding: "utf8",
      }),
  });
}

/**
 * Builds (or copies a kept build of) one Worker into `outdir` and returns what wrangler printed. `args`: wrangler's
 * arguments without --outdir and --metafile; `settings`: what else of its environment keys the build; `config`: the
 * config's path from `root`; `customBuild`: the config's
 * [build] command and cwd as wrangler reads them; `build(to)` runs wrangler with `--outdir to --metafile
 * to/BUILD_META` and returns what it printed (kept with the build: a caller reading the sizes gets them from a copy).
 * `cache`: the run's folder (STRAD_BUILD_CACHE), or nothing for a plain build.
 */
function memoBuild({ cache, root, config, args, settings = [], customBuild, outdir, build }) {
  if (cache === undefined || cache === "") return build(outdir);
  const modules = relative(root, realpathSync(join(root, "node_modules")));
  const dir = join(cache, digest(JSON.stringify([args, settings, modules])).slice(0, 24));
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, "lock");
  const deadline = Date.now() + BUILD_LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      // A holder that died keeps its lock: past the wait, build for ourselves and keep nothing.
      if (Date.now() > deadline) return build(outdir);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    const kept = readdirSync(dir).filter((f) => /^\d+$/.test(f));
    if (kept.length > 0 && runCustomBuild(root, customBuild)) {
      for (const entry of kept) {
        const memo = JSON.parse(readFileSync(join(dir, entry, "memo.json"), "utf8"));
        if (memo.inputs.every(([path, sum]) => fileDigest(join(root, path)) === sum)) {
          deliver(join(dir, entry, "out"), memo, root, outdir);
          return memo.stdout;
        }
      }
    }
    const building = mkdtempSync(join(dir, "building-"));
    try {
      const out = join(building, "out");
      const stdout = build(out);
      if (typeof stdout !== "string") throw new Error("memoBuild: build(to) must return what wrangler printed, as text");
      const inputs = inputsOf(root, config, out, envFilesOf(args));
      if (inputs === undefined) {
        deliver(out, { root, builtIn: out }, root, outdir);
        return stdout;
      }
      const memo = { root, builtIn: out, stdout, inputs };
      writeFileSync(join(building, "memo.json"), JSON.stringify(memo));
      const entry = join(dir, String(kept.length));
      renameSync(building, entry);
      deliver(join(entry, "out"), memo, root, outdir);
      return stdout;
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Runs the config's [build] command as wrangler would (a shell, in its cwd or the tree's root); false when it fails. */
function runCustomBuild(root, customBuild) {
  if (customBuild === undefined || !customBuild.command) return true;
  try {
    execSync(customBuild.command, { cwd: resolve(root, customBuild.cwd ?? "."), stdio: "ignore", env: { ...process.env, WRANGLER_COMMAND: "deploy" } });
    return true;
  } catch {
    // wrangler's own build runs it again and reports what failed.
    return false;
  }
}

/**
 * Every file the build in `out` was made from, as [path from root, SHA-256] (null: must stay absent), or undefined
 * when one cannot be named (an external import other than a runtime module or a module attached by wrangler's rules).
 */
function inputsOf(root, config, out, envFiles) {
  const base = dirname(join(root, config));
  const meta = JSON.parse(readFileSync(join(out, BUILD_META), "utf8"));
  const paths = new Set([join(root, config), ...BESIDE.flatMap((f) => [join(root, f), join(base, f)]), ...envFiles.map((f) => resolve(root, f))]);
  for (const [input, { imports }] of Object.entries(meta.inputs)) {
    // A module of a plugin's namespace (wrangler's `node-built-in-modules:os`) is no file: it re-exports the runtime's.
    if (/^[a-z-]+:/.test(input)) continue;
    const importer = resolve(base, input);
    paths.add(importer);
    for (const i of imports) {
      // The runtime's own modules, and esbuild's helpers (`<runtime>`), are not files of the tree.
      if (i.external !== true || i.path === "<runtime>" || /^(?:node|cloudflare):/.test(i.path)) continue;
      const attached = /^\.\/([0-9a-f]{40})-([^/]+)$/.exec(i.path);
      if (attached === null) return undefined;
      const source = attachedSource(importer, attached[1], attached[2]);
      if (source === undefined) return undefined;
      paths.add(source);
    }
  }
  return [...paths].map((path) => [relative(root, path), fileDigest(path)]);
}

/** The file `importer` names by a string ending in `name` whose content's SHA-1 is `sha1` (wrangler's module name). */
function attachedSource(importer, sha1, name) {
  const text = readFileSync(importer, "utf8");
  for (const [, specifier] of text.matchAll(/["'`]([^"'`\n]+)["'`]/g)) {
    if (specifier.split("/").at(-1) !== name) continue;
    const path = resolve(dirname(importer), specifier);
    if (existsSync(path) && createHash("sha1").update(readFileSync(path)).digest("hex") === sha1) return path;
  }
  return undefined;
}

/**
 * Copies a kept build into `outdir`, its source maps as a build there would write them: sourceRoot the folder, each
 * source the same file of this tree (the build's sources were in the tree it was built from).
 */
function deliver(from, memo, root, outdir) {
  mkdirSync(outdir, { recursive: true });
  cpSync(from, outdir, { recursive: true });
  for (const file of readdirSync(from).filter((f) => f.endsWith(".map"))) {
    const map = JSON.parse(readFileSync(join(from, file), "utf8"));
    const was = map.sourceRoot ?? memo.builtIn;
    // A plugin namespace's module (`node-built-in-modules:os`) is named as it is, no path.
    const sources = map.sources.map((s) => (/^[a-z-]+:/.test(s) ? s : relative(outdir, resolve(root, relative(memo.root, resolve(was, s))))));
    writeFileSync(join(outdir, file), JSON.stringify({ ...map, sourceRoot: outdir, sources }));
  }
}
