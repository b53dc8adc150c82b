// A throwaway copy of the tree's sources for script tests that plant values: no .git, no local state and no
// .dev.vars (so it reads as a fresh clone would), with node_modules linked so wrangler can build from it.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "../../../scripts/workers.mjs";

const LOCAL = ["node_modules", ".git", ".wrangler", ".xdg", ".bench", ".build", "test-output"];
let copies: string[] = [];

/** Copies the tree; every copy is removed after the test that made it (test/setup/tree-copies.ts). */
export function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), "strad-tree-"));
  copies.push(dir);
  cpSync(ROOT, dir, {
    recursive: true,
    filter: (src) => {
      const rel = relative(ROOT, src);
      return !LOCAL.includes(rel.split("/")[0] ?? "") && !rel.endsWith(".dev.vars");
    },
  });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Removes every copy made so far: test/setup/tree-copies.ts calls it after each test of every file. */
export function removeTreeCopies(): void {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  copies = [];
}

export const edit = (root: string, file: string, change: (text: string) => string): void => writeFileSync(join(root, file), change(readFileSync(join(root, file), "utf8")));

/** Adds `line` to the config's top-level [vars] (creating the table at the end if it has none). */
export const addVar = (root: string, config: string, line: string): void =>
  edit(root, config, (t) => (t.includes("\n[vars]\n") ? t.replace("\n[vars]\n", `\n[vars]\n${line}\n`) : `${t.trimEnd()}\n\n[vars]\n${line}\n`));

/** Replaces every placeholder of the checked-in production configs with a plausible operator value. */
export function fillPlaceholders(root: string): void {
  edit(root, "approvals/wrangler.toml", (t) =>
    t
      .replace("https://<your-team>.cloudflareaccess.com", "https://acme.cloudflareaccess.com")
      .replace("<your-access-application-audience-tag>", "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2")
      .replace('pattern = "approvals.example.com"', 'pattern = "approvals.acme.dev"'),
  );
  edit(root, "strad.config.yaml", (t) => t.replaceAll("https://approvals.example.com/", "https://approvals.acme.dev/"));
}
