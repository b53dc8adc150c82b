// `npm run bench` part 6 (BENCH_COLD=1 runs it alone): each deployed Worker's cold start on workerd, global scope to
// first answer. Every Worker (the gateway, every bundle, the approval service) is built as deployed (buildWorker) and
// started in a fresh runtime (startRuntime, V8 as deployed) with what it needs to answer: the gateway with a trivial
// Worker under each bundle's service name, a bundle behind a forwarder carrying the gateway's binding props. The
// figure is runtime start to the first successful answer of a cheap request (the gateway's and the approval service's
// GET /healthz, a bundle's tools/list on its first dev mount, in 2026-07-28 as the gateway sends it), minus the same for
// a trivial stand-in under the same name, with the same bindings and as many bytes of modules, in the same runtime,
// started right beside it: what is left is the Worker's own start (compiling and evaluating its modules, and its first
// request), not workerd's or Miniflare's (`standIn` says what its padding cancels). workerd evaluates a Worker's global
// scope before it listens, and V8 inside it freezes the clock while a script runs, so wall time from outside is the
// measure.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileModuleRules, testRegExps } from "miniflare";
import { parse as parseYaml } from "yaml";
import { buildWorker, gatewayPropsFor, MODERN_META, referenceTo, startRuntime } from "./bench-runtime.mjs";
import { DEV_ROSTER, discoverWorkers, ROOT } from "./workers.mjs";

/** Issue 31 target 3: every Worker starts within this, median of its starts, on this machine. */
export const COLD_START_TARGET_MS = 100;
/** Cloudflare's Worker startup time limit (developers.cloudflare.com/workers/platform/limits), every plan. */
export const PLATFORM_START_LIMIT_MS = 1000;

const TRIVIAL = 'export default { fetch: () => Response.json({ jsonrpc: "2.0", id: 1, result: {} }) };';

/** A trivial Worker under `name` (a bundle the gateway binds to, as the gateway's start sees it): answers any request as a success. */
export const trivialWorker = (name, like) => ({
  name,
  modules: true,
  script: TRIVIAL,
  compatibilityDate: like.compatibilityDate,
  compatibilityFlags: like.compatibilityFlags,
});

/** Classes the stand-in must export: the Durable Objects `worker` defines itself (not another Worker's). */
const ownObjectClasses = (worker) => [
  ...new Set(
    Object.values(worker.durableObjects ?? {})
      .map((d) => (typeof d === "string" ? d : d.scriptName === undefined ? d.className : undefined))
      .filter((c) => typeof c === "string"),
  ),
];

/** Module types whose bytes the runtime compiles as code or reads as text; the rest (WebAssembly, data) are bytes. */
const SOURCE_TYPES = new Set(["ESModule", "CommonJS", "Text"]);

/** Bytes of `worker`'s modules as handed to the runtime: `[source, binary]`. */
const moduleBytes = (worker) => {
  let source = 0;
  let binary = 0;
  for (const m of worker.modules) {
    if (SOURCE_TYPES.has(m.type)) source += m.contents.byteLength;
    else binary += m.contents.byteLength;
  }
  return [source, binary];
};

/**
 * The trivial Worker that stands in for `worker`: the same name, compatibility and bindings (its Durable Object
 * namespaces, services, variables and secrets, so workerd sets up the same storage and bindings for both), a script
 * of a few lines that answers any request as a success and exports a stub for each of its Durable Object classes,
 * padded to as many bytes as `worker`'s modules: a comment for its source, a data module (bytes workerd only holds) for
 * its WebAssembly. Miniflare's encoding of a module's bytes into workerd's config grows with their size faster than
 * linearly (capnp-es grows its one segment by copying it): a stand-in carrying a 167 KiB comment started 57 ms later
 * than a bare one through Miniflare, 4 ms later straight on workerd. With the same bytes on both sides that harness
 * cost cancels, and what differs is compiling and evaluating the Worker's modules (its WebAssembly included) and its
 * first answer. The padding also cancels workerd's own intake of the bytes (those 4 ms per 167 KiB), which a deployed
 * Worker pays too: the figure understates by about that.
 */
export function standIn(worker) {
  const { modules, modulesRules: _rules, scriptPath: _path, script: _script, ...bindings } = worker;
  const stubs = ownObjectClasses(worker).map((c) => `export class ${c} { fetch() { return new Response(null, { status: 204 }); } }`);
  const code = [TRIVIAL, ...stubs].join("\n");
  const [source, binary] = moduleBytes(worker);
  const padding = Math.max(0, source - Buffer.byteLength(code) - 5);
  const entry = { type: "ESModule", path: modules[0].path, contents: Buffer.from(`${code}\n/*${" ".repeat(padding)}*/`) };
  const data = binary === 0 ? [] : [{ type: "Data", path: join(worker.modulesRoot, "stand-in-padding.bin"), contents: Buffer.alloc(binary) }];
  return { ...bindings, modules: [entry, ...data] };
}

/** The median (the lower middle one of an even count) and the max of `values`. */
export function medianAndMax(values) {
  if (values.length === 0) throw new Error("no start was measured");
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.ceil(sorted.length / 2) - 1], max: sorted[sorted.length - 1] };
}

