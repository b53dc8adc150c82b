// `npm run deploy [-- --dry-run] [--first] [--root <dir>]`: deploys every Worker of the tree with wrangler, in
// dependency order: the bundles and the approval service first, then the gateway that binds them. It refuses,
// and deploys nothing, while `npm run deploy:check` finds a problem or a placeholder is left. The roster's
// servers[].env reaches each bundle as `--var` (scripts/roster-env.mjs). Secrets are never passed here: seed them
// with the `wrangler secret put` lines deploy:check prints.
//
// `--first` is for an account that has none of these Workers yet. The bundles bind the gateway's CallRegistry
// (a Durable Object, by script_name) and the gateway binds the bundles (services), so neither can go first
// as it is: the gateway is first deployed without its [[services]] (it then refuses every bundle call), and
// deployed again, whole, at the end.
//
// `--dry-run` runs every step as `wrangler deploy --dry-run` (nothing is uploaded) and prints the commands. A step whose
// build is the very one the check before it ran (same config, same --var) is not built a second time.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BUILD_CHOICES, buildFlags, buildProblems, chooseBuild, type DeployWorker, envArgs, planDeploy, varArgs } from "./deploy-check";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "./workers.mjs";

/** The gateway's config without its [[services]] tables: what `--first` deploys before the bundles exist. */
export function withoutServices(toml: string): string {
  const out: string[] = [];
  let skipping = false;
  for (const line of toml.split("\n")) {
    if (/^\s*\[/.test(line)) skipping = /^\s*\[\[services\]\]/.test(line);
    if (!skipping) out.push(line);
  }
  return out.join("\n");
}

export interface Step {
  what: string;
  args: string[];
  /** In a dry run: the check before the steps built this Worker with these same arguments (buildWorkers), so it is not built again. */
  builtByCheck?: boolean;
}

/** The wrangler commands, in order. `bootstrapConfig` is the path of the gateway's services-free config. */
export function deploySteps(workers: DeployWorker[], options: { dryRun: boolean; first: boolean; bootstrapConfig?: string; outdir?: string }): Step[] {
  const dry = (name: string) => (options.dryRun ? ["--dry-run", "--outdir", join(options.outdir ?? tmpdir(), name)] : []);
  const steps: Step[] = [];
  const gateway = workers.find((w) => w.role === "gateway");
  if (gateway === undefined) throw new Error("the tree has no gateway Worker");
  if (options.first) {
    if (options.bootstrapConfig === undefined) throw new Error("--first needs the bootstrap config");
    steps.push({
      what: `${gateway.name} without its service bindings (it hosts CallRegistry, which the bundles bind)`,
      args: ["deploy", ...dry(`${gateway.name}-first`), "-c", options.bootstrapConfig],
    });
  }
  for (const w of [...workers.filter((x) => x.role === "bundle"), ...workers.filter((x) => x.role === "approvals")]) {
    const rendered = Object.keys(w.rendered);
    steps.push({
      what: `${w.name}${w.env === undefined ? "" : ` (its ${w.env} build)`}${rendered.length > 0 ? ` with the roster's env (${rendered.join(", ")})` : ""}`,
      args: ["deploy", ...dry(w.name), "-c", w.config, ...envArgs(w), ...varArgs(w.rendered)],
      builtByCheck: options.dryRun,
    });
  }
  // The check builds the gateway with the roster's env for it, which is none: a gateway with some is built again here.
  const plainGateway = Object.keys(gateway.rendered).length === 0;
  steps.push({ what: `${gateway.name}, binding every bundle`, args: ["deploy", ...dry(gateway.name), "-c", gateway.config], builtByCheck: options.dryRun && plainGateway });
  return steps;
}

/**
 * The refusal, or the Workers when the tree may be deployed. `build`: every Worker is built first (deploy:check's
 * build gate), once the plan has no problem and no placeholder left: a tree that must be refused for either is refused
 * at once, without minutes of builds (a build problem then shows on the run after they are mended).
 */
export function refusal(root: string, build: boolean, envs: Record<string, string> = {}): { lines: string[] } | { workers: DeployWorker[] } {
  const plan = planDeploy(root, envs);
  const errors = [...plan.errors];
  if (errors.length === 0 && plan.placeholders.length === 0 && build) errors.push(...buildProblems(root, plan.workers));
  const lines: string[] = [];
  if (errors.length > 0) lines.push("deploy refused: `npm run deploy:check` finds problems:", ...errors.map((e) => `  ✗ ${e}`));
  if (plan.placeholders.length > 0) lines.push("deploy refused: replace these placeholders with your own values first:", ...plan.placeholders.map((p) => `  ✗ ${p}`));
  return lines.length > 0 ? { lines } : { workers: plan.workers };
}

const USAGE = "usage: npm run deploy [-- --dry-run] [--first] [--root <dir>] [--onepassword full|connect]\n";

function main(argv: readonly string[]): number {
  let root: string = ROOT;
  let dryRun = false;
  let first = false;
  const envs: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--root" && argv[i + 1] !== undefined) root = argv[++i] as string;
    else if (arg === "--dry-run") dryRun = true;
    else if (arg === "--first") first = true;
    else if (Object.hasOwn(BUILD_CHOICES, arg)) {
      const wrong = chooseBuild(arg, argv[++i], envs);
      if (wrong !== undefined) {
        process.stderr.write(`deploy: ${wrong}\n${USAGE}`);
        return 1;
      }
    } else {
      process.stderr.write(USAGE);
      return 1;
    }
  }
  const checked = refusal(root, true, envs);
  const chosen = buildFlags(envs);
  if ("lines" in checked) {
    process.stderr.write(`${checked.lines.join("\n")}\n`);
    return 1;
  }
  const scratch = mkdtempSync(join(tmpdir(), "strad-deploy-"));
  // Beside wrangler.toml, so its relative paths (main, rules) mean the same; removed when done.
  const bootstrapConfig = first ? "wrangler.first-deploy.toml" : undefined;
  try {
    if (bootstrapConfig !== undefined) writeFileSync(join(root, bootstrapConfig), withoutServices(readFileSync(join(root, "wrangler.toml"), "utf8")));
    const steps = deploySteps(checked.workers, { dryRun, first, bootstrapConfig, outdir: scratch });
    for (const [i, step] of steps.entries()) {
      process.stdout.write(`[${i + 1}/${steps.length}] ${dryRun ? "(dry run) " : ""}${step.what}\n  wrangler ${step.args.join(" ")}\n`);
      if (step.builtByCheck === true) continue;
      try {
        execFileSync(join(ROOT, "node_modules/.bin/wrangler"), step.args, { cwd: root, stdio: dryRun ? "pipe" : "inherit", env: { ...process.env, FORCE_COLOR: "0" } });
      } catch {
        process.stderr.write(`deploy stopped at step ${i + 1} (${step.what}); the steps before it are deployed, the ones after are not\n`);
        return 1;
      }
    }
    process.stdout.write(
      dryRun
        ? `dry run done: ${steps.length} steps built, nothing uploaded\n`
        : `deployed ${steps.length} steps. Next: seed any missing secret (npm run deploy:check -- --remote${chosen}), then npm run smoke -- <gateway-url> <token>\n`,
    );
    return 0;
  } finally {
    if (bootstrapConfig !== undefined) rmSync(join(root, bootstrapConfig), { force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = main(process.argv.slice(2));
