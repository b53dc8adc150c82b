// Covers docs/rules.md against the tree: every module and test file it cites exists and every test it names is in
// its file, each rule has a test or is listed among the rules without one, every docs/rules.md id a comment cites
// is defined, and no comment in the tree cites a document that is not in this repository.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOC = "docs/rules.md";
const SELF = "test/scripts/rules-doc.test.ts";
/** The folders whose comments must stand on their own; the specification outside the repository is not among them. */
const SOURCE_DIRS = ["contract", "worker", "durable-objects", "bundles", "approvals", "scripts", "test"];
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs|toml|md)$/;
const ID = /\bR-[A-Z]+-\d+\b/g;

interface Rule {
  id: string;
  modules: string[];
  tests: { file: string; name: string }[];
  untested: boolean;
}

/** The rules of the doc, in order, and the ids its "Rules without a test" section lists. */
function parseRules(doc: string): { rules: Rule[]; listedUntested: string[] } {
  const rules: Rule[] = [];
  const listedUntested: string[] = [];
  let rule: Rule | undefined;
  let inUntestedList = false;
  for (const line of doc.split("\n")) {
    const heading = /^### (R-[A-Z]+-\d+) — /.exec(line);
    if (heading !== null) {
      rule = { id: heading[1] as string, modules: [], tests: [], untested: false };
      rules.push(rule);
      continue;
    }
    if (line.startsWith("## ")) {
      rule = undefined;
      inUntestedList = line === "## Rules without a test";
      continue;
    }
    if (inUntestedList) {
      const listed = /^- (R-[A-Z]+-\d+) — /.exec(line);
      if (listed !== null) listedUntested.push(listed[1] as string);
      continue;
    }
    if (rule === undefined) continue;
    if (line.startsWith("- Enforced in: ")) rule.modules.push(...[...line.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
    else if (line.startsWith("- Tests: none")) rule.untested = true;
    else {
      // A test is "  - `file` — `name`"; a name holding a backtick is fenced with two.
      const test = /^ {2}- `([^`]+)` — (`+) ?(.*?) ?\2$/.exec(line);
      if (test !== null) rule.tests.push({ file: test[1] as string, name: test[3] as string });
    }
  }
  return { rules, listedUntested };
}

/** What in the doc does not hold; `read` answers a path's text, or undefined when there is no such file. */
function docProblems(doc: string, read: (path: string) => string | undefined): string[] {
  const { rules, listedUntested } = parseRules(doc);
  const problems: string[] = [];
  const defined = new Set<string>();
  for (const rule of rules) {
    if (defined.has(rule.id)) problems.push(`${rule.id} is defined twice`);
    defined.add(rule.id);
    if (rule.modules.length === 0) problems.push(`${rule.id} names no module that enforces it`);
    for (const path of rule.modules) if (read(path) === undefined) problems.push(`${rule.id}: module ${path} does not exist`);
    if (rule.tests.length === 0 && !rule.untested) problems.push(`${rule.id} lists no test and does not say it has none`);
    if (rule.tests.length > 0 && rule.untested) problems.push(`${rule.id} lists tests and also says it has none`);
    if (rule.untested !== listedUntested.includes(rule.id)) problems.push(`${rule.id}: "Tests: none" and the list of rules without a test disagree`);
    for (const { file, name } of rule.tests) {
      const text = read(file);
      if (text === undefined) problems.push(`${rule.id}: test file ${file} does not exist`);
      else if (!text.includes(name)) problems.push(`${rule.id}: ${file} has no test named "${name}"`);
    }
  }
  for (const id of listedUntested) if (!defined.has(id)) problems.push(`the list of rules without a test names ${id}, which is not defined`);
  for (const id of doc.match(ID) ?? []) if (!defined.has(id)) problems.push(`the doc mentions ${id}, which it does not define`);
  return problems;
}

