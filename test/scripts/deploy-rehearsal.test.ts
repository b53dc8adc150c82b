// Covers the deploy rehearsal (issue 30): `npm run deploy -- --first`, the secrets seeded with `wrangler secret put` and
// `wrangler secret bulk`, then a second `npm run deploy`, run for real against a local stand-in for the Cloudflare API
// (test/fakes/cloudflare-api/), checking every upload's metadata and the order, and that nothing leaves the machine;
// and that the stand-in answers as docs/deploy.md's list of assumptions says.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { GATEWAY_PROPS } from "../../bundles/kit/gateway-only";
import { type DeployWorker, planDeploy, type Secret } from "../../scripts/deploy-check";
// @ts-expect-error: plain ESM helper without types
import { discoverWorkers, ROOT } from "../../scripts/workers.mjs";
import type { Binding } from "../fakes/cloudflare-api/account";
import { type CloudflareApiStandIn, type RecordedRequest, startCloudflareApi } from "../fakes/cloudflare-api/cloudflare-api.fake";
import { type OutboundTrap, startOutboundTrap } from "../fakes/cloudflare-api/outbound-trap";
import { copyTree, fillPlaceholders } from "./helpers/tree";

// Measured on this 2-core machine under the other sessions' load: one `npm run deploy` takes 100-150 s (deploy:check's
// gate builds all 8 Workers with `wrangler deploy --dry-run`, then each upload builds its Worker again, 3-8 s each;
// the 1Password bundle's WASM is the slowest). A deploy may take three times that before we call it hung.
const DEPLOY_TIMEOUT_MS = 360_000;
// One `wrangler secret put` or `secret bulk`: a wrangler start and two or three API calls, about 3 s; same margin.
const SECRET_TIMEOUT_MS = 60_000;
// The whole rehearsal: three deploys (one refused after its build gate) and four secret commands, each at its cap.
const REHEARSAL_TIMEOUT_MS = 3 * DEPLOY_TIMEOUT_MS + 4 * SECRET_TIMEOUT_MS;

const TSX = join(ROOT, "node_modules/.bin/tsx");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

/** What the checks read of a Worker's config, as wrangler reads it. */
interface WorkerConfig {
  compatibility_date?: string;
  compatibility_flags?: string[];
  services?: { binding: string; service: string; props?: unknown }[];
  vars?: Record<string, unknown>;
  durable_objects?: { bindings?: { name: string; class_name: string; script_name?: string }[] };
  migrations: ({ tag: string } & Record<string, unknown>)[];
  workers_dev?: boolean;
  preview_urls?: boolean;
  routes?: unknown[];
  route?: unknown;
}

interface Run {
  status: number;
  output: string;
}