/**
 * The subjects BENCH_COLD_ONLY names (`echo,gateway`: the Workers whose names hold one of those words), every one when
 * it is unset or empty; a word that picks no Worker is an error naming it, never a run that measures nothing.
 */
export function pickSubjects(subjects, only) {
  const words = (only ?? "")
    .split(",")
    .map((w) => w.trim())
    .filter((w) => w !== "");
  if (words.length === 0) return subjects;
  const unknown = words.filter((w) => !subjects.some((s) => titleOf(s).includes(w)));
  if (unknown.length > 0) throw new Error(`BENCH_COLD_ONLY: no Worker's name holds ${unknown.map((w) => `"${w}"`).join(", ")}`);
  return subjects.filter((s) => words.some((w) => titleOf(s).includes(w)));
}

/** How a subject is named: its Worker's name, and the build when a Worker has two (the 1Password bundle's `connect`). */
const titleOf = (s) => s.title ?? s.worker.name;

/** PASS when the median own start is at most the target (limits are inclusive), else MISS. */
export const coldVerdict = (medianMs, targetMs) => (medianMs <= targetMs ? "PASS" : "MISS");

/** A Durable Object binding to a class another Worker defines (the bundles' CALLS): that Worker is not in the runtime. */
const withoutForeignObjects = (worker) => ({
  ...worker,
  durableObjects: Object.fromEntries(Object.entries(worker.durableObjects ?? {}).filter(([, d]) => typeof d !== "object" || d.scriptName === undefined)),
});

const holdsWasm = (worker) => worker.modules.some((m) => m.type === "CompiledWasm");

/** What wrangler's build emits beside the JavaScript, as Miniflare's own default rules read it. */
const DEFAULT_RULES = [
  { type: "CompiledWasm", include: ["**/*.wasm"] },
  { type: "Text", include: ["**/*.txt", "**/*.html"] },
  { type: "Data", include: ["**/*.bin"] },
];

/**
 * `worker` with its build's modules listed, read once before any start. Given only the entry, Miniflare finds the
 * other modules by parsing the JavaScript in Node (acorn, with locations): 1-2 s for a 1.5 MB bundle on this machine,
 * a cost of the local harness that no deployed Worker pays, and that would have been most of the figure.
 */
export function withListedModules(worker) {
  const rules = compileModuleRules([...(worker.modulesRules ?? []), ...DEFAULT_RULES]);
  const files = readdirSync(worker.modulesRoot)
    .filter((f) => f !== "README.md" && !f.endsWith(".map"))
    .map((f) => join(worker.modulesRoot, f));
  const modules = [worker.scriptPath, ...files.filter((f) => f !== worker.scriptPath)].flatMap((path) => {
    const rule = rules.find((r) => testRegExps(r.include, path));
    return rule === undefined ? [] : [{ type: rule.type, path, contents: readFileSync(path) }];
  });
  const { scriptPath: _entry, modulesRules: _rules, ...rest } = worker;
  return { ...rest, modules };
}

/** A bundle's first mount in the dev roster (its .dev.vars carry that mount's settings), else its manifest's first. */
function firstMount(bundle, dir, bindingOf) {
  const roster = parseYaml(readFileSync(join(ROOT, DEV_ROSTER), "utf8"));
  const server = (roster?.servers ?? []).find((s) => s.kind === "bundle" && bindingOf.get(s.bundle) === bundle.name && typeof s.path === "string");
  if (server !== undefined) return server.path;
  const { mounts } = JSON.parse(readFileSync(join(ROOT, "bundles", dir, "bundle.json"), "utf8"));
  if (Array.isArray(mounts) && mounts.length > 0) return mounts[0];
  throw new Error(`${bundle.name}: no mount to ask (neither ${DEV_ROSTER} nor bundles/${dir}/bundle.json names one)`);
}

const healthz = async (url) => {
  const response = await fetch(`${url}/healthz`);
  await response.body?.cancel();
  return response.status === 200 ? undefined : `GET /healthz answered HTTP ${response.status}`;
};

