// Covers `npm run deploy` (scripts/deploy.ts, issue 14 #3): it refuses, running no wrangler step, while
// deploy:check finds a problem or a placeholder is left; once the operator's values are in, it deploys in
// dependency order (bundles and the approval service before the gateway that binds them), with the roster's
// env as --var; --first deploys the gateway without its service bindings first. Run as --dry-run: nothing leaves.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withoutServices } from "../../scripts/deploy";
// @ts-expect-error: plain ESM helper without types
import { discoverWorkers, ROOT } from "../../scripts/workers.mjs";
import { addVar, copyTree, edit, fillPlaceholders } from "./helpers/tree";

const TSX = join(ROOT, "node_modules/.bin/tsx");
// A deploy builds every Worker (nine wrangler builds with --first); `npm test` runs this beside the rest of the suite on
// two cores, where one took over 150 s, so each gets 400 s.
const DEPLOY_TIMEOUT_MS = 400_000;
const ENV = { ...process.env, XDG_CONFIG_HOME: join(ROOT, ".xdg"), WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" };

function deploy(root: string, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, [join(ROOT, "scripts/deploy.ts"), "--root", root, ...args], { cwd: ROOT, env: ENV, timeout: DEPLOY_TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
  });
}

/** The `[i/n] what` lines, in order. */
const steps = (stdout: string) => stdout.split("\n").filter((l) => /^\[\d+\/\d+\]/.test(l));

describe("npm run deploy", () => {
  it(
    "refuses the checked-in tree while its placeholders are left, naming each, and runs no step",
    async () => {
      const r = await deploy(ROOT, "--dry-run");
      expect(r.status).toBe(1);
      expect(steps(r.stdout)).toEqual([]);
      expect(r.stderr).toContain("deploy refused: replace these placeholders with your own values first:");
      expect(r.stderr).toContain("✗ strad-approvals (approvals/wrangler.toml) [vars] ACCESS_TEAM_DOMAIN = https://<your-team>.cloudflareaccess.com");
      expect(r.stderr).toContain("✗ strad.config.yaml servers[1].approvalUrlPrefixes[0] = https://approvals.example.com/api/v1/elicitations/session/");
    },
    DEPLOY_TIMEOUT_MS + 20_000,
  );

  it(
    "refuses a tree deploy:check fails, naming the problem, and runs no step",
    async () => {
      const root = copyTree();
      fillPlaceholders(root);
      addVar(root, "bundles/echo/wrangler.toml", 'STRAD_DEV_PROBES = "1"');
      const r = await deploy(root, "--dry-run");
      expect(r.status).toBe(1);
      expect(steps(r.stdout)).toEqual([]);
      expect(r.stderr).toContain("✗ strad-bundle-echo (bundles/echo/wrangler.toml) [vars] STRAD_DEV_PROBES: STRAD_DEV_PROBES is a development switch");
    },
    DEPLOY_TIMEOUT_MS + 20_000,
  );

  it(
    "deploys the bundles and the approval service before the gateway, with the roster's env as --var",
    async () => {
      const root = copyTree();
      fillPlaceholders(root);
      edit(root, "strad.config.yaml", (t) => t.replace("    path: /echo\n    entitlements: [user]\n", "    path: /echo\n    entitlements: [user]\n    env:\n      GREETING: hello from production\n"));
      const r = await deploy(root, "--dry-run");
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      // Every bundle first (echo and Google carry the roster's env), then the approval service, then the gateway.
      const bundles = (discoverWorkers(root).bundles as { name: string }[]).map((b) => b.name);
      const env: Record<string, string> = {
        "strad-bundle-echo": " with the roster's env (ECHO__GREETING, GREETING)",
        "strad-bundle-google": " with the roster's env (GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS)",
      };
      const n = bundles.length + 2;
      expect(bundles).toEqual(expect.arrayContaining(["strad-bundle-echo", "strad-bundle-google"]));
      expect(steps(r.stdout)).toEqual([
        ...bundles.map((name, i) => `[${i + 1}/${n}] (dry run) ${name}${env[name] ?? ""}`),
        `[${n - 1}/${n}] (dry run) strad-approvals`,
        `[${n}/${n}] (dry run) strad-gateway, binding every bundle`,
      ]);
      expect(r.stdout).toContain("-c bundles/echo/wrangler.toml --var ECHO__GREETING:hello from production --var GREETING:hello from production");
      expect(r.stdout).toContain(`dry run done: ${n} steps built, nothing uploaded`);
    },
    DEPLOY_TIMEOUT_MS + 20_000,
  );

  it(
    "--first deploys the gateway without its service bindings before anything else, and leaves no file behind",
    async () => {
      const root = copyTree();
      fillPlaceholders(root);
      const r = await deploy(root, "--dry-run", "--first");
      expect(r.status).toBe(0);
      const n = discoverWorkers(root).bundles.length + 3;
      expect(steps(r.stdout)).toHaveLength(n);
      expect(steps(r.stdout)[0]).toBe(`[1/${n}] (dry run) strad-gateway without its service bindings (it hosts CallRegistry, which the bundles bind)`);
      expect(steps(r.stdout)[n - 1]).toBe(`[${n}/${n}] (dry run) strad-gateway, binding every bundle`);
      expect(existsSync(join(root, "wrangler.first-deploy.toml"))).toBe(false);
    },
    DEPLOY_TIMEOUT_MS + 20_000,
  );

  it("the first-deploy config is the gateway's without [[services]], and keeps everything else", () => {
    const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const first = withoutServices(toml);
    expect(toml).toContain("[[services]]");
    expect(first).not.toContain("[[services]]");
    expect(first).not.toMatch(/strad-bundle-/);
    for (const kept of ['main = "worker/index.ts"', "[[durable_objects.bindings]]", 'class_name = "CallRegistry"', "[[migrations]]", 'new_sqlite_classes = ["CallRegistry"]'])
      expect(first).toContain(kept);
  });

  it("an unknown argument prints the usage and exits 1", async () => {
    expect(await deploy(ROOT, "--yes")).toMatchObject({ status: 1, stderr: expect.stringContaining("usage: npm run deploy") });
  });
});
