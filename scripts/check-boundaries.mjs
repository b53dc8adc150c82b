// Module boundaries: the gateway (worker/), the Durable Objects (durable-objects/), each bundle
// (bundles/<name>/, with the shared kit in bundles/kit/) and the approval service (approvals/) reach each
// other only through contract/, which imports none of them. `node scripts/check-boundaries.mjs` lists
// every import that crosses a boundary any other way and exits 1 when there is one.
// It also keeps the heavy packages out of the gateway's start (docs/bench.md, cold starts): no module of the gateway's
// (worker/, contract/, durable-objects/) imports the MCP SDK's values statically but the ones listed in
// LAZY_SDK_MODULES (contract/sdk.ts), nor zod's or the YAML parser's but the ones in LAZY_SCHEMA_MODULES (the roster's
// schema, loaded for a runtime write; the checked-in roster is compiled at build time), and nothing imports a listed
// module statically but for its types, or another module of the same list. And no Worker's module imports zod's `z`
// object (`import { z } from "zod"`, or its default): esbuild keeps the whole namespace behind it, every locale's error
// messages included, 259 KiB of each Worker's build; `import * as z from "zod"` is shaken to what is used.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const AREAS = ["contract", "worker", "durable-objects", "bundles", "approvals"];
const SOURCE = /\.(ts|mts|mjs|js)$/;
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s+["']([^"']+)["']/gm;

/** The unit a file belongs to: "contract", "worker", "durable-objects", "approvals", "bundles/kit", "bundles/<name>", or "root". */
export function unitOf(relPath) {
  const parts = relPath.split(/[\\/]/);
  if (parts[0] === "bundles") return parts.length > 2 ? `bundles/${parts[1]}` : "bundles";
  return AREAS.includes(parts[0]) ? parts[0] : "root";
}

/** The gateway's modules that may import the SDK's values: each is itself only ever imported dynamically. */
export const LAZY_SDK_MODULES = ["worker/sdk-leg.ts"];
/**
 * The gateway's modules that may import zod or yaml: the roster's schema, its text's parser and the test and tool
 * wrapper that builds a gateway from that text (worker/gateway.ts), and the channel's schema, which bundles check and
 * the gateway needs only the types of.
 */
