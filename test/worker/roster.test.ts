// Covers the roster schema (worker/roster.ts): every config error names its path, ${VAR} resolution, the seeding check, and the checked-in strad.config.yaml.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_REQUEST_BYTES, MAX_REQUEST_BYTES_CEILING, MIN_MAX_REQUEST_BYTES } from "../../contract/body";
import { RESERVED_CHANNEL_HEADERS } from "../../contract/elicitation";
import { MAX_SLUG_CHARS, slugNamespace } from "../../contract/slug";
import { BUNDLE_OWNED_HEADERS, checkSeeded, type Roster, type RosterError, resolveHeaderMap, resolveRefs, validateRoster } from "../../worker/roster";
import { parseRoster } from "../../worker/roster-text";

type Json = Record<string, unknown>;

const PREFIX = "https://zimmer.tadasant.com/api/v1/elicitations/session/";

function base(): { gateway: Json; callers: Json[]; servers: Json[] } {
  return {
    gateway: { elicitation: { allowedUrlPrefixes: [PREFIX] } },
    callers: [{ id: "s1", kind: "session", roles: ["user"], tokenSecret: "TOKEN_S1" }],
    servers: [
      { slug: "gmail-rw", kind: "bundle", bundle: "GOOGLE", path: "/gmail", entitlements: ["user"], confirmations: true },
      { slug: "gmail-ro", kind: "bundle", bundle: "GOOGLE", path: "/gmail-ro", entitlements: ["user"] },
      { slug: "remote", kind: "remote-http", url: "https://remote.example/mcp", entitlements: ["user"] },
    ],
  };
}

function errorsOf(data: unknown): RosterError[] {
  const result = validateRoster(data);
  return result.ok ? [] : result.errors;
}

function valid(data: unknown): Roster {
  const result = validateRoster(data);
  if (!result.ok) throw new Error(`expected a valid roster, got ${JSON.stringify(result.errors)}`);
  return result.roster;
}

function withServer(index: number, patch: Json): ReturnType<typeof base> {
  const data = base();
  data.servers[index] = { ...data.servers[index], ...patch };
  return data;
}

/** Asserts one error sits at `path` with a message matching `message`. */
function expectError(data: unknown, path: string, message: RegExp): void {
  const errors = errorsOf(data);
  const hit = errors.find((e) => e.path === path && message.test(e.message));
  expect(hit, `no error at ${path} matching ${message}; got ${JSON.stringify(errors)}`).toBeDefined();
}

describe("a valid roster", () => {
  it("the base roster of these tests is valid and gets its defaults", () => {
    const roster = valid(base());
    const ro = roster.servers[1];
    expect(ro?.timeoutMs).toBe(120_000);
    expect(ro?.confirmations).toBe(false);
    expect(ro?.skipConfirmations).toBe(false);
    expect(ro?.headers).toEqual({});
    expect(ro?.confirmationHeaders).toEqual({});
    expect(ro?.mayBeUnseeded).toEqual([]);
    expect(ro?.env).toEqual({});
  });

  it("an empty file is a valid roster with an empty allowlist", () => {
    const result = parseRoster("");
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.roster.gateway.elicitation.allowedUrlPrefixes).toEqual([]);
      expect(result.roster.servers).toEqual([]);
    }
  });

  it.each(["strad.config.yaml", "strad.dev.yaml"])("the checked-in %s is valid", (file) => {
    const text = readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), "utf8");
    const result = parseRoster(text);
    expect(result.ok ? [] : result.errors).toEqual([]);
  });
});