/** The comment text of a source file, line by line (a Markdown file is all prose). */
function commentLines(path: string, text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = text.split("\n");
  let inBlock = false;
  lines.forEach((raw, i) => {
    const trimmed = raw.trim();
    if (path.endsWith(".md")) out.push({ line: i + 1, text: raw });
    else if (path.endsWith(".toml")) {
      const at = raw.indexOf("#");
      if (at !== -1) out.push({ line: i + 1, text: raw.slice(at) });
    } else if (inBlock || trimmed.startsWith("/*") || trimmed.startsWith("*")) {
      out.push({ line: i + 1, text: raw });
      inBlock = !raw.includes("*/") && (inBlock || trimmed.startsWith("/*"));
    } else {
      // A line comment, not the "//" of a URL or of a string.
      const comment = /(?:^|[^:"'`\\])\/\/(.*)$/.exec(raw);
      if (comment !== null) out.push({ line: i + 1, text: comment[1] as string });
    }
  });
  return out;
}

/** Comments that send a reader to the specification outside the repository instead of to docs/rules.md. */
function outsideCitations(path: string, text: string): string[] {
  return commentLines(path, text)
    .filter((c) => /\bseeds? 0\d\d\b/i.test(c.text) || /\bPROTOCOLS\b/.test(c.text))
    .map((c) => `${path}:${c.line}: ${c.text.trim()}`);
}

/** Rule ids a comment cites ("(docs/rules.md R-X-1, R-Y-2)", or a bare "(R-X-3)" beside one) that the doc does not define. */
function unknownCitations(path: string, text: string, defined: ReadonlySet<string>): string[] {
  return commentLines(path, text).flatMap((c) => (c.text.match(ID) ?? []).filter((id) => !defined.has(id)).map((id) => `${path}:${c.line} cites ${id}, which docs/rules.md does not define`));
}

function sourceFiles(dir: string, depth = 0): string[] {
  if (depth > 12) return [];
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir))) {
    if (entry.startsWith(".") || entry === "node_modules") continue;
    const path = `${dir}/${entry}`;
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...sourceFiles(path, depth + 1));
    else if (SOURCE_FILE.test(entry)) out.push(path);
  }
  return out;
}

const readTree = (path: string): string | undefined => {
  const full = join(ROOT, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, "utf8") : undefined;
};
const tree = () => [...SOURCE_DIRS.flatMap((d) => sourceFiles(d)), "README.md", "ARCHITECTURE.md"].filter((p) => p !== SELF);
const doc = readFileSync(join(ROOT, DOC), "utf8");
const defined = new Set(parseRules(doc).rules.map((r) => r.id));

describe("docs/rules.md holds to the tree", () => {
  it("cites only modules and test files that exist, and only tests those files hold", () => {
    expect(docProblems(doc, readTree)).toEqual([]);
    expect(defined.size).toBeGreaterThan(50);
  });

  it("defines every id a comment in the tree cites", () => {
    expect(tree().flatMap((path) => unknownCitations(path, readTree(path) ?? "", defined))).toEqual([]);
  });

  it("is the citation comments use: none sends a reader to the specification outside the repository", () => {
    expect(tree().flatMap((path) => outsideCitations(path, readTree(path) ?? ""))).toEqual([]);
  });

  it("is linked from README.md and ARCHITECTURE.md", () => {
    for (const path of ["README.md", "ARCHITECTURE.md"]) expect(readTree(path)?.includes("docs/rules.md"), path).toBe(true);
  });
});