export const LAZY_SCHEMA_MODULES = ["worker/roster.ts", "worker/roster-text.ts", "worker/gateway.ts", "contract/channel.ts"];
const HEAVY = [
  { packages: /^@modelcontextprotocol\/(server|core)(\/|$)/, lazy: LAZY_SDK_MODULES, what: "the MCP SDK's", how: "load them with contract/sdk.ts loadSdk, or in a module listed in LAZY_SDK_MODULES" },
  { packages: /^(zod|yaml)(\/|$)/, lazy: LAZY_SCHEMA_MODULES, what: "zod's or the YAML parser's", how: "import() them, or use a module listed in LAZY_SCHEMA_MODULES" },
];
const GATEWAY_UNITS = ["worker", "contract", "durable-objects"];
// `import … from`, `export … from` and a bare `import "…"`, which evaluates the module as much as any other.
const STATIC_IMPORT = /(?:^|[\s;])(?:import|export)\s+(type\s+)?([^'"]*?)\s*from\s*["']([^"']+)["']|(?:^|[\s;])import\s*()()["']([^"']+)["']/gm;

/** Whether a static import's clause names types only (`import type {…}`, or every member `type`). */
function typesOnly(typeKeyword, clause) {
  if (typeKeyword !== undefined) return true;
  const members = /^\{([^}]*)\}$/.exec(clause.trim());
  if (members === null) return false;
  const names = members[1]
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "");
  return names.length > 0 && names.every((m) => m.startsWith("type "));
}

/** Every static import of a heavy package's values into the gateway's start (see the header), as messages. */
function heavyLoads({ path, text }) {
  if (!GATEWAY_UNITS.includes(unitOf(path))) return [];
  const found = [];
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const spec = m[3] ?? m[6];
    if (m[3] !== undefined && typesOnly(m[1], m[2])) continue;
    const target = spec.startsWith(".")
      ? relative(ROOT, resolve(ROOT, dirname(path), spec))
          .split(sep)
          .join("/")
      : undefined;
    for (const heavy of HEAVY) {
      if (heavy.packages.test(spec) && !heavy.lazy.includes(path)) found.push(`${path} imports ${heavy.what} values statically: ${heavy.how}`);
      if (target !== undefined && !heavy.lazy.includes(path) && heavy.lazy.some((lazy) => lazy === target || lazy === `${target}.ts`))
        found.push(`${path} imports "${spec}" statically: it loads ${heavy.what} modules, so import it with import()`);
    }
  }
  return found;
}

/**
 * `import { z } from "zod"` (or `{ z as … }`, or the default export), and the same re-exported (`export { z } from
 * "zod"`): the one object that carries every locale. A type-only import or export brings no value in.
 */
const ZOD_OBJECT = /(?:^|[\s;])(import|export)\s+(type\s+)?(?:([A-Za-z_$][\w$]*)\s*,?\s*)?(\{[^}]*\})?\s*from\s*["'](zod(?:\/v4)?)["']/gm;

/** Every import or re-export of zod's `z` object or default export (see the header), as messages. */
function zodObjects({ path, text }) {
  const found = [];
  for (const m of text.matchAll(ZOD_OBJECT)) {
    const [, keyword, typeOnly, defaultName, clause, spec] = m;
    if (typeOnly !== undefined) continue;
    const members = (clause ?? "")
      .replace(/[{}]/g, "")
      .split(",")
      .map((x) => x.trim())
      .filter((x) => x !== "" && !x.startsWith("type "));
    const byDefault = keyword === "import" && defaultName !== undefined;
    if (byDefault || members.some((x) => x === "z" || x.startsWith("z ") || x === "default" || x.startsWith("default ")))
      found.push(`${path} ${keyword}s zod's z object from "${spec}": it carries every locale into the build; import * as z from "${spec}"`);
  }
  return found;
}

/** Whether `from` may import `to` (both units). `fromFile` is the importing file, relative to the root. */
export function allowed(fromFile, from, to) {
  if (from === to || to === "contract") return true;
  // The gateway's entries (production and the dev stack's) host the CallRegistry class and compile a roster in.
  if (fromFile === "worker/index.ts" || fromFile === "worker/dev.ts") return to === "durable-objects" || to === "root";
  // Every bundle may use the kit; the kit is a bundle's library, not a unit of its own for anyone else.
  if (from.startsWith("bundles/") && to === "bundles/kit") return true;
  return false;
}

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* sources(full);
    else if (SOURCE.test(name)) yield full;
  }
}

/** Every cross-boundary import in the given files ({ path, text } with paths relative to the root). */
export function violations(files) {
  const found = [];
  for (const { path, text } of files) {
    found.push(...heavyLoads({ path, text }));
    found.push(...zodObjects({ path, text }));
    const from = unitOf(path);
    if (from === "root") continue;
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec === undefined || !spec.startsWith(".")) continue;
      const target = relative(ROOT, resolve(ROOT, dirname(path), spec))
        .split(sep)
        .join("/");
      const to = target.startsWith("..") ? "outside" : unitOf(target);
      if (!allowed(path, from, to)) found.push(`${path} imports "${spec}" (${from} -> ${to}): share it through contract/`);
    }
  }
  return found;
}

export function treeFiles() {
  const files = [];
  for (const area of AREAS) {
    for (const full of sources(join(ROOT, area))) files.push({ path: relative(ROOT, full).split(sep).join("/"), text: readFileSync(full, "utf8") });
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = violations(treeFiles());
  for (const v of found) console.error(v);
  if (found.length > 0) process.exit(1);
  console.log("module boundaries: ok");
}
