// Covers `npm run check-config [file] [--root <dir>]` (scripts/check-config.ts): run as a child process, "ok" and exit 0, or every error with its path and exit 1; and the check of each bundle server against the tree (binding, service, the bundle's bundle.json).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type BundleTree, checkConfigText, parseManifest, readBundleTree } from "../../scripts/check-config";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = join(ROOT, "node_modules", ".bin", "tsx");
const dir = mkdtempSync(join(tmpdir(), "strad-check-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the script as `npm run check-config` does; children run concurrently since each pays tsx's start-up. */
function run(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ["scripts/check-config.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const GOOD = `gateway:
  elicitation:
    allowedUrlPrefixes:
      - https://zimmer.tadasant.com/api/v1/elicitations/session/
callers:
  - id: s1
    kind: session
    roles: [user]
    tokenSecret: TOKEN_S1
servers:
  - slug: gmail-rw-external
    kind: bundle
    bundle: GOOGLE
    path: /gmail-rw-external
    entitlements: [user]
    confirmations: true
    timeoutMs: 240000
    confirmationHeaders:
      CF-Access-Client-Id: "\${ZIMMER_CF_ACCESS_CLIENT_ID}"
`;

const BAD = `gateway:
  elicitation:
    allowedUrlPrefixes:
      - https://zimmer.tadasant.com/api/v1/elicitations/session
servers:
  - slug: a
    kind: bundle
    bundle: B
    path: /a
    entitlements: [u]
    confirmations: true
    skipConfirmations: true
    env:
      MODE: sekret-value-1
  - slug: b
    kind: bundle
    bundle: B
    path: /b
    entitlements: [u]
    confirmationHeaders:
      Content-Type: text/plain
    env:
      MODE: sekret-value-2
  - slug: a
    kind: remote-http
    url: https://remote.example/mcp
    entitlements: [u]
`;

describe.concurrent("check-config", { timeout: 60_000 }, () => {
  it("a valid file prints ok and exits 0", async () => {
    const r = await run(file("good.yaml", GOOD));
    expect(r).toMatchObject({ status: 0, stdout: "ok\n", stderr: "" });
  });

  it("with no argument it checks the checked-in strad.config.yaml", async () => {
    expect(await run()).toMatchObject({ status: 0, stdout: "ok\n" });
  });

  let bad: ReturnType<typeof run> | undefined;
  const runBad = () => (bad ??= run(file("bad.yaml", BAD)));

  it("an invalid file prints every error as <path>: <message> and exits 1", async () => {
    const r = await runBad();
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    for (const line of lines) expect(line).toMatch(/^[^\s:]+(\[\d+\][^\s:]*)*: \S/);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^gateway\.elicitation\.allowedUrlPrefixes\[0\]: prefix path must end in "\/"/),
        expect.stringMatching(/^servers\[0\]\.skipConfirmations: confirmations and skipConfirmations are both true/),
        expect.stringMatching(/^servers\[1\]\.confirmationHeaders: confirmationHeaders without confirmations: true/),
        expect.stringMatching(/^servers\[1\]\.confirmationHeaders\.Content-Type: "Content-Type" is set by the bundle itself/),
        expect.stringMatching(/^servers\[1\]\.env\.MODE: bundle B already has MODE with a different value/),
        expect.stringMatching(/^servers\[2\]\.slug: duplicate slug "a"/),
      ]),
    );
    expect(lines).toHaveLength(6);
  });

  it("an error never echoes a value from the file", async () => {
    const r = await runBad();
    expect(r.status).toBe(1);
    expect(r.stderr).not.toContain("sekret-value");
  });

  it("an unknown key is reported with the path of its object", async () => {
    const r = await run(file("typo.yaml", GOOD.replace("confirmations: true", "confirmatons: true")));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^servers\[0\]: .*"confirmatons"/m);
  });

  it("a YAML syntax error or a duplicate key is reported and exits 1", async () => {
    expect(await run(file("syntax.yaml", "servers: [\n"))).toMatchObject({ status: 1, stderr: expect.stringMatching(/^\(yaml\): /) });
    expect(await run(file("dup.yaml", "callers: []\ncallers: []\n"))).toMatchObject({ status: 1, stderr: expect.stringMatching(/^\(yaml\): /) });
  });

  it("a missing file is reported and exits 1", async () => {
    const missing = join(dir, "nope.yaml");
    expect(await run(missing)).toMatchObject({ status: 1, stderr: `${missing}: cannot read the file (ENOENT)\n` });
  });

  it("issue 26: refuses the dev roster as it was, one shared edge secret sent to the approval service and the scripted approver, naming each path and no value", async () => {
    // Before issue 26 the scripted approver's slugs read the approval service's APPROVALS_CF_ACCESS_CLIENT_* too.
    const shared = readFileSync(join(ROOT, "strad.dev.yaml"), "utf8").replaceAll("${SCRIPTED_CF_ACCESS_CLIENT_", "${APPROVALS_CF_ACCESS_CLIENT_");
    const r = await run(file("shared-secret.yaml", shared));
    expect(r.status).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(
        /^servers\[\d+\]\.confirmationHeaders\.CF-Access-Client-(Id|Secret): \$\{APPROVALS_CF_ACCESS_CLIENT_(ID|SECRET)\} is also sent by servers\[\d+\] \("[a-z0-9-]+"\), which sends it to another origin/,
      );
      expect(line).not.toMatch(/127\.0\.0\.1|dev-access-client/);
    }
    // Each slug asking the scripted approver is named, twice (its two headers).
    const slugs = parseYaml(shared).servers as { slug: string; approvalUrlPrefixes?: string[] }[];
    const scripted = slugs.flatMap((s, i) => (s.approvalUrlPrefixes?.[0]?.includes(":8790/") && s.slug !== "echo-unseeded" ? [i] : []));
    expect(new Set(lines.map((l) => Number(/^servers\[(\d+)\]/.exec(l)?.[1])))).toEqual(new Set(scripted));
    expect(lines).toHaveLength(scripted.length * 2);
  });

  it("more than one argument prints the usage and exits 1", async () => {
    expect(await run("a.yaml", "b.yaml")).toMatchObject({ status: 1, stderr: expect.stringContaining("usage: npm run check-config [file]") });
  });
});

/** The checked-in dev roster (every kind of bundle server) with one server's lines changed. */
const CHECKED_IN = readFileSync(join(ROOT, "strad.dev.yaml"), "utf8");
function rosterWith(from: string, to: string): string {
  expect(CHECKED_IN).toContain(from);
  return CHECKED_IN.replace(from, to);
}
const ECHO_WAIVED = "  - slug: echo-waived\n    kind: bundle\n    bundle: ECHO\n    path: /echo-waived\n";

describe("each bundle server against the tree it deploys with", () => {
  const tree = readBundleTree(ROOT) as BundleTree;

  it.each([
    ["a bare credential, which would reach the shared mount", "OP_CONNECT_HOST", "OP_CONNECT_HOST"],
    ["the slug's own credential", "ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN", "OP_CONNECT_TOKEN"],
  ])("issue 16 review: refuses %s in a server's env, naming it and never its value", (_what, name, base) => {
    const env = '    env:\n      ONEPASSWORD_PROVISIONING__OP_ELICITATION_WRITE: "false"\n';
    const planted = rosterWith(env, `${env}      ${name}: "https://connect.corp.test/value-0123"\n`);
    const r = checkConfigText(planted, tree);
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual([expect.stringMatching(new RegExp(`^servers\\[\\d+\\]\\.env\\.${name}: ${base} is one of bundle ONEPASSWORD \\(bundles/onepassword\\)'s credentials`))]);
    expect(r.lines.join("\n")).not.toContain("value-0123");
  });

  it.each(["strad.config.yaml", "strad.dev.yaml"])("the checked-in %s passes against this tree, whose bundles each list their mounts", (file) => {
    expect(checkConfigText(readFileSync(join(ROOT, file), "utf8"), tree)).toEqual({ ok: true, lines: ["ok"] });
    expect(tree.bundles.map((b) => b.dir)).toEqual(expect.arrayContaining(["echo", "google"]));
    for (const bundle of tree.bundles) expect(bundle.manifest, bundle.dir).toMatchObject({ ok: true });
  });

  it("refuses a path the bundle behind the binding does not serve, naming the slug, the path, the bundle and what it serves", () => {
    const r = checkConfigText(rosterWith(ECHO_WAIVED, ECHO_WAIVED.replace("path: /echo-waived", "path: /echo-typo")), tree);
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual([
      'servers[2].path: slug "echo-waived" mounts /echo-typo, which bundle ECHO (bundles/echo) does not serve; its bundle.json lists /echo, /echo-confirmed, /echo-waived, /echo-unseeded',
    ]);
  });

  it("refuses a binding that no [[services]] entry of wrangler.toml declares", () => {
    const r = checkConfigText(rosterWith(ECHO_WAIVED, ECHO_WAIVED.replace("bundle: ECHO", "bundle: ECHOO")), tree);
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual([
      expect.stringMatching(/^servers\[2\]\.bundle: slug "echo-waived" names binding ECHOO, which no \[\[services\]\] entry of wrangler\.toml declares \(declared: ECHO, GOOGLE/),
    ]);
  });

  it("refuses a binding whose service no bundle folder provides", () => {
    const ghost: BundleTree = { ...tree, services: [...tree.services, { binding: "GHOST", service: "strad-bundle-ghost" }] };
    const r = checkConfigText(rosterWith(ECHO_WAIVED, ECHO_WAIVED.replace("bundle: ECHO", "bundle: GHOST")), ghost);
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual(['servers[2].bundle: slug "echo-waived" names binding GHOST, bound to service strad-bundle-ghost, which no bundles/<name>/wrangler.toml provides']);
  });

  it("refuses a bundle without a valid bundle.json, and every server mounted on it", () => {
    const broken: BundleTree = { ...tree, bundles: tree.bundles.map((b) => (b.dir === "echo" ? { ...b, manifest: parseManifest(undefined) } : b)) };
    const r = checkConfigText(CHECKED_IN, broken);
    expect(r.ok).toBe(false);
    expect(r.lines[0]).toMatch(/^bundles\/echo: has no bundle\.json: a bundle lists the mounts it serves there/);
    expect(r.lines.slice(1)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^servers\[0\]\.path: slug "echo" mounts \/echo on bundle ECHO \(bundles\/echo\), whose bundle\.json does not list its mounts$/)]),
    );
    // One line per echo server of the checked-in roster (echo, -confirmed, -waived, -unseeded, -client, -short, -brief, -scripted, -scripted-brief).
    expect(r.lines).toHaveLength(1 + 9);
  });

  it.each([
    ["not JSON", "{ mounts: [", ["bundle.json is not valid JSON"]],
    ["no mounts", '{ "mounts": [] }', ["bundle.json.mounts: must list at least one mount"]],
    ["a mount twice", '{ "mounts": ["/a", "/a"] }', ["bundle.json.mounts: lists a mount twice"]],
    [
      "a mount that is not a path",
      '{ "mounts": ["a", "/b/../c"] }',
      [expect.stringMatching(/^bundle\.json\.mounts\[0\]: must be "\/" or/), expect.stringMatching(/^bundle\.json\.mounts\[1\]: must be/)],
    ],
    ["an unknown key", '{ "mounts": ["/a"], "mount": ["/b"] }', [expect.stringMatching(/^bundle\.json: .*"mount"/)]],
  ])("reads a manifest with %s as invalid, saying where", (_what, text, problems) => {
    expect(parseManifest(text)).toEqual({ ok: false, problems });
  });

  it.each([
    ["mounts that is another word", '{ "mounts": "every-slug" }', [expect.stringMatching(/^bundle\.json\.mounts: /)]],
    ["per-slug mounts without secrets", '{ "mounts": "per-slug" }', ['bundle.json.secrets: a "per-slug" bundle lists in secrets the credentials that give a slug its mount']],
    [
      "a tool-group default that is not one of its groups",
      '{ "mounts": ["/a"], "toolGroups": { "variable": "GROUPS", "default": "all", "groups": { "reads": ["look"] } } }',
      ["bundle.json.toolGroups.default: default must be one of its groups"],
    ],
    [
      "an empty tool group and a namespaced variable",
      '{ "mounts": ["/a"], "toolGroups": { "variable": "A__GROUPS", "default": "reads", "groups": { "reads": [] } } }',
      [expect.stringMatching(/^bundle\.json\.toolGroups\.variable: holds no "__"/), "bundle.json.toolGroups.groups.reads: must list at least one tool"],
    ],
  ])("issue 15: reads a manifest with %s as invalid, saying where", (_what, text, problems) => {
    expect(parseManifest(text)).toEqual({ ok: false, problems });
  });

  it("leaves the tree alone while the roster itself is invalid: schema errors come first", () => {
    const r = checkConfigText(rosterWith(ECHO_WAIVED, ECHO_WAIVED.replace("bundle: ECHO", "bundle: ECHOO\n    url: https://x.example/")), tree);
    expect(r.lines).toEqual(["servers[2].url: url belongs to remote-http servers only"]);
  });
});

