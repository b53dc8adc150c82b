// How this tree's Workers run locally, found from their configs (scripts/workers.mjs: the gateway, every
// bundles/<name>/wrangler.toml, the approval service, the fakes), so a new bundle folder joins by itself.
// The whole stack is three processes: the gateway with every bundle on 8787 (one runtime, so the service
// bindings and the CallRegistry the bundles bind by script_name are live), the approval service on 8788 and
// the fakes on 8789. It runs two ways:
//   - startStack(): the e2e suite and `npm run bench`. Each Worker is built as it is deployed (`wrangler deploy
//     --dry-run`) and runs on workerd through Miniflare with the bindings, Durable Objects and .dev.vars that
//     `wrangler dev` would give it (wrangler's own unstable_getMiniflareWorkerOptions), and nothing between
//     the client and workerd but Miniflare's entry Worker: no dev proxy, no inspector, no file watcher.
//   - startDevStack(): `npm run dev`, the same three under `wrangler dev`, kept there because it rebuilds a
//     Worker on every edit; one test (test/scripts/dev-stack.test.ts) starts it on free ports beside the
//     suite's own stack and checks that it comes up and answers through the gateway.
// Beside them, both ways, the Rustpad fake on 8791 (test/fakes/rustpad/): a Node process, since the pads bundle
// opens a WebSocket to it, and a WebSocket server for another runtime's Worker is simplest as a plain Node one.
// (The e2e tests run the scripted approval endpoint on 8790 themselves.) startWorkers() starts Workers under
// `wrangler dev` for startDevStack(); tests of one Worker build it (buildWorker) and start it alone on a free port
// (startRuntime).
import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { RUSTPAD_FAKE_PORT, startRustpadFake } from "../test/fakes/rustpad/rustpad.fake.mjs";
import { DOVECOT_PORT, DOVECOT_TLS_PORT, dovecotMissing, startDovecot } from "../test/servers/dovecot/dovecot.mjs";
import { dryRun } from "./build-memo.mjs";
import { freePort, freePorts } from "./ports.mjs";

export { freePort, freePorts };

import { gatewayServices } from "./bundle-tree.mjs";
import { renderBundleEnv, writeRenderedBlock } from "./roster-env.mjs";
import { DEV_ENTRY, DEV_ROSTER, discoverWorkers, ROOT, workerName } from "./workers.mjs";

// wrangler's API and Miniflare are loaded on first use, not when this module is: importing them costs ~2.6 s and ~1 s of
// CPU, and most of this module's importers (every e2e file, through its helpers) only read its constants and ports.
const requireHere = createRequire(import.meta.url);
let wranglerApi;
let miniflareApi;
/** @returns {typeof import("wrangler")} */
const wrangler = () => (wranglerApi ??= requireHere("wrangler"));
/** @returns {typeof import("miniflare")} */
const miniflare = () => (miniflareApi ??= requireHere("miniflare"));

export { ROOT };
export const PORTS = { gateway: 8787, approvals: 8788, fakes: 8789, rustpad: RUSTPAD_FAKE_PORT, dovecot: DOVECOT_PORT, dovecotTls: DOVECOT_TLS_PORT };

/**
 * The mailbox bundle's Dovecot (test/servers/dovecot/), seeded, when this machine has it; when it does not, the
 * stack serves everything else and says what is missing (the mailbox mounts then answer that IMAP is unreachable).
 * `port` 0: free ports (the dev stack's --free-ports).
 */
async function startMailServer(port, log) {
  const missing = dovecotMissing();
  if (missing !== undefined) {
    log(`not started: ${missing}; the mailbox bundle cannot reach an IMAP server\n`);
    return { port: undefined, stop: async () => {} };
  }
  return startDovecot(port === 0 ? { port: 0, tlsPort: 0 } : {});
}

/** The Rustpad fake on `port` (0: a free one), refusing a port already in use as the Workers' do. */
async function startRustpad(port) {
  if (port !== 0 && (await portOpen(port))) throw new Error(`port ${port} (rustpad) is in use: stop the other strad stack (npm run dev) first`);
  return startRustpadFake({ port });
}