const toolsList = (mount) => async (url) => {
  const response = await fetch(`${url}${mount}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_META["io.modelcontextprotocol/protocolVersion"],
      "mcp-method": "tools/list",
      "accept-encoding": "identity",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: MODERN_META } }),
  });
  const text = await response.text();
  // The status only: an answer's body is never echoed into an error.
  return response.status === 200 && text.includes('"result"') ? undefined : `tools/list on ${mount} answered HTTP ${response.status} without a result`;
};

/**
 * What each deployed Worker needs to answer, built as deployed under `into`: `{ name, label, request, target, runtime(entry) }`
 * where `runtime` puts `entry` (the Worker, or its stand-in) among its companions.
 */
export function coldSubjects(into) {
  const found = discoverWorkers();
  // The gateway as it deploys: its production entry and the checked-in roster (worker/index.ts, strad.config.yaml). Its
  // dev entry carries the dev roster, eight times as long and parsed at the start; the bundles' props are the same.
  const gateway = withListedModules(buildWorker(found.gateway.config, { into, production: true }));
  const bindingOf = new Map(Object.entries(gateway.serviceBindings ?? {}).map(([binding, s]) => [binding, typeof s === "object" ? s?.name : s]));
  const subjects = [];
  // The gateway's bundles answer as trivial Workers: only the gateway's own start is measured.
  const stubs = [...new Set(bindingOf.values())].filter((n) => typeof n === "string").map((name) => trivialWorker(name, gateway));
  subjects.push({ worker: gateway, label: "GET /healthz", request: healthz, target: COLD_START_TARGET_MS, runtime: (entry) => [entry, ...stubs] });
  for (const b of found.bundles) {
    const bundle = withListedModules(withoutForeignObjects(buildWorker(b.config, { into })));
    const mount = firstMount(bundle, b.dir, bindingOf);
    const forwarder = referenceTo("direct", bundle, gatewayPropsFor(gateway, bundle));
    // The 1Password SDK's build carries its WebAssembly core: held to Cloudflare's start limit, not the 100 ms.
    const sdk = b.dir === "onepassword" && holdsWasm(bundle);
    subjects.push({
      worker: bundle,
      label: `tools/list ${mount}`,
      request: toolsList(mount),
      target: sdk ? PLATFORM_START_LIMIT_MS : COLD_START_TARGET_MS,
      note: sdk ? "the 1Password SDK build, against Cloudflare's 1 s start limit" : undefined,
      runtime: (entry) => [forwarder, entry],
    });
    // The Connect-only build an operator may deploy instead (wrangler.toml [env.connect]): no WebAssembly, the 100 ms.
    if (b.dir === "onepassword") {
      const only = withListedModules(withoutForeignObjects(buildWorker(b.config, { into: join(into, "connect"), env: "connect" })));
      subjects.push({ worker: only, title: `${only.name} (connect)`, label: `tools/list ${mount}`, request: toolsList(mount), target: COLD_START_TARGET_MS, runtime: (entry) => [forwarder, entry] });
    }
  }
  subjects.push({ worker: withListedModules(buildWorker(found.approvals.config, { into })), label: "GET /healthz", request: healthz, target: COLD_START_TARGET_MS, runtime: (entry) => [entry] });
  return subjects;
}

/**
 * A fresh runtime of `workers`, from the call to the first successful answer of `request`, in ms, and of that the part
 * after the runtime was ready (the first request itself: workerd evaluated every global scope before it listened).
 */
async function timedStart(name, workers, request) {
  const started = performance.now();
  const runtime = await startRuntime(workers, { v8Flags: [] });
  const ready = performance.now();
  try {
    for (const deadline = started + 60_000; ; ) {
      let problem;
      try {
        problem = await request(runtime.url);
      } catch (error) {
        // Not listening yet: ask again until the deadline.
        problem = error instanceof Error ? error.message : String(error);
        if (performance.now() < deadline) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
      }
      if (problem !== undefined) throw new Error(`${name}: ${problem}`);
      const answered = performance.now();
      return { total: answered - started, answer: answered - ready };
    }
  } finally {
    await runtime.stop();
  }
}

const ms = (value) => `${value.toFixed(1).padStart(6)} ms`;

/** Part 6: `starts` cold starts of each Worker and of its stand-in beside it, one line each. */
export async function coldStarts(starts, log = console.log) {
  const into = mkdtempSync(join(tmpdir(), "strad-cold-"));
  try {
    const subjects = pickSubjects(coldSubjects(into), process.env.BENCH_COLD_ONLY);
    const own = subjects.map(() => []);
    const ownAnswer = subjects.map(() => []);
    const whole = subjects.map(() => []);
    const reference = subjects.map(() => []);
    for (let round = 0; round < starts; round++) {
      for (const [k, s] of subjects.entries()) {
        // Each pair alternates which starts first, so neither always meets a warmer page cache or a busier core.
        const worker = () => timedStart(s.worker.name, s.runtime(s.worker), s.request);
        const stand = () => timedStart(`${s.worker.name}'s stand-in`, s.runtime(standIn(s.worker)), s.request);
        let a;
        let b;
        if (round % 2 === 0) {
          a = await worker();
          b = await stand();
        } else {
          b = await stand();
          a = await worker();
        }
        whole[k].push(a.total);
        reference[k].push(b.total);
        own[k].push(a.total - b.total);
        ownAnswer[k].push(a.answer - b.answer);
      }
    }
    for (const [k, s] of subjects.entries()) {
      const { median, max } = medianAndMax(own[k]);
      const target = `target median <= ${s.target} ms${s.note === undefined ? "" : `, ${s.note}`}`;
      log(
        `   ${titleOf(s).padEnd(34)} ${s.label.padEnd(28)} own start median ${ms(median)}, max ${ms(max)}, of which the first request ${ms(medianAndMax(ownAnswer[k]).median)} (runtime start to answer median ${ms(medianAndMax(whole[k]).median)}, stand-in ${ms(medianAndMax(reference[k]).median)}) (${target}): ${coldVerdict(median, s.target)}`,
      );
    }
  } finally {
    rmSync(into, { recursive: true, force: true });
  }
}
