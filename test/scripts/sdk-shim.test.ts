// Covers the MCP SDK shim every Worker that bundles the SDK builds with (the [alias] in each wrangler.toml): the SDK's
// workerd shim builds every protocol schema of both revisions at a Worker's start, and the browser shim the builds
// take instead is the same module without that call. If an SDK upgrade renames the file, changes what the shims
// export, or stops preloading on workerd, these fail and say which.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
// @ts-expect-error: plain ESM helper without types
import { discoverWorkers } from "../../scripts/workers.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SHIMS = "@modelcontextprotocol/server/_shims";
const PACKAGE = join(ROOT, "node_modules/@modelcontextprotocol/server");
const exportsOf = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")).exports["./_shims"] as { workerd: { import: { default: string } }; browser: { import: { default: string } } };
const WORKERD_SHIM = join(PACKAGE, exportsOf.workerd.import.default);
const BROWSER_SHIM = join(PACKAGE, exportsOf.browser.import.default);

const found = discoverWorkers(ROOT) as { gateway: { config: string }; bundles: { dir: string; config: string }[] };
/** Every deployed Worker whose sources import the SDK: the gateway (its SDK leg, loaded on first use) and every bundle. */
const workers = [found.gateway.config, ...found.bundles.map((b) => b.config)];

const aliasOf = (config: string, env?: string) => {
  const read = unstable_readConfig({ config: join(ROOT, config), env }, { hideWarnings: true }) as { alias?: Record<string, string> };
  return read.alias?.[SHIMS];
};

describe("the SDK shim the Workers build with", () => {
  it.each(workers)("%s takes the browser shim, which exists", (config) => {
    const alias = aliasOf(config);
    expect(alias, `${config} has no [alias] for ${SHIMS}`).toBeDefined();
    const target = resolve(dirname(join(ROOT, config)), alias as string);
    expect(target).toBe(BROWSER_SHIM);
    expect(existsSync(target)).toBe(true);
  });

  it("the 1Password bundle's Connect-only build takes it too", () => {
    const onepassword = found.bundles.find((b) => b.dir === "onepassword");
    expect(onepassword).toBeDefined();
    expect(resolve(dirname(join(ROOT, onepassword?.config as string)), aliasOf(onepassword?.config as string, "connect") as string)).toBe(BROWSER_SHIM);
  });

  it("the workerd shim preloads the schemas and the browser shim does not: the alias still has a reason", () => {
    expect(readFileSync(WORKERD_SHIM, "utf8")).toMatch(/^preloadSchemas\(\);$/m);
    expect(readFileSync(BROWSER_SHIM, "utf8")).not.toContain("preloadSchemas");
  });

  it("both shims export the same names and the same validator", async () => {
    const workerd = await import(pathToFileURL(WORKERD_SHIM).href);
    const browser = await import(pathToFileURL(BROWSER_SHIM).href);
    expect(Object.keys(browser).sort()).toEqual(Object.keys(workerd).sort());
    expect(Object.keys(browser)).toContain("DefaultJsonSchemaValidator");
    expect(browser.DefaultJsonSchemaValidator).toBe(workerd.DefaultJsonSchemaValidator);
  });
});
