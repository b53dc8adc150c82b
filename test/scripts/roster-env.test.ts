// Covers scripts/roster-env.mjs: how the roster's servers[].env becomes a bundle Worker's variables (issue 14 #4),
// for `npm run deploy` and for the local stack's .dev.vars, and that its slug namespace is contract/slug.ts's.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { slugNamespace as contractNamespace } from "../../contract/slug";
// @ts-expect-error: plain ESM helper without types
import { renderBundleEnv, slugNamespace, writeRenderedBlock } from "../../scripts/roster-env.mjs";

const services: Record<string, string> = { ECHO: "strad-bundle-echo", GOOGLE: "strad-bundle-google" };
const serviceOf = (binding: string) => services[binding];
const server = (slug: string, env: Record<string, string>, bundle = "ECHO") => ({ slug, kind: "bundle", bundle, path: `/${slug}`, env });
const render = (...servers: object[]) => {
  const { vars, errors } = renderBundleEnv(servers, serviceOf);
  return { vars: Object.fromEntries(vars) as Record<string, Record<string, string>>, errors: errors as string[] };
};

describe("renderBundleEnv", () => {
  it("spells a slug's namespace as contract/slug.ts does", () => {
    for (const slug of ["echo", "gmail-rw-external", "a", "x-1-y", "pads2"]) expect(slugNamespace(slug)).toBe(contractNamespace(slug));
  });

  it("renders a bare name as the slug's own <SLUG>__NAME and as the bundle-wide NAME", () => {
    expect(render(server("echo-a", { GREETING: "hi" }))).toEqual({ vars: { "strad-bundle-echo": { ECHO_A__GREETING: "hi", GREETING: "hi" } }, errors: [] });
  });

  it("keeps a name already in the slug's own namespace as written", () => {
    expect(render(server("echo-a", { ECHO_A__LIMIT: "3" })).vars).toEqual({ "strad-bundle-echo": { ECHO_A__LIMIT: "3" } });
  });

  it("refuses a name in another slug's namespace, naming the roster path, and renders nothing for it", () => {
    const { vars, errors } = render(server("echo-a", { GMAIL_AGENT__GMAIL_REFRESH_TOKEN: "x" }));
    expect(errors).toEqual([`servers[0].env.GMAIL_AGENT__GMAIL_REFRESH_TOKEN: a name holding "__" must be in slug "echo-a"'s own namespace (ECHO_A__<NAME>)`]);
    expect(vars["strad-bundle-echo"]).toEqual({});
  });

  it("refuses the bare namespace itself (ECHO_A__ with no name)", () => {
    expect(render(server("echo-a", { ECHO_A__: "x" })).errors).toHaveLength(1);
  });

  it("keeps two slugs of one bundle apart, and refuses a bare name they give different values", () => {
    expect(render(server("one", { GREETING: "a" }), server("two", { GREETING: "a" })).vars["strad-bundle-echo"]).toEqual({ ONE__GREETING: "a", TWO__GREETING: "a", GREETING: "a" });
    const clash = render(server("one", { GREETING: "a" }), server("two", { GREETING: "b" }));
    expect(clash.errors).toEqual(["servers[1].env.GREETING: renders GREETING on strad-bundle-echo, which servers[0].env.GREETING already sets to a different value"]);
    expect(clash.vars["strad-bundle-echo"]?.GREETING).toBe("a");
  });

  it("puts each bundle's variables on its own Worker only", () => {
    const { vars } = render(server("one", { A: "1" }), server("mail", { B: "2" }, "GOOGLE"));
    expect(vars).toEqual({ "strad-bundle-echo": { ONE__A: "1", A: "1" }, "strad-bundle-google": { MAIL__B: "2", B: "2" } });
  });

  it("skips remote servers and servers without env, and names a binding that is no bundle Worker", () => {
    expect(render({ slug: "r", kind: "remote-http", url: "https://x/", env: { A: "1" } }, server("quiet", {})).vars).toEqual({});
    expect(render(server("lost", { A: "1" }, "NOPE")).errors).toEqual(['servers[0].env: slug "lost" names binding NOPE, which is no bundle Worker of this tree']);
  });
});

describe("writeRenderedBlock (the local stack's .dev.vars)", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const file = () => {
    dir = mkdtempSync(join(tmpdir(), "strad-roster-env-"));
    return join(dir, ".dev.vars");
  };

  it("adds the block after the developer's own lines, replaces it on the next run, and removes it when the roster has none", () => {
    const path = file();
    writeFileSync(path, 'OWN="mine"\n');
    expect(writeRenderedBlock(path, { ECHO__GREETING: "hi" })).toEqual([]);
    const once = readFileSync(path, "utf8");
    expect(once.startsWith('OWN="mine"\n# --- rendered')).toBe(true);
    expect(once).toContain('ECHO__GREETING="hi"\n');
    writeRenderedBlock(path, { ECHO__GREETING: "bye" });
    const twice = readFileSync(path, "utf8");
    expect(twice).toContain('ECHO__GREETING="bye"');
    expect(twice).not.toContain('"hi"');
    expect(twice.match(/# --- rendered/g)).toHaveLength(1);
    writeRenderedBlock(path, {});
    expect(readFileSync(path, "utf8")).toBe('OWN="mine"\n');
  });

  it.each([
    ["a quote", 'say "hi"'],
    ["a backslash", "a\\b"],
    ["a line break", "a\nB=1"],
  ])("refuses a value holding %s (dotenv would read it back changed) and writes nothing", (_what, value) => {
    const path = file();
    writeFileSync(path, 'OWN="mine"\n');
    expect(writeRenderedBlock(path, { X: value })).toEqual(["X: a value holding a quote, a backslash or a line break cannot be written to .dev.vars"]);
    expect(readFileSync(path, "utf8")).toBe('OWN="mine"\n');
  });
});