describe("issue 13 #7: a waived slug never shares a mount with an asking one, compared by service", () => {
  /** A tree on disk whose gateway binds GOOGLE and GOOGLE2 to one Worker, and OTHER to another serving the same path. */
  function fixtureRoot(): string {
    const root = mkdtempSync(join(dir, "same-service-"));
    const put = (rel: string, text: string) => {
      mkdirSync(join(root, rel, ".."), { recursive: true });
      writeFileSync(join(root, rel), text);
    };
    const service = (binding: string, name: string) => `\n[[services]]\nbinding = "${binding}"\nservice = "${name}"\n`;
    put("wrangler.toml", `name = "strad-gateway"\n${service("GOOGLE", "strad-bundle-google")}${service("GOOGLE2", "strad-bundle-google")}${service("OTHER", "strad-bundle-other")}`);
    put("approvals/wrangler.toml", 'name = "strad-approvals"\n');
    put("test/fakes/wrangler.toml", 'name = "strad-fakes"\n');
    put("bundles/google/wrangler.toml", 'name = "strad-bundle-google"\n');
    put("bundles/google/bundle.json", '{ "mounts": ["/gmail", "/gmail-agent"] }\n');
    put("bundles/other/wrangler.toml", 'name = "strad-bundle-other"\n');
    put("bundles/other/bundle.json", '{ "mounts": ["/gmail"] }\n');
    return root;
  }
  const fixtureTree = () => readBundleTree(fixtureRoot());
  const roster = (waived: { bundle: string; path: string }) => `servers:
  - slug: gmail-rw
    kind: bundle
    bundle: GOOGLE
    path: /gmail
    entitlements: [user]
    confirmations: true
  - slug: gmail-agent
    kind: bundle
    bundle: ${waived.bundle}
    path: ${waived.path}
    entitlements: [user]
    skipConfirmations: true
`;

  it("refuses a waived slug whose binding names the asking slug's service under another name, on the same path", () => {
    const tree = fixtureTree();
    expect(tree.services).toEqual([
      { binding: "GOOGLE", service: "strad-bundle-google" },
      { binding: "GOOGLE2", service: "strad-bundle-google" },
      { binding: "OTHER", service: "strad-bundle-other" },
    ]);
    // The schema alone, which compares binding names, lets it through.
    expect(checkConfigText(roster({ bundle: "GOOGLE2", path: "/gmail" }))).toEqual({ ok: true, lines: ["ok"] });
    expect(checkConfigText(roster({ bundle: "GOOGLE2", path: "/gmail" }), tree)).toEqual({
      ok: false,
      lines: [
        'servers[1].skipConfirmations: shares service strad-bundle-google and path /gmail with servers[0] ("gmail-rw"), which declares confirmations: true (bindings GOOGLE2 and GOOGLE both resolve to strad-bundle-google in wrangler.toml)',
      ],
    });
  });

  it("accepts the waived slug on its own path of that service, or on the same path of another service", () => {
    const tree = fixtureTree();
    expect(checkConfigText(roster({ bundle: "GOOGLE2", path: "/gmail-agent" }), tree)).toEqual({ ok: true, lines: ["ok"] });
    expect(checkConfigText(roster({ bundle: "OTHER", path: "/gmail" }), tree)).toEqual({ ok: true, lines: ["ok"] });
  });

  it("the script refuses it too, reading the tree with --root", async () => {
    const root = fixtureRoot();
    writeFileSync(join(root, "strad.config.yaml"), roster({ bundle: "GOOGLE2", path: "/gmail" }));
    const r = await run("--root", root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^servers\[1\]\.skipConfirmations: shares service strad-bundle-google and path \/gmail with servers\[0\] \("gmail-rw"\)/);
  }, 60_000);
});

