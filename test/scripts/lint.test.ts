// Covers `npm run lint` beyond Biome's own tests: scripts/check-secret-logs.mjs finds a secret in a console call (and
// stays quiet on look-alikes), and biome.jsonc refuses focused and skipped tests and an explicit any outside test/.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { checkTree, secretLogs } from "../../scripts/check-secret-logs.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "strad-lint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Finding = { line: number; message: string };
const check = (text: string): Finding[] => secretLogs(text) as Finding[];
const lines = (...xs: string[]): string => `${xs.join("\n")}\n`;
const put = (root: string, rel: string, text: string) => {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
const run = (args: string[], cwd = ROOT) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(args[0] as string, args.slice(1), { cwd, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });

describe("no secret in a console call", () => {
  it.each([
    ["a token variable", "console.log(token);"],
    ["a property named like a secret", "console.info(caller.bearerToken);"],
    ["the Authorization header read by name", 'console.log(request.headers.get("Authorization"));'],
    ["the X-Elicitation-Url header read by name", "console.warn(headers.get('x-elicitation-url'));"],
    ["an approval URL in a template", "console.error(`asking ${elicitationUrl}`);"],
    ["an Access client secret", "console.debug({ id, cfAccessClientSecret });"],
    ["a secret spread into an object", "console.log(JSON.stringify({ event: 'x', value: env.CF_ACCESS_CLIENT_SECRET }));"],
  ])("finds %s", (_what, source) => {
    expect(check(lines("const x = 1;", source))).toEqual([{ line: 2, message: expect.stringMatching(/secret/) }]);
  });

  it("finds a secret in a console call spread over several lines, at the call's line", () => {
    const source = lines("console.log(", '  "headers",', "  authorization,", ");");
    expect(check(source)).toEqual([{ line: 1, message: expect.stringContaining('"authorization"') }]);
  });

  it.each([
    ["a message that mentions a token in words", 'console.error("token secret X is not seeded");'],
    ["an object key naming secrets, logging only names", 'console.warn(JSON.stringify({ event: "callers_unseeded", secrets: unseeded }));'],
    ["a secret used outside any console call", "const token = env.TOKEN; send(token);"],
    ["a console call in a comment", "// console.log(token)"],
  ])("stays quiet on %s", (_what, source) => {
    expect(check(lines(source))).toEqual([]);
  });

  it("a regex literal holding quotes and backticks does not hide what follows", () => {
    const source = lines("const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;", 'const q = /["]/g;', "console.log(token);");
    expect(check(source)).toEqual([{ line: 3, message: expect.stringMatching(/secret/) }]);
  });

  it("nested template literals do not hide what follows", () => {
    const source = lines('const s = `a ${b ? `${c}` : "d"} e`;', "const t = { x: `${y}` };", "console.log(token);");
    expect(check(source)).toEqual([{ line: 3, message: expect.stringMatching(/secret/) }]);
  });

  it("a division is not read as a regex", () => {
    const source = lines("const half = total / 2; const q = a / b;", "console.log(password);");
    expect(check(source)).toEqual([{ line: 2, message: expect.stringContaining('"password"') }]);
  });
});

describe("the secret-log check over a tree", () => {
  const tree = join(dir, "tree");
  put(tree, "worker/bad.ts", lines("export const a = 1;", "console.log(token);"));
  put(tree, "approvals/page/bad.client.js", lines('console.info(headers.get("cookie"));'));
  put(tree, "scripts/ok.mjs", lines("export const ok = 1;"));
  put(tree, "worker/node_modules/dep.js", lines("console.log(token);"));
  put(tree, "test/fakes/.wrangler/state.js", lines("console.log(token);"));
  put(tree, "elsewhere/not-checked.ts", lines("console.log(token);"));

  it("lists findings as path:line: message over the checked folders only", () => {
    expect(checkTree(tree)).toEqual([
      "approvals/page/bad.client.js:1: console.info logs the cookie header, which carries a secret",
      'worker/bad.ts:2: console.log logs "token", which is named like a secret',
    ]);
  });

  it("the command exits 1 and prints them, or exits 0", { timeout: 30_000 }, async () => {
    const script = join(ROOT, "scripts/check-secret-logs.mjs");
    const bad = await run([process.execPath, script, tree]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("worker/bad.ts:2: console.log");
    expect(bad.stderr).toContain("secret logs: 2 problem(s)");
    expect(await run([process.execPath, script, join(tree, "elsewhere")])).toMatchObject({ code: 0, stdout: "secret logs: ok\n" });
  });

  it("the repository passes", () => {
    expect(checkTree(ROOT)).toEqual([]);
  });
});

describe("biome.jsonc", () => {
  // The fixtures are assembled, so that no search of the repository for skipped tests mistakes them for one.
  const call = (fn: string, modifier: string) => `${fn}.${modifier}(`;
  const testFile = lines(
    'import { describe, it, test } from "vitest";',
    `${call("it", "only")}"a", () => {});`,
    `${call("describe", "only")}"b", () => {});`,
    `${call("it", "skip")}"c", () => {});`,
    `${call("test", "skip")}"d", () => {});`,
    `${call("describe", "skipIf")}true)("e", () => {});`,
    `${call("it", "runIf")}false)("f", () => {});`,
    `${call("it", "todo")}"g");`,
    'it("h", () => {});',
    "export const loose = {} as any;",
  );

  it("refuses every focused or skipped test, and an explicit any outside test/", { timeout: 30_000 }, async () => {
    const project = join(dir, "biome");
    for (const file of ["biome.jsonc", ".gitignore", "scripts/no-conditional-tests.grit"]) {
      mkdirSync(dirname(join(project, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(project, file));
    }
    put(project, "test/worker/a.test.ts", testFile);
    put(project, "worker/a.ts", lines("export const loose = {} as any;"));
    const biome = join(ROOT, "node_modules/.bin/biome");
    const { stdout } = await run([biome, "lint", "--reporter=json", "--max-diagnostics=none", "."], project);
    const report = JSON.parse(stdout) as { diagnostics: { category: string; location: { path: string; start: { line: number } } }[] };
    const found = report.diagnostics.map((d) => `${d.location.path}:${d.location.start.line} ${d.category}`).sort();
    expect(found).toEqual([
      "test/worker/a.test.ts:2 lint/suspicious/noFocusedTests",
      "test/worker/a.test.ts:3 lint/suspicious/noFocusedTests",
      "test/worker/a.test.ts:4 lint/suspicious/noSkippedTests",
      "test/worker/a.test.ts:5 lint/suspicious/noSkippedTests",
      "test/worker/a.test.ts:6 plugin",
      "test/worker/a.test.ts:7 plugin",
      "test/worker/a.test.ts:8 plugin",
      "worker/a.ts:1 lint/suspicious/noExplicitAny",
    ]);
  });
});