/** Every value of every .dev.vars.example in the tree that could identify it (as deploy:check reads them). */
function devValues(root: string, configs: string[]): string[] {
  const values: string[] = [];
  for (const config of configs) {
    let text = "";
    try {
      text = readFileSync(join(root, config.replace(/wrangler\.toml$/, ".dev.vars.example")), "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      const m = /^\s*[A-Za-z_][A-Za-z0-9_]*\s*=\s*"?([^"]*)"?\s*$/.exec(line);
      if (m?.[1] !== undefined && m[1].length >= 6 && !/^(?:true|false|\d+)$/.test(m[1])) values.push(m[1]);
    }
  }
  return values;
}

describe("a deploy rehearsed against a local stand-in for the Cloudflare API", () => {
  let api: CloudflareApiStandIn;
  let trap: OutboundTrap;
  let root: string;
  let scratch: string;
  let env: Record<string, string>;
  const phases: Record<"refused" | "draft" | "first" | "seed" | "second", { run: Run[]; requests: RecordedRequest[] }> = {
    refused: { run: [], requests: [] },
    draft: { run: [], requests: [] },
    first: { run: [], requests: [] },
    seed: { run: [], requests: [] },
    second: { run: [], requests: [] },
  };
  let workers: { name: string; config: string; role: "gateway" | "bundle" | "approvals" }[];
  let secrets: Secret[];
  /** Each Worker as the deploy sees it: its top-level [vars] with the roster's env rendered for it (`--var`). */
  let planned: DeployWorker[];
  const seeded = new Map<string, string>();

  const run = (cmd: string, args: string[], timeout: number, input?: string, options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(cmd, args, { cwd: options.cwd ?? root, env: options.env ?? env, timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: `${stdout}${stderr}` });
      });
      child.stdin?.end(input ?? "");
    });
  const deploy = (...args: string[]) => run(TSX, [join(ROOT, "scripts/deploy.ts"), "--root", root, ...args], DEPLOY_TIMEOUT_MS);
  const phase = async (name: keyof typeof phases, steps: () => Promise<Run[]>) => {
    const from = api.requests.length;
    phases[name].run = await steps();
    phases[name].requests = api.requests.slice(from);
  };
  const uploads = (name: keyof typeof phases) => phases[name].requests.filter((r) => (r.route === "script.put" || r.route === "version.post") && r.status === 200);
  // Read once, before the tree copy is removed (after the first test).
  const configs = new Map<string, WorkerConfig>();
  const config = (w: { name: string }) => configs.get(w.name) as WorkerConfig;
  let dev: string[];
  const byRole = (role: string) => workers.filter((w) => w.role === role);
  const gateway = () => byRole("gateway")[0] as (typeof workers)[number];

  beforeAll(async () => {
    root = copyTree();
    fillPlaceholders(root);
    scratch = mkdtempSync(join(tmpdir(), "strad-rehearsal-"));
    api = await startCloudflareApi({ zones: { "acme.dev": "5f1c0f0e8e2a4f6b9d7c3a1b2e4d6f80" } });
    trap = await startOutboundTrap();
    env = {};
    // Nothing of this machine's own Cloudflare, wrangler or proxy settings reaches the rehearsal.
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(?:CLOUDFLARE_|CF_|WRANGLER_)|_proxy$/i.test(k)) env[k] = v;
    Object.assign(env, {
      CLOUDFLARE_API_BASE_URL: api.baseUrl,
      CLOUDFLARE_API_TOKEN: api.token,
      CLOUDFLARE_ACCOUNT_ID: api.accountId,
      XDG_CONFIG_HOME: join(scratch, "xdg"),
      // Telemetry and error reports off; no banner, so no update check against the npm registry.
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_SEND_ERROR_REPORTS: "false",
      WRANGLER_HIDE_BANNER: "true",
      // Anything wrangler would still send elsewhere goes to the trap instead: its fetches through the proxy (only the
      // stand-in's 127.0.0.1 is exempt), the update check (node:https, no proxy) through the registry setting.
      HTTPS_PROXY: trap.url,
      HTTP_PROXY: trap.url,
      https_proxy: trap.url,
      http_proxy: trap.url,
      NO_PROXY: "127.0.0.1",
      no_proxy: "127.0.0.1",
      npm_config_registry: `${trap.url}/`,
      FORCE_COLOR: "0",
      NO_COLOR: "1",
    });
    const found = discoverWorkers(root);
    workers = [
      ...found.bundles.map((b: { name: string; config: string }) => ({ ...b, role: "bundle" as const })),
      { ...found.approvals, role: "approvals" as const },
      { ...found.gateway, role: "gateway" as const },
    ];
    for (const w of workers) configs.set(w.name, unstable_readConfig({ config: join(root, w.config) }, { hideWarnings: true }) as WorkerConfig);
    dev = devValues(
      root,
      workers.map((w) => w.config),
    );
    const plan = planDeploy(root);
    secrets = plan.secrets;
    planned = plan.workers;
    for (const s of secrets) seeded.set(`${s.config}\u0000${s.name}`, `rehearsal-${s.name.toLowerCase()}-${crypto.randomUUID()}`);
    const value = (s: Secret) => seeded.get(`${s.config}\u0000${s.name}`) as string;
    const approvals = byRole("approvals")[0] as (typeof workers)[number];
    const early = secrets.find((s) => s.config === approvals.config) as Secret;

    // A new account: without --first the first bundle cannot bind CallRegistry on a gateway that does not exist.
    await phase("refused", async () => [await deploy()]);
    // docs/deploy.md §4: a secret may be seeded before the first deploy (wrangler creates the Worker to hold it).
    await phase("draft", async () => [await run(WRANGLER, ["secret", "put", early.name, "-c", early.config], SECRET_TIMEOUT_MS, value(early))]);
    await phase("first", async () => [await deploy("--first")]);
    // The rest as deploy:check prints them: `secret put` for the approval service, `secret bulk` for the others.
    await phase("seed", async () => {
      const runs: Run[] = [];
      for (const w of workers) {
        const mine = secrets.filter((s) => s.config === w.config && s !== early);
        if (mine.length === 0) continue;
        if (w.role === "approvals") {
          for (const s of mine) runs.push(await run(WRANGLER, ["secret", "put", s.name, "-c", s.config], SECRET_TIMEOUT_MS, value(s)));
        } else {
          const file = join(scratch, `${w.name}.secrets.json`);
          writeFileSync(file, JSON.stringify(Object.fromEntries(mine.map((s) => [s.name, value(s)]))));
          runs.push(await run(WRANGLER, ["secret", "bulk", file, "-c", w.config], SECRET_TIMEOUT_MS));
        }
      }
      return runs;
    });
    await phase("second", async () => [await deploy()]);
  }, REHEARSAL_TIMEOUT_MS);

  afterAll(async () => {
    await api?.close();
    await trap?.close();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  it("every step succeeds but the deploy without --first on a new account, and no request leaves the machine", () => {
    for (const name of ["draft", "first", "seed", "second"] as const)
      for (const r of phases[name].run) expect({ name, status: r.status, output: r.status === 0 ? "" : r.output }).toEqual({ name, status: 0, output: "" });
    expect(api.unknown.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(trap.hits).toEqual([]);
    expect(phases.second.run[0]?.output).toMatch(/deployed \d+ steps/);
  });

  it("without --first, a new account refuses the first bundle's CallRegistry binding and the deploy stops there, uploading nothing", () => {
    const [refused] = phases.refused.run;
    expect(refused?.status).toBe(1);
    expect(refused?.output).toContain("deploy stopped at step 1");
    const attempts = phases.refused.requests.filter((r) => r.route === "script.put");
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ script: byRole("bundle")[0]?.name, status: 400, error: expect.stringContaining("in script 'strad-gateway' that does not exist. [code: 10061]") });
    expect(uploads("refused")).toEqual([]);
  });

  it("--first uploads the gateway without its service bindings, then every bundle and the approval service, then the whole gateway", () => {
    const names = byRole("bundle").map((w) => w.name);
    expect(uploads("first").map((u) => u.script)).toEqual([gateway().name, ...names, byRole("approvals")[0]?.name, gateway().name]);
    const bootstrap = uploads("first")[0]?.upload?.metadata.bindings ?? [];
    expect(bootstrap.filter((b) => b.type === "service")).toEqual([]);
    expect(bootstrap).toContainEqual({ name: "CALLS", type: "durable_object_namespace", class_name: "CallRegistry" });
    // New scripts are whole uploads; the gateway, existing by the end, gets a new version deployed at 100 %.
    expect(uploads("first").map((u) => u.route)).toEqual([...Array(workers.length).fill("script.put"), "version.post"]);
  });

  it("a later deploy uploads every bundle and the approval service before the gateway, each a new version deployed at once", () => {
    expect(uploads("second").map((u) => u.script)).toEqual(workers.map((w) => w.name));
    for (const u of uploads("second")) {
      expect(u.route).toBe("version.post");
      const next = phases.second.requests.find((r) => r.seq > u.seq && r.script === u.script && r.route === "deployment.post");
      expect(next).toMatchObject({ status: 200, body: { strategy: "percentage", versions: [{ percentage: 100 }] } });
    }
    for (const w of workers) expect(api.account.script(w.name).deployed).toBe(api.account.script(w.name).versions.at(-1)?.id);
  });

  it("every upload's bindings are its wrangler.toml's, binding for binding: Durable Objects, services (none in the gateway's bootstrap) and vars", () => {
    const sorted = (list: Binding[]) => [...list].sort((a, b) => `${a.type} ${a.name}`.localeCompare(`${b.type} ${b.name}`));
    /** What the Worker's config (as wrangler reads it) and the deploy's --var say its upload binds. */
    const expected = (w: (typeof workers)[number], bootstrap: boolean): Binding[] => {
      const c = config(w);
      const objects = (c.durable_objects?.bindings ?? []).map((b) => ({
        name: b.name,
        type: "durable_object_namespace",
        class_name: b.class_name,
        ...(b.script_name !== undefined && { script_name: b.script_name }),
      }));
      const services = bootstrap ? [] : (c.services ?? []).map((s) => ({ name: s.binding, type: "service", service: s.service, ...(s.props !== undefined && { props: s.props }) }));
      const vars = Object.entries(planned.find((p) => p.name === w.name)?.vars ?? {}).map(([name, text]) => ({ name, type: "plain_text", text }));
      return sorted([...objects, ...services, ...vars] as Binding[]);
    };
    const all = [...uploads("first"), ...uploads("second")];
    expect(all).toHaveLength(2 * workers.length + 1);
    for (const u of all) {
      const w = workers.find((x) => x.name === u.script) as (typeof workers)[number];
      const bootstrap = u === uploads("first")[0];
      expect({ script: u.script, bootstrap, bindings: sorted(u.upload?.metadata.bindings ?? []) }).toEqual({ script: u.script, bootstrap, bindings: expected(w, bootstrap) });
    }
    // Named, so a config that lost one fails here and not only against itself.
    for (const u of all.filter((x) => x.script === gateway().name)) {
      const objects = (u.upload?.metadata.bindings ?? []).filter((b: Binding) => b.type === "durable_object_namespace");
      expect(sorted(objects)).toEqual([
        { name: "CALLS", type: "durable_object_namespace", class_name: "CallRegistry" },
        { name: "ROSTER_OVERLAY", type: "durable_object_namespace", class_name: "RosterOverlay" },
      ]);
    }
    const approvals = byRole("approvals")[0] as (typeof workers)[number];
    for (const u of all.filter((x) => x.script === approvals.name)) {
      const bindings = u.upload?.metadata.bindings ?? [];
      expect(bindings).toContainEqual({ name: "SESSIONS", type: "durable_object_namespace", class_name: "SessionStore" });
      const vars = bindings.filter((b: Binding) => b.type === "plain_text").map((b: Binding) => b.name);
      expect(vars.sort()).toEqual(Object.keys(config(approvals).vars ?? {}).sort());
      expect(vars).toEqual(expect.arrayContaining(["ACCESS_TEAM_DOMAIN", "ACCESS_AUD", "RETENTION_SECONDS"]));
    }
  });

  it("every upload of every bundle binds the gateway's CallRegistry as CALLS by script name strad-gateway", () => {
    const bundles = new Set(byRole("bundle").map((w) => w.name));
    const all = [...uploads("first"), ...uploads("second")].filter((u) => bundles.has(u.script ?? ""));
    expect(all).toHaveLength(2 * bundles.size);
    for (const u of all) expect(u.upload?.metadata.bindings).toContainEqual({ name: "CALLS", type: "durable_object_namespace", class_name: "CallRegistry", script_name: gateway().name });
  });

  it("the gateway's final upload of each deploy binds every bundle as a service, each with props from strad-gateway", () => {
    const expected = (config(gateway()).services ?? []).map((s) => ({ name: s.binding, type: "service", service: s.service, props: s.props }));
    expect(new Set(expected.map((s) => s.service))).toEqual(new Set(byRole("bundle").map((w) => w.name)));
    for (const name of ["first", "second"] as const) {
      const last = uploads(name).at(-1);
      expect(last?.script).toBe(gateway().name);
      const services = (last?.upload?.metadata.bindings ?? []).filter((b: Binding) => b.type === "service");
      expect(services).toEqual(expected);
      for (const s of services) expect(s.props).toEqual(GATEWAY_PROPS);
    }
  });

  it("migrations go once, with the Worker that defines the classes, and the second deploy sends none as new", () => {
    const defining = workers.filter((w) => config(w).migrations.length > 0);
    expect(defining.map((w) => w.name).sort()).toEqual(expect.arrayContaining([gateway().name, byRole("approvals")[0]?.name]));
    for (const w of workers) {
      const mine = [...uploads("first"), ...uploads("second")].filter((u) => u.script === w.name && u.upload?.metadata.migrations !== undefined);
      const migrations = config(w).migrations;
      if (migrations.length === 0) {
        expect(mine).toEqual([]);
        continue;
      }
      // Exactly one upload carries them, the Worker's first in the first deploy, applied on no tag (a draft has none).
      expect(mine).toHaveLength(1);
      expect(mine[0]).toBe(uploads("first").find((u) => u.script === w.name));
      expect(mine[0]?.upload?.metadata.migrations).toEqual({ new_tag: migrations.at(-1)?.tag, steps: migrations.map(({ tag: _tag, ...rest }) => rest) });
      expect(api.account.script(w.name).migrationTag).toBe(migrations.at(-1)?.tag);
    }
  });

  it("each upload carries its wrangler.toml's compatibility date and flags", () => {
    for (const u of [...uploads("first"), ...uploads("second")]) {
      const c = config(workers.find((w) => w.name === u.script) as (typeof workers)[number]);
      expect({ script: u.script, date: u.upload?.metadata.compatibility_date, flags: u.upload?.metadata.compatibility_flags }).toEqual({
        script: u.script,
        date: c.compatibility_date,
        flags: c.compatibility_flags,
      });
    }
  });

  it("every upload keeps the Worker's own logs on and invocation logs (request headers) off", () => {
    for (const u of [...uploads("first"), ...uploads("second")]) {
      const o = u.upload?.metadata.observability as { enabled?: boolean; logs?: { invocation_logs?: boolean } } | undefined;
      expect({ script: u.script, enabled: o?.enabled, invocationLogs: o?.logs?.invocation_logs }).toEqual({ script: u.script, enabled: true, invocationLogs: false });
    }
  });

  it("every Worker but the gateway turns workers.dev and Preview URLs off on each deploy; the gateway sends what its config says", () => {
    for (const name of ["first", "second"] as const) {
      const sent = phases[name].requests.filter((r) => r.route === "subdomain.post");
      for (const w of workers) {
        const bodies = sent.filter((r) => r.script === w.name).map((r) => r.body);
        const c = config(w);
        const want =
          w.role === "gateway"
            ? { enabled: c.workers_dev ?? ((c.routes ?? []).length === 0 && c.route === undefined), ...(c.preview_urls !== undefined && { previews_enabled: c.preview_urls }) }
            : { enabled: false, previews_enabled: false };
        expect({ worker: w.name, bodies }).toEqual({ worker: w.name, bodies: name === "first" && w.role === "gateway" ? [want, want] : [want] });
      }
    }
    for (const w of workers.filter((x) => x.role !== "gateway")) expect(api.account.script(w.name).subdomain).toEqual({ enabled: false, previews_enabled: false });
    expect(api.account.script(byRole("approvals")[0]?.name as string).domains.map((d) => d.hostname)).toEqual(["approvals.acme.dev"]);
  });

  it("secrets reach Cloudflare only through the secrets endpoints, survive both deploys, and no upload carries one or any dev value", () => {
    expect(secrets.length).toBeGreaterThan(0);
    const written = api.secretWrites.map((s) => `${s.script} ${s.name}`).sort();
    const planned = secrets.map((s) => `${workers.find((w) => w.config === s.config)?.name} ${s.name}`).sort();
    expect(written).toEqual(planned);
    for (const s of secrets) {
      const w = workers.find((x) => x.config === s.config) as (typeof workers)[number];
      expect(api.account.script(w.name).secrets.get(s.name)).toBe(seeded.get(`${s.config}\u0000${s.name}`));
    }
    const names = new Set(secrets.map((s) => s.name));
    const forbidden = [...seeded.values(), ...dev];
    expect(forbidden.length).toBeGreaterThan(secrets.length);
    const all = [...uploads("refused"), ...uploads("draft"), ...uploads("first"), ...uploads("second")];
    for (const u of all) {
      for (const b of u.upload?.metadata.bindings ?? []) {
        expect(b.type).not.toBe("secret_text");
        if (b.type === "plain_text") expect(names.has(b.name), `${u.script} sends ${b.name} as a plain var`).toBe(false);
      }
      for (const value of forbidden) expect(u.upload?.raw.includes(value), `${u.script}'s upload holds a secret or dev value`).toBe(false);
    }
    // Nor does any step print one.
    for (const r of Object.values(phases).flatMap((p) => p.run)) for (const value of seeded.values()) expect(r.output.includes(value)).toBe(false);
  });

  it(
    "the trap catches what would leave: wrangler without the stand-in's base URL reaches only the trap",
    async () => {
      const own = await startOutboundTrap();
      try {
        const { CLOUDFLARE_API_BASE_URL: _base, ...rest } = env;
        const proxies = { HTTPS_PROXY: own.url, HTTP_PROXY: own.url, https_proxy: own.url, http_proxy: own.url, npm_config_registry: `${own.url}/` };
        const r = await run(WRANGLER, ["secret", "list", "--name", gateway().name], SECRET_TIMEOUT_MS, "", { cwd: scratch, env: { ...rest, ...proxies } });
        expect(r.status).not.toBe(0);
        expect(own.hits).toContainEqual({ kind: "CONNECT", target: "api.cloudflare.com:443" });
        expect(own.hits.every((h) => h.kind === "CONNECT" && h.target.endsWith(".cloudflare.com:443"))).toBe(true);
      } finally {
        await own.close();
      }
    },
    // One wrangler start and one refused request: SECRET_TIMEOUT_MS's reasoning.
    SECRET_TIMEOUT_MS,
  );
});

