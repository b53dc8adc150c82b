// Covers scripts/lint.mjs: each rule finds its violation with file and line, stays quiet on look-alikes, and the real tree passes.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { lintText, lintTree } from "../../scripts/lint.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "strad-lint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Finding = { line: number; message: string };
const lint = (rel: string, text: string): Finding[] => lintText(rel, text) as Finding[];
const lines = (...xs: string[]): string => `${xs.join("\n")}\n`;

describe("format rules", () => {
  it("a clean file has no findings", () => {
    expect(lint("worker/a.ts", lines("export const a = 1;", "", "// done"))).toEqual([]);
  });

  it("a tab is found on its line", () => {
    expect(lint("worker/a.ts", lines("const a = 1;", "\tconst b = 2;"))).toEqual([{ line: 2, message: expect.stringContaining("tab") }]);
  });

  it("trailing whitespace is found on its line, in any text file", () => {
    expect(lint("worker/a.ts", lines("const a = 1; ", "const b = 2;"))).toEqual([{ line: 1, message: "trailing whitespace" }]);
    expect(lint("bundles/x/wrangler.toml", lines('name = "x"', "main = 'x.ts'  "))).toEqual([{ line: 2, message: "trailing whitespace" }]);
  });

  it("a file without a final newline is found", () => {
    expect(lint("worker/a.ts", "const a = 1;")).toEqual([{ line: 1, message: "file does not end with a newline" }]);
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
    expect(lint("worker/a.ts", lines("const x = 1;", source))).toEqual([{ line: 2, message: expect.stringMatching(/secret/) }]);
  });

  it("finds a secret in a console call spread over several lines, at the call's line", () => {
    const source = lines("console.log(", '  "headers",', "  authorization,", ");");
    expect(lint("worker/a.ts", source)).toEqual([{ line: 1, message: expect.stringContaining('"authorization"') }]);
  });

  it.each([
    ["a message that mentions a token in words", 'console.error("token secret X is not seeded");'],
    ["an object key naming secrets, logging only names", 'console.warn(JSON.stringify({ event: "callers_unseeded", secrets: unseeded }));'],
    ["a secret used outside any console call", "const token = env.TOKEN; send(token);"],
    ["a console call in a comment", "// console.log(token)"],
  ])("stays quiet on %s", (_what, source) => {
    expect(lint("worker/a.ts", lines(source))).toEqual([]);
  });
});

describe("no focused or skipped tests", () => {
  // The fixtures are assembled, so that no search of the repository for skipped tests mistakes them for one.
  const call = (fn: string, modifier: string, gap = "") => `${fn}.${modifier}${gap}(`;
  const fixtures = [call("it", "only"), call("describe", "only"), call("it", "skip"), call("test", "skip"), call("describe", "skipIf"), call("it", "todo"), call("it", "skip", " ")];
  it.each(fixtures)("finds %s in a test file", (call) => {
    expect(lint("test/worker/a.test.ts", lines('import { it } from "vitest";', `${call}"x", () => {});`))).toEqual([
      { line: 2, message: expect.stringContaining("every test runs") },
    ]);
  });

  it("stays quiet on the words in a string or a comment", () => {
    expect(lint("test/worker/a.test.ts", lines(`const s = "${call("it", "only")}";`, `// ${call("it", "skip")} is not allowed`))).toEqual([]);
  });
});

describe("no explicit any", () => {
  it.each(["let a: any = 1;", "const b = x as any;", "const c = <any>x;", "let d: any[] = [];", "let e: Record<string, any> = {};", "f<any, string>();", "function g(h: any) {}"])(
    "finds %s outside tests",
    (source) => {
      expect(lint("worker/a.ts", lines("const ok = 1;", source))).toEqual([{ line: 2, message: expect.stringContaining("explicit any") }]);
    },
  );

  it("allows it in a test file", () => {
    expect(lint("test/worker/a.test.ts", lines("const a = x as any;"))).toEqual([]);
  });

  it.each([
    ["a word that starts with any", "const anything: number = 1; let many: string;"],
    ["any in a comment", "// returns any value the caller sent"],
    ["any in a string", 'const why = "as any other: any";'],
    ["unknown instead", "let a: unknown = 1;"],
  ])("stays quiet on %s", (_what, source) => {
    expect(lint("worker/a.ts", lines(source))).toEqual([]);
  });

  it("a regex literal holding quotes and backticks does not hide what follows", () => {
    const source = lines("const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;", 'const q = /["]/g;', "let a: any;");
    expect(lint("worker/a.ts", source)).toEqual([{ line: 3, message: expect.stringContaining("explicit any") }]);
  });

  it("nested template literals do not hide what follows", () => {
    const source = lines("const s = `a ${b ? `${c}` : \"d\"} e`;", "const t = { x: `${y}` };", "console.log(token);");
    expect(lint("worker/a.ts", source)).toEqual([{ line: 3, message: expect.stringMatching(/secret/) }]);
  });

  it("a division is not read as a regex", () => {
    expect(lint("worker/a.ts", lines("const half = total / 2; const q = a / b;", "let a: any;"))).toEqual([{ line: 2, message: expect.stringContaining("explicit any") }]);
  });
});

describe("the tree", () => {
  const put = (rel: string, text: string) => {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  put("worker/bad.ts", lines("export const a: any = 1;", "console.log(token);"));
  put("test/worker/bad.test.ts", lines("it.only('x', () => {});"));
  put("scripts/ok.mjs", lines("export const ok = 1;"));
  put("worker/node_modules/dep.ts", lines("export const a: any = 1;"));
  put("test/fakes/.wrangler/state.js", "let\tnot_ours");
  put("elsewhere/not-linted.ts", lines("export const a: any = 1;"));

  it("lists findings as path:line: message over the linted folders only", () => {
    expect(lintTree(dir)).toEqual([
      "test/worker/bad.test.ts:1: .only( in a test: every test runs, none is focused or skipped",
      "worker/bad.ts:1: explicit any (name the type, or use unknown)",
      'worker/bad.ts:2: console.log logs "token", which is named like a secret',
    ]);
  });

  it("the command exits 1 and prints them, or exits 0", { timeout: 30_000 }, async () => {
    const run = (root: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [join(ROOT, "scripts/lint.mjs"), root], { encoding: "utf8" }, (error, stdout, stderr) => {
          resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
        });
      });
    const bad = await run(dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("worker/bad.ts:2: console.log");
    expect(bad.stderr).toContain("lint: 3 problem(s)");
    const clean = join(dir, "elsewhere");
    expect(await run(clean)).toMatchObject({ code: 0, stdout: "lint: ok\n" });
  });

  it("the repository passes", () => {
    expect(lintTree(ROOT)).toEqual([]);
  });
});
