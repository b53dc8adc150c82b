// Covers the gateway's roster compiled at build time (scripts/compile-roster.ts, wrangler.toml's [build] command): each
// checked-in roster becomes the module worker/index.ts and worker/dev.ts import, holding exactly what parseRoster
// makes of its text (the valid roster with its defaults, or its errors), so the gateway's start parses no YAML and
// evaluates no zod; an invalid roster still compiles and the gateway answers 503 for it; a file is rewritten only
// when what it holds changed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { COMPILED_ROSTERS, compiledModule, compiledPath, compileRosters } from "../../scripts/compile-roster";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "../../scripts/workers.mjs";
import { gatewayFor } from "../../worker/app";
import type { GatewayEnv } from "../../worker/mcp";
import { parseRoster } from "../../worker/roster-text";
import type { RosterResult } from "../../worker/roster-use";
import { executionContext } from "../worker/helpers/gateway";

const dirs: string[] = [];
const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "strad-compile-roster-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

/** The compiled module's default export, imported as the bundler would evaluate it (a fresh URL each time). */
async function load(path: string): Promise<RosterResult> {
  const url = `${pathToFileURL(path).href}?t=${Date.now()}-${Math.random()}`;
  return ((await import(/* @vite-ignore */ url)) as { default: RosterResult }).default;
}

/** A tree holding the two rosters the gateway compiles, with the given texts. */
function treeWith(texts: Record<(typeof COMPILED_ROSTERS)[number], string>): string {
  const root = scratch();
  for (const [file, text] of Object.entries(texts)) writeFileSync(join(root, file), text);
  return root;
}

const VALID = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
gateway:
  elicitation:
    allowedUrlPrefixes: [ "https://approvals.example.com/s/" ]
`;
/** Invalid twice over: a caller kind that does not exist and a server without entitlements; it names a secret's value nowhere. */
const INVALID = `callers:
  - { id: alice, kind: robot, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [] }
`;

describe("the gateway's compiled roster", () => {
  it.each(COMPILED_ROSTERS)("the checked-in %s compiles to exactly what parseRoster makes of it, through the module the entry imports", async (file) => {
    const parsed = parseRoster(readFileSync(join(ROOT, file), "utf8"));
    expect(parsed.ok).toBe(true);
    const out = join(scratch(), "roster.js");
    writeFileSync(out, compiledModule(parsed, file));
    // Strict: a value JSON cannot carry (undefined, a Date, a RegExp, a Map) would differ here.
    expect(await load(out)).toStrictEqual(parsed);
  });

  it("compiles each roster beside the other under .build/, the path the entries import", async () => {
    const root = treeWith({ "strad.config.yaml": VALID, "strad.dev.yaml": INVALID });
    expect(compileRosters(root)).toEqual([
      { file: "strad.config.yaml", ok: true, written: true },
      { file: "strad.dev.yaml", ok: false, written: true },
    ]);
    expect(compiledPath(root, "strad.config.yaml")).toBe(join(root, ".build", "strad.config.roster.js"));
    expect(compiledPath(root, "strad.dev.yaml")).toBe(join(root, ".build", "strad.dev.roster.js"));
    expect(readFileSync(join(ROOT, "worker/index.ts"), "utf8")).toContain('from "../.build/strad.config.roster.js"');
    expect(readFileSync(join(ROOT, "worker/dev.ts"), "utf8")).toContain('from "../.build/strad.dev.roster.js"');
    expect(await load(compiledPath(root, "strad.config.yaml"))).toStrictEqual(parseRoster(VALID));
    const invalid = await load(compiledPath(root, "strad.dev.yaml"));
    expect(invalid).toStrictEqual(parseRoster(INVALID));
    expect(invalid.ok ? [] : invalid.errors.map((e) => e.path)).toEqual(["callers[0].kind", "servers[0].entitlements"]);
  });

  it("an invalid roster's gateway answers every /mcp request 503 and logs the paths once per request, never a token", async () => {
    const root = treeWith({ "strad.config.yaml": INVALID, "strad.dev.yaml": VALID });
    compileRosters(root);
    const gateway = gatewayFor(await load(compiledPath(root, "strad.config.yaml")));
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void logged.push(String(line)));
    vi.spyOn(console, "log").mockImplementation(() => {});
    const env = { TOKEN_ALICE: "alice-token-0123456789abcdef" } as unknown as GatewayEnv;
    const request = new Request("https://gateway.test/mcp", {
      method: "POST",
      headers: { authorization: "Bearer alice-token-0123456789abcdef", "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    const response = await (gateway.fetch as NonNullable<ExportedHandler<GatewayEnv>["fetch"]>)(request as never, env, executionContext());
    expect(response.status).toBe(503);
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ error: { message: "the gateway's roster is invalid; see the gateway's logs" } });
    const errors = logged.map((l) => JSON.parse(l) as { event: string; errors?: { path: string }[] }).filter((l) => l.event === "config_error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.errors?.map((e) => e.path)).toEqual(["callers[0].kind", "servers[0].entitlements"]);
    expect([body, ...logged].join("\n")).not.toContain("alice-token-0123456789abcdef");
  });

  it("rewrites a compiled roster only when what it holds changed: a comment leaves both files as they were, a value rewrites its own", () => {
    const root = treeWith({ "strad.config.yaml": VALID, "strad.dev.yaml": VALID });
    compileRosters(root);
    const stamp = (file: string) => statSync(compiledPath(root, file)).mtimeMs;
    const before = COMPILED_ROSTERS.map(stamp);
    // mtime has 1 ms granularity or better here; a rewrite within the same tick would still change the content below.
    writeFileSync(join(root, "strad.config.yaml"), `# a comment only\n${VALID}`);
    expect(compileRosters(root).map((r) => r.written)).toEqual([false, false]);
    expect(COMPILED_ROSTERS.map(stamp)).toEqual(before);
    writeFileSync(join(root, "strad.dev.yaml"), VALID.replace("approvals.example.com", "approvals.acme.dev"));
    expect(compileRosters(root).map((r) => r.written)).toEqual([false, true]);
    expect(readFileSync(compiledPath(root, "strad.dev.yaml"), "utf8")).toContain("https://approvals.acme.dev/s/");
    expect(readFileSync(compiledPath(root, "strad.config.yaml"), "utf8")).not.toContain("acme");
  });

  it("a roster's file that is not there fails the build, naming the file", () => {
    const root = scratch();
    mkdirSync(join(root, ".build"));
    writeFileSync(join(root, "strad.config.yaml"), VALID);
    expect(() => compileRosters(root)).toThrow(/strad\.dev\.yaml/);
  });
});