describe("the Cloudflare API stand-in answers as docs/deploy.md says it assumes", () => {
  let api: CloudflareApiStandIn;
  const at = (path: string) => `${api.baseUrl}/accounts/${api.accountId}${path}`;
  const call = async (method: string, url: string, body?: unknown, token = api.token) => {
    const form = body instanceof FormData;
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && !form && { "content-type": "application/json" }) },
      body: form ? body : body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as { success: boolean; result: unknown; errors: { code: number; message: string }[] } };
  };
  /** A script upload as wrangler builds one: a metadata part and the main module. */
  const upload = (name: string, metadata: Record<string, unknown>, how: "PUT" | "version" = "PUT") => {
    const data = new FormData();
    data.set("metadata", JSON.stringify({ main_module: "index.js", compatibility_date: "2026-04-26", ...metadata }));
    data.set("index.js", new Blob(["export default { fetch() { return new Response('ok') } }"], { type: "application/javascript+module" }), "index.js");
    return how === "PUT" ? call("PUT", at(`/workers/scripts/${name}`), data) : call("POST", at(`/workers/scripts/${name}/versions`), data);
  };
  const code = (r: { json: { errors: { code: number }[] } }) => r.json.errors[0]?.code;
  const calls = { name: "CALLS", type: "durable_object_namespace", class_name: "CallRegistry", script_name: "gw" };
  const v1 = { new_tag: "v1", steps: [{ new_sqlite_classes: ["CallRegistry"] }] };

  beforeAll(async () => {
    api = await startCloudflareApi({ zones: { "acme.dev": "zone-acme" } });
  });
  afterAll(async () => {
    await api.close();
  });

  it("answers an endpoint it does not know 404 and records it as unknown, and refuses any other token", async () => {
    expect((await call("GET", `${api.baseUrl}/user/tokens/verify`)).status).toBe(404);
    expect(api.unknown.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /user/tokens/verify"]);
    const wrong = await call("GET", at("/workers/scripts"), undefined, `${api.token}x`);
    expect({ status: wrong.status, code: code(wrong) }).toEqual({ status: 403, code: 10000 });
  });

  it("refuses a Durable Object binding to a script that does not exist or does not implement the class, and an own class no migration created", async () => {
    expect(code(await upload("bundle", { bindings: [calls] }))).toBe(10061);
    expect((await upload("gw", {})).status).toBe(200);
    expect(code(await upload("bundle", { bindings: [calls] }))).toBe(10061);
    expect(code(await upload("gw", { bindings: [{ ...calls, script_name: undefined }] }))).toBe(10061);
    expect((await upload("gw", { bindings: [{ ...calls, script_name: undefined }], migrations: v1 })).status).toBe(200);
    expect((await upload("bundle", { bindings: [calls] })).status).toBe(200);
    expect(api.scripts().map((s) => s.name)).toEqual(["gw", "bundle"]);
  });

  it("refuses a service binding to a script that does not exist", async () => {
    const missing = await upload("caller", { bindings: [{ name: "X", type: "service", service: "nowhere" }] });
    expect({ status: missing.status, code: code(missing) }).toEqual({ status: 400, code: 10143 });
    expect((await upload("caller", { bindings: [{ name: "X", type: "service", service: "gw" }] })).status).toBe(200);
  });

  it("applies migrations only on the script's current tag, which the script list reports, and never creates a class twice", async () => {
    expect((await call("GET", at("/workers/scripts"))).json.result).toContainEqual(expect.objectContaining({ id: "gw", migration_tag: "v1" }));
    expect(code(await upload("gw", { migrations: v1 }))).toBe(10079);
    expect(code(await upload("gw", { migrations: { ...v1, old_tag: "v0", new_tag: "v2" } }))).toBe(10079);
    expect(code(await upload("gw", { migrations: { old_tag: "v1", new_tag: "v2", steps: [{ new_sqlite_classes: ["CallRegistry"] }] } }))).toBe(10074);
    expect(code(await upload("gw", { migrations: v1 }, "version"))).toBe(10211);
    expect((await upload("gw", { bindings: [{ ...calls, script_name: undefined }], migrations: { old_tag: "v1", new_tag: "v2", steps: [{ new_classes: ["Other"] }] } })).status).toBe(200);
    expect(api.account.script("gw").migrationTag).toBe("v2");
  });

  it("keeps the secrets set through the secrets endpoint across a whole upload and a deployed version, and answers 10007 for a missing script", async () => {
    expect(code(await call("PUT", at("/workers/scripts/nobody/secrets"), { name: "S", text: "v", type: "secret_text" }))).toBe(10007);
    expect((await call("PUT", at("/workers/scripts/caller/secrets"), { name: "S", text: "kept", type: "secret_text" })).status).toBe(200);
    expect((await upload("caller", {})).status).toBe(200);
    const version = await upload("caller", {}, "version");
    const id = (version.json.result as { id: string }).id;
    expect((await call("POST", at("/workers/scripts/caller/deployments"), { strategy: "percentage", versions: [{ version_id: id, percentage: 100 }] })).status).toBe(200);
    expect(api.account.script("caller").deployed).toBe(id);
    expect([...api.account.script("caller").secrets]).toEqual([["S", "kept"]]);
    expect(api.secretWrites.map((w) => `${w.script} ${w.name} ${w.via}`)).toEqual(["caller S secret put"]);
    expect(JSON.stringify(api.requests.map((r) => r.body))).not.toContain("kept");
  });

  it("starts a new script with workers.dev off and Preview URLs on, and keeps a switch the request leaves out", async () => {
    expect((await call("GET", at("/workers/scripts/bundle/subdomain"))).json.result).toEqual({ enabled: false, previews_enabled: true });
    expect((await call("POST", at("/workers/scripts/bundle/subdomain"), { enabled: true })).json.result).toEqual({ enabled: true, previews_enabled: true });
    expect((await call("POST", at("/workers/scripts/bundle/subdomain"), { enabled: false, previews_enabled: false })).json.result).toEqual({ enabled: false, previews_enabled: false });
  });

  it("refuses a custom domain outside the account's zones", async () => {
    const body = (hostname: string) => ({ override_scope: true, origins: [{ hostname }] });
    expect((await call("PUT", at("/workers/scripts/gw/domains/records"), body("approvals.acme.dev"))).status).toBe(200);
    expect(code(await call("PUT", at("/workers/scripts/gw/domains/records"), body("approvals.elsewhere.dev")))).toBe(100117);
  });
});
