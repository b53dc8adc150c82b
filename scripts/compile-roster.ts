// The gateway's [build] command (wrangler.toml): the checked-in rosters held to the schema at build time, so the
// deployed gateway's start neither parses YAML nor evaluates zod (docs/bench.md, cold starts). Each roster becomes
// .build/<name>.roster.js, whose default export is what parseRoster makes of it: the validated roster, defaults
// filled, or its errors, which the gateway then answers every /mcp request 503 for, as it did when it parsed the
// roster at its start (worker/app.ts gatewayFor). worker/index.ts imports strad.config's, worker/dev.ts strad.dev's.
// A file is written only when its content changed, so `wrangler dev` watching the rosters does not rebuild in a loop.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RosterResult } from "../worker/roster";
import { parseRoster } from "../worker/roster-text";

/** The rosters the gateway's entries carry, by their file name at the tree's root. */
export const COMPILED_ROSTERS = ["strad.config.yaml", "strad.dev.yaml"] as const;

/** Where the compiled form of `file` is written, under the tree's root. */
export const compiledPath = (root: string, file: string): string => join(root, ".build", file.replace(/\.yaml$/, ".roster.js"));

/** The module a roster's text compiles to. */
export function compiledModule(result: RosterResult, file: string): string {
  return `// Compiled from ${file} by scripts/compile-roster.ts: do not edit, edit ${file}.\nexport default ${JSON.stringify(result)};\n`;
}

export function compileRosters(root: string): { file: string; ok: boolean; written: boolean }[] {
  return COMPILED_ROSTERS.map((file) => {
    const result = parseRoster(readFileSync(join(root, file), "utf8"));
    const out = compiledPath(root, file);
    const text = compiledModule(result, file);
    const written = !existsSync(out) || readFileSync(out, "utf8") !== text;
    if (written) {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, text);
    }
    return { file, ok: result.ok, written };
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  // wrangler runs a [build] command in the directory it was started from: the tree's root for every npm script.
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  for (const r of compileRosters(root)) {
    // An invalid roster still compiles (the gateway serves its 503); `npm run check-config` names its errors.
    if (!r.ok) console.error(`${r.file} is invalid: the gateway will answer 503 until it is fixed (npm run check-config names the errors)`);
  }
}
