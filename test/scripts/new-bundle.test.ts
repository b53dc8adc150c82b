// Covers `npm run new-bundle` (scripts/new-bundle.mjs) on a throwaway copy of the tree: the scaffold passes its own contract test and the roster check, has no public address, answers through the gateway once built as deployed and run on workerd and refuses a call that does not come over its binding, and --remove takes away exactly what it added; a name already in use is refused.
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module without types
import { buildWorker, startRuntime } from "../../scripts/bench-runtime.mjs";
// @ts-expect-error: a plain ES module without types
import { scaffoldFiles } from "../../scripts/bundle-templates.mjs";
// @ts-expect-error: a plain ES module without types
import { violations } from "../../scripts/check-boundaries.mjs";
// @ts-expect-error: a plain ES module without types
import { nameProblems } from "../../scripts/new-bundle.mjs";
// @ts-expect-error: a plain ES module without types
import { discoverWorkers } from "../../scripts/workers.mjs";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const NEW_BUNDLE = join(ROOT, "scripts", "new-bundle.mjs");
/** What git keeps out: dependencies, build output, local tool state and local secrets. */
const LOCAL = new Set(["node_modules", "dist", "test-output", "coverage"]);

const tmp = mkdtempSync(join(tmpdir(), "strad-new-bundle-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const read = (rel: string) => readFileSync(join(tmp, rel), "utf8");

/** The tree's source files, not its dependencies (linked) or local state; then the gateway's local secrets, as `npm run dev` seeds them. */
cpSync(ROOT, tmp, {
  recursive: true,
  filter: (src) => {
    if (resolve(src) === ROOT) return true;
    const name = basename(src);
    return !LOCAL.has(name) && (!name.startsWith(".") || name === ".dev.vars.example" || name === ".gitignore");
  },
});
symlinkSync(join(ROOT, "node_modules"), join(tmp, "node_modules"), "dir");
copyFileSync(join(tmp, ".dev.vars.example"), join(tmp, ".dev.vars"));
const before = { wrangler: read("wrangler.toml"), roster: read("strad.dev.yaml"), bundles: discoverWorkers(tmp).bundles.map((b: { dir: string }) => b.dir) };
const scaffolded = execFileSync(process.execPath, [NEW_BUNDLE, "demo2", "--root", tmp], { encoding: "utf8" });

// The scaffold's own contract test (bundleContract on the generated handler and factory), run here as it runs in the tree.
await import(pathToFileURL(join(tmp, "test/bundles/demo2/contract.unit.test.ts")).href);

function run(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(args[0] as string, args.slice(1), { cwd: tmp, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      done({ status: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr });
    });
  });
}

