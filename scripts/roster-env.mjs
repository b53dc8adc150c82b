// The roster's `servers[].env` rendered into each bundle Worker's variables, the same way for `npm run deploy`
// (as `wrangler deploy --var`) and for the local stack (a block of the bundle's .dev.vars that scripts/stack.mjs
// rewrites from strad.dev.yaml). A bundle Worker has one environment shared by every slug mounted on it, so:
//   - a bare NAME is the slug's own `<SLUG>__NAME`, and also the bundle-wide NAME (the roster schema already
//     refuses two slugs of one bundle giving a bare name different values);
//   - a name holding `__` must sit in the slug's own namespace: a slug never sets another slug's variable
//     (which is how a bundle keeps one mount's credentials from another's).
// Plain ESM (the dev stack and the bench run under plain node); `slugNamespace` mirrors contract/slug.ts, and
// test/scripts/roster-env.test.ts holds the two to the same answers.
import { existsSync, readFileSync, writeFileSync } from "node:fs";

/** `<SLUG>__`: the slug upper-cased with "-" as "_" (contract/slug.ts). */
export function slugNamespace(slug) {
  return `${slug.toUpperCase().replaceAll("-", "_")}__`;
}

/**
 * `servers`: the roster's servers (schema-valid). `serviceOf(binding)`: the bundle Worker's service name for a
 * roster binding, or undefined. Returns `{ vars: Map<service, Record<name, value>>, errors: string[] }`; every
 * error names the roster path.
 */
export function renderBundleEnv(servers, serviceOf) {
  const vars = new Map();
  const errors = [];
  const origin = new Map();
  servers.forEach((s, i) => {
    const env = s.env ?? {};
    if (s.kind !== "bundle" || Object.keys(env).length === 0) return;
    const service = serviceOf(s.bundle);
    if (service === undefined) {
      errors.push(`servers[${i}].env: slug "${s.slug}" names binding ${s.bundle}, which is no bundle Worker of this tree`);
      return;
    }
    const own = slugNamespace(s.slug);
    const into = vars.get(service) ?? {};
    vars.set(service, into);
    const put = (name, value, where) => {
      const key = `${service}\u0000${name}`;
      const prior = origin.get(key);
      if (prior !== undefined && into[name] !== value) {
        errors.push(`${where}: renders ${name} on ${service}, which ${prior} already sets to a different value`);
        return;
      }
      origin.set(key, prior ?? where);
      into[name] = value;
    };
    for (const [name, value] of Object.entries(env)) {
      const where = `servers[${i}].env.${name}`;
      if (name.includes("__")) {
        if (!name.startsWith(own) || name.length === own.length) errors.push(`${where}: a name holding "__" must be in slug "${s.slug}"'s own namespace (${own}<NAME>)`);
        else put(name, value, where);
        continue;
      }
      put(`${own}${name}`, value, where);
      put(name, value, where);
    }
  });
  return { vars, errors };
}

const BEGIN = "# --- rendered from strad.dev.yaml servers[].env by scripts/stack.mjs: edits between these lines are replaced ---";
const END = "# --- end of the rendered roster env ---";

/** A value dotenv reads back exactly: no quote, backslash or line break (dotenv does not unescape them). */
export function devVarsProblem(name, value) {
  return /["\\\r\n]/.test(value) ? `${name}: a value holding a quote, a backslash or a line break cannot be written to .dev.vars` : undefined;
}

/** Rewrites the rendered block of a .dev.vars file (creating the file if need be); returns the problems, if any. */
export function writeRenderedBlock(file, vars) {
  const problems = Object.entries(vars)
    .map(([name, value]) => devVarsProblem(name, value))
    .filter((p) => p !== undefined);
  if (problems.length > 0) return problems;
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const start = text.indexOf(BEGIN);
  const stop = text.indexOf(END);
  const kept = start >= 0 && stop > start ? text.slice(0, start) + text.slice(stop + END.length).replace(/^\n/, "") : text;
  const entries = Object.entries(vars);
  const block = entries.length === 0 ? "" : `${BEGIN}\n${entries.map(([k, v]) => `${k}="${v}"`).join("\n")}\n${END}\n`;
  const next = block === "" ? kept : `${kept.replace(/\n*$/, kept === "" ? "" : "\n")}${block}`;
  if (next !== text) writeFileSync(file, next);
  return [];
}