describe.concurrent("check-config against a tree", { timeout: 60_000 }, () => {
  it("the script refuses a roster path its bundle does not serve, naming slug, path and bundle", async () => {
    const r = await run(file("typo-path.yaml", rosterWith(ECHO_WAIVED, ECHO_WAIVED.replace("path: /echo-waived", "path: /echo-typo"))));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^servers\[2\]\.path: slug "echo-waived" mounts \/echo-typo, which bundle ECHO \(bundles\/echo\) does not serve/);
  });

  it("--root checks another tree: there a binding bound to a missing service and a bundle without bundle.json fail", async () => {
    const tree = join(dir, "tree");
    const put = (rel: string, text: string) => {
      mkdirSync(join(tree, rel, ".."), { recursive: true });
      writeFileSync(join(tree, rel), text);
    };
    put("wrangler.toml", 'name = "strad-gateway"\n\n[[services]]\nbinding = "ONE"\nservice = "strad-bundle-one"\n\n[[services]]\nbinding = "GHOST"\nservice = "strad-bundle-ghost"\n');
    put("approvals/wrangler.toml", 'name = "strad-approvals"\n');
    put("test/fakes/wrangler.toml", 'name = "strad-fakes"\n');
    put("bundles/one/wrangler.toml", 'name = "strad-bundle-one"\n');
    put("bundles/one/bundle.json", '{ "mounts": ["/one"] }\n');
    put("bundles/bare/wrangler.toml", 'name = "strad-bundle-bare"\n');
    const servers = (bundle: string, path: string) => `servers:\n  - slug: s\n    kind: bundle\n    bundle: ${bundle}\n    path: ${path}\n    entitlements: [user]\n`;
    put("strad.config.yaml", servers("ONE", "/one"));
    const bare = await run("--root", tree);
    expect(bare.status).toBe(1);
    expect(bare.stderr.trimEnd().split("\n")).toEqual(['bundles/bare: has no bundle.json: a bundle lists the mounts it serves there ({ "mounts": ["/<path>", …] })']);
    put("bundles/bare/bundle.json", '{ "mounts": ["/bare"] }\n');
    expect(await run("--root", tree)).toMatchObject({ status: 0, stdout: "ok\n" });
    const ghost = await run(file("ghost.yaml", servers("GHOST", "/one")), "--root", tree);
    expect(ghost).toMatchObject({ status: 1, stderr: 'servers[0].bundle: slug "s" names binding GHOST, bound to service strad-bundle-ghost, which no bundles/<name>/wrangler.toml provides\n' });
  });

  it("an unknown option prints the usage and exits 1", async () => {
    expect(await run("--rot", ".")).toMatchObject({ status: 1, stderr: expect.stringContaining("usage: npm run check-config [file] [--root <dir>]") });
  });
});