/** The stack's three processes, each `{ name, port, configs }`; the gateway's configs are the gateway's and every bundle's. */
export function stackProcesses(root = ROOT) {
  const { gateway, bundles, approvals, fakes } = discoverWorkers(root);
  return [
    { name: "gateway", port: PORTS.gateway, configs: [gateway.config, ...bundles.map((b) => b.config)], script: DEV_ENTRY },
    { name: "approvals", port: PORTS.approvals, configs: [approvals.config] },
    { name: "fakes", port: PORTS.fakes, configs: [fakes.config] },
  ];
}

const varNames = (text) =>
  new Set(
    text
      .split("\n")
      .map((l) => /^([A-Za-z0-9_]+)=/.exec(l.trim())?.[1])
      .filter(Boolean),
  );

/** Creates a Worker folder's .dev.vars from its .dev.vars.example, or adds the example's variables an older copy lacks. */
function prepareDevVars(dir) {
  const vars = join(dir, ".dev.vars");
  const example = join(dir, ".dev.vars.example");
  if (!existsSync(example)) return;
  if (!existsSync(vars)) copyFileSync(example, vars);
  else {
    const have = varNames(readFileSync(vars, "utf8"));
    const missing = readFileSync(example, "utf8")
      .split("\n")
      .filter((l) => {
        const n = /^([A-Za-z0-9_]+)=/.exec(l.trim())?.[1];
        return n !== undefined && !have.has(n);
      });
    if (missing.length > 0) appendFileSync(vars, `\n${missing.join("\n")}\n`);
  }
}

/**
 * Readies a tree for the local stack: each Worker folder's .dev.vars (the only place dev values live: `wrangler
 * dev` and unstable_getMiniflareWorkerOptions read it, `wrangler deploy` does not), with the dev roster's
 * servers[].env rendered into its bundles' (scripts/roster-env.mjs), and wrangler's config folder.
 */
export function prepare(root = ROOT) {
  const { gateway, bundles, approvals, fakes } = discoverWorkers(root);
  for (const w of [gateway, ...bundles, approvals, fakes]) prepareDevVars(join(root, dirname(w.config)));
  const roster = parseYaml(readFileSync(join(root, DEV_ROSTER), "utf8"));
  const services = new Map(gatewayServices(root).map((s) => [s.binding, s.service]));
  const { vars, errors } = renderBundleEnv(Array.isArray(roster?.servers) ? roster.servers : [], (binding) => services.get(binding));
  for (const b of bundles) errors.push(...writeRenderedBlock(join(root, dirname(b.config), ".dev.vars"), vars.get(b.name) ?? {}).map((p) => `bundles/${b.dir}/.dev.vars ${p}`));
  if (errors.length > 0) throw new Error(`${DEV_ROSTER}: ${errors.join("; ")}`);
  mkdirSync(join(root, ".xdg"), { recursive: true });
}

export function portOpen(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Whole lines only, each with its process's name, so a log scan can tell who wrote what. */
function lineLogger(name, logs, quiet) {
  let partial = "";
  return (chunk) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      logs.push(`[${name}] ${line}\n`);
      if (!quiet) process.stdout.write(`[${name}] ${line}\n`);
    }
  };
}

