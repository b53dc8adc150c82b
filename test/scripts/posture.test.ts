// Covers `npm run posture [roster] [--env <file>] [--json]` (scripts/posture.ts): run as a child process on both checked-in rosters (every slug, its verdict, callers, approval origins, deadlines), its JSON shape, each warning kind planted and absent, container-wide switches, --env, an invalid roster and an unknown flag.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { approvalFlowServer } from "../../bundles/approval-flow/approval-flow.tools";
import { WAIVER_REASON as FLOW_WAIVER_REASON } from "../../bundles/approval-flow/approval-flow.watch";
import flowManifest from "../../bundles/approval-flow/bundle.json";
import googleManifest from "../../bundles/google/bundle.json";
import { GMAIL_SCOPE, gmailScopesFor } from "../../bundles/google/google.scopes";
import { serveBundle } from "../../bundles/kit/mount";
import type { ToolGroupSpec } from "../../bundles/kit/tool-groups";
import { WAIVER_REASON as OP_WAIVER_REASON } from "../../bundles/onepassword/onepassword.confirm";
import { type PostureReport, type PostureWarning, postureFromText, postureOf, remotePosture, type SlugPosture, WAIVED_SAYS_SO, waiverRefusal } from "../../scripts/posture";
import { channelTtlMs } from "../../worker/channel";
import type { Roster } from "../../worker/roster";
import { parseRoster } from "../../worker/roster-text";
import { callBundle } from "../bundles/kit/helpers/bundle";
import { httpGateway, MemoryOverlay, overlayBinding } from "../worker/helpers/overlay";