/** Where gmail-ro sits in the checked-in dev roster, and the paths of its Gmail slugs in order (each its own slug's). */
const DEV_SERVERS = (parseYaml(CHECKED_IN) as { servers: { slug: string; bundle?: string }[] }).servers;
const RO = DEV_SERVERS.findIndex((s) => s.slug === "gmail-ro");
const GMAIL_PATHS = DEV_SERVERS.filter((s) => s.bundle === "GOOGLE")
  .map((s) => `/${s.slug}`)
  .join(", ");

describe("issue 15 #2: a per-slug bundle serves /<slug> of a server on it", () => {
  const tree = readBundleTree(ROOT) as BundleTree;
  const GMAIL_RO = "  - slug: gmail-ro\n    kind: bundle\n    bundle: GOOGLE\n    path: /gmail-ro\n";

  it("reads the Google bundle's bundle.json as per-slug, with its secrets and tool groups", () => {
    const google = tree.bundles.find((b) => b.dir === "google");
    expect(google?.manifest).toMatchObject({
      ok: true,
      mounts: "per-slug",
      secrets: ["GMAIL_CLIENT_ID", "GMAIL_CLIENT_SECRET", "GMAIL_REFRESH_TOKEN"],
      toolGroups: { variable: "GMAIL_ENABLED_TOOLGROUPS", default: "readonly" },
    });
  });

  it("accepts a new mailbox as a roster entry alone, and a slug sharing another Gmail slug's path", () => {
    const added = rosterWith(GMAIL_RO, `${GMAIL_RO}    entitlements: [user]\n  - slug: gmail-team\n    kind: bundle\n    bundle: GOOGLE\n    path: /gmail-team\n`);
    expect(checkConfigText(added, tree)).toEqual({ ok: true, lines: ["ok"] });
    expect(CHECKED_IN).toMatch(/- slug: gmail-scripted\n {4}kind: bundle\n {4}bundle: GOOGLE\n {4}path: \/gmail-rw-external\n/);
  });

  it("refuses a path that is /<slug> of no server on the bundle, naming the slug, the path and what it serves", () => {
    const r = checkConfigText(rosterWith(GMAIL_RO, GMAIL_RO.replace("path: /gmail-ro", "path: /gmail-typo")), tree);
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual([
      `servers[${RO}].path: slug "gmail-ro" mounts /gmail-typo, which bundle GOOGLE (bundles/google) does not serve: its bundle.json serves a mount per slug, at /<slug> of a server on it (here ${GMAIL_PATHS}), for a slug with credentials of its own`,
    ]);
    // An echo slug's path is no Gmail mount, even though the slug exists.
    const echo = checkConfigText(rosterWith(GMAIL_RO, GMAIL_RO.replace("path: /gmail-ro", "path: /echo")), tree);
    expect(echo.lines).toEqual([expect.stringContaining(`servers[${RO}].path: slug "gmail-ro" mounts /echo, which bundle GOOGLE (bundles/google) does not serve:`)]);
  });
});