/** Resolves when the process on `port` answers GET /healthz; `failed()` names a reason to give up early. */
async function answers(name, port, deadline, failed) {
  for (;;) {
    const reason = failed();
    if (reason !== undefined) throw new Error(`${name} ${reason}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      await r.body?.cancel();
      return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${name} did not start in time`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A production build reads no dev file: wrangler loads .dev.vars only when no env file is named, and a named
 * file that does not exist loads nothing.
 */
const NO_ENV_FILE = ".strad-production-build-reads-no-env-file";

const ENV = { ...process.env, XDG_CONFIG_HOME: join(ROOT, ".xdg"), WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" };

/**
 * The config wrangler dev runs: a config with a top-level `routes` (the approval service's production hostname) is
 * copied beside itself without it, so that .dev.vars, `main` and `rules` resolve as before. With the route, wrangler
 * dev hands the Worker that hostname as its request URL whatever Host the request carried, and with
 * `--local-upstream` every request reads as loopback: either defeats the service's loopback-only dev mode.
 */
export function withoutRoutes(config) {
  const path = resolve(ROOT, config);
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  const kept = lines.filter((line) => !/^routes\s*=/.test(line));
  if (kept.length === lines.length) return config;
  if (lines.some((line) => /^\s*\[\[?routes\]?\]/.test(line))) throw new Error(`${config}: write its routes as one \`routes = [...]\` line, which the dev stack leaves out`);
  const copy = join(dirname(path), `.dev-${basename(path)}`);
  const content = kept.join("\n");
  // Left alone when it already says this: every `wrangler dev` started from it watches it, and reloads its Worker
  // when it is written, failing the requests in flight (test files running side by side each start one). A new copy
  // is written whole and renamed into place, so no reader sees it half-written.
  if (existsSync(copy) && readFileSync(copy, "utf8") === content) return copy;
  const partial = `${copy}.${process.pid}.${Date.now()}.partial`;
  writeFileSync(partial, content);
  renameSync(partial, copy);
  return copy;
}

/**
 * Starts each process (`{ name, port, configs, vars? }`, port 0 = pick a free one) under `wrangler dev` and
 * resolves when each answers GET /healthz. Returns the ports used, the captured logs and stop().
 */
export async function startWorkers(processes, { quiet = true, timeoutMs = 120_000, sharedState = false } = {}) {
  prepare();
  const children = [];
  const logs = [];
  // Each start keeps its Durable Objects' storage in a folder of its own, removed when it stops, unless `sharedState`
  // (npm run dev: wrangler's own .wrangler/state, kept between runs). Test files run side by side, and two workerd
  // processes sharing one state folder failed each other's storage (the approval service answered 500, or closed the
  // connection).
  const state = sharedState ? undefined : mkdtempSync(join(tmpdir(), "strad-wrangler-state-"));
  const stop = () =>
    Promise.all(
      children.map(
        ({ child }) =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
            setTimeout(() => child.kill("SIGKILL"), 5000).unref();
          }),
      ),
    ).then(() => {
      if (state !== undefined) rmSync(state, { recursive: true, force: true });
    });
  // One process on `port` (a free one when it was asked for 0), or, for a free port, another try on new ports when the
  // one picked was taken before wrangler bound it: a free port is only free when it is looked at, and the suite's own
  // loopback connections take ports from the same range (once: "Address already in use" for the fakes' port).
  const launch = async (p) => {
    // The inspector's port and a free one for the process are picked together, so they cannot be the same.
    const [free, inspector] = await freePorts(2);
    const port = p.port === 0 ? free : p.port;
    if (await portOpen(port)) {
      await stop();
      throw new Error(`port ${port} (${p.name}) is in use: stop the other strad stack (npm run dev) first`);
    }
    const vars = Object.entries(p.vars ?? {}).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
    const args = [
      "dev",
      ...(p.script === undefined ? [] : [p.script]),
      ...p.configs.flatMap((c) => ["-c", withoutRoutes(c)]),
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--show-interactive-dev-session=false",
      ...(state === undefined ? [] : ["--persist-to", join(state, p.name)]),
      ...vars,
    ];
    const own = [];
    const child = spawn(join(ROOT, "node_modules/.bin/wrangler"), args, { cwd: ROOT, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    // Settles once the child's output is read to its end (its exit can come before its last output).
    const closed = new Promise((resolve) => child.once("close", resolve));
    for (const stream of [child.stdout, child.stderr]) {
      const log = lineLogger(p.name, logs, quiet);
      stream.on("data", (chunk) => {
        own.push(chunk.toString());
        log(chunk);
      });
    }
    return { ...p, port, child, own, closed };
  };
  for (const p of processes) children.push(await launch(p));
  const deadline = Date.now() + timeoutMs;
  try {
    for (const [i, asked] of processes.entries()) {
      for (let tries = 1; ; tries++) {
        const p = children[i];
        try {
          await answers(p.name, p.port, deadline, () => (p.child.exitCode !== null ? "exited early" : undefined));
          break;
        } catch (error) {
          if (asked.port !== 0 || p.child.exitCode === null || tries >= 3) throw error;
          await p.closed;
          if (!p.own.join("").includes("Address already in use")) throw error;
          children[i] = await launch(asked);
        }
      }
    }
  } catch (error) {
    await stop();
    throw new Error(`${error.message}:\n${logs.join("")}`);
  }
  return { stop, logs, ports: Object.fromEntries(children.map((c) => [c.name, c.port])) };
}

/** `npm run dev`'s stack under `wrangler dev`; `freePorts` moves it off 8787-8789 (its Workers still call each other there). */
export async function startDevStack({ freePorts = false, ...options } = {}) {
  const rustpad = await startRustpad(freePorts ? 0 : PORTS.rustpad);
  let workers;
  let mail;
  try {
    mail = await startMailServer(freePorts ? 0 : PORTS.dovecot, (line) => (options.quiet === false ? process.stdout.write(`[dovecot] ${line}`) : undefined));
    workers = await startWorkers(
      stackProcesses().map((p) => (freePorts ? { ...p, port: 0 } : p)),
      { sharedState: true, ...options },
    );
  } catch (error) {
    await Promise.all([rustpad.stop(), mail?.stop()]);
    throw error;
  }
  return {
    ...workers,
    ports: { ...workers.ports, rustpad: rustpad.port, dovecot: mail.port },
    stop: () => Promise.all([workers.stop(), rustpad.stop(), mail.stop()]),
  };
}

/**
 * Builds one Worker as it would be deployed (under `into`/<name>, .bench/<name> by default) and returns Miniflare
 * options for it: its bindings and its folder's .dev.vars, as `wrangler dev` would give them. The gateway is built
 * from its dev entry (worker/dev.ts, the dev roster) unless `production`: then from its `main`, exactly what
 * `wrangler deploy` ships, and without any .dev.vars (the caller passes the settings an operator would set). `env`:
 * one of the config's wrangler environments (the 1Password bundle's Connect-only build is its `connect`). `cache`: the
 * run's folder of builds to reuse (scripts/build-memo.mjs; STRAD_BUILD_CACHE by default).
 */
export function buildWorker(config, { into = join(ROOT, ".bench"), root = ROOT, production = false, env = undefined, cache = process.env.STRAD_BUILD_CACHE } = {}) {
  prepare(root);
  const script = !production && config === discoverWorkers(root).gateway.config ? DEV_ENTRY : undefined;
  const options = production ? { envFiles: [NO_ENV_FILE] } : undefined;
  const { workerOptions, main } = wrangler().unstable_getMiniflareWorkerOptions(join(root, config), env, options);
  withServiceProps(workerOptions, join(root, config));
  const name = workerName(config, root);
  const outdir = join(into, name);
  mkdirSync(outdir, { recursive: true });
  dryRun({ root, config, environment: env, extra: script === undefined ? [] : [script], outdir, processEnv: ENV, cache });
  const built = `${basename(script ?? main).replace(/\.ts$/, "")}.js`;
  return {
    ...workerOptions,
    name,
    modules: true,
    modulesRoot: outdir,
    scriptPath: join(outdir, built),
    // The config's own rules first (approvals bundles its review page's *.client.js as text); every other
    // .js file of the build is one of its ES modules.
    modulesRules: [...(workerOptions.modulesRules ?? []), { type: "ESModule", include: ["**/*.js"] }],
  };
}

/**
 * Puts back each [[services]] binding's props, which wrangler 4.86's unstable_getMiniflareWorkerOptions drops while
 * `wrangler dev` and a deploy both pass them: without them every bundle refuses the gateway here (docs/rules.md
 * R-CHAN-13). Remove once that function passes them itself (test/bundles/kit/bundle-direct.unit.test.ts checks the build).
 */
function withServiceProps(workerOptions, configPath) {
  for (const service of wrangler().unstable_readConfig({ config: configPath }, { hideWarnings: true }).services ?? []) {
    const binding = workerOptions.serviceBindings?.[service.binding];
    if (service.props !== undefined && typeof binding === "object" && binding !== null) binding.props = service.props;
  }
}

/** The runtime starts of this process, one after another (startRuntime). */
let starts = Promise.resolve();

/**
 * Starts one workerd process serving `workers` (the first is the entry) on `port` (a free loopback port by
 * default). `onOutput(stdout, stderr)` receives what the Workers write; by default it is read and dropped:
 * in production it leaves the isolate for a log pipeline, and printing it here would charge the bench's own
 * machine for a terminal. `inspect` names the Workers whose isolates the bench reads through workerd's inspector;
 * `v8Flags` are V8's command-line flags for the whole process: LOCAL_V8_FLAGS unless the caller asks for V8 as
 * deployed (`[]`: what the bench measures) or more (its --trace-gc). `lineBuffered` has V8's own printing reach
 * `onOutput` a line at a time (scripts/bench-gc.mjs).
 */
export async function startRuntime(workers, { port = 0, onOutput, inspect = [], v8Flags = LOCAL_V8_FLAGS, lineBuffered = false } = {}) {
  // Port 0 is bound by workerd itself, which tells Miniflare the port it got: a port probed free here first could be
  // taken (by another process's listener or an outgoing connection's ephemeral port) before workerd binds it.
  const chosen = port;
  // The bench reads some isolates' heaps through workerd's inspector (scripts/bench-heap.mjs); nothing else opens it.
  // 0 again: Miniflare's inspector proxy listens where the system puts it, read back once the runtime is ready.
  const inspectorPort = inspect.length > 0 ? 0 : undefined;
  // V8 flags go in workerd's config, which Miniflare writes without them: a wrapper adds them
  // (scripts/workerd-v8-flags.sh). Miniflare reads its runtime command from the environment when it spawns workerd,
  // before it is ready, so one start at a time has the environment, and puts it back before the next.
  const turn = starts.then(() => startOne(workers, { chosen, onOutput, inspect, inspectorPort, v8Flags, lineBuffered }));
  starts = turn.then(
    () => undefined,
    () => undefined,
  );
  const mf = await turn;
  const url = (await mf.ready).origin;
  const inspectorAt = inspectorPort === undefined ? undefined : Number(new URL(await mf.getInspectorURL()).port);
  return { url, miniflare: mf, inspectorPort: inspectorAt, stop: () => mf.dispose() };
}

async function startOne(workers, { chosen, onOutput, inspect, inspectorPort, v8Flags, lineBuffered }) {
  const restoreEnv = v8Flags.length > 0 ? useWorkerdWithV8Flags(v8Flags, lineBuffered) : () => {};
  let mf;
  try {
    mf = new (miniflare().Miniflare)({
      host: "127.0.0.1",
      port: chosen,
      ...(inspectorPort === undefined ? {} : { inspectorPort }),
      workers: inspect.length > 0 ? workers.map((w) => (inspect.includes(w.name) ? { ...w, unsafeInspectorProxy: true } : w)) : workers,
      handleRuntimeStdio(stdout, stderr) {
        if (onOutput !== undefined) return onOutput(stdout, stderr);
        stdout.resume();
        stderr.resume();
      },
    });
    await mf.ready;
  } catch (error) {
    await mf?.dispose().catch(() => {});
    throw error;
  } finally {
    restoreEnv();
  }
  return mf;
}

/** The workerd binary Miniflare runs unless told otherwise: the one its own `workerd` dependency ships. */
export const bundledWorkerd = () => createRequire(requireHere.resolve("miniflare"))("workerd").default;

/** Points Miniflare's next workerd at scripts/workerd-v8-flags.sh with `flags`; returns what puts the environment back. */
function useWorkerdWithV8Flags(flags, lineBuffered) {
  const names = ["MINIFLARE_WORKERD_PATH", "STRAD_WORKERD", "STRAD_NODE", "STRAD_V8_FLAGS", "STRAD_LINE_BUFFERED"];
  const before = names.map((name) => process.env[name]);
  // The workerd Miniflare itself would run: one named by MINIFLARE_WORKERD_PATH already, or its own.
  const wrapper = join(ROOT, "scripts/workerd-v8-flags.sh");
  const workerd = before[0] !== undefined && before[0] !== wrapper ? before[0] : bundledWorkerd();
  Object.assign(process.env, {
    MINIFLARE_WORKERD_PATH: wrapper,
    STRAD_WORKERD: workerd,
    STRAD_NODE: process.execPath,
    STRAD_V8_FLAGS: JSON.stringify(flags),
    STRAD_LINE_BUFFERED: lineBuffered ? "1" : "0",
  });
  return () => {
    names.forEach((name, i) => {
      if (before[i] === undefined) delete process.env[name];
      else process.env[name] = before[i];
    });
  };
}

/**
 * V8 without background threads, for every local workerd but the bench's measured ones. With them, a stack process
 * now and then spun a core at 100% for good and stopped answering (the rare e2e "CPU spin"). Its threads, read with
 * gdb while it spun:
 * V8's one worker thread ran a concurrent Sparkplug batch compile, whose code allocation needed a collection and
 * waited for the main thread to make it (CollectionBarrier::AwaitCollectionBackground); the main thread was in the
 * message-loop pump workerd runs after each event (IoContext::runImpl, PumpMessageLoop), running cppgc's incremental
 * sweep task, which posted itself again and again because the concurrent sweep it waits for needs the worker thread.
 * So neither could go on. `--single-threaded` runs compiles and collections on the main thread, where no such wait
 * exists. The bench's measured runtimes ask for V8 as it is deployed (`v8Flags: []`).
 */
export const LOCAL_V8_FLAGS = Object.freeze(["--single-threaded"]);

/** Where a stack started with STRAD_STACK_INSPECT=1 writes the inspector port of the process serving `port`. */
export const inspectorPortFile = (port) => join(tmpdir(), `strad-stack-inspector-${port}`);

/**
 * The whole stack on workerd through Miniflare, built as deployed, on 8787-8789. Resolves when each process
 * answers GET /healthz; returns the ports, the Workers' output as lines tagged with their process's name
 * (`quiet: false` prints them too), and stop().
 */
export async function startStack({ quiet = true, timeoutMs = 120_000, inspect = process.env.STRAD_STACK_INSPECT === "1" } = {}) {
  const processes = stackProcesses();
  const logs = [];
  const runtimes = [];
  const into = mkdtempSync(join(tmpdir(), "strad-stack-"));
  let rustpad;
  let mail;
  /** Each Worker's name to its process's inspector port, when `inspect`. */
  const inspectors = {};
  const stop = async () => {
    await Promise.all([...runtimes.map((r) => r.stop()), rustpad?.stop(), mail?.stop()]);
    rmSync(into, { recursive: true, force: true });
  };
  try {
    rustpad = await startRustpad(PORTS.rustpad);
    mail = await startMailServer(PORTS.dovecot, lineLogger("dovecot", logs, quiet));
    for (const p of processes) {
      if (await portOpen(p.port)) throw new Error(`port ${p.port} (${p.name}) is in use: stop the other strad stack (npm run dev) first`);
      const workers = p.configs.map((config) => buildWorker(config, { into }));
      const output = (stdout, stderr) => {
        stdout.on("data", lineLogger(p.name, logs, quiet));
        stderr.on("data", lineLogger(p.name, logs, quiet));
      };
      // `inspect` (STRAD_STACK_INSPECT=1) opens workerd's inspector on every Worker: for scripts/spin-watch.mjs to pause
      // a process that spins and print where each isolate is, and for the bench to read a bundle's allocations.
      const started = await startRuntime(workers, { port: p.port, onOutput: output, inspect: inspect ? workers.map((w) => w.name) : [] });
      if (started.inspectorPort !== undefined) for (const w of workers) inspectors[w.name] = started.inspectorPort;
      if (started.inspectorPort !== undefined) writeFileSync(inspectorPortFile(p.port), String(started.inspectorPort));
      runtimes.push({ name: p.name, port: p.port, ...started });
    }
    const deadline = Date.now() + timeoutMs;
    for (const r of runtimes) await answers(r.name, r.port, deadline, () => undefined);
  } catch (error) {
    await stop();
    throw new Error(`${error.message}\n${logs.join("")}`);
  }
  return { stop, logs, inspectors, ports: { ...Object.fromEntries(runtimes.map((r) => [r.name, r.port])), rustpad: rustpad.port, dovecot: mail.port } };
}