describe("new-bundle demo2", () => {
  it("writes the bundle, its contract test, its binding and its roster server, and says so", () => {
    for (const file of ["bundle.json", "demo2.app.ts", "demo2.tools.ts", "wrangler.toml", ".dev.vars.example", ".dev.vars"]) expect(existsSync(join(tmp, "bundles/demo2", file)), file).toBe(true);
    expect(JSON.parse(read("bundles/demo2/bundle.json"))).toEqual({ mounts: ["/demo2"] });
    // The binding carries the props the kit answers to (docs/rules.md R-CHAN-13).
    expect(read("wrangler.toml")).toBe(
      `${before.wrangler}\n# The demo2 bundle (\`npm run new-bundle demo2\`).\n[[services]]\nbinding = "DEMO2"\nservice = "strad-bundle-demo2"\nprops = { from = "strad-gateway" }\n`,
    );
    const config = read("bundles/demo2/wrangler.toml");
    expect(config).toMatch(/^name = "strad-bundle-demo2"$/m);
    // No public address of its own (docs/rules.md R-DEPLOY-4).
    expect(config).toMatch(/^workers_dev = false$/m);
    expect(config).toMatch(/^preview_urls = false$/m);
    expect(config).toMatch(/^script_name = "strad-gateway"$/m);
    // No loopback address ships: the write URL is local only, in the git-ignored .dev.vars beside the config.
    expect(config).not.toMatch(/^\s*[A-Z_]+\s*=\s*"http/m);
    expect(read("bundles/demo2/.dev.vars")).toMatch(/^WRITE_URL="http:\/\/127\.0\.0\.1:8789\/recorder\/events"$/m);
    expect(read("strad.dev.yaml").startsWith(before.roster.trimEnd())).toBe(true);
    expect(scaffolded).toContain('added the server "demo2" (bundle DEMO2, path /demo2) to strad.dev.yaml');
  });

  it("leaves a roster the check accepts against the new tree", async () => {
    expect(await run(join(ROOT, "node_modules/.bin/tsx"), join(ROOT, "scripts/check-config.ts"), "--root", tmp)).toMatchObject({ status: 0, stdout: "ok\n", stderr: "" });
  }, 60_000);

  it("writes code that typechecks under the tree's settings and passes its lint and format check", async () => {
    writeFileSync(join(tmp, "tsconfig.demo2.json"), JSON.stringify({ extends: "./tsconfig.json", include: ["bundles/demo2", "types"] }));
    expect(await run(join(ROOT, "node_modules/.bin/tsc"), "-p", "tsconfig.demo2.json")).toMatchObject({ status: 0, stdout: "" });
    const biome = await run(join(ROOT, "node_modules/.bin/biome"), "check", "--error-on-warnings", "bundles/demo2", "test/bundles/demo2");
    expect(biome.status, biome.stdout + biome.stderr).toBe(0);
    // The lint's module boundaries too (scripts/check-boundaries.mjs): what it crosses, and what it would load at start.
    const files = Object.entries(scaffoldFiles("demo2", tmp) as Record<string, string>).map(([path, text]) => ({ path, text }));
    expect(files.map((f) => f.path)).toContain("bundles/demo2/demo2.tools.ts");
    expect(violations(files)).toEqual([]);
  }, 60_000);
});

describe("the scaffold, built as deployed with the gateway and every bundle, on workerd", () => {
  let runtime: { url: string; miniflare: { getWorker: (name: string) => Promise<{ fetch: typeof fetch }> }; stop: () => Promise<void> } | undefined;
  let demo2: Record<string, any> = {};
  const token = /^STRAD_TOKEN_DEV_SESSION="([^"]+)"$/m.exec(read(".dev.vars.example"))?.[1];

  beforeAll(async () => {
    const found = discoverWorkers(tmp);
    expect(found.bundles.map((b: { dir: string }) => b.dir)).toEqual([...before.bundles, "demo2"].sort());
    const into = join(tmp, ".build");
    const [gateway, ...bundles] = [found.gateway, ...found.bundles].map((w: { config: string }) => buildWorker(w.config, { into, root: tmp }));
    demo2 = bundles.find((b: { name: string }) => b.name === "strad-bundle-demo2") ?? {};
    // Nothing here may write anywhere: the write URL points at a port nothing listens on.
    const quiet = { ...demo2, bindings: { ...demo2.bindings, WRITE_URL: "http://127.0.0.1:9/nothing" } };
    runtime = await startRuntime([gateway, ...bundles.map((b: { name: string }) => (b.name === demo2.name ? quiet : b))]);
    // Builds the gateway and all seven bundles with wrangler (one after another, 5-15 s each on 2 loaded cores) and
    // starts them on workerd: 90 s ran out at load 7 once the mailbox bundle was added, so 240 s.
  }, 240_000);
  afterAll(() => runtime?.stop());

  /** One JSON-RPC request through the gateway to ?servers=demo2, answered as JSON or as an event stream. */
  async function rpc(id: number, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
    const response = await fetch(`${runtime?.url}/mcp?servers=demo2`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const stream = response.headers.get("content-type")?.includes("text/event-stream") === true;
    const messages = stream
      ? text
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => JSON.parse(l.slice(5)))
      : [JSON.parse(text)];
    return messages.find((m) => m.id === id);
  }

  it("reads the bundle's local write URL from the .dev.vars beside its config, as wrangler dev does", () => {
    expect(demo2.bindings?.WRITE_URL).toBe("http://127.0.0.1:8789/recorder/events");
  });

  it("lists demo2's two tools through the gateway, each with all four annotations", async () => {
    const answer = await rpc(1, "tools/list", {});
    const tools = answer.result.tools as { name: string; annotations: Record<string, unknown> }[];
    expect(tools.map((t) => t.name).sort()).toEqual(["hello", "write_note"]);
    for (const tool of tools) expect(Object.keys(tool.annotations).sort(), tool.name).toEqual(["destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"]);
  });

  it("calls hello through the gateway and the service binding", async () => {
    const answer = await rpc(2, "tools/call", { name: "hello", arguments: { text: "hi" } });
    expect(answer.result).toMatchObject({ content: [{ type: "text", text: "demo2: hi" }] });
    expect(answer.result.isError).not.toBe(true);
  });

  it("refuses a call that did not come over the gateway's binding, before hello runs", async () => {
    // Miniflare's handle on the Worker itself: a request with no binding's props, as a public address would bring.
    const worker = await runtime?.miniflare.getWorker("strad-bundle-demo2");
    const response = await worker?.fetch("https://strad-bundle-demo2.acme.workers.dev/demo2", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "hello", arguments: { text: "direct" } } }),
    });
    expect(response?.status).toBe(403);
    const text = (await response?.text()) ?? "";
    expect(text).toContain("reachable only through the gateway's service binding");
    expect(text).not.toContain("demo2: direct");
  });

  it("write_note refuses without X-Elicitation-Url, saying why", async () => {
    const answer = await rpc(3, "tools/call", { name: "write_note", arguments: { note: "unasked" } });
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toMatch(/^Refused: .*X-Elicitation-Url.*Nothing was read or written\.$/);
  });
});

