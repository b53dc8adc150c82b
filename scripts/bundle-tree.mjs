// What the root wrangler.toml says about the gateway's bundles: its `[[services]]` (binding -> service name),
// and every name a new binding could clash with. Read by `npm run check-config` (a roster binding must
// resolve to a bundle folder) and `npm run new-bundle` (a new bundle takes no name already in use).
// A deliberately small reader: top-level tables and `key = "string"` lines, which is all these files use.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const HEADER = /^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(?:#.*)?$/;
const STRING_KEY = /^\s*([A-Za-z0-9_-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')\s*(?:#.*)?$/;

/** The file's tables in order: `{ name, array, values }`, the top level first with name "". */
export function tomlTables(text) {
  const tables = [{ name: "", array: false, values: {} }];
  for (const line of text.split("\n")) {
    const header = HEADER.exec(line);
    if (header !== null) {
      tables.push({ name: header[2], array: header[1] === "[[", values: {} });
      continue;
    }
    const kv = STRING_KEY.exec(line);
    if (kv !== null) tables[tables.length - 1].values[kv[1]] = kv[2] ?? kv[3];
  }
  return tables;
}

/** The gateway's service bindings, `{ binding, service }` in file order (an entry missing either is kept, with undefined). */
export function gatewayServices(root) {
  return tomlTables(readFileSync(join(root, "wrangler.toml"), "utf8"))
    .filter((t) => t.array && t.name === "services")
    .map((t) => ({ binding: t.values.binding, service: t.values.service }));
}

/**
 * Every name the gateway's environment already holds: its bindings of any kind, its vars, and the local
 * secrets its .dev.vars.example seeds. A new bundle's binding must be none of them.
 */
export function gatewayEnvNames(root) {
  const names = new Set();
  for (const table of tomlTables(readFileSync(join(root, "wrangler.toml"), "utf8"))) {
    if (table.name === "vars") for (const key of Object.keys(table.values)) names.add(key);
    else if (table.array && table.name !== "migrations" && table.name !== "rules") {
      for (const key of ["binding", "name"]) if (table.values[key] !== undefined) names.add(table.values[key]);
    }
  }
  const example = join(root, ".dev.vars.example");
  if (existsSync(example)) {
    for (const line of readFileSync(example, "utf8").split("\n")) {
      const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1];
      if (name !== undefined) names.add(name);
    }
  }
  return names;
}