describe("issue 15 #1: a tool-group setting in a server's env", () => {
  const tree = readBundleTree(ROOT) as BundleTree;
  const GMAIL_RO = "  - slug: gmail-ro\n    kind: bundle\n    bundle: GOOGLE\n    path: /gmail-ro\n    entitlements: [user]\n";
  const withEnv = (env: string, path = "/gmail-ro") => rosterWith(GMAIL_RO, `${GMAIL_RO.replace("path: /gmail-ro", `path: ${path}`)}    env:\n      ${env}\n`);

  it("passes when it names the bundle's groups, on the slug's own mount", () => {
    for (const env of ["GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS: readwrite", 'GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS: "readonly, readwrite"', "GMAIL_ENABLED_TOOLGROUPS: readonly"]) {
      expect(checkConfigText(withEnv(env), tree), env).toEqual({ ok: true, lines: ["ok"] });
    }
  });

  it("refuses a value that names no group, saying the variable and the allowed groups and never the value", () => {
    const r = checkConfigText(withEnv("GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS: read-only-please"), tree);
    expect(r.lines).toEqual([
      `servers[${RO}].env.GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS: GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS names something that is not a tool group; allowed: readonly, readwrite, readwrite_external (comma-separated), or unset for readonly`,
    ]);
    expect(r.lines.join("\n")).not.toContain("read-only-please");
  });

  it("refuses one on a slug sharing another's mount, which no mount reads", () => {
    const r = checkConfigText(withEnv("GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS: readwrite_external", "/gmail-rw-external"), tree);
    expect(r.lines).toEqual([
      `servers[${RO}].env.GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS: slug "gmail-ro" mounts /gmail-rw-external, whose tool groups come from GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS (set by the slug on that mount); GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS is read by no mount`,
    ]);
  });
});
