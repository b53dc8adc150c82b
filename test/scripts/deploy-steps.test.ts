// Covers how `npm run deploy` (scripts/deploy.ts) spends its builds: a tree it must refuse for a placeholder is refused
// without building any Worker, and a dry run does not build again what deploy:check's gate just built with the very
// same arguments (only --first's bootstrap of the gateway, which the gate never builds, is built by its step).
import { beforeEach, describe, expect, it, vi } from "vitest";

const built = vi.hoisted(() => ({ calls: 0 }));
vi.mock("../../scripts/deploy-check", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../scripts/deploy-check")>();
  return {
    ...original,
    buildProblems: (...args: Parameters<typeof original.buildProblems>) => {
      built.calls++;
      return original.buildProblems(...args);
    },
  };
});

const { deploySteps, refusal } = await import("../../scripts/deploy");
// @ts-expect-error: plain ESM helper without types
const { ROOT } = await import("../../scripts/workers.mjs");
const { planDeploy } = await import("../../scripts/deploy-check");

beforeEach(() => {
  built.calls = 0;
});

describe("npm run deploy's builds", () => {
  it("refuses the checked-in tree for its placeholders without building a Worker", () => {
    const refused = refusal(ROOT, true);
    expect(refused).toHaveProperty("lines");
    expect((refused as { lines: string[] }).lines[0]).toBe("deploy refused: replace these placeholders with your own values first:");
    expect(built.calls).toBe(0);
  });

  it("in a dry run, marks every step the gate built with the same arguments, and only those", () => {
    const workers = planDeploy(ROOT).workers;
    expect(workers.length).toBeGreaterThan(2);
    const dry = deploySteps(workers, { dryRun: true, first: true, bootstrapConfig: "wrangler.first-deploy.toml", outdir: "/tmp/x" });
    expect(dry.map((s) => s.builtByCheck === true)).toEqual([false, ...dry.slice(1).map(() => true)]);
    expect(dry[0]?.args).toContain("wrangler.first-deploy.toml");
    // Each marked step is the gate's command for its Worker but for the output folder (scripts/deploy-check.ts buildWorkers).
    for (const step of dry.slice(1)) {
      expect(step.args.slice(0, 3)).toEqual(["deploy", "--dry-run", "--outdir"]);
      const config = step.args[step.args.indexOf("-c") + 1];
      expect(workers.map((w) => w.config)).toContain(config);
    }
    const real = deploySteps(workers, { dryRun: false, first: true, bootstrapConfig: "wrangler.first-deploy.toml" });
    expect(real.every((s) => s.builtByCheck !== true)).toBe(true);
    expect(real).toHaveLength(dry.length);
  });

  it("deploys the 1Password bundle's chosen build (--onepassword connect) with --env, and every other Worker as before", () => {
    const plain = deploySteps(planDeploy(ROOT).workers, { dryRun: false, first: false });
    const chosen = deploySteps(planDeploy(ROOT, { "bundles/onepassword/wrangler.toml": "connect" }).workers, { dryRun: false, first: false });
    const withEnv = chosen.filter((s) => s.args.includes("--env"));
    expect(withEnv.map((s) => s.args.slice(s.args.indexOf("-c"), s.args.indexOf("-c") + 4))).toEqual([["-c", "bundles/onepassword/wrangler.toml", "--env", "connect"]]);
    expect(withEnv[0]?.what).toBe("strad-bundle-onepassword (its connect build)");
    expect(chosen.filter((s) => !s.args.includes("--env"))).toEqual(plain.filter((s) => !s.args.includes("bundles/onepassword/wrangler.toml")));
  });
});