describe("each check fails when it should", () => {
  const files: Record<string, string> = { "worker/a.ts": "", "test/a.test.ts": 'it("refuses a bad thing", () => {});' };
  const read = (path: string) => files[path];
  const rule = (id: string, body: string) => `### ${id} — A rule\nWhy.\n${body}\n`;
  const tests = (...lines: string[]) => `- Tests:\n${lines.map((l) => `  - ${l}`).join("\n")}`;
  const untested = (id: string) => rule(id, "- Enforced in: `worker/a.ts`\n- Tests: none");
  const listed = (id: string) => `\n## Rules without a test\n\n- ${id} — why.\n`;

  it("passes a doc whose paths and tests exist", () => {
    const good = `${rule("R-X-1", `- Enforced in: \`worker/a.ts\`\n${tests("`test/a.test.ts` — `refuses a bad thing`")}`)}${untested("R-X-2")}${listed("R-X-2")}`;
    expect(docProblems(good, read)).toEqual([]);
  });

  it.each([
    ["a module that does not exist", rule("R-X-1", `- Enforced in: \`worker/gone.ts\`\n${tests("`test/a.test.ts` — `refuses a bad thing`")}`), /module worker\/gone\.ts does not exist/],
    ["a rule with no module", rule("R-X-1", tests("`test/a.test.ts` — `refuses a bad thing`")), /names no module/],
    ["a test file that does not exist", rule("R-X-1", `- Enforced in: \`worker/a.ts\`\n${tests("`test/gone.test.ts` — `refuses a bad thing`")}`), /test file test\/gone\.test\.ts does not exist/],
    ["a test name its file does not hold", rule("R-X-1", `- Enforced in: \`worker/a.ts\`\n${tests("`test/a.test.ts` — `refuses a good thing`")}`), /has no test named "refuses a good thing"/],
    ["a rule with neither tests nor none", rule("R-X-1", "- Enforced in: `worker/a.ts`"), /lists no test and does not say it has none/],
    ["an untested rule missing from the list", untested("R-X-1"), /disagree/],
    ["a listed rule that names tests", `${rule("R-X-1", `- Enforced in: \`worker/a.ts\`\n${tests("`test/a.test.ts` — `refuses a bad thing`")}`)}${listed("R-X-1")}`, /disagree/],
    ["an id defined twice", `${untested("R-X-1")}${untested("R-X-1")}${listed("R-X-1")}`, /R-X-1 is defined twice/],
    ["a mention of an id the doc does not define", rule("R-X-1", `As R-X-9 says.\n- Enforced in: \`worker/a.ts\`\n${tests("`test/a.test.ts` — `refuses a bad thing`")}`), /mentions R-X-9/],
  ])("finds %s", (_what, bad, problem) => {
    expect(docProblems(bad, read)).toContainEqual(expect.stringMatching(problem));
  });

  it("reads a test name fenced with two backticks", () => {
    expect(parseRules(rule("R-X-1", tests("`test/a.test.ts` — `` asks a `when` tool ``"))).rules[0]?.tests).toEqual([{ file: "test/a.test.ts", name: "asks a `when` tool" }]);
  });

  it("finds a cited id the doc does not define, in a list of several too, or on the comment's next line", () => {
    const ids = new Set(["R-X-1"]);
    expect(unknownCitations("worker/a.ts", "// why (docs/rules.md R-X-1).", ids)).toEqual([]);
    expect(unknownCitations("worker/a.ts", "// why (docs/rules.md R-X-1, R-X-2).", ids)).toEqual(["worker/a.ts:1 cites R-X-2, which docs/rules.md does not define"]);
    expect(unknownCitations("worker/a.ts", "// why (docs/rules.md R-X-1,\n// R-X-3).", ids)).toEqual(["worker/a.ts:2 cites R-X-3, which docs/rules.md does not define"]);
  });

  it.each([
    ["a line comment", "worker/a.ts", "const a = 1; // why (seed 000, a title)"],
    ["a block comment line", "worker/a.ts", "/**\n * why (seeds 001 and 004)\n */"],
    ["a protocol notes citation", "approvals/a.ts", "// the endpoints (PROTOCOLS §1)"],
    ["a toml comment", "bundles/a/wrangler.toml", "# see seed 003"],
    ["a README line", "approvals/README.md", "It speaks the protocol (PROTOCOLS.md §1)."],
  ])("finds an outside citation in %s", (_what, path, text) => {
    expect(outsideCitations(path, text)).toHaveLength(1);
  });

  it("leaves code, URLs and a fake's seed data alone", () => {
    expect(outsideCitations("worker/a.ts", 'const url = "https://example.com/seed 000"; // fine\nconst seed = seedMailbox(email);')).toEqual([]);
  });
});