// The Approval Flow bundle as the gateway reaches it (its entry also exports a Durable Object only workerd loads).
const flowHandler = serveBundle({ manifest: flowManifest, server: approvalFlowServer });
const waivedEcho = "  - slug: echo-w\n    kind: bundle\n    bundle: ECHO\n    path: /echo-waived\n    entitlements: [user]\n    skipConfirmations: true\n";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = join(ROOT, "node_modules", ".bin", "tsx");
const dir = mkdtempSync(join(tmpdir(), "strad-posture-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Run = { status: number | null; stdout: string; stderr: string };

/** Runs the script as `npm run posture` does; children run concurrently since each pays tsx's start-up. */
function run(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(TSX, ["scripts/posture.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

/** Each run once, shared by the tests that read it. */
const memo = new Map<string, Promise<Run>>();
const once = (...args: string[]): Promise<Run> => {
  const key = args.join("\u0000");
  let r = memo.get(key);
  if (r === undefined) {
    r = run(...args);
    memo.set(key, r);
  }
  return r;
};

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function rosterOf(name: string): Roster {
  const parsed = parseRoster(readFileSync(join(ROOT, name), "utf8"));
  if (!parsed.ok) throw new Error(`${name} does not parse: ${JSON.stringify(parsed.errors)}`);
  return parsed.roster;
}

const VERDICT_LINE = /^(\S+): (ASK|WAIVED|REFUSE|REFUSE-WHILE-UNSEEDED|UNGUARDED) {2}\((.+)\)$/gm;

/** The slugs of the text output in order, each with its verdict. */
function verdicts(stdout: string): [string, string][] {
  return [...stdout.matchAll(VERDICT_LINE)].map((m) => [m[1] as string, m[2] as string]);
}

/** The text block of one slug: from its verdict line to the blank line after it. */
function block(stdout: string, slug: string): string {
  const found = stdout.split("\n\n").find((b) => b.startsWith(`${slug}: `));
  if (found === undefined) throw new Error(`no block for ${slug} in:\n${stdout}`);
  return found;
}

function bySlug(report: PostureReport, slug: string): SlugPosture {
  const found = report.slugs.find((s) => s.slug === slug);
  if (found === undefined) throw new Error(`no slug ${slug}`);
  return found;
}

function report(yaml: string, env?: Record<string, string>): PostureReport {
  const result = postureFromText(yaml, env === undefined ? {} : { env });
  if (!result.ok) throw new Error(`the planted roster does not parse: ${JSON.stringify(result.errors)}`);
  return result.report;
}

const kinds = (warnings: PostureWarning[]) => warnings.map((w) => w.kind);

describe.concurrent("on the checked-in rosters", { timeout: 60_000 }, () => {
  it("with no argument it reads the production roster, and prints every slug of it in order with a verdict", async () => {
    const r = await once();
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^roster: strad\.config\.yaml$/m);
    const slugs = rosterOf("strad.config.yaml").servers.map((s) => s.slug);
    expect(slugs.length).toBeGreaterThan(0);
    expect(verdicts(r.stdout).map(([slug]) => slug)).toEqual(slugs);
  });

  it("production: gmail-rw-external asks, at approvals.example.com only, with the gateway's ttlMs; echo has no channel", async () => {
    const r = await once();
    expect(new Map(verdicts(r.stdout))).toEqual(
      new Map([
        ["echo", "REFUSE"],
        ["gmail-rw-external", "ASK"],
      ]),
    );
    const gmail = block(r.stdout, "gmail-rw-external");
    expect(gmail).toMatch(/^ {2}approval origins: https:\/\/approvals\.example\.com$/m);
    expect(gmail).toMatch(/^ {2}approval prefixes \(its approvalUrlPrefixes\): https:\/\/approvals\.example\.com\/api\/v1\/elicitations\/session\/$/m);
    expect(gmail).toMatch(/^ {4}alice \(session, role user\): asked when it sends an X-Elicitation-Url/m);
    expect(gmail).toContain(`timeoutMs: 600000; ttlMs handed to the bundle: ${channelTtlMs(600_000)}`);
    expect(channelTtlMs(600_000)).toBe(585_000);
    const echo = block(r.stdout, "echo");
    expect(echo).toMatch(/why: no confirmations: true: the gateway forwards no approval channel, so its guarded tools refuse/);
    expect(echo).toContain("approval: none");
    expect(echo).toContain("ttlMs handed to the bundle: none (no channel)");
    expect(r.stdout).toMatch(/^warnings: none$/m);
  });

  it("dev: every slug of strad.dev.yaml appears in order, each with the verdict its keys give", async () => {
    const r = await once("strad.dev.yaml");
    expect(r.status).toBe(0);
    const roster = rosterOf("strad.dev.yaml");
    const got = verdicts(r.stdout);
    expect(got.map(([slug]) => slug)).toEqual(roster.servers.map((s) => s.slug));
    // The verdict each slug's own keys call for, derived from the file rather than listed by hand.
    const expected = roster.servers.map((s) => {
      if (s.kind === "remote-http") return [s.slug, "UNGUARDED"];
      if (s.skipConfirmations) return [s.slug, "WAIVED"];
      if (!s.confirmations) return [s.slug, "REFUSE"];
      const unseeded = Object.values(s.confirmationHeaders).some((v) => s.mayBeUnseeded.some((name) => v.includes(`\${${name}}`)));
      return [s.slug, unseeded ? "REFUSE-WHILE-UNSEEDED" : "ASK"];
    });
    expect(got).toEqual(expected);
    expect(new Set(got.map(([, v]) => v))).toEqual(new Set(["ASK", "WAIVED", "REFUSE", "REFUSE-WHILE-UNSEEDED", "UNGUARDED"]));
  });

  it("dev: echo-waived is WAIVED, echo-unseeded refuses while unseeded, echo has no channel, gmail-rw-external asks at 127.0.0.1:8788", async () => {
    const r = await once("strad.dev.yaml");
    const waived = block(r.stdout, "echo-waived");
    expect(waived).toMatch(/^echo-waived: WAIVED /);
    expect(waived).toContain("skipConfirmations: true: guarded tools act without asking anyone");
    // The waiver rides on every call, a console caller's too (worker/channel.ts checks it first).
    expect(waived).toMatch(/dev-console \(console, role user\).*: acts unasked$/m);
    expect(waived).toContain("approval: none (the waiver asks nobody)");

    const unseeded = block(r.stdout, "echo-unseeded");
    expect(unseeded).toMatch(/^echo-unseeded: REFUSE-WHILE-UNSEEDED /);
    expect(unseeded).toMatch(/why: confirmationHeaders\.CF-Access-Client-Id needs \$\{UNSEEDED_ACCESS_ID\}, listed in mayBeUnseeded: may be unseeded: refuses while unseeded/);

    expect(block(r.stdout, "echo")).toMatch(/^echo: REFUSE [^\n]*\n {2}why: no confirmations: true: the gateway forwards no approval channel/);

    const gmail = block(r.stdout, "gmail-rw-external");
    expect(gmail).toMatch(/^gmail-rw-external: ASK /);
    expect(gmail).toMatch(/^ {2}approval origins: http:\/\/127\.0\.0\.1:8788$/m);
    expect(gmail).toContain("timeoutMs: 120000; ttlMs handed to the bundle: 105000");
  });

  it("dev: says who reaches a slug, with an admin holding every role and a console or grant caller refused a channel", async () => {
    const r = await once("strad.dev.yaml");
    const confirmed = block(r.stdout, "echo-confirmed");
    expect(confirmed).toMatch(
      /^ {4}dev-session \(session, role user\), dev-session-2 \(session, role user\), dev-person \(session, role user\), dev-flow \(session, role user\), dev-flow-2 \(session, role user\): asked when it sends an X-Elicitation-Url under the approval prefixes, refused without one$/m,
    );
    expect(confirmed).toMatch(/^ {4}dev-admin \(admin, holds every role\): asked when .*\(an admin is no exception\)$/m);
    expect(confirmed).toMatch(/^ {4}dev-console \(console, role user\): refused: caller "dev-console" is a console caller and has no session to ask$/m);
    expect(confirmed).toMatch(/^ {4}dev-grant \(grant, role user\): refused: caller "dev-grant" is a grant caller/m);
    // dev-reader holds only "reader", which only echo lists.
    expect(confirmed).not.toContain("dev-reader");
    expect(block(r.stdout, "echo")).toContain("dev-reader (session, role reader)");
    const remote = block(r.stdout, "remote-demo");
    expect(remote).toMatch(/^remote-demo: UNGUARDED /);
    expect(remote).toContain("remote-http: its tools are not the gateway's to guard. The gateway forwards no approval channel, no X-Elicitation-Url");
    expect(remote).toContain("dev-admin (admin, holds every role)");
  });

  it("dev: warns of the scripted approver's prefix, and nothing else (each approval origin has a secret of its own)", async () => {
    const r = await once("strad.dev.yaml");
    const warnings = r.stdout.slice(r.stdout.indexOf("\nwarnings:"));
    expect(warnings).toMatch(/\[prefix-wider-than-route\] http:\/\/127\.0\.0\.1:8790\/scripted\/ does not end in the approval route/);
    expect([...warnings.matchAll(/^ {2}\[([a-z-]+)\]/gm)].map((m) => m[1])).toEqual(["prefix-wider-than-route"]);
  });

  it("--env names the unseeded secret: echo-unseeded refuses outright, and no value of the file is printed", async () => {
    const env = file("dev.vars", `${readFileSync(join(ROOT, ".dev.vars.example"), "utf8")}\nUNRELATED="posture-must-not-print-this-value"\n`);
    const r = await run("strad.dev.yaml", "--env", env);
    expect(r.status).toBe(0);
    expect(block(r.stdout, "echo-unseeded")).toMatch(/^echo-unseeded: REFUSE [^\n]*\n {2}why: .*confirmationHeaders of "echo-unseeded" need secret UNSEEDED_ACCESS_ID, which is not seeded/);
    expect(block(r.stdout, "echo-confirmed")).toMatch(/^echo-confirmed: ASK /);
    expect(r.stdout).toMatch(/^env: .*dev\.vars$/m);
    expect(r.stdout).not.toContain("posture-must-not-print-this-value");
    expect(r.stdout).not.toContain("dev-access-client-secret");
  });

  it("--json prints one document: every slug with verdict, callers, approval, timeoutMs and ttlMs, plus the warnings", async () => {
    const [json, text] = await Promise.all([once("strad.dev.yaml", "--json"), once("strad.dev.yaml")]);
    expect(json.status).toBe(0);
    const doc = JSON.parse(json.stdout) as PostureReport & { roster: string; env: string | null };
    expect(doc).toMatchObject({ roster: "strad.dev.yaml", env: null, envChecked: false, allowedUrlPrefixes: rosterOf("strad.dev.yaml").gateway.elicitation.allowedUrlPrefixes });
    const roster = rosterOf("strad.dev.yaml");
    expect(doc.slugs.map((s) => s.slug)).toEqual(roster.servers.map((s) => s.slug));
    // The same verdicts as the text.
    expect(doc.slugs.map((s) => [s.slug, s.verdict])).toEqual(verdicts(text.stdout));
    for (const s of doc.slugs) {
      expect(Object.keys(s).sort()).toEqual(["approval", "callers", "kind", "oauthScopes", "reasons", "slug", "target", "timeoutMs", "toolGroups", "ttlMs", "verdict"]);
      const server = roster.servers.find((x) => x.slug === s.slug);
      expect(s.timeoutMs).toBe(server?.timeoutMs);
      expect(s.ttlMs).toBe(server?.kind === "bundle" && (server.confirmations || server.skipConfirmations) ? channelTtlMs(server.timeoutMs) : null);
    }
    expect(bySlug(doc, "gmail-rw-external").approval).toEqual({
      from: "approvalUrlPrefixes",
      origins: ["http://127.0.0.1:8788"],
      prefixes: ["http://127.0.0.1:8788/api/v1/elicitations/session/"],
    });
    expect(bySlug(doc, "echo").approval).toBeNull();
    expect(bySlug(doc, "echo").callers.map((c) => c.id)).toEqual(["dev-session", "dev-session-2", "dev-admin", "dev-console", "dev-grant", "dev-reader", "dev-person", "dev-flow", "dev-flow-2"]);
    expect(bySlug(doc, "echo-brief").ttlMs).toBe(4500);
    expect(doc.warnings.map((w) => Object.keys(w).sort())).toEqual(doc.warnings.map(() => ["kind", "message", "slugs"]));
    expect(doc.warnings.find((w) => w.kind === "prefix-wider-than-route")?.slugs).toEqual([
      "echo-unseeded",
      "gmail-brief",
      "echo-scripted",
      "echo-scripted-brief",
      "gmail-scripted",
      "onepassword-scripted",
      "onepassword-brief",
    ]);
  });
});

describe.concurrent("issue 15 #1: each Gmail slug's tool groups", { timeout: 60_000 }, () => {
  const READS = "search_messages, get_message, get_thread, list_drafts, get_draft";

  it("dev: shows the groups each Gmail slug's mount serves, read from the roster's rendered env for that mount, and none for other bundles", async () => {
    const r = await once("strad.dev.yaml");
    const groups = (slug: string) => /^ {2}tool groups: (.*)$/m.exec(block(r.stdout, slug))?.[1];
    expect(groups("gmail-rw-external")).toBe(`readwrite_external (GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS): ${READS}, create_draft, send_email`);
    expect(groups("gmail-agent")).toBe(`readwrite_external (GMAIL_AGENT__GMAIL_ENABLED_TOOLGROUPS): ${READS}, create_draft, send_email`);
    expect(groups("gmail-ro")).toBe(`readonly (the default: GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS is not set): ${READS}`);
    // A slug sharing another's path has that mount's groups.
    for (const slug of ["gmail-brief", "gmail-scripted"]) expect(groups(slug)).toBe(groups("gmail-rw-external"));
    for (const slug of ["echo", "echo-confirmed", "remote-demo"]) expect(groups(slug)).toBeUndefined();
  });

  it("production: gmail-rw-external serves readwrite_external; --json carries the groups, null for a bundle without them", async () => {
    const r = await once();
    expect(block(r.stdout, "gmail-rw-external")).toMatch(/^ {2}tool groups: readwrite_external \(GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS\): .*, send_email$/m);
    const doc = JSON.parse((await once("strad.dev.yaml", "--json")).stdout) as PostureReport;
    expect(bySlug(doc, "gmail-ro").toolGroups).toEqual({
      variable: "GMAIL_RO__GMAIL_ENABLED_TOOLGROUPS",
      declared: false,
      groups: ["readonly"],
      tools: ["search_messages", "get_message", "get_thread", "list_drafts", "get_draft"],
    });
    expect(bySlug(doc, "gmail-scripted").toolGroups).toMatchObject({ variable: "GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS", declared: true, groups: ["readwrite_external"] });
    expect(bySlug(doc, "echo").toolGroups).toBeNull();
  });

  it("a setting that names no group: the slug refuses, saying the variable and the allowed groups, never the value", () => {
    const spec = JSON.parse(readFileSync(join(ROOT, "bundles/google/bundle.json"), "utf8")).toolGroups;
    const yaml = planted({
      more: "  - slug: gmail-x\n    kind: bundle\n    bundle: GOOGLE\n    path: /gmail-x\n    entitlements: [user]\n    skipConfirmations: true\n    env:\n      GMAIL_X__GMAIL_ENABLED_TOOLGROUPS: sendonly\n",
    });
    const result = postureFromText(yaml, { toolGroupsOf: (binding) => (binding === "GOOGLE" ? spec : undefined) });
    if (!result.ok) throw new Error("the planted roster does not parse");
    const bad = bySlug(result.report, "gmail-x");
    expect(bad.verdict).toBe("REFUSE");
    expect(bad.toolGroups).toEqual({
      variable: "GMAIL_X__GMAIL_ENABLED_TOOLGROUPS",
      refused: expect.stringMatching(/names something that is not a tool group; allowed: readonly, readwrite, readwrite_external/),
    });
    expect(bad.reasons.at(-1)).toMatch(/^its mount serves no tool and refuses every request: GMAIL_X__GMAIL_ENABLED_TOOLGROUPS /);
    expect(JSON.stringify(bad)).not.toContain("sendonly");
    // The asking slug beside it, on another mount, is untouched.
    expect(bySlug(result.report, "ask")).toMatchObject({ verdict: "ASK", toolGroups: { variable: "GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS", groups: ["readonly"] } });
  });
});

describe.concurrent("refusals of the script itself", { timeout: 60_000 }, () => {
  it("an invalid roster prints every schema error as <path>: <message> and exits 1", async () => {
    const bad = file("bad.yaml", "servers:\n  - slug: a\n    kind: bundle\n    entitlements: [u]\n    confirmations: true\n    skipConfirmations: true\n");
    const r = await run(bad);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      "servers[0].bundle: a bundle server needs bundle: <service binding name>",
      "servers[0].path: a bundle server needs path: /<mount path>",
      "servers[0].skipConfirmations: confirmations and skipConfirmations are both true; strad will not pick one for you",
    ]);
    expect(await run(bad, "--json")).toMatchObject({ status: 1, stdout: "" });
  });

  it.each([
    ["an unknown flag", ["--jsn"]],
    ["--env without a file", ["--env"]],
    ["two rosters", ["a.yaml", "b.yaml"]],
  ])("refuses %s with the usage on stderr and exit 1", async (_what, args) => {
    const r = await run(...args);
    expect(r).toMatchObject({ status: 1, stdout: "", stderr: "usage: npm run posture [roster] [--env <dotenv file>] [--json] | --remote <gateway-url> [--json]\n" });
  });

  it("a missing roster or env file is named and exits 1", async () => {
    const missing = join(dir, "nope.yaml");
    expect(await run(missing)).toMatchObject({ status: 1, stderr: `${missing}: cannot read the file (ENOENT)\n` });
    expect(await run("strad.dev.yaml", "--env", missing)).toMatchObject({ status: 1, stderr: `${missing}: cannot read the file (ENOENT)\n` });
  });
});

const PREFIX = "https://approvals.example.com/api/v1/elicitations/session/";
/** A small roster: one session caller, one asking slug under `prefixes`, and whatever `more` adds. */
function planted(opts: { prefixes?: string[]; ask?: string; more?: string } = {}): string {
  const prefixes = opts.prefixes ?? [PREFIX];
  return `gateway:
  elicitation:
    allowedUrlPrefixes: [${prefixes.join(", ")}]
callers:
  - { id: s, kind: session, roles: [user], tokenSecret: TOKEN_S }
servers:
  - slug: ask
    kind: bundle
    bundle: GOOGLE
    path: /gmail-rw-external
    entitlements: [user]
    confirmations: true
${opts.ask ?? ""}${opts.more ?? ""}`;
}
const remote = (url: string) => `  - slug: far\n    kind: remote-http\n    url: ${url}\n    entitlements: [user]\n`;
const TWO_ORIGINS = ["https://a.example.com/api/v1/elicitations/session/", "https://b.example.com/api/v1/elicitations/session/"];
const sharedHeaders = (slug: string, prefix: string) =>
  `  - slug: ${slug}\n    kind: bundle\n    bundle: ECHO\n    path: /echo-confirmed\n    entitlements: [user]\n    confirmations: true\n    approvalUrlPrefixes: [${prefix}]\n    confirmationHeaders:\n      CF-Access-Client-Secret: "\${EDGE_SECRET}"\n`;
const twoServices = `${sharedHeaders("one", TWO_ORIGINS[0] as string)}${sharedHeaders("two", TWO_ORIGINS[1] as string)}`;

/**
 * twoServices as a roster: the schema refuses one shared secret on two origins (docs/rules.md R-CONF-16), so it is
 * built past the schema from slugs that each parse alone, as a hand-built roster would be; posture's warning is the backstop.
 */
function twoServicesPastSchema(): Roster {
  const one = parseRoster(planted({ prefixes: TWO_ORIGINS, more: sharedHeaders("one", TWO_ORIGINS[0] as string) }));
  const two = parseRoster(planted({ prefixes: TWO_ORIGINS, more: sharedHeaders("two", TWO_ORIGINS[1] as string) }));
  if (!one.ok || !two.ok) throw new Error("a slug of the pair does not parse on its own");
  return { ...one.roster, servers: [...one.roster.servers, ...two.roster.servers.slice(1)] };
}

describe("each warning kind, planted and absent", () => {
  it.each([
    ["whole-host", planted({ prefixes: ["https://approvals.example.com/"] }), planted()],
    ["prefix-wider-than-route", planted({ prefixes: ["https://approvals.example.com/api/"] }), planted({ prefixes: ["https://approvals.example.com/tenant-a/api/v1/elicitations/session/"] })],
  ])("%s: warned when planted, not otherwise", (kind, bad, good) => {
    const warned = report(bad).warnings.filter((w) => w.kind === kind);
    expect(warned).toHaveLength(1);
    expect(warned[0]?.message.length).toBeGreaterThan(20);
    expect(report(good).warnings).toEqual([]);
  });

  it("headers-to-several-origins: warned when two slugs share a secret across origins (past the schema, which refuses it), not for one slug", () => {
    expect(postureFromText(planted({ prefixes: TWO_ORIGINS, more: twoServices })).ok).toBe(false);
    const warned = postureOf(twoServicesPastSchema()).warnings.filter((w) => w.kind === "headers-to-several-origins");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.message.length).toBeGreaterThan(20);
    expect(report(planted({ prefixes: TWO_ORIGINS, more: sharedHeaders("one", TWO_ORIGINS[0] as string) })).warnings).toEqual([]);
  });

  it("whole-host and prefix-wider-than-route name the prefix and every slug sent under it", () => {
    const r = report(planted({ prefixes: ["https://approvals.example.com/"], more: sharedHeaders("other", "https://approvals.example.com/") }));
    expect(r.warnings).toEqual([
      {
        kind: "whole-host",
        slugs: ["ask", "other"],
        message: expect.stringMatching(/^https:\/\/approvals\.example\.com\/ is a whole host: slugs ask, other may be aimed at any path of https:\/\/approvals\.example\.com/),
      },
    ]);
  });

  it("plain-http: a remote url on plain http off loopback is refused by the schema; past it, the backstop names the slug and its origin; a loopback url is neither", () => {
    expect(postureFromText(planted({ more: remote("http://mcp.example.com:8080/mcp") })).ok).toBe(false);
    const parsed = parseRoster(planted({ more: remote("https://mcp.example.com:8080/mcp") }));
    if (!parsed.ok) throw new Error("the https remote does not parse");
    const pastSchema = { ...parsed.roster, servers: parsed.roster.servers.map((s) => (s.slug === "far" ? { ...s, url: "http://mcp.example.com:8080/mcp" } : s)) };
    expect(postureOf(pastSchema).warnings).toEqual([{ kind: "plain-http", slugs: ["far"], message: expect.stringContaining("slug far reaches http://mcp.example.com:8080 over plain http") }]);
    expect(report(planted({ more: `${remote("https://mcp.example.com/mcp")}${remote("http://127.0.0.1:9/mcp").replace("far", "near")}` })).warnings).toEqual([]);
    expect(report(planted({ more: remote("http://[::1]:9/mcp") })).warnings).toEqual([]);
  });

  it("headers-to-several-origins: a shared secret stops being warned once each slug seeds its own <SLUG>__ name", () => {
    const roster = twoServicesPastSchema();
    expect(postureOf(roster).warnings[0]).toMatchObject({ kind: "headers-to-several-origins", slugs: ["one", "two"], message: expect.stringContaining("EDGE_SECRET") });
    expect(kinds(postureOf(roster, { env: { EDGE_SECRET: "x", TOKEN_S: "0123456789abcdef" } }).warnings)).toEqual(["headers-to-several-origins"]);
    expect(postureOf(roster, { env: { ONE__EDGE_SECRET: "x", TWO__EDGE_SECRET: "y", TOKEN_S: "0123456789abcdef" } }).warnings).toEqual([]);
  });

  it("headers-to-several-origins: one slug whose own prefixes span origins (the schema refuses it; the backstop still says so)", () => {
    const yaml = planted({ prefixes: TWO_ORIGINS, ask: '    confirmationHeaders:\n      CF-Access-Client-Id: "${EDGE_ID}"\n' });
    const parsed = postureFromText(yaml);
    expect(parsed.ok).toBe(false);
    // Past the schema, as a roster built by hand would be.
    const roster = rosterOf("strad.config.yaml");
    const ask = { ...(roster.servers[1] as Roster["servers"][number]), approvalUrlPrefixes: TWO_ORIGINS };
    const r = postureOf({ ...roster, gateway: { ...roster.gateway, elicitation: { allowedUrlPrefixes: TWO_ORIGINS } }, servers: [ask] });
    expect(r.warnings).toEqual([{ kind: "headers-to-several-origins", slugs: ["gmail-rw-external"], message: expect.stringContaining("may go to 2 origins") }]);
  });

  it("slug-refuses-unseeded: with --env, a secret not in mayBeUnseeded left unseeded makes only its own slug refuse", () => {
    const yaml = planted({ ask: '    confirmationHeaders:\n      CF-Access-Client-Id: "${EDGE_ID}"\n', more: remote("https://tools.example.com/mcp") });
    const r = report(yaml, { TOKEN_S: "0123456789abcdef" });
    expect(r.warnings).toEqual([
      { kind: "slug-refuses-unseeded", slugs: ["ask"], message: expect.stringContaining("servers[0].confirmationHeaders.CF-Access-Client-Id: secret EDGE_ID is not seeded") },
    ]);
    expect(r.warnings[0]?.message).not.toMatch(/503|every \/mcp request/);
    // The slug beside it answers as it would with everything seeded (R-CONF-8): the gateway is not down.
    expect(r.slugs.map((s) => [s.slug, s.verdict])).toEqual([
      ["ask", "REFUSE"],
      ["far", "UNGUARDED"],
    ]);
    const seeded = report(yaml, { TOKEN_S: "0123456789abcdef", ASK__EDGE_ID: "x" });
    expect(seeded.warnings).toEqual([]);
    expect(seeded.slugs.map((s) => [s.slug, s.verdict])).toEqual([
      ["ask", "ASK"],
      ["far", "UNGUARDED"],
    ]);
  });
});

describe("what decides a verdict", () => {
  const refusing = /every guarded tool of the bundle refuses, waiver included/;
  it.each([
    ["ELICITATION_ENABLED: 'false'", "REFUSE", "REFUSE", refusing],
    ["ELICITATION_ENABLED: 'yes'", "REFUSE", "REFUSE", refusing],
    ["ELICITATION_REQUEST_URL: https://elsewhere.example.com/", "REFUSE", "REFUSE", refusing],
    ["ELICITATION_POLL_URL: https://elsewhere.example.com/", "REFUSE", "REFUSE", refusing],
    ["ELICITATION_ENABLED: 'true'", "ASK", "WAIVED", /^skipConfirmations: true: guarded tools act without asking anyone/],
  ])("a bundle env of %s gives its asking slug %s and its waived slug %s, and leaves another bundle alone", (env, asking, waived, why) => {
    const yaml = planted({
      ask: `    env:\n      ${env}\n`,
      more: "  - slug: waived\n    kind: bundle\n    bundle: GOOGLE\n    path: /gmail-agent\n    entitlements: [user]\n    skipConfirmations: true\n",
    });
    const other = "  - slug: other\n    kind: bundle\n    bundle: ECHO\n    path: /echo-waived\n    entitlements: [user]\n    skipConfirmations: true\n";
    const r = report(yaml + other);
    expect(r.slugs.map((s) => [s.slug, s.verdict])).toEqual([
      ["ask", asking],
      ["waived", waived],
      ["other", "WAIVED"],
    ]);
    expect(bySlug(r, "waived").reasons.join("\n")).toMatch(why);
  });

  it("a per-slug <SLUG>__ELICITATION_ENABLED is not a container switch: the bundle reads the bare name only", () => {
    expect(report(planted({ ask: "    env:\n      ASK__ELICITATION_ENABLED: 'false'\n" })).slugs[0]?.verdict).toBe("ASK");
  });

  it("an empty allowlist makes a confirmations slug refuse, saying so", () => {
    const r = report(planted({ prefixes: [] }));
    expect(r.slugs[0]).toMatchObject({ verdict: "REFUSE", approval: { origins: [], prefixes: [] } });
    expect(r.slugs[0]?.reasons.join("\n")).toContain("gateway.elicitation.allowedUrlPrefixes is empty");
  });

  it("a mayBeUnseeded upstream header makes a waived slug refuse while unseeded (outright once --env leaves it unseeded), and a remote one fail", () => {
    const yaml = planted({
      more: `  - slug: w\n    kind: bundle\n    bundle: ECHO\n    path: /echo-waived\n    entitlements: [user]\n    skipConfirmations: true\n    headers: { X-Key: "\${W_KEY}" }\n    mayBeUnseeded: [W_KEY]\n${remote("https://mcp.example.com/mcp")}    headers: { Authorization: "Bearer \${R_KEY}" }\n    mayBeUnseeded: [R_KEY]\n`,
    });
    const r = report(yaml);
    expect(bySlug(r, "w").verdict).toBe("REFUSE-WHILE-UNSEEDED");
    expect(bySlug(r, "w").reasons.join("\n")).toMatch(
      /headers\.X-Key needs \$\{W_KEY\}, listed in mayBeUnseeded: may be unseeded: refuses while unseeded \(every call to this slug, tools\/list too, fails/,
    );
    expect(bySlug(r, "far").verdict).toBe("UNGUARDED");
    expect(bySlug(r, "far").reasons.join("\n")).toContain("headers.Authorization needs ${R_KEY}");
    // With an env file that leaves them unseeded: the waived slug refuses outright, naming both names it looked for.
    const seeded = report(yaml, { TOKEN_S: "0123456789abcdef" });
    expect(bySlug(seeded, "w").verdict).toBe("REFUSE");
    expect(bySlug(seeded, "w").reasons.join("\n")).toContain("headers.X-Key needs ${W_KEY}, which is unseeded (neither W__W_KEY nor W_KEY is set): every call to this slug, tools/list too, fails");
    expect(bySlug(seeded, "far").verdict).toBe("UNGUARDED");
  });

  it("with --env, a caller whose token secret is unseeded is said to be left out", () => {
    const r = report(planted(), {});
    expect(r.slugs[0]?.callers).toEqual([{ id: "s", kind: "session", via: "role user", guarded: expect.stringMatching(/^asked when/), leftOut: expect.stringContaining("TOKEN_S is unseeded") }]);
  });
});

describe("1Password: what a slug's reveals, creates and shares do (bundles/onepassword)", () => {
  const opSlug = (slug: string, path: string, more = "") =>
    `  - slug: ${slug}\n    kind: bundle\n    bundle: ONEPASSWORD\n    path: ${path}\n    entitlements: [user]\n    confirmations: true\n${more}`;

  it("dev: onepassword asks before every reveal, create and share; onepassword-provisioning's creates act unasked, its reveals and shares still ask", async () => {
    const r = await once("strad.dev.yaml");
    const shared = block(r.stdout, "onepassword");
    expect(shared).toMatch(/^onepassword: ASK /);
    expect(shared).toContain(
      "why: 1Password: a reveal (onepassword_get_item), every create (onepassword_create_login, onepassword_create_secure_note and onepassword_create_api_credential) and a share (onepassword_share_item) ask a person",
    );
    const provisioning = block(r.stdout, "onepassword-provisioning");
    expect(provisioning).toMatch(/^onepassword-provisioning: ASK /);
    expect(provisioning).toContain(
      'why: 1Password provisioning posture (ONEPASSWORD_PROVISIONING__OP_ELICITATION_WRITE is "false"): onepassword_create_login, onepassword_create_secure_note and onepassword_create_api_credential act unasked, with or without a channel; onepassword_get_item (a reveal) and onepassword_share_item still ask',
    );
  }, 60_000);

  it('only a mount of its own, with its own OP_ELICITATION_WRITE exactly "false", is in the provisioning posture; the bare switches are named as ignored', () => {
    const provisioning = (value: string) => planted({ more: opSlug("op-own", "/op-own", `    env:\n      OP_OWN__OP_ELICITATION_WRITE: "${value}"\n`) });
    expect(bySlug(report(provisioning("false")), "op-own").reasons.join("\n")).toContain('1Password provisioning posture (OP_OWN__OP_ELICITATION_WRITE is "false")');
    for (const value of ["False", "0", "true"]) expect(bySlug(report(provisioning(value)), "op-own").reasons.join("\n"), value).not.toContain("provisioning posture");
    // The shared mount never provisions; a bare name is rendered for the bundle too, and is ignored there.
    const shared = report(planted({ more: opSlug("op-shared", "/onepassword", '    env:\n      OP_ELICITATION_WRITE: "false"\n      DANGEROUSLY_SKIP_ELICITATIONS: "true"\n') }));
    const why = bySlug(shared, "op-shared").reasons.join("\n");
    expect(why).not.toContain("provisioning posture");
    expect(why).toContain("1Password ignores OP_ELICITATION_WRITE, DANGEROUSLY_SKIP_ELICITATIONS (the bundle warns of each on every call)");
    // Another bundle's slugs get no 1Password line.
    expect(bySlug(shared, "ask").reasons.join("\n")).not.toContain("1Password");
  });
});

describe("the two-call token: a slug's fallback and its bundle's ELICITATION (bundles/pads)", () => {
  const padSlug = (slug: string, lines = "") => `  - slug: ${slug}\n    kind: bundle\n    bundle: PADS\n    path: /pads\n    entitlements: [user]\n${lines}`;

  it("dev: pads asks and refuses a call with no approval address; pads-token asks, and answers such a call with the two-call token", async () => {
    const r = await once("strad.dev.yaml");
    const pads = block(r.stdout, "pads");
    expect(pads).toMatch(/^pads: ASK /);
    expect(pads).toMatch(/^ {4}dev-session .*: asked when it sends an X-Elicitation-Url under the approval prefixes, refused without one$/m);
    expect(pads).not.toContain("two-call token");
    const token = block(r.stdout, "pads-token");
    expect(token).toMatch(/^pads-token: ASK /);
    expect(token).toContain(
      "why: fallback: token: a guarded call that brings no X-Elicitation-Url gets the two-call token instead of a refusal, which proves only that the call was made twice with the same arguments",
    );
    expect(token).toMatch(/^ {4}dev-session .*: asked when it sends an X-Elicitation-Url under the approval prefixes, the two-call token without one$/m);
  }, 60_000);

  it("a fallback slug without confirmations acts on the token alone; ELICITATION=false makes a fallback slug TOKEN and any other slug of the bundle refuse", () => {
    const alone = report(planted({ more: padSlug("only-token", "    fallback: token\n") }));
    expect(bySlug(alone, "only-token").verdict).toBe("TOKEN");
    expect(bySlug(alone, "only-token").callers[0]?.guarded).toBe("the two-call token: nobody is asked");
    const off = report(
      planted({ more: `${padSlug("quiet", '    confirmations: true\n    fallback: token\n    env:\n      ELICITATION: "false"\n')}${padSlug("strict", "    confirmations: true\n")}` }),
    );
    expect(bySlug(off, "quiet").verdict).toBe("TOKEN");
    expect(bySlug(off, "quiet").reasons.join("\n")).toContain("bundle PADS runs with ELICITATION=false: nobody is asked; every guarded call takes the two-call token");
    expect(bySlug(off, "strict").verdict).toBe("REFUSE");
    expect(bySlug(off, "strict").reasons.join("\n")).toContain("runs with ELICITATION=false and this slug has no fallback: token: its guarded tools refuse");
  });

  it("an ELICITATION that is neither true nor false makes every slug of the bundle refuse; Gmail and 1Password never take the token", () => {
    const bad = report(planted({ more: padSlug("typo", '    confirmations: true\n    env:\n      ELICITATION: "off"\n') }));
    expect(bySlug(bad, "typo").verdict).toBe("REFUSE");
    expect(bySlug(bad, "typo").reasons).toContain("bundle PADS has an ELICITATION that is neither true nor false: every request to it fails until it is");
    const gmail = report(planted({ ask: "    fallback: token\n" }));
    expect(bySlug(gmail, "ask").verdict).toBe("ASK");
    expect(bySlug(gmail, "ask").reasons).toContain("fallback: token, but bundle GOOGLE does not take the two-call token: a call with nobody to ask is refused");
    expect(bySlug(gmail, "ask").callers[0]?.guarded).toBe("asked when it sends an X-Elicitation-Url under the approval prefixes, refused without one");
  });
});

describe("the waiver: what a skipConfirmations slug's bundle really does with it (R-OPS-4)", () => {
  const waivedSlug = (slug: string, binding: string, path: string) =>
    `  - slug: ${slug}\n    kind: bundle\n    bundle: ${binding}\n    path: ${path}\n    entitlements: [user]\n    skipConfirmations: true\n`;

  it("a waived Approval Flow slug refuses in posture, quoting the bundle's own refusal, and the bundle does refuse a waived call with those words", async () => {
    const r = report(planted({ more: waivedSlug("flow-waived", "APPROVAL_FLOW", "/approval-flow") }));
    const flow = bySlug(r, "flow-waived");
    expect(flow.verdict).toBe("REFUSE");
    expect(flow.reasons[0]).toBe(`skipConfirmations: true, so the gateway forwards the waiver, but bundle APPROVAL_FLOW refuses it: ${FLOW_WAIVER_REASON}`);
    expect(flow.callers[0]?.guarded).toBe("refused");
    // The bundle itself, handed the waiver the gateway would forward: it refuses, in the words posture quoted.
    const answer = await callBundle(flowHandler, {
      mount: "approval-flow",
      name: "request_approval",
      args: { purpose: "p", payload: 1 },
      channel: { slug: "flow-waived", skip: true, ttlMs: 5_000, call: { scope: "s", key: "n:1", nonce: "test-nonce-0123456789" }, caller: "s" },
      env: {},
    });
    expect(answer.isError).toBe(true);
    expect(answer.text).toBe(`Refused: ${FLOW_WAIVER_REASON}. Nothing was read or written.`);
  });

  it("a waived 1Password slug refuses, quoting its bundle's refusal; a waived slug of a bundle that acts on the waiver says each answer names it", () => {
    const r = report(planted({ more: `${waivedSlug("op-waived", "ONEPASSWORD", "/onepassword")}${waivedSlug("echo-w", "ECHO", "/echo-waived")}` }));
    expect(bySlug(r, "op-waived").verdict).toBe("REFUSE");
    expect(bySlug(r, "op-waived").reasons[0]).toBe(`skipConfirmations: true, so the gateway forwards the waiver, but bundle ONEPASSWORD refuses it: ${OP_WAIVER_REASON}`);
    expect(bySlug(r, "echo-w").verdict).toBe("WAIVED");
    expect(bySlug(r, "echo-w").reasons[0]).toBe(`skipConfirmations: true: guarded tools act without asking anyone, whoever calls and whatever they send; ${WAIVED_SAYS_SO}`);
    expect(bySlug(r, "echo-w").callers[0]?.guarded).toBe("acts unasked");
  });

  it("knows a bundle by its deployed service name as well as by the binding the rosters give it", () => {
    const r = postureFromText(planted({ more: waivedSlug("flow-waived", "FLOWS_BOUND_ELSEWHERE", "/approval-flow") }), {
      serviceOf: (binding) => (binding === "FLOWS_BOUND_ELSEWHERE" ? "strad-bundle-approval-flow" : binding),
    });
    expect(r.ok && bySlug(r.report, "flow-waived").verdict).toBe("REFUSE");
    expect(waiverRefusal("ECHO", (b) => b)).toBeUndefined();
  });
});

describe("Gmail: the OAuth scopes each slug's tool groups need (R-GMAIL-6)", () => {
  const gmailSlug = (slug: string, groups?: string) =>
    `  - slug: ${slug}\n    kind: bundle\n    bundle: GOOGLE\n    path: /${slug}\n    entitlements: [user]\n${groups === undefined ? "" : `    env:\n      ${slug.toUpperCase().replaceAll("-", "_")}__GMAIL_ENABLED_TOOLGROUPS: ${groups}\n`}`;
  const withGroups = (yaml: string) => {
    const result = postureFromText(yaml, { toolGroupsOf: (binding) => (binding === "GOOGLE" ? (googleManifest.toolGroups as ToolGroupSpec) : undefined) });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    return result.report;
  };

  it("lists, per slug, the scopes its enabled groups need: gmail.readonly to read, with gmail.compose once it drafts or sends", () => {
    const r = withGroups(
      planted({ more: `${gmailSlug("mail-ro")}${gmailSlug("mail-rw", "readwrite")}${gmailSlug("mail-send", "readwrite_external")}${gmailSlug("mail-both", '"readonly,readwrite"')}` }),
    );
    expect(bySlug(r, "mail-ro").oauthScopes).toEqual([GMAIL_SCOPE.readonly]);
    expect(bySlug(r, "mail-rw").oauthScopes).toEqual([GMAIL_SCOPE.readonly, GMAIL_SCOPE.compose]);
    expect(bySlug(r, "mail-send").oauthScopes).toEqual([GMAIL_SCOPE.readonly, GMAIL_SCOPE.compose]);
    // Two groups: the scopes of the union of their tools.
    expect(bySlug(r, "mail-both").oauthScopes).toEqual(gmailScopesFor([...(googleManifest.toolGroups.groups.readonly ?? []), ...(googleManifest.toolGroups.groups.readwrite ?? [])]));
    // A mount whose setting names no group serves nothing, and needs no scope; another bundle gets no scope line.
    expect(bySlug(withGroups(planted({ more: gmailSlug("mail-bad", "everything") })), "mail-bad").oauthScopes).toBeNull();
    expect(bySlug(withGroups(planted({ more: waivedEcho })), "echo-w").oauthScopes).toBeNull();
  });

  it("dev: prints each Gmail slug's scopes, and none for another bundle", async () => {
    const r = await once("strad.dev.yaml");
    expect(block(r.stdout, "gmail-ro")).toContain(`  oauth scopes its refresh token needs: ${GMAIL_SCOPE.readonly}`);
    expect(block(r.stdout, "gmail-rw-external")).toContain(`  oauth scopes its refresh token needs: ${GMAIL_SCOPE.readonly} ${GMAIL_SCOPE.compose}`);
    expect(block(r.stdout, "echo-confirmed")).not.toContain("oauth scopes");
  }, 60_000);
});

describe("posture --remote: the roster a running gateway serves", () => {
  const ADMIN = "admin-token-0123456789abcdef";
  const REMOTE_ROSTER = `callers:
  - { id: ops, kind: admin, roles: [], tokenSecret: TOKEN_ADMIN }
servers:
  - { slug: plain, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
`;

  it("marks runtime entries, read from GET /admin/roster with the admin token from the environment", async () => {
    const store = new MemoryOverlay();
    store.version = 2;
    store.text = JSON.stringify({ add: [{ slug: "added", kind: "remote-http", url: "https://added.example/mcp", entitlements: ["user"] }], change: [{ slug: "plain", timeoutMs: 9000 }] });
    const quiet = vi.spyOn(console, "log").mockImplementation(() => {});
    const gateway = await httpGateway(REMOTE_ROSTER, { TOKEN_ADMIN: ADMIN, CALLS: {}, ROSTER_OVERLAY: overlayBinding(store) });
    try {
      let text = "";
      const code = await remotePosture(
        ["--remote", gateway.url],
        { STRAD_ADMIN_TOKEN: ADMIN },
        (t) => (text += t),
        () => {},
      );
      expect(code).toBe(0);
      expect(text).toMatch(/^\[RT\+\] added \(remote-http https:\/\/added\.example\/mcp\).*runtime:added$/m);
      expect(text).toMatch(/^\[RT~\] plain \(bundle ECHO\/echo\).*timeoutMs: 9000; runtime:changed$/m);
      let json = "";
      await remotePosture(
        ["--remote", gateway.url, "--json"],
        { STRAD_ADMIN_TOKEN: ADMIN },
        (t) => (json += t),
        () => {},
      );
      expect((JSON.parse(json) as { servers: { slug: string; source: string }[] }).servers.map((s) => [s.slug, s.source])).toEqual([
        ["plain", "runtime:changed"],
        ["added", "runtime:added"],
      ]);
      // Without the token in the environment it asks for it and reads nothing.
      let err = "";
      const reads = store.reads;
      expect(
        await remotePosture(
          ["--remote", gateway.url],
          {},
          () => {},
          (t) => (err += t),
        ),
      ).toBe(1);
      expect(err).toContain("STRAD_ADMIN_TOKEN");
      expect(store.reads).toBe(reads);
      // As npm runs it: the token from the child's environment.
      const child = await new Promise<Run>((resolve) => {
        execFile(TSX, ["scripts/posture.ts", "--remote", gateway.url], { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, STRAD_ADMIN_TOKEN: ADMIN } }, (error, stdout, stderr) =>
          resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }),
        );
      });
      expect(child.status).toBe(0);
      expect(child.stdout).toContain("[RT+] added");
    } finally {
      quiet.mockRestore();
      await gateway.stop();
    }
    // 60 s: one tsx child (1-4 s measured, several times that under load), as this file's other runs.
  }, 60_000);
});

