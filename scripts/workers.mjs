// Which Workers this tree holds, found from their configs rather than a hand-kept list: the gateway
// (wrangler.toml at the root), every bundle (bundles/<name>/wrangler.toml), the approval service
// (approvals/wrangler.toml) and the local fakes (test/fakes/wrangler.toml). The dev stack, the e2e suite,
// the bench and `npm run new-bundle` all read the tree through here.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The production roster `wrangler deploy` builds into the gateway (its `main`, worker/index.ts imports it). */
export const ROSTER = "strad.config.yaml";
/** The dev roster and the gateway entry that imports it: only the local stack builds them (worker/dev.ts). */
export const DEV_ROSTER = "strad.dev.yaml";
export const DEV_ENTRY = "worker/dev.ts";

/** The Worker's `name` (its service name), read from the config's top level. */
export function workerName(config, root = ROOT) {
  const name = /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(join(root, config), "utf8"))?.[1];
  if (name === undefined) throw new Error(`${config} has no top-level name`);
  return name;
}

/**
 * The tree's Workers, each `{ name, config }` with `config` relative to `root`; `bundles` also carry their
 * folder name. Bundles are sorted by folder so every caller sees the same order.
 */
export function discoverWorkers(root = ROOT) {
  const at = (config) => ({ name: workerName(config, root), config });
  const bundleDir = join(root, "bundles");
  const bundles = readdirSync(bundleDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(bundleDir, d.name, "wrangler.toml")))
    .map((d) => d.name)
    .sort()
    .map((dir) => ({ dir, ...at(`bundles/${dir}/wrangler.toml`) }));
  return { gateway: at("wrangler.toml"), bundles, approvals: at("approvals/wrangler.toml"), fakes: at("test/fakes/wrangler.toml") };
}