describe("new-bundle --remove", () => {
  it("refuses, changing nothing, once a file it wrote was edited; --force removes the rest and names what it left", async () => {
    expect((await run(process.execPath, NEW_BUNDLE, "demo3", "--root", tmp)).status).toBe(0);
    writeFileSync(join(tmp, "bundles/demo3/demo3.tools.ts"), `${read("bundles/demo3/demo3.tools.ts")}// an edit\n`);
    const refused = await run(process.execPath, NEW_BUNDLE, "--remove", "demo3", "--root", tmp);
    expect(refused).toMatchObject({ status: 1, stderr: expect.stringContaining("bundles/demo3/demo3.tools.ts was changed") });
    expect(existsSync(join(tmp, "bundles/demo3/bundle.json"))).toBe(true);
    const forced = await run(process.execPath, NEW_BUNDLE, "--remove", "demo3", "--force", "--root", tmp);
    expect(forced).toMatchObject({ status: 0, stderr: expect.stringContaining("bundles/demo3/demo3.tools.ts was changed") });
    expect(existsSync(join(tmp, "bundles/demo3/bundle.json"))).toBe(false);
    expect(existsSync(join(tmp, "bundles/demo3/demo3.tools.ts"))).toBe(true);
    expect(read("strad.dev.yaml")).not.toContain("demo3");
    rmSync(join(tmp, "bundles/demo3"), { recursive: true });
  }, 30_000);

  it("takes away exactly what new-bundle added", async () => {
    const removed = await run(process.execPath, NEW_BUNDLE, "--remove", "demo2", "--root", tmp);
    expect(removed).toMatchObject({ status: 0, stderr: "" });
    expect(read("wrangler.toml")).toBe(before.wrangler);
    expect(read("strad.dev.yaml")).toBe(before.roster);
    expect(existsSync(join(tmp, "bundles/demo2"))).toBe(false);
    expect(existsSync(join(tmp, "test/bundles/demo2"))).toBe(false);
    expect(discoverWorkers(tmp).bundles.map((b: { dir: string }) => b.dir)).toEqual(before.bundles);
  }, 30_000);
});

describe("new-bundle's names", () => {
  it.each([
    ["an existing bundle", "echo", [/bundles\/echo already exists/, /Worker strad-bundle-echo already exists/, /binding, var or secret named ECHO/, /slug "echo"/, /already names binding ECHO/]],
    ["the kit's folder", "kit", [/reserved/, /^bundles\/kit already exists/, /^test\/bundles\/kit already exists/]],
    ["a binding the gateway already has", "calls", [/binding, var or secret named CALLS/]],
    ["a secret the gateway already has", "strad-dev-routes", [/binding, var or secret named STRAD_DEV_ROUTES/]],
    ["capitals", "Demo", [/not a bundle name/]],
    ["a leading digit", "9lives", [/not a bundle name/]],
    ["a double hyphen", "a--b", [/not a bundle name/]],
    ["a name too long for a Worker", "a".repeat(41), [/longer than 40/]],
  ])("refuses %s", (_what, name, problems) => {
    const found = nameProblems(name, tmp) as string[];
    expect(found).toHaveLength(problems.length);
    for (const [i, problem] of problems.entries()) expect(found[i]).toMatch(problem);
  });

  it("exits 1 on a refused name and leaves the tree as it was", async () => {
    const wrangler = read("wrangler.toml");
    const roster = read("strad.dev.yaml");
    expect(await run(process.execPath, NEW_BUNDLE, "google", "--root", tmp)).toMatchObject({ status: 1, stderr: expect.stringContaining("bundles/google already exists") });
    expect(read("wrangler.toml")).toBe(wrangler);
    expect(read("strad.dev.yaml")).toBe(roster);
  }, 30_000);
});
