// Covers `npm run deploy:check` (scripts/deploy-check.ts, issue 14 #1-#2, issue 26): what `wrangler deploy` would ship of
// this tree is production only (no dev value, no loopback URL, no known secret, no dev roster, no public address but
// the gateway's), and every kind of development value or public address planted into a copy of the tree fails the
// check, naming the Worker and the binding; a scaffolded bundle passes it as written.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { dryRun } from "../../scripts/build-memo.mjs";
import {
  buildFlags,
  buildProblems,
  buildWorkers,
  chooseBuild,
  type DeployWorker,
  devValues,
  exposureProblems,
  parseTotalUpload,
  planDeploy,
  SIZE_LIMITS,
  secretsFor,
  sizeFindings,
} from "../../scripts/deploy-check";
// @ts-expect-error: plain ESM helper without types
import { createBundle } from "../../scripts/new-bundle.mjs";
// @ts-expect-error: plain ESM helper without types
import { discoverWorkers, ROOT } from "../../scripts/workers.mjs";
import { parseRoster } from "../../worker/roster-text";
import { addVar, copyTree, edit } from "./helpers/tree";

const TSX = join(ROOT, "node_modules/.bin/tsx");
const CHECK_TIMEOUT_MS = 300_000;
const ENV = { ...process.env, XDG_CONFIG_HOME: join(ROOT, ".xdg"), WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" };

function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, [join(ROOT, "scripts/deploy-check.ts"), ...args], { cwd: ROOT, env: ENV, timeout: CHECK_TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
  });
}

