// Covers the approval channel a tools/call carries (worker/channel.ts): who gets a URL, a waiver, a refusal, or nothing, and the ttlMs margin.
import { describe, expect, it } from "vitest";
import { type Channel, ChannelSchema } from "../../contract/channel";
import type { Caller } from "../../worker/auth";
import { buildChannel, channelTtlMs, isGated } from "../../worker/channel";
import { type Roster, type ServerEntry, validateRoster } from "../../worker/roster";

const PREFIX = "https://zimmer.tadasant.com/api/v1/elicitations/session/";
const URL_OK = `${PREFIX}tok-S3CRET`;
const CALL = { scope: "caller:s1", key: "req-1", nonce: "test-nonce-0123456789" };

function roster(): Roster {
  const result = validateRoster({
    gateway: { elicitation: { allowedUrlPrefixes: [PREFIX] } },
    servers: [
      {
        slug: "gmail-rw",
        kind: "bundle",
        bundle: "GOOGLE",
        path: "/gmail",
        entitlements: ["user"],
        confirmations: true,
        timeoutMs: 240_000,
        confirmationHeaders: { "CF-Access-Client-Id": "${CF_ID}", "CF-Access-Client-Secret": "${CF_SECRET}" },
      },
      { slug: "gmail-agent", kind: "bundle", bundle: "GOOGLE", path: "/gmail-agent", entitlements: ["user"], skipConfirmations: true },
      { slug: "gmail-ro", kind: "bundle", bundle: "GOOGLE", path: "/gmail-ro", entitlements: ["user"] },
      {
        slug: "gmail-unseeded",
        kind: "bundle",
        bundle: "GOOGLE",
        path: "/gmail-unseeded",
        entitlements: ["user"],
        confirmations: true,
        confirmationHeaders: { "CF-Access-Client-Id": "${UNSEEDED_ID}" },
        mayBeUnseeded: ["UNSEEDED_ID"],
      },
      { slug: "plain-confirmed", kind: "bundle", bundle: "GOOGLE", path: "/plain", entitlements: ["user"], confirmations: true },
      { slug: "remote", kind: "remote-http", url: "https://remote.example/mcp", entitlements: ["user"] },
    ],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.roster;
}

const R = roster();
const ENV = { CF_ID: "shared-id", GMAIL_RW__CF_SECRET: "own-secret", CF_SECRET: "shared-secret" };

function server(slug: string): ServerEntry {
  const s = R.servers.find((x) => x.slug === slug);
  if (s === undefined) throw new Error(`no server ${slug}`);
  return s;
}

function caller(kind: Caller["kind"]): Caller {
  return { id: `the-${kind}`, kind, roles: ["user"], tokenSecret: "T", isAdmin: kind === "admin" };
}

function build(slug: string, kind: Caller["kind"], headerValue: string | null, env: Record<string, unknown> = ENV): Channel | undefined {
  const channel = buildChannel({ server: server(slug), caller: caller(kind), headerValue, roster: R, env, call: CALL });
  // Whatever the gateway builds must be what a bundle accepts.
  if (channel !== undefined) expect(ChannelSchema.safeParse(channel).success).toBe(true);
  return channel;
}

describe("ttlMs", () => {
  it.each<[number, number]>([
    [120_000, 105_000],
    [240_000, 225_000],
    [60_000, 45_000],
    [60_001, 45_001],
    [20_000, 15_000],
    [10_000, 7_500],
    [1_000, 750],
    [1_001, 751],
    [3_600_000, 3_585_000],
  ])("timeoutMs %i gives ttlMs %i (a quarter, at most 15 s)", (timeoutMs, ttlMs) => {
    expect(channelTtlMs(timeoutMs)).toBe(ttlMs);
  });

  it("the forwarded channel carries the slug's ttlMs", () => {
    expect(build("gmail-rw", "session", URL_OK)).toMatchObject({ ttlMs: 225_000 });
    expect(build("plain-confirmed", "session", URL_OK)).toMatchObject({ ttlMs: 105_000 });
  });
});

describe("a confirmed slug", () => {
  it("a session naming an allowed URL gets the URL, the deadline, the resolved edge headers and the call", () => {
    expect(build("gmail-rw", "session", URL_OK)).toEqual({
      slug: "gmail-rw",
      url: URL_OK,
      ttlMs: 225_000,
      // CF_SECRET comes from the slug's own namespace, CF_ID from the shared one.
      headers: { "CF-Access-Client-Id": "shared-id", "CF-Access-Client-Secret": "own-secret" },
      call: CALL,
      caller: "the-session",
    });
  });

  it("the URL is forwarded in the parser's normal form", () => {
    expect(build("plain-confirmed", "session", "HTTPS://Zimmer.Tadasant.com:443/api/v1/elicitations/session/x/../tok")).toMatchObject({ url: `${PREFIX}tok` });
  });

  it("a slug with no confirmationHeaders gets an empty header map", () => {
    expect(build("plain-confirmed", "session", URL_OK)).toMatchObject({ headers: {} });
  });

  it("no header is refused: there is no one to ask", () => {
    expect(build("gmail-rw", "session", null)).toEqual({ slug: "gmail-rw", refused: expect.stringMatching(/no X-Elicitation-Url header, so there is no one to ask/), caller: "the-session" });
  });

  it("a URL outside the allowlist is refused with the reason and without the URL", () => {
    const evil = "https://evil.example/api/v1/elicitations/session/tok-S3CRET";
    const channel = build("gmail-rw", "session", evil);
    expect(channel).toEqual({ slug: "gmail-rw", refused: expect.stringMatching(/not under any of gateway\.elicitation\.allowedUrlPrefixes/), caller: "the-session" });
    expect(JSON.stringify(channel)).not.toContain("S3CRET");
    expect(JSON.stringify(channel)).not.toContain("evil.example");
  });

  it("an empty allowlist refuses every confirmed call", () => {
    const empty: Roster = { ...R, gateway: { ...R.gateway, elicitation: { allowedUrlPrefixes: [] } } };
    const channel = buildChannel({ server: server("plain-confirmed"), caller: caller("session"), headerValue: URL_OK, roster: empty, env: ENV, call: CALL });
    expect(channel).toEqual({ slug: "plain-confirmed", refused: expect.stringMatching(/allowedUrlPrefixes is empty/), caller: "the-session" });
  });

  it.each(["console", "grant"] as const)("a %s caller is refused (it has no session to ask), whatever header it sent", (kind) => {
    for (const header of [URL_OK, null, "https://evil.example/x", ""]) {
      const channel = build("gmail-rw", kind, header);
      expect(channel).toEqual({ slug: "gmail-rw", refused: `caller "the-${kind}" is a ${kind} caller and has no session to ask`, caller: `the-${kind}` });
    }
  });

  it("an admin caller gets a channel only when it names one", () => {
    expect(build("gmail-rw", "admin", null)).toEqual({ slug: "gmail-rw", refused: expect.stringMatching(/no one to ask/), caller: "the-admin" });
    expect(build("gmail-rw", "admin", URL_OK)).toMatchObject({ slug: "gmail-rw", url: URL_OK });
  });

  it("an unseeded confirmationHeaders ref is refused naming the variable, though mayBeUnseeded let the config load", () => {
    expect(build("gmail-unseeded", "session", URL_OK)).toEqual({ slug: "gmail-unseeded", refused: expect.stringContaining("UNSEEDED_ID"), caller: "the-session" });
    expect(build("gmail-rw", "session", URL_OK, { CF_ID: "id" })).toEqual({ slug: "gmail-rw", refused: expect.stringMatching(/need secret CF_SECRET, which is not seeded/), caller: "the-session" });
  });

  it("a refusal for an unseeded ref never carries a resolved header value", () => {
    const channel = build("gmail-rw", "session", URL_OK, { CF_ID: "id-value-123" });
    expect(JSON.stringify(channel)).not.toContain("id-value-123");
  });

  it("the URL check comes before the header resolution, so a bad URL is what the caller hears about", () => {
    expect(build("gmail-unseeded", "session", null)).toEqual({ slug: "gmail-unseeded", refused: expect.stringMatching(/no one to ask/), caller: "the-session" });
  });
});

describe("a waived slug", () => {
  it.each(["session", "admin", "console", "grant"] as const)("a %s caller gets the waiver and never a URL, whatever it sent", (kind) => {
    for (const header of [URL_OK, null, "https://evil.example/x"]) {
      const channel = build("gmail-agent", kind, header);
      expect(channel).toEqual({ slug: "gmail-agent", skip: true, ttlMs: 105_000, call: CALL, caller: `the-${kind}` });
      expect(channel).not.toHaveProperty("url");
      expect(channel).not.toHaveProperty("headers");
    }
  });
});

describe("the caller on the channel", () => {
  it.each<[string, Caller["kind"], string | null]>([
    ["an accepted URL", "session", URL_OK],
    ["a refused URL", "session", "https://evil.example/x/"],
    ["no header", "admin", null],
    ["a console caller", "console", URL_OK],
  ])("names the caller by its roster id on %s, and never its token secret", (_label, kind, header) => {
    const channel = build("gmail-rw", kind, header);
    expect(channel?.caller).toBe(`the-${kind}`);
    expect(JSON.stringify(channel)).not.toContain('"T"');
  });

  it("names the caller on a waiver too", () => {
    expect(build("gmail-agent", "grant", null)?.caller).toBe("the-grant");
  });

  it("a bundle refuses a channel whose caller is not a roster id, as malformed", () => {
    for (const bad of ["The-Session", "a b", "", "x\nApproved by: admin", 5]) {
      expect(ChannelSchema.safeParse({ slug: "s", refused: "why", caller: bad }).success).toBe(false);
      expect(ChannelSchema.safeParse({ slug: "s", skip: true, caller: bad }).success).toBe(false);
    }
    expect(ChannelSchema.safeParse({ slug: "s", refused: "why" }).success).toBe(true);
  });
});

describe("slugs that get no key at all", () => {
  it("a slug without confirmations or skipConfirmations gets nothing, even with a valid URL", () => {
    expect(build("gmail-ro", "session", URL_OK)).toBeUndefined();
    expect(isGated(server("gmail-ro"))).toBe(false);
  });

  it("a remote-http server gets nothing", () => {
    expect(build("remote", "session", URL_OK)).toBeUndefined();
    expect(isGated(server("remote"))).toBe(false);
  });

  it("a remote-http entry that somehow declares confirmations still gets nothing", () => {
    // The schema refuses this; the channel does not rely on it.
    const forged: ServerEntry = { ...server("remote"), confirmations: true, skipConfirmations: true };
    expect(isGated(forged)).toBe(false);
    expect(buildChannel({ server: forged, caller: caller("session"), headerValue: URL_OK, roster: R, env: ENV, call: CALL })).toBeUndefined();
  });

  it("gated bundle slugs are exactly those declaring confirmations or skipConfirmations", () => {
    expect(R.servers.filter(isGated).map((s) => s.slug)).toEqual(["gmail-rw", "gmail-agent", "gmail-unseeded", "plain-confirmed"]);
  });
});

describe("issue 13 #4: the edge credential stays with its service", () => {
  const OTHER = "https://approvals.other.example/api/v1/elicitations/session/";
  const result = validateRoster({
    gateway: { elicitation: { allowedUrlPrefixes: [PREFIX, OTHER] } },
    servers: [
      {
        slug: "mail-zimmer",
        kind: "bundle",
        bundle: "GOOGLE",
        path: "/gmail",
        entitlements: ["user"],
        confirmations: true,
        approvalUrlPrefixes: [PREFIX],
        confirmationHeaders: { "CF-Access-Client-Id": "${CF_ID}", "CF-Access-Client-Secret": "${CF_SECRET}" },
      },
      { slug: "mail-plain", kind: "bundle", bundle: "GOOGLE", path: "/plain", entitlements: ["user"], confirmations: true },
    ],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  const two = result.roster;
  const at = (slug: string, headerValue: string | null) => {
    const entry = two.servers.find((s) => s.slug === slug) as ServerEntry;
    const channel = buildChannel({ server: entry, caller: caller("session"), headerValue, roster: two, env: ENV, call: CALL });
    if (channel !== undefined) expect(ChannelSchema.safeParse(channel).success).toBe(true);
    return channel;
  };

  it("issue 13 #4: a URL under another allowed service's prefix is refused naming approvalUrlPrefixes, never the URL, and carries no header", () => {
    const channel = at("mail-zimmer", `${OTHER}tok-S3CRET/`);
    expect(channel).toEqual({ slug: "mail-zimmer", refused: 'X-Elicitation-Url was refused: it is not under any of the approvalUrlPrefixes of "mail-zimmer"', caller: "the-session" });
    const text = JSON.stringify(channel);
    for (const leak of ["S3CRET", "other.example", "shared-id", "own-secret"]) expect(text).not.toContain(leak);
  });

  it("issue 13 #4: the slug's own prefix still gets the URL and its headers", () => {
    expect(at("mail-zimmer", URL_OK)).toEqual({
      slug: "mail-zimmer",
      url: URL_OK,
      ttlMs: 105_000,
      headers: { "CF-Access-Client-Id": "shared-id", "CF-Access-Client-Secret": "shared-secret" },
      call: CALL,
      caller: "the-session",
    });
  });

  it("issue 13 #4: a URL outside every allowed prefix keeps the allowlist's own reason, and a slug without approvalUrlPrefixes may use every allowed prefix", () => {
    expect(at("mail-zimmer", "https://evil.example/x/")).toEqual({
      slug: "mail-zimmer",
      refused: expect.stringMatching(/not under any of gateway\.elicitation\.allowedUrlPrefixes/),
      caller: "the-session",
    });
    expect(at("mail-plain", `${OTHER}tok/`)).toMatchObject({ slug: "mail-plain", url: `${OTHER}tok/`, headers: {} });
    expect(at("mail-plain", URL_OK)).toMatchObject({ slug: "mail-plain", url: URL_OK });
  });

  it("issue 13 #4: an empty approvalUrlPrefixes refuses every URL", () => {
    const entry = { ...(two.servers[0] as ServerEntry), approvalUrlPrefixes: [] };
    const channel = buildChannel({ server: entry, caller: caller("session"), headerValue: URL_OK, roster: two, env: ENV, call: CALL });
    expect(channel).toEqual({ slug: "mail-zimmer", refused: expect.stringMatching(/approvalUrlPrefixes of "mail-zimmer"/), caller: "the-session" });
  });
});