describe("issue 28: which path a guarded call takes, per slug and caller (approval service, client question, refused)", () => {
  const dev = postureOf(rosterOf("strad.dev.yaml"));
  const reach = (slug: string, caller: string) => {
    const found = bySlug(dev, slug).callers.find((c) => c.id === caller);
    if (found === undefined) throw new Error(`${caller} does not reach ${slug}`);
    return found.guarded;
  };

  it("dev: on echo-client, dev-person (asks: client) is asked at its own client without an approval URL; dev-session is refused without one", () => {
    expect(bySlug(dev, "echo-client").verdict).toBe("ASK");
    expect(bySlug(dev, "echo-client").reasons.some((r) => r.startsWith("clientQuestions: true:"))).toBe(true);
    expect(reach("echo-client", "dev-person")).toContain("asked at its own client (client question, sealed state)");
    expect(reach("echo-client", "dev-person")).toContain("asked when it sends an X-Elicitation-Url");
    expect(reach("echo-client", "dev-session")).toBe("asked when it sends an X-Elicitation-Url under the approval prefixes, refused without one");
  });

  it("dev: a slug without clientQuestions (Gmail, 1Password, echo-confirmed) never asks dev-person at its client", () => {
    for (const slug of ["gmail-rw-external", "onepassword", "echo-confirmed"]) {
      expect(reach(slug, "dev-person")).not.toContain("client question");
      expect(bySlug(dev, slug).reasons.some((r) => r.startsWith("clientQuestions"))).toBe(false);
    }
  });

  it("an admin is no exception, and a caller declared asks: service is never asked at its client", () => {
    const yaml = `gateway:\n  elicitation:\n    allowedUrlPrefixes: [https://approvals.example.com/api/v1/elicitations/session/]\ncallers:\n  - { id: person, kind: session, roles: [user], tokenSecret: T_PERSON, asks: client }\n  - { id: agent, kind: session, roles: [user], tokenSecret: T_AGENT }\n  - { id: boss, kind: admin, tokenSecret: T_BOSS, asks: client }\nservers:\n  - { slug: pads, kind: bundle, bundle: PADS, path: /pads, entitlements: [user], confirmations: true, clientQuestions: true }\n`;
    const pads = bySlug(report(yaml), "pads");
    const guarded = Object.fromEntries(pads.callers.map((c) => [c.id, c.guarded]));
    expect(guarded.person).toContain("asked at its own client");
    expect(guarded.boss).toContain("asked at its own client");
    expect(guarded.boss).toContain("(an admin is no exception)");
    expect(guarded.agent).not.toContain("client");
  });

  it("the text output shows the path for each caller (one tsx child: 60 s, as this file's other runs)", async () => {
    const out = await once("strad.dev.yaml");
    expect(out.status).toBe(0);
    expect(block(out.stdout, "echo-client")).toContain("asked at its own client");
  }, 60_000);
});