describe("config errors name their path", () => {
  it("a duplicate slug", () => {
    const data = base();
    data.servers.push({ slug: "gmail-rw", kind: "bundle", bundle: "OTHER", path: "/x", entitlements: ["user"] });
    expectError(data, "servers[3].slug", /duplicate slug "gmail-rw" \(also servers\[0\]\)/);
  });

  it("a duplicate caller id", () => {
    const data = base();
    data.callers.push({ id: "s1", kind: "admin", tokenSecret: "TOKEN_X" });
    expectError(data, "callers[1].id", /duplicate caller id "s1"/);
  });

  it("confirmations and skipConfirmations both true", () => {
    expectError(withServer(0, { skipConfirmations: true }), "servers[0].skipConfirmations", /both true; strad will not pick one/);
  });

  it("confirmationHeaders without confirmations: true", () => {
    expectError(withServer(1, { confirmationHeaders: { "CF-Access-Client-Id": "${ID}" } }), "servers[1].confirmationHeaders", /without confirmations: true/);
  });

  it("confirmationHeaders beside skipConfirmations (not confirmations) is still an error", () => {
    expectError(withServer(1, { skipConfirmations: true, confirmationHeaders: { "CF-Access-Client-Id": "${ID}" } }), "servers[1].confirmationHeaders", /without confirmations: true/);
  });

  it("confirmationHeaders with confirmations: true is fine", () => {
    expect(errorsOf(withServer(0, { confirmationHeaders: { "CF-Access-Client-Id": "${ID}" } }))).toEqual([]);
  });

  // Every name the kit sets or drops, in lower case, upper case and as usually written (issue 15 #5: accept and prefer were taken).
  const titled = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash}${c.toUpperCase()}`);
  const owned = RESERVED_CHANNEL_HEADERS.flatMap((name) => [name, name.toUpperCase(), titled(name)]);
  it.each(owned)("a confirmationHeaders name the bundle owns: %s", (name) => {
    expectError(withServer(0, { confirmationHeaders: { [name]: "x" } }), `servers[0].confirmationHeaders.${name}`, /set by the bundle itself/);
  });

  it("issue 15 #5: the owned list is the kit's own, one list from contract/: the names it sets and the framing ones", () => {
    expect(BUNDLE_OWNED_HEADERS).toBe(RESERVED_CHANNEL_HEADERS);
    expect([...BUNDLE_OWNED_HEADERS].sort()).toEqual(["accept", "connection", "content-length", "content-type", "host", "prefer", "transfer-encoding"]);
  });

  it("issue 15 #4: maxRequestBytes defaults to 1 MiB and takes any size from 64 KiB to 8 MiB", () => {
    expect(valid(base()).servers.map((s) => s.maxRequestBytes)).toEqual([DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_BYTES]);
    expect(DEFAULT_MAX_REQUEST_BYTES).toBe(1024 * 1024);
    for (const size of [MIN_MAX_REQUEST_BYTES, 6 * 1024 * 1024, MAX_REQUEST_BYTES_CEILING]) expect(valid(withServer(0, { maxRequestBytes: size })).servers[0]?.maxRequestBytes).toBe(size);
  });

  it.each([
    ["past the ceiling", MAX_REQUEST_BYTES_CEILING + 1],
    ["under the floor", MIN_MAX_REQUEST_BYTES - 1],
    ["not a whole number", 1.5 * 1024 * 1024 + 0.5],
  ])("issue 15 #4: a maxRequestBytes %s", (_what, size) => {
    expectError(withServer(0, { maxRequestBytes: size }), "servers[0].maxRequestBytes", /./);
  });

  it("a slug longer than a DNS label", () => {
    expect(errorsOf(withServer(0, { slug: "a".repeat(MAX_SLUG_CHARS) }))).toEqual([]);
    expectError(withServer(0, { slug: "a".repeat(MAX_SLUG_CHARS + 1) }), "servers[0].slug", /63/);
  });

  it("a confirmationHeaders name that is not an HTTP token", () => {
    // zod reports a bad record key as "Invalid key in record"; the path names the header.
    expectError(withServer(0, { confirmationHeaders: { "Bad Name": "x" } }), "servers[0].confirmationHeaders.Bad Name", /key/);
  });

  it("a skipConfirmations slug on the same bundle and path as a confirmations slug", () => {
    const data = base();
    data.servers.push({ slug: "gmail-agent", kind: "bundle", bundle: "GOOGLE", path: "/gmail", entitlements: ["user"], skipConfirmations: true });
    expectError(data, "servers[3].skipConfirmations", /shares bundle GOOGLE and path \/gmail with servers\[0\] \("gmail-rw"\)/);
  });

  it("a skipConfirmations slug on the same bundle but its own path is fine", () => {
    const data = base();
    data.servers.push({ slug: "gmail-agent", kind: "bundle", bundle: "GOOGLE", path: "/gmail-agent", entitlements: ["user"], skipConfirmations: true });
    expect(errorsOf(data)).toEqual([]);
  });

  it("a skipConfirmations slug on the same path of another bundle is fine", () => {
    const data = base();
    data.servers.push({ slug: "gmail-agent", kind: "bundle", bundle: "OTHER", path: "/gmail", entitlements: ["user"], skipConfirmations: true });
    expect(errorsOf(data)).toEqual([]);
  });

  it.each<[string, unknown, RegExp]>([
    ["confirmations", true, /cannot receive the approval channel/],
    ["skipConfirmations", true, /cannot declare skipConfirmations/],
    ["confirmationHeaders", { "CF-Access-Client-Id": "${ID}" }, /cannot receive confirmationHeaders/],
  ])("%s on a remote-http server", (key, value, message) => {
    expectError(withServer(2, { [key]: value }), `servers[2].${key}`, message);
  });

  it.each<[string, string, RegExp | undefined]>([
    ["plain http off loopback", "http://mcp.example.com/mcp", /must be https \(plain http only for a loopback host\)/],
    ["plain http to a private address", "http://10.0.0.5/mcp", /must be https/],
    ["plain http to the metadata address", "http://169.254.169.254/latest/", /must be https/],
    ["plain http to an IPv4-mapped loopback", "http://[::ffff:7f00:1]/x", /must be https/],
    ["userinfo", "https://user:s3cr3t@internal.example/mcp", /must not carry userinfo: put a credential in headers/],
    ["a user alone", "https://user@internal.example/mcp", /must not carry userinfo/],
    ["plain http to loopback", "http://127.0.0.1:9/mcp", undefined],
    ["plain http to [::1]", "http://[::1]:9/mcp", undefined],
    ["https with a port and a query", "https://mcp.example.com:8443/mcp?tenant=a", undefined],
  ])("a remote-http url: %s", (_label, url, message) => {
    if (message === undefined) expect(errorsOf(withServer(2, { url }))).toEqual([]);
    else expectError(withServer(2, { url }), "servers[2].url", message);
  });

  it.each<[string, string]>([
    ["a line feed", "v\nInjected: 1"],
    ["a carriage return and line feed", "v\r\nInjected: 1"],
    ["a NUL", "v\u0000"],
    ["DEL", "v\u007f"],
    ["a character past Latin-1", "v\u2028"],
  ])("a header value holding %s is refused, in headers and confirmationHeaders", (_label, value) => {
    expectError(withServer(2, { headers: { "x-a": value } }), "servers[2].headers.x-a", /only visible characters, spaces and tabs/);
    expectError(withServer(0, { confirmationHeaders: { "x-a": value } }), "servers[0].confirmationHeaders.x-a", /only visible characters, spaces and tabs/);
  });

  it("a header value of visible characters, spaces, tabs and Latin-1 is taken", () => {
    expect(errorsOf(withServer(2, { headers: { "x-a": "Bearer ${REMOTE_TOKEN}\t é ~" } }))).toEqual([]);
  });

  it("a header reference that reads a caller's bearer token under the slug's own namespace is refused", () => {
    const data = withServer(2, { headers: { "x-steal": "${TOKEN}" } });
    data.callers.push({ id: "s2", kind: "session", roles: ["user"], tokenSecret: "REMOTE__TOKEN" });
    expectError(data, "servers[2].headers.x-steal", /is a caller's bearer token/);
  });

  it.each<[string, string]>([
    ["another slug's namespaced secret", "${GMAIL_RW__CF_SECRET}"],
    ["the slug's own namespace spelled out", "${REMOTE__TOKEN}"],
    ["a caller's bearer token", "Bearer ${TOKEN_S1}"],
  ])("a header reference to %s is refused, in headers and confirmationHeaders", (label, value) => {
    const message =
      label === "a caller's bearer token" ? /is a caller's bearer token \(callers\[\]\.tokenSecret\), which goes to no server/ : /names a variable in a slug's namespace: write the bare name/;
    expectError(withServer(2, { headers: { "x-steal": value } }), "servers[2].headers.x-steal", message);
    expectError(withServer(0, { confirmationHeaders: { "x-steal": value } }), "servers[0].confirmationHeaders.x-steal", message);
  });

  it("bundle-only and remote-only keys stay with their kind", () => {
    expectError(withServer(2, { bundle: "GOOGLE" }), "servers[2].bundle", /bundle servers only/);
    expectError(withServer(2, { path: "/x" }), "servers[2].path", /bundle servers only/);
    expectError(withServer(2, { url: undefined }), "servers[2].url", /needs url/);
    expectError(withServer(1, { url: "https://x.example/mcp" }), "servers[1].url", /remote-http servers only/);
    for (const url of ["ftp://remote.example/mcp", "file:///etc/passwd", "ws://remote.example/mcp"]) expectError(withServer(2, { url }), "servers[2].url", /must be http\(s\)/);
    expectError(withServer(1, { bundle: undefined }), "servers[1].bundle", /needs bundle/);
    expectError(withServer(1, { path: undefined }), "servers[1].path", /needs path/);
  });

  it("two slugs of one bundle declaring one bare env name with different values", () => {
    const data = base();
    data.servers[0] = { ...data.servers[0], env: { OP_ELICITATION_WRITE: "true" } };
    data.servers[1] = { ...data.servers[1], env: { OP_ELICITATION_WRITE: "false" } };
    expectError(data, "servers[1].env.OP_ELICITATION_WRITE", /bundle GOOGLE already has OP_ELICITATION_WRITE with a different value \(servers\[0\]\); write it per slug/);
  });

  it("two slugs of one bundle declaring one bare env name with the same value is fine", () => {
    const data = base();
    data.servers[0] = { ...data.servers[0], env: { MODE: "x" } };
    data.servers[1] = { ...data.servers[1], env: { MODE: "x" } };
    expect(errorsOf(data)).toEqual([]);
  });

  it("per-slug <SLUG>__ names never clash, whatever their values", () => {
    const data = base();
    data.servers[0] = { ...data.servers[0], env: { GMAIL_RW__OP_ELICITATION_WRITE: "true", GMAIL_RW__X: "1" } };
    data.servers[1] = { ...data.servers[1], env: { GMAIL_RO__OP_ELICITATION_WRITE: "false", GMAIL_RO__X: "2" } };
    expect(errorsOf(data)).toEqual([]);
  });

  it.each(["GMAIL_RO__OP_ELICITATION_WRITE", "SHARED__X", "GMAIL_RW__", "GMAIL_RW_X__Y"])("a namespaced env name outside the slug's own namespace (%s)", (name) => {
    const data = base();
    data.servers[0] = { ...data.servers[0], env: { [name]: "true" } };
    expectError(data, `servers[0].env.${name}`, /must be in this slug's own namespace \(GMAIL_RW__<NAME>\)/);
  });

  it("one bare name with different values in two different bundles is fine", () => {
    const data = base();
    data.servers[0] = { ...data.servers[0], env: { MODE: "x" } };
    data.servers.push({ slug: "other", kind: "bundle", bundle: "OTHER", path: "/o", entitlements: ["user"], env: { MODE: "y" } });
    expect(errorsOf(data)).toEqual([]);
  });

  it.each<[string, RegExp]>([
    ["https://zimmer.tadasant.com/api/v1/elicitations/session", /must end in "\/"/],
    ["http://zimmer.tadasant.com/api/", /must be https/],
    ["https://ZIMMER.tadasant.com/api/", /not in normal form/],
    ["https://zimmer.tadasant.com:443/api/", /not in normal form/],
    ["https://zimmer.tadasant.com/a/../api/", /not in normal form/],
    ["zimmer.tadasant.com/api/", /not an absolute URL/],
    ["https://zimmer.tadasant.com/api/?q=1", /query or fragment/],
    ["https://u@zimmer.tadasant.com/api/", /userinfo/],
  ])("a prefix %s", (prefix, message) => {
    const data = base();
    data.gateway = { elicitation: { allowedUrlPrefixes: [PREFIX, prefix] } };
    expectError(data, "gateway.elicitation.allowedUrlPrefixes[1]", message);
  });

  it.each(["http://127.0.0.1:8788/api/", "http://localhost:8788/api/", "http://[::1]:8788/api/"])("a loopback http prefix %s is fine", (prefix) => {
    const data = base();
    data.gateway = { elicitation: { allowedUrlPrefixes: [prefix] } };
    expect(errorsOf(data)).toEqual([]);
  });

  it.each<[string, (d: ReturnType<typeof base>) => void, string, string]>([
    ["the root", (d) => Object.assign(d, { gatway: {} }), "(root)", "gatway"],
    ["gateway", (d) => Object.assign(d.gateway, { elicitaton: {} }), "gateway", "elicitaton"],
    ["gateway.elicitation", (d) => Object.assign(d.gateway, { elicitation: { allowedUrlPrefix: [PREFIX] } }), "gateway.elicitation", "allowedUrlPrefix"],
    ["a caller", (d) => Object.assign(d.callers[0] as Json, { role: ["user"] }), "callers[0]", "role"],
    ["a server", (d) => Object.assign(d.servers[0] as Json, { confirmation: true }), "servers[0]", "confirmation"],
    ["a server (camel-case slip)", (d) => Object.assign(d.servers[1] as Json, { timeoutms: 5000 }), "servers[1]", "timeoutms"],
  ])("an unknown key in %s", (_where, mutate, path, key) => {
    const data = base();
    mutate(data);
    expectError(data, path, new RegExp(`"${key}"`));
  });

  it("a wrong type names the key's path", () => {
    expectError(withServer(0, { timeoutMs: "120000" }), "servers[0].timeoutMs", /number/);
    expectError(withServer(0, { kind: "local" }), "servers[0].kind", /bundle|remote-http/);
  });

  it("a YAML file reports its errors with paths too, and a duplicate YAML key is an error", () => {
    const bad = parseRoster("servers:\n  - slug: a\n    kind: bundle\n    bundle: B\n    path: /a\n    entitlements: [u]\n    confirmatons: true\n");
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors).toContainEqual({ path: "servers[0]", message: expect.stringContaining('"confirmatons"') });
    const dup = parseRoster("callers: []\ncallers: []\n");
    expect(dup.ok).toBe(false);
    if (!dup.ok) expect(dup.errors[0]?.path).toBe("(yaml)");
  });

  it("every error is reported, not only the first", () => {
    const data = base();
    data.servers[0] = { ...data.servers[0], skipConfirmations: true };
    data.servers[2] = { ...data.servers[2], confirmations: true };
    const paths = errorsOf(data).map((e) => e.path);
    expect(paths).toContain("servers[0].skipConfirmations");
    expect(paths).toContain("servers[2].confirmations");
  });
});

describe("issue 13 #4: a slug's edge credential reaches one approval service", () => {
  const OTHER = "https://approvals.other.example/api/v1/elicitations/session/";
  const SAME_ORIGIN = "https://zimmer.tadasant.com/approvals/";
  const HEADERS = { "CF-Access-Client-Id": "${ID}" };
  function twoServices(patch: Json): ReturnType<typeof base> {
    const data = withServer(0, patch);
    data.gateway = { elicitation: { allowedUrlPrefixes: [PREFIX, OTHER, SAME_ORIGIN] } };
    return data;
  }

  it("issue 13 #4: every approvalUrlPrefixes entry must be one of gateway.elicitation.allowedUrlPrefixes", () => {
    expectError(withServer(0, { approvalUrlPrefixes: [PREFIX, OTHER] }), "servers[0].approvalUrlPrefixes[1]", /not one of gateway\.elicitation\.allowedUrlPrefixes/);
    // A narrower prefix under an allowed one is not an entry of the list either.
    expectError(withServer(0, { approvalUrlPrefixes: [`${PREFIX}narrow/`] }), "servers[0].approvalUrlPrefixes[0]", /not one of/);
    expectError(withServer(0, { approvalUrlPrefixes: ["http://approvals.example/"] }), "servers[0].approvalUrlPrefixes[0]", /must be https/);
    expect(errorsOf(twoServices({ approvalUrlPrefixes: [OTHER] }))).toEqual([]);
  });

  it("issue 13 #4: a slug with confirmationHeaders that could reach two origins is an error, with or without approvalUrlPrefixes", () => {
    expectError(
      twoServices({ confirmationHeaders: HEADERS }),
      "servers[0].approvalUrlPrefixes",
      /confirmationHeaders would reach 2 origins through every gateway\.elicitation\.allowedUrlPrefixes entry/,
    );
    expectError(twoServices({ confirmationHeaders: HEADERS, approvalUrlPrefixes: [PREFIX, OTHER] }), "servers[0].approvalUrlPrefixes", /would reach 2 origins through its approvalUrlPrefixes/);
    // The message names no prefix: an error never echoes a value from the file.
    for (const e of errorsOf(twoServices({ confirmationHeaders: HEADERS }))) expect(e.message).not.toMatch(/example|tadasant/);
  });

  it("issue 13 #4: one origin with confirmationHeaders is fine, and so are several origins without them", () => {
    expect(errorsOf(twoServices({ confirmationHeaders: HEADERS, approvalUrlPrefixes: [PREFIX, SAME_ORIGIN] }))).toEqual([]);
    expect(errorsOf(twoServices({ confirmationHeaders: HEADERS, approvalUrlPrefixes: [OTHER] }))).toEqual([]);
    expect(errorsOf(withServer(0, { confirmationHeaders: HEADERS }))).toEqual([]);
    expect(errorsOf(twoServices({}))).toEqual([]);
    expect(errorsOf(twoServices({ approvalUrlPrefixes: [PREFIX, OTHER] }))).toEqual([]);
  });

  it("issue 13 #4: approvalUrlPrefixes belongs to a bundle slug with confirmations: true", () => {
    expectError(withServer(1, { approvalUrlPrefixes: [PREFIX] }), "servers[1].approvalUrlPrefixes", /without confirmations: true would never be used/);
    expectError(withServer(2, { approvalUrlPrefixes: [PREFIX] }), "servers[2].approvalUrlPrefixes", /remote-http server cannot receive the approval channel/);
  });

  it.each([
    ["strad.config.yaml", 1],
    ["strad.dev.yaml", 2],
  ])("issue 13 #4: every slug of the checked-in %s with confirmationHeaders asks one origin (of %i allowed)", (file, origins) => {
    const text = readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), "utf8");
    const result = parseRoster(text);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const { allowedUrlPrefixes } = result.roster.gateway.elicitation;
    expect(new Set(allowedUrlPrefixes.map((p) => new URL(p).origin)).size).toBe(origins);
    for (const s of result.roster.servers.filter((x) => Object.keys(x.confirmationHeaders).length > 0)) {
      expect(s.approvalUrlPrefixes, s.slug).toBeDefined();
      expect(new Set(s.approvalUrlPrefixes?.map((p) => new URL(p).origin)).size, s.slug).toBe(1);
    }
  });
});

describe("issue 26: one secret, one origin", () => {
  const A = "https://approvals.a.example/api/v1/elicitations/session/";
  const A2 = "https://approvals.a.example/other/session/";
  const B = "https://approvals.b.example/api/v1/elicitations/session/";
  const B_PORT = "https://approvals.a.example:8443/api/v1/elicitations/session/";
  const asking = (slug: string, prefixes: string[] | undefined, headers: Record<string, string>): Json => ({
    slug,
    kind: "bundle",
    bundle: "GOOGLE",
    path: `/${slug}`,
    entitlements: ["user"],
    confirmations: true,
    ...(prefixes === undefined ? {} : { approvalUrlPrefixes: prefixes }),
    confirmationHeaders: headers,
  });
  const roster = (allowed: string[], servers: Json[]) => ({ gateway: { elicitation: { allowedUrlPrefixes: allowed } }, callers: base().callers, servers });
  const ID = { "CF-Access-Client-Id": "${ZIMMER_ID}" };

  it.each([
    ["another host", [A, B], [A], [B], ID, ID],
    ["the same host on another port", [A, B_PORT], [A], [B_PORT], ID, ID],
    ["another scheme (loopback http beside https)", [A, "http://127.0.0.1:8788/s/"], [A], ["http://127.0.0.1:8788/s/"], ID, ID],
    ["the name inside a longer value", [A, B], [A], [B], ID, { "CF-Access-Client-Id": "prefix-${ZIMMER_ID}-suffix" }],
    ["the name under another header", [A, B], [A], [B], ID, { "X-Other": "${ZIMMER_ID}" }],
  ])("refuses two slugs naming one secret in confirmationHeaders whose approval origins differ: %s", (_case, allowed, first, second, h1, h2) => {
    const data = roster(allowed, [asking("one", first, h1), asking("two", second, h2)]);
    const header = Object.keys(h2)[0] as string;
    expectError(data, `servers[1].confirmationHeaders.${header}`, /^\$\{ZIMMER_ID\} is also sent by servers\[0\] \("one"\), which sends it to another origin/);
    // Only the second slug is named: the first one fixed the origin.
    expect(errorsOf(data).filter((e) => e.path.startsWith("servers[0]"))).toEqual([]);
    // An error never echoes a value from the file: no prefix, no host.
    for (const e of errorsOf(data)) expect(e.message).not.toMatch(/example|127\.0\.0\.1|https?:/);
  });

  it.each([
    ["both on one prefix", [A, B], [A], [A], ID, ID],
    ["two prefixes of one origin", [A, A2, B], [A], [A2], ID, ID],
    ["each with a name of its own", [A, B], [A], [B], ID, { "CF-Access-Client-Id": "${OTHER_ID}" }],
    ["a name that only starts the same", [A, B], [A], [B], ID, { "CF-Access-Client-Id": "${ZIMMER_ID_B}" }],
    ["approvalUrlPrefixes absent, one allowed origin", [A, A2], undefined, [A2], ID, ID],
  ])("accepts slugs naming one secret only when they reach one origin: %s", (_case, allowed, first, second, h1, h2) => {
    expect(errorsOf(roster(allowed, [asking("one", first, h1), asking("two", second, h2)]))).toEqual([]);
  });

  it("counts a remote-http server's headers as sent to its url's origin, and two remote servers sharing a token are not its concern", () => {
    const remote = (slug: string, url: string, token: string): Json => ({ slug, kind: "remote-http", url, entitlements: ["user"], headers: { Authorization: `Bearer \${${token}}` } });
    expectError(roster([A], [asking("one", [A], ID), remote("r", "https://mcp.example/mcp", "ZIMMER_ID")]), "servers[1].headers.Authorization", /also sent by servers\[0\] \("one"\)/);
    // The same origin as the approval service is one origin.
    expect(errorsOf(roster([A], [asking("one", [A], ID), remote("r", "https://approvals.a.example/mcp", "ZIMMER_ID")]))).toEqual([]);
    expect(errorsOf(roster([A], [remote("r1", "https://one.example/mcp", "T"), remote("r2", "https://two.example/mcp", "T")]))).toEqual([]);
  });

  it("a slug that sends nothing (no confirmations, or no allowed prefix) reaches no origin", () => {
    const unasked = { ...asking("two", undefined, {}), confirmations: false, headers: { X: "${ZIMMER_ID}" } };
    expect(errorsOf(roster([A, B], [asking("one", [A], ID), unasked]))).toEqual([]);
    expect(errorsOf(roster([], [asking("one", undefined, ID), asking("two", undefined, ID)]))).toEqual([]);
  });

  it("a single slug spanning origins is R-CONF-14's error alone, not reported twice", () => {
    const errors = errorsOf(roster([A, B], [asking("one", [A, B], ID)]));
    expect(errors.map((e) => e.path)).toEqual(["servers[0].approvalUrlPrefixes"]);
  });

  it.each(["strad.config.yaml", "strad.dev.yaml"])("issue 26: no shared secret of the checked-in %s reaches two origins", (file) => {
    const result = parseRoster(readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), "utf8"));
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const reached = new Map<string, Set<string>>();
    for (const s of result.roster.servers) {
      if (!s.confirmations) continue;
      const origins = (s.approvalUrlPrefixes ?? result.roster.gateway.elicitation.allowedUrlPrefixes).map((p) => new URL(p).origin);
      for (const raw of Object.values(s.confirmationHeaders)) {
        for (const [, name] of raw.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) reached.set(name as string, new Set([...(reached.get(name as string) ?? []), ...origins]));
      }
    }
    expect(reached.size).toBeGreaterThan(0);
    for (const [name, origins] of reached) expect(origins.size, name).toBe(1);
  });
});

describe("${VAR} references", () => {
  it("the slug namespace is the slug upper-cased with - as _", () => {
    expect(slugNamespace("gmail-rw-external")).toBe("GMAIL_RW_EXTERNAL__");
    expect(slugNamespace("echo")).toBe("ECHO__");
  });

  it("the slug's own namespace wins over the shared one", () => {
    const env = { GMAIL_RW_EXTERNAL__ID: "own", ID: "shared" };
    expect(resolveRefs("${ID}", "gmail-rw-external", env)).toEqual({ ok: true, value: "own" });
  });

  it("the shared name is used when the slug has none of its own", () => {
    expect(resolveRefs("Bearer ${ID}", "gmail-rw-external", { ID: "shared", OTHER_SLUG__ID: "not-mine" })).toEqual({ ok: true, value: "Bearer shared" });
  });

  it("another slug's namespace is never read", () => {
    expect(resolveRefs("${ID}", "gmail-rw-external", { GMAIL_RO__ID: "theirs" })).toEqual({ ok: false, missing: "ID" });
  });

  it("a value that is not a string (a binding) counts as missing", () => {
    expect(resolveRefs("${ID}", "s", { ID: { fetch() {} } })).toEqual({ ok: false, missing: "ID" });
  });

  it("several refs in one value all resolve, and the first missing one is named", () => {
    expect(resolveRefs("${A}:${B}", "s", { A: "1", S__B: "2" })).toEqual({ ok: true, value: "1:2" });
    expect(resolveRefs("${A}:${B}:${C}", "s", { A: "1" })).toEqual({ ok: false, missing: "B" });
  });

  it("a value without refs is returned as written", () => {
    expect(resolveRefs("plain $VAR {X}", "s", {})).toEqual({ ok: true, value: "plain $VAR {X}" });
  });

  it("resolveHeaderMap resolves every header, or names the missing variable", () => {
    const map = { "CF-Access-Client-Id": "${CF_ID}", "CF-Access-Client-Secret": "${CF_SECRET}" };
    expect(resolveHeaderMap(map, "gmail-rw", { CF_ID: "id", GMAIL_RW__CF_SECRET: "sec" })).toEqual({
      ok: true,
      headers: { "CF-Access-Client-Id": "id", "CF-Access-Client-Secret": "sec" },
    });
    expect(resolveHeaderMap(map, "gmail-rw", { CF_ID: "id" })).toEqual({ ok: false, missing: "CF_SECRET" });
    expect(resolveHeaderMap({}, "gmail-rw", {})).toEqual({ ok: true, headers: {} });
  });
});

describe("checkSeeded", () => {
  const roster = valid(
    withServer(0, {
      confirmationHeaders: { "CF-Access-Client-Id": "${CF_ID}", "CF-Access-Client-Secret": "${CF_SECRET}" },
      headers: { Authorization: "Bearer ${API_KEY}" },
      mayBeUnseeded: ["CF_SECRET"],
    }),
  );

  it("names every unseeded ref by path and variable, except those listed in mayBeUnseeded", () => {
    const errors = checkSeeded(roster, { TOKEN_S1: "t" });
    expect(errors).toEqual([
      { path: "servers[0].headers.Authorization", message: expect.stringContaining("API_KEY is not seeded") },
      { path: "servers[0].confirmationHeaders.CF-Access-Client-Id", message: expect.stringContaining("CF_ID is not seeded") },
    ]);
  });

  it("a ref seeded in the slug's own namespace or the shared one passes", () => {
    expect(checkSeeded(roster, { TOKEN_S1: "t", GMAIL_RW__CF_ID: "id", API_KEY: "k" })).toEqual([]);
  });

  it("an unseeded caller token secret is named, never a value", () => {
    const errors = checkSeeded(roster, { GMAIL_RW__CF_ID: "id", API_KEY: "value-that-must-not-leak" });
    expect(errors).toEqual([{ path: "callers[0].tokenSecret", message: "secret TOKEN_S1 is not seeded" }]);
    expect(JSON.stringify(errors)).not.toContain("value-that-must-not-leak");
  });
});