// Each test here spawns wrangler or tsx: a dry-run build took up to 18 s on a busy two-core machine (the 1Password
// bundle's 13 MiB), and the whole check builds every Worker, beside the rest of `npm test`: 300 s.
describe("the checked-in tree, as `wrangler deploy --dry-run` builds it", { timeout: CHECK_TIMEOUT_MS }, () => {
  const workers = discoverWorkers(ROOT);
  const deployed = [workers.gateway, ...workers.bundles, workers.approvals] as { name: string; config: string }[];
  const dev = devValues(ROOT, deployed);
  // One run of the whole check (it builds every Worker) serves both tests that read its output.
  let whole: ReturnType<typeof run> | undefined;
  const wholeRun = () => {
    whole ??= run([]);
    return whole;
  };

  it.each(deployed.map((w) => [w.name, w.config]))("%s shows no dev value, no loopback URL and no known secret", (_name, config) => {
    const outdir = mkdtempSync(join(tmpdir(), "strad-dry-"));
    let out: string;
    try {
      // `npm test`'s build memo: the same files built by the same arguments elsewhere in the run are not built again.
      out = dryRun({ root: ROOT, config, outdir, processEnv: ENV });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
    // The dry run lists the bindings it would deploy, vars with their values.
    expect(out).toMatch(/--dry-run: exiting now/);
    expect(out).not.toMatch(/127\.0\.0\.1|localhost|\[::1\]/);
    expect(out).not.toMatch(/DEV_MODE|ACCESS_EMULATION|STRAD_DEV_|SESSION_SECRET|OPERATOR_TOKEN|_REFRESH_TOKEN/);
    expect(dev.size).toBeGreaterThan(10);
    for (const value of dev.keys()) expect(out, value).not.toContain(value);
  });

  it(
    "passes deploy:check, lists the placeholders left and prints a secret put line for every secret the roster needs",
    async () => {
      const r = await wholeRun();
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      // Every Worker of the tree, bundles first (the order npm run deploy takes).
      const names = [...(workers.bundles as { name: string }[]).map((b) => b.name), "strad-approvals", "strad-gateway"];
      expect(names).toEqual(expect.arrayContaining(["strad-bundle-echo", "strad-bundle-google"]));
      expect(r.stdout).toContain(`deploy:check ok: ${names.join(", ")} build as deployed`);
      expect(r.stdout).toContain("strad-approvals (approvals/wrangler.toml) [vars] ACCESS_AUD = <your-access-application-audience-tag>");
      expect(r.stdout).toContain("strad.config.yaml gateway.elicitation.allowedUrlPrefixes[0] = https://approvals.example.com/api/v1/elicitations/session/");
      const puts = r.stdout
        .split("\n")
        .filter((l) => l.trimStart().startsWith("wrangler secret put"))
        .map((l) => l.trim().split(/\s+/).slice(3, 6).join(" "));
      expect(puts).toEqual([
        "STRAD_TOKEN_ALICE -c wrangler.toml",
        "GMAIL_RW_EXTERNAL__APPROVALS_CF_ACCESS_CLIENT_ID -c wrangler.toml",
        "GMAIL_RW_EXTERNAL__APPROVALS_CF_ACCESS_CLIENT_SECRET -c wrangler.toml",
        "GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID -c bundles/google/wrangler.toml",
        "GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET -c bundles/google/wrangler.toml",
        "GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN -c bundles/google/wrangler.toml",
        "SESSION_SECRET -c approvals/wrangler.toml",
        "OPERATOR_TOKEN -c approvals/wrangler.toml",
      ]);
    },
    CHECK_TIMEOUT_MS,
  );

  it(
    "prints every Worker's upload and gzip size against the plan limits, and a warning naming each one over the Free plan's",
    async () => {
      const r = await wholeRun();
      expect(r.status).toBe(0);
      expect(r.stdout).toContain("Sizes as wrangler's dry run reports them (limits: 3 MiB compressed on Workers Free, 10 MiB on Workers Paid, 64 MiB uncompressed):");
      const sizes = [...r.stdout.matchAll(/^ {2}(\S+) \((\S+)\): upload ([\d.]+) (KiB|MiB) \/ gzip ([\d.]+) (KiB|MiB): (fits every plan|Workers Paid only)$/gm)];
      // Every deployed Worker, bundles first as deploy:check lists them, and nothing else.
      const order = [...(workers.bundles as { name: string; config: string }[]), workers.approvals, workers.gateway] as { name: string; config: string }[];
      expect(sizes.map((m) => [m[1], m[2]])).toEqual(order.map((w) => [w.name, w.config]));
      const bytes = (value: string | undefined, unit: string | undefined) => Number(value) * (unit === "MiB" ? 1024 * 1024 : 1024);
      for (const [, name, config, upload, uploadUnit, gzip, gzipUnit, verdict] of sizes) {
        expect(bytes(gzip, gzipUnit)).toBeGreaterThan(0);
        expect(bytes(gzip, gzipUnit)).toBeLessThan(bytes(upload, uploadUnit));
        const free = bytes(gzip, gzipUnit) <= SIZE_LIMITS.freeGzip;
        expect(verdict).toBe(free ? "fits every plan" : "Workers Paid only");
        // A Worker over the Free plan's limit is named on a warning line of its own; one within it never is.
        const warning = `  ! ${name} (${config}): ${gzip} ${gzipUnit} compressed is over the Workers Free plan's 3 MiB limit: it deploys on Workers Paid only`;
        if (free) expect(r.stdout).not.toContain(`  ! ${name} (`);
        else expect(r.stdout).toContain(warning);
      }
    },
    CHECK_TIMEOUT_MS,
  );

  it("an unknown argument prints the usage and exits 1", async () => {
    expect(await run(["--frobnicate"])).toMatchObject({ status: 1, stderr: expect.stringContaining("usage: npm run deploy:check") });
  });
});

describe("a planted development value fails the check, naming the Worker and the binding", { timeout: 60_000 }, () => {
  it.each<[string, (root: string) => void, string]>([
    ["DEV_MODE", (r) => addVar(r, "approvals/wrangler.toml", 'DEV_MODE = "true"'), "strad-approvals (approvals/wrangler.toml) [vars] DEV_MODE: DEV_MODE is a development switch"],
    [
      "ACCESS_EMULATION, even off",
      (r) => addVar(r, "approvals/wrangler.toml", 'ACCESS_EMULATION = "false"'),
      "strad-approvals (approvals/wrangler.toml) [vars] ACCESS_EMULATION: ACCESS_EMULATION is a development switch",
    ],
    [
      "the echo test probes",
      (r) => addVar(r, "bundles/echo/wrangler.toml", 'STRAD_DEV_PROBES = "1"'),
      "strad-bundle-echo (bundles/echo/wrangler.toml) [vars] STRAD_DEV_PROBES: STRAD_DEV_PROBES is a development switch",
    ],
    ["the gateway's dev routes", (r) => addVar(r, "wrangler.toml", 'STRAD_DEV_ROUTES = "1"'), "strad-gateway (wrangler.toml) [vars] STRAD_DEV_ROUTES: STRAD_DEV_ROUTES is a development switch"],
    [
      "a value of a .dev.vars.example",
      (r) => addVar(r, "bundles/echo/wrangler.toml", 'LABEL = "dev-gmail-client-person"'),
      "strad-bundle-echo (bundles/echo/wrangler.toml) [vars] LABEL: LABEL holds the development value of bundles/google/.dev.vars.example (GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID)",
    ],
    [
      "the Gmail fake's URL",
      (r) => addVar(r, "bundles/google/wrangler.toml", 'GMAIL_API_BASE_URL = "http://127.0.0.1:8789/gmail"'),
      "strad-bundle-google (bundles/google/wrangler.toml) [vars] GMAIL_API_BASE_URL: GMAIL_API_BASE_URL points at a loopback host (http://127.0.0.1:8789)",
    ],
    [
      "a loopback URL that is not a dev value",
      (r) => addVar(r, "bundles/google/wrangler.toml", 'GMAIL_TOKEN_URL = "https://localhost/token"'),
      "strad-bundle-google (bundles/google/wrangler.toml) [vars] GMAIL_TOKEN_URL: GMAIL_TOKEN_URL points at a loopback host (https://localhost)",
    ],
    [
      "an http: URL in a list",
      (r) => addVar(r, "bundles/google/wrangler.toml", 'GMAIL_ATTACHMENT_URL_PREFIXES = "https://files.corp.test/a/, http://files.corp.test/b/"'),
      "strad-bundle-google (bundles/google/wrangler.toml) [vars] GMAIL_ATTACHMENT_URL_PREFIXES: GMAIL_ATTACHMENT_URL_PREFIXES is an http: URL (http://files.corp.test)",
    ],
    [
      "a secret in plain [vars]",
      (r) => addVar(r, "approvals/wrangler.toml", 'SESSION_SECRET = "a-production-looking-secret-value-0123456789"'),
      "strad-approvals (approvals/wrangler.toml) [vars] SESSION_SECRET: SESSION_SECRET is a secret in plain [vars]",
    ],
    [
      "a mount's credential in plain [vars]",
      (r) => addVar(r, "bundles/google/wrangler.toml", 'GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN = "1//0abc"'),
      "strad-bundle-google (bundles/google/wrangler.toml) [vars] GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN is a secret in plain [vars]",
    ],
    [
      "a dev poll interval",
      (r) => addVar(r, "bundles/echo/wrangler.toml", 'STRAD_POLL_INTERVAL_MS = "999"'),
      "strad-bundle-echo (bundles/echo/wrangler.toml) [vars] STRAD_POLL_INTERVAL_MS: STRAD_POLL_INTERVAL_MS=999 is a development interval (production: unset, or at least 1000 ms)",
    ],
    [
      "a dev keepalive",
      (r) => addVar(r, "bundles/google/wrangler.toml", 'STRAD_KEEPALIVE_MS = "500"'),
      "strad-bundle-google (bundles/google/wrangler.toml) [vars] STRAD_KEEPALIVE_MS: STRAD_KEEPALIVE_MS=500 is a development interval (production: unset, or at least 5000 ms)",
    ],
    [
      "a missing Access audience",
      (r) => edit(r, "approvals/wrangler.toml", (t) => t.replace(/^ACCESS_AUD = .*$/m, "")),
      "strad-approvals (approvals/wrangler.toml) [vars] ACCESS_AUD: missing production setting",
    ],
    [
      "a loopback approval prefix in the roster",
      (r) => edit(r, "strad.config.yaml", (t) => t.replaceAll("https://approvals.example.com/", "http://127.0.0.1:8788/")),
      "strad.config.yaml gateway.elicitation.allowedUrlPrefixes[0]: http://127.0.0.1:8788/api/v1/elicitations/session/ is on a loopback host",
    ],
    [
      "an http: approval prefix in the roster",
      (r) => edit(r, "strad.config.yaml", (t) => t.replaceAll("https://approvals.example.com/", "http://approvals.corp.test/")),
      // The roster schema itself refuses it (R-CONF); the check reports the schema's words.
      "strad.config.yaml servers[1].approvalUrlPrefixes[0]: prefix must be https (plain http only for a loopback host)",
    ],
    [
      "a loopback remote server in the roster",
      (r) => edit(r, "strad.config.yaml", (t) => `${t.trimEnd()}\n  - slug: remote\n    kind: remote-http\n    url: http://127.0.0.1:8789/remote/mcp\n    entitlements: [user]\n`),
      "strad.config.yaml servers[2].url: http://127.0.0.1:8789/remote/mcp is on a loopback host",
    ],
    [
      "a dev credential written into the roster",
      (r) => edit(r, "strad.config.yaml", (t) => t.replace('"${APPROVALS_CF_ACCESS_CLIENT_SECRET}"', '"dev-access-client-secret-0123456789abcdef"')),
      "strad.config.yaml servers[1].confirmationHeaders.CF-Access-Client-Secret: holds the development value of approvals/.dev.vars.example (ACCESS_CLIENT_SECRET)",
    ],
    [
      "a roster env that overrides a config var",
      (r) => {
        addVar(r, "bundles/echo/wrangler.toml", 'GREETING = "hi"');
        edit(r, "strad.config.yaml", (t) => t.replace("    path: /echo\n    entitlements: [user]\n", "    path: /echo\n    entitlements: [user]\n    env:\n      GREETING: hello\n"));
      },
      "strad-bundle-echo (bundles/echo/wrangler.toml) GREETING: the roster's servers[].env renders GREETING, which the config's [vars] already sets",
    ],
  ])("%s", (_what, plant, problem) => {
    const root = copyTree();
    expect(planDeploy(root).errors).toEqual([]);
    plant(root);
    const { errors } = planDeploy(root);
    expect(errors).toEqual(expect.arrayContaining([expect.stringContaining(problem)]));
  });

  it("a gateway whose main is the dev entry builds the dev roster in, and the build check names it", () => {
    const root = copyTree();
    edit(root, "wrangler.toml", (t) => t.replace('main = "worker/index.ts"', 'main = "worker/dev.ts"'));
    const gateway = planDeploy(root).workers.filter((w) => w.role === "gateway");
    expect(gateway).toHaveLength(1);
    expect(buildProblems(root, gateway)).toEqual([
      "strad-gateway (wrangler.toml): the build holds the dev roster strad.dev.yaml; main must be worker/index.ts",
      "strad-gateway (wrangler.toml): the build does not hold the production roster strad.config.yaml",
    ]);
  }, 60_000);

  it("the script exits 1 and prints the problem on stderr", async () => {
    const root = copyTree();
    addVar(root, "approvals/wrangler.toml", 'DEV_MODE = "true"');
    const r = await run(["--root", root, "--no-build"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("deploy:check FAILED");
    expect(r.stderr).toContain("✗ strad-approvals (approvals/wrangler.toml) [vars] DEV_MODE: DEV_MODE is a development switch");
  }, 60_000);
});

// Each copies the whole tree and reads every config through wrangler: several seconds on a busy machine, so 60 s.
describe("issue 26: a public address on any Worker but the gateway fails the check, naming the Worker", { timeout: 60_000 }, () => {
  it.each<[string, (root: string) => void, string]>([
    [
      "preview_urls = true on a bundle",
      (r) => edit(r, "bundles/echo/wrangler.toml", (t) => t.replace(/^preview_urls = false$/m, "preview_urls = true")),
      "strad-bundle-echo (bundles/echo/wrangler.toml) preview_urls = true: only the gateway has a public address, and a Preview URL is public; set `preview_urls = false`",
    ],
    [
      "a bundle without preview_urls, left to the account's default",
      (r) => edit(r, "bundles/pads/wrangler.toml", (t) => t.replace(/^preview_urls = false\n/m, "")),
      "strad-bundle-pads (bundles/pads/wrangler.toml) preview_urls is not set: only the gateway has a public address",
    ],
    [
      "a missing workers_dev = false on a bundle",
      (r) => edit(r, "bundles/google/wrangler.toml", (t) => t.replace(/^workers_dev = false\n/m, "")),
      "strad-bundle-google (bundles/google/wrangler.toml) workers_dev is not set: only the gateway has a public address; set `workers_dev = false`",
    ],
    [
      "workers_dev = true on a bundle",
      (r) => edit(r, "bundles/approval-flow/wrangler.toml", (t) => t.replace(/^workers_dev = false$/m, "workers_dev = true")),
      "strad-bundle-approval-flow (bundles/approval-flow/wrangler.toml) workers_dev = true: only the gateway has a public address",
    ],
    [
      "a route on a bundle",
      (r) => edit(r, "bundles/echo/wrangler.toml", (t) => t.replace(/^preview_urls = false$/m, 'preview_urls = false\nroutes = [{ pattern = "echo.acme.dev", custom_domain = true }]')),
      "strad-bundle-echo (bundles/echo/wrangler.toml) routes: a bundle has no route",
    ],
    [
      "workers_dev = true on the approval service",
      (r) => edit(r, "approvals/wrangler.toml", (t) => t.replace(/^workers_dev = false$/m, "workers_dev = true")),
      "strad-approvals (approvals/wrangler.toml) workers_dev = true: only the gateway has a public address",
    ],
    [
      "a missing preview_urls = false on the approval service",
      (r) => edit(r, "approvals/wrangler.toml", (t) => t.replace(/^preview_urls = false\n/m, "")),
      "strad-approvals (approvals/wrangler.toml) preview_urls is not set",
    ],
    [
      "an approval service with no route",
      (r) => edit(r, "approvals/wrangler.toml", (t) => t.replace(/^routes = .*\n/m, "")),
      "strad-approvals (approvals/wrangler.toml) routes: the approval service has no route",
    ],
    [
      "a gateway binding without the props",
      (r) => edit(r, "wrangler.toml", (t) => t.replace('service = "strad-bundle-pads"\nprops = { from = "strad-gateway" }\n', 'service = "strad-bundle-pads"\n')),
      'strad-gateway (wrangler.toml) [[services]] PADS: the binding does not carry props = { from = "strad-gateway" }, so the bundle refuses every call',
    ],
    [
      "a gateway binding with other props",
      (r) => edit(r, "wrangler.toml", (t) => t.replace('service = "strad-bundle-echo"\nprops = { from = "strad-gateway" }', 'service = "strad-bundle-echo"\nprops = { from = "strad-gateway-2" }')),
      "strad-gateway (wrangler.toml) [[services]] ECHO: the binding does not carry props",
    ],
  ])("%s", (_what, plant, problem) => {
    const root = copyTree();
    expect(planDeploy(root).errors).toEqual([]);
    plant(root);
    expect(planDeploy(root).errors).toEqual([expect.stringContaining(problem)]);
  });

  it("a false value is the only one that passes: true, unset and a string are each named", () => {
    const where = "w (w.toml)";
    expect(exposureProblems("bundle", where, { workers_dev: false, preview_urls: false })).toEqual([]);
    for (const bad of [true, undefined, "false" as unknown as boolean]) {
      expect(exposureProblems("bundle", where, { workers_dev: bad, preview_urls: false }), String(bad)).toHaveLength(1);
      expect(exposureProblems("bundle", where, { workers_dev: false, preview_urls: bad }), String(bad)).toHaveLength(1);
    }
    // The gateway's own public address is by design: only its bindings are checked.
    expect(exposureProblems("gateway", where, { routes: [{ pattern: "strad.acme.dev", custom_domain: true }] })).toEqual([]);
  });

  it("a scaffolded bundle passes as new-bundle writes it, and its binding carries the props; without preview_urls it fails, named", () => {
    const root = copyTree();
    createBundle("demo4", root);
    expect(planDeploy(root).errors).toEqual([]);
    expect(readFileSync(join(root, "wrangler.toml"), "utf8")).toContain('service = "strad-bundle-demo4"\nprops = { from = "strad-gateway" }\n');
    edit(root, "bundles/demo4/wrangler.toml", (t) => t.replace(/^preview_urls = false\n/m, ""));
    expect(planDeploy(root).errors).toEqual([expect.stringContaining("strad-bundle-demo4 (bundles/demo4/wrangler.toml) preview_urls is not set")]);
    // And without workers_dev = false, with preview_urls put back: named for that alone.
    edit(root, "bundles/demo4/wrangler.toml", (t) => t.replace(/^workers_dev = false\n/m, "preview_urls = false\n"));
    expect(planDeploy(root).errors).toEqual(["strad-bundle-demo4 (bundles/demo4/wrangler.toml) workers_dev is not set: only the gateway has a public address; set `workers_dev = false`"]);
  });

  it("lists the approval service's example.com route as a placeholder for the operator to replace", () => {
    expect(planDeploy(ROOT).placeholders).toContain("strad-approvals (approvals/wrangler.toml) routes[0] = approvals.example.com");
  });
});

describe("issue 15 #2: the secrets of a per-slug bundle's mounts", () => {
  it("are its bundle.json secrets under each roster path's namespace: a new mailbox adds its own three, a slug sharing a path none", () => {
    const parsed = parseRoster(`servers:
  - { slug: gmail-rw-external, kind: bundle, bundle: GOOGLE, path: /gmail-rw-external, entitlements: [user] }
  - { slug: gmail-team, kind: bundle, bundle: GOOGLE, path: /gmail-team, entitlements: [user] }
  - { slug: gmail-scripted, kind: bundle, bundle: GOOGLE, path: /gmail-rw-external, entitlements: [user] }
`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const worker = (role: DeployWorker["role"], name: string, config: string): DeployWorker => ({ role, name, config, vars: {}, rendered: {} });
    const workers = [worker("bundle", "strad-bundle-google", "bundles/google/wrangler.toml"), worker("gateway", "strad-gateway", "wrangler.toml")];
    const google = (JSON.parse(readFileSync(join(ROOT, "bundles/google/bundle.json"), "utf8")) as { mounts: string; secrets: string[] }).secrets;
    expect(google).toEqual(["GMAIL_CLIENT_ID", "GMAIL_CLIENT_SECRET", "GMAIL_REFRESH_TOKEN"]);
    const secrets = secretsFor(parsed.roster, workers, new Map([["strad-bundle-google", google]]), new Map([["GOOGLE", "strad-bundle-google"]]));
    expect(secrets.map((s) => [s.name, s.config])).toEqual(["GMAIL_RW_EXTERNAL", "GMAIL_TEAM"].flatMap((ns) => google.map((name) => [`${ns}__${name}`, "bundles/google/wrangler.toml"])));
    expect(secrets.find((s) => s.name === "GMAIL_TEAM__GMAIL_REFRESH_TOKEN")?.why).toBe('mount /gmail-team\'s GMAIL_REFRESH_TOKEN (slug "gmail-team")');
  });
});

describe("issue 28: the seal key of a bundle whose slug asks at the client", () => {
  it("is listed once per bundle Worker with a clientQuestions slug, and for no other bundle", () => {
    const parsed = parseRoster(`servers:
  - { slug: echo-client, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true, clientQuestions: true }
  - { slug: echo-client-2, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true, clientQuestions: true }
  - { slug: gmail-rw-external, kind: bundle, bundle: GOOGLE, path: /gmail-rw-external, entitlements: [user], confirmations: true }
`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const worker = (role: DeployWorker["role"], name: string, config: string): DeployWorker => ({ role, name, config, vars: {}, rendered: {} });
    const workers = [
      worker("bundle", "strad-bundle-echo", "bundles/echo/wrangler.toml"),
      worker("bundle", "strad-bundle-google", "bundles/google/wrangler.toml"),
      worker("gateway", "strad-gateway", "wrangler.toml"),
    ];
    const secrets = secretsFor(
      parsed.roster,
      workers,
      new Map(),
      new Map([
        ["ECHO", "strad-bundle-echo"],
        ["GOOGLE", "strad-bundle-google"],
      ]),
    );
    expect(secrets.filter((s) => s.name === "STRAD_SEAL_KEY").map((s) => s.config)).toEqual(["bundles/echo/wrangler.toml"]);
  });
});

describe("R-DEPLOY-5: a Worker's size as wrangler reports it, against the plan limits", () => {
  const KIB = 1024;
  const MIB = 1024 * KIB;

  it("reads wrangler's Total Upload line in KiB, MiB, GiB and bytes, coloured or not, and nothing else", () => {
    expect(parseTotalUpload("Total Upload: 1328.77 KiB / gzip: 239.14 KiB")).toEqual({ upload: Math.round(1328.77 * KIB), gzip: Math.round(239.14 * KIB) });
    expect(parseTotalUpload("Total Upload: 14.73 MiB / gzip: 4.26 MiB")).toEqual({ upload: Math.round(14.73 * MIB), gzip: Math.round(4.26 * MIB) });
    expect(parseTotalUpload("Total Upload: 1.5 GiB / gzip: 900 B")).toEqual({ upload: 1.5 * 1024 * MIB, gzip: 900 });
    // Mixed units, and wrangler's colour codes around the figures (it colours them when the terminal allows).
    expect(parseTotalUpload(`wrangler 4.86.0\nTotal Upload: \u001b[32m15084.27 KiB / gzip: 4.26 MiB\u001b[39m\nYour Worker has access to`)).toEqual({
      upload: Math.round(15084.27 * KIB),
      gzip: Math.round(4.26 * MIB),
    });
    for (const other of ["", "--dry-run: exiting now.", "Total Upload: 12 KB / gzip: 3 KB", "Total Upload: KiB / gzip: 3 KiB", "Total Upload: 12 KiB", "Total Upload: 1.2.3 KiB / gzip: 3 KiB"]) {
      expect(parseTotalUpload(other), other).toBeUndefined();
    }
  });

  it("reads back any size wrangler prints to within its rounding (randomized)", () => {
    for (let trial = 0; trial < 200; trial++) {
      const upload = Math.floor(Math.random() * 80 * MIB);
      const gzip = Math.floor(Math.random() * upload);
      const line = `Total Upload: ${(upload / KIB).toFixed(2)} KiB / gzip: ${(gzip / KIB).toFixed(2)} KiB`;
      const read = parseTotalUpload(line);
      // Two decimals of a KiB: within 5.12 bytes either way.
      expect(Math.abs((read?.upload ?? Number.NaN) - upload), line).toBeLessThanOrEqual(5.12);
      expect(Math.abs((read?.gzip ?? Number.NaN) - gzip), line).toBeLessThanOrEqual(5.12);
    }
  });

  it("each limit holds its value: a byte past the Free plan's warns, a byte past the Paid plan's or 64 MiB uncompressed fails, naming the Worker", () => {
    const where = "strad-bundle-x (bundles/x/wrangler.toml)";
    const at = (upload: number, gzip: number) => sizeFindings(where, { upload, gzip });
    expect(SIZE_LIMITS).toEqual({ freeGzip: 3 * MIB, paidGzip: 10 * MIB, upload: 64 * MIB });
    expect(at(64 * MIB, 3 * MIB)).toEqual({ line: `  ${where}: upload 64.00 MiB / gzip 3.00 MiB: fits every plan`, errors: [], warnings: [] });
    expect(at(1, 3 * MIB + 1)).toMatchObject({ errors: [], warnings: [`${where}: 3.00 MiB compressed is over the Workers Free plan's 3 MiB limit: it deploys on Workers Paid only`] });
    expect(at(1, 10 * MIB)).toMatchObject({ errors: [], warnings: [expect.stringContaining(`${where}: 10.00 MiB compressed is over the Workers Free plan's`)] });
    expect(at(1, 10 * MIB + 1)).toMatchObject({
      line: `  ${where}: upload 0.00 KiB / gzip 10.00 MiB: OVER THE LIMIT`,
      errors: [`${where}: 10.00 MiB compressed is over the Workers Paid plan's 10 MiB limit, so no plan deploys it`],
      warnings: [],
    });
    expect(at(64 * MIB + 1, 1)).toMatchObject({ errors: [`${where}: 64.00 MiB uncompressed is over Cloudflare's 64 MiB Worker size limit`], warnings: [] });
    // As wrangler prints the edges: 3072.00 KiB is the Free plan's limit itself, 3072.01 KiB past it.
    const read = (gzip: string) => sizeFindings(where, parseTotalUpload(`Total Upload: 9000.00 KiB / gzip: ${gzip}`) as { upload: number; gzip: number });
    expect(read("3072.00 KiB").warnings).toEqual([]);
    expect(read("3072.01 KiB").warnings).toHaveLength(1);
    expect(read("10240.00 KiB").errors).toEqual([]);
    expect(read("10240.01 KiB").errors).toHaveLength(1);
  });
});

describe("issue 31: the 1Password bundle's build, chosen per deployment (--onepassword full|connect)", { timeout: CHECK_TIMEOUT_MS }, () => {
  const OP = "bundles/onepassword/wrangler.toml";

  it("reads the flag into the config's wrangler environment, and names the choices for a wrong or missing one", () => {
    const envs: Record<string, string> = {};
    expect(chooseBuild("--onepassword", "connect", envs)).toBeUndefined();
    expect(envs).toEqual({ [OP]: "connect" });
    // The flags that give the choice back, for the command deploy suggests next; the full build needs none.
    expect(buildFlags(envs)).toBe(" --onepassword connect");
    expect(buildFlags({})).toBe("");
    expect(chooseBuild("--onepassword", "full", envs)).toBeUndefined();
    expect(envs).toEqual({});
    for (const wrong of ["Connect", "sdk", "", undefined]) expect(chooseBuild("--onepassword", wrong, envs)).toBe("--onepassword takes one of: full, connect");
    expect(chooseBuild("--pads", "connect", envs)).toBe("unknown option --pads");
    expect(envs).toEqual({});
  });

  it("plans the Connect-only build for that Worker alone, under the name the gateway binds, with every other check as before", () => {
    const plan = planDeploy(ROOT, { [OP]: "connect" });
    const plain = planDeploy(ROOT);
    expect(plan.errors).toEqual(plain.errors);
    expect(plan.workers.filter((w) => w.env !== undefined).map((w) => [w.name, w.config, w.env])).toEqual([["strad-bundle-onepassword", OP, "connect"]]);
    expect(plain.notes).toBeUndefined();
    expect(plan.notes).toEqual([expect.stringMatching(/^strad-bundle-onepassword \(bundles\/onepassword\/wrangler\.toml --env connect\): the Connect-only build: .*delete any such secret/)]);
  });

  it("lists no service-account token to seed for the Connect-only build, and every other secret as the full build does", () => {
    // A roster whose 1Password mounts the Connect build serves: the checked-in one, and a second mount of its own.
    const root = copyTree();
    edit(root, "strad.config.yaml", (t) => `${t.trimEnd()}\n  - slug: vault\n    kind: bundle\n    bundle: ONEPASSWORD\n    path: /vault\n    entitlements: [user]\n`);
    const plain = planDeploy(root).secrets;
    const connect = planDeploy(root, { [OP]: "connect" }).secrets;
    const names = (list: typeof plain) => list.filter((s) => s.config === OP).map((s) => s.name);
    expect(names(plain)).toEqual(expect.arrayContaining(["VAULT__OP_SERVICE_ACCOUNT_TOKEN", "VAULT__OP_CONNECT_HOST", "VAULT__OP_CONNECT_TOKEN"]));
    expect(names(connect).filter((n) => n.endsWith("OP_SERVICE_ACCOUNT_TOKEN"))).toEqual([]);
    expect(names(connect)).toEqual(names(plain).filter((n) => !n.endsWith("OP_SERVICE_ACCOUNT_TOKEN")));
    expect(connect.filter((s) => s.config !== OP)).toEqual(plain.filter((s) => s.config !== OP));
  });

  it("an environment that would deploy under another name is refused, naming it", () => {
    const root = copyTree();
    edit(root, OP, (t) => t.replace('[env.connect]\nname = "strad-bundle-onepassword"\n', "[env.connect]\n"));
    expect(planDeploy(root, { [OP]: "connect" }).errors).toContainEqual(
      `strad-bundle-onepassword (${OP} --env connect): the environment deploys as "strad-bundle-onepassword-connect", not as the strad-bundle-onepassword the gateway binds`,
    );
  });

  it("builds the Connect-only bundle within the Free plan's 3 MiB compressed, where the full build deploys on Workers Paid only", () => {
    const op = planDeploy(ROOT).workers.find((w) => w.config === OP) as DeployWorker;
    const connect = buildWorkers(ROOT, [{ ...op, env: "connect" }]);
    expect(connect.problems).toEqual([]);
    expect(connect.warnings).toEqual([]);
    expect(connect.sizes[0]?.size.gzip).toBeLessThan(SIZE_LIMITS.freeGzip);
    expect(sizeFindings(`strad-bundle-onepassword (${OP} --env connect)`, connect.sizes[0]?.size as { upload: number; gzip: number }).line).toMatch(/--env connect\): upload .* fits every plan$/);
    const full = buildWorkers(ROOT, [op]);
    expect(full.problems).toEqual([]);
    expect(full.warnings).toEqual([expect.stringContaining("over the Workers Free plan's 3 MiB limit: it deploys on Workers Paid only")]);
  });

  it("the script takes the flag and refuses a wrong choice before building anything", async () => {
    const wrong = await run(["--no-build", "--onepassword", "lite"]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain("deploy:check: --onepassword takes one of: full, connect");
    const right = await run(["--no-build", "--onepassword", "connect"]);
    expect(right.stderr).not.toContain("--onepassword takes");
  });
});
