// Covers who gets the client question channel (worker/channel.ts, R-CHAN-15) and the roster keys that allow it (worker/roster.ts asks and clientQuestions, R-CONF-17): only a caller declared asks: client, on a slug with clientQuestions, with no approval URL, over 2026-07-28 with form elicitation declared.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChannelSchema } from "../../contract/channel";
import type { Caller } from "../../worker/auth";
import { buildChannel } from "../../worker/channel";
import { GUARD_KEYS } from "../../worker/overlay";
import { type Roster, type ServerEntry, validateRoster } from "../../worker/roster";

const PREFIX = "https://approvals.example.com/api/v1/elicitations/session/";
const CALL = { scope: "the-person", key: "c:nonce", nonce: "test-nonce-0123456789" };

function rosterOf(servers: Record<string, unknown>[], callers: Record<string, unknown>[] = []) {
  return validateRoster({ gateway: { elicitation: { allowedUrlPrefixes: [PREFIX] } }, callers, servers });
}

const BASE = { kind: "bundle", bundle: "ECHO", entitlements: ["user"] };
const built = rosterOf([
  { ...BASE, slug: "asks-client", path: "/echo-confirmed", confirmations: true, clientQuestions: true },
  { ...BASE, slug: "asks-service", path: "/echo-confirmed", confirmations: true },
  { ...BASE, slug: "waived", path: "/echo-waived", skipConfirmations: true },
  { ...BASE, slug: "token", path: "/pads", confirmations: true, clientQuestions: true, fallback: "token" },
]);
if (!built.ok) throw new Error(JSON.stringify(built.errors));
const R: Roster = built.roster;

function server(slug: string): ServerEntry {
  const s = R.servers.find((x) => x.slug === slug);
  if (s === undefined) throw new Error(`no server ${slug}`);
  return s;
}

const PERSON: Caller = { id: "the-person", kind: "session", roles: ["user"], tokenSecret: "T", isAdmin: false, asks: "client" };

function build(slug: string, caller: Caller, headerValue: string | null, clientForm: boolean | undefined) {
  const channel = buildChannel({ server: server(slug), caller, headerValue, roster: R, env: {}, call: CALL, ...(clientForm === undefined ? {} : { clientForm }) });
  // Whatever the gateway builds must be what a bundle accepts.
  if (channel !== undefined) expect(ChannelSchema.safeParse(channel).success).toBe(true);
  return channel;
}

describe("the client question channel", () => {
  it("a caller declared asks: client, on a slug with clientQuestions, with no approval URL and form declared over 2026-07-28, gets it", () => {
    expect(build("asks-client", PERSON, null, true)).toEqual({ slug: "asks-client", ask: "client", ttlMs: 105_000, call: CALL, caller: "the-person" });
  });

  it("takes every one of its four conditions, and otherwise builds exactly what it built before (randomized)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Caller["asks"]>("client", "service", undefined),
        fc.constantFrom("asks-client", "asks-service", "waived", "token"),
        fc.constantFrom<string | null>(null, `${PREFIX}tok`, "https://elsewhere.example/x", ""),
        fc.constantFrom<boolean | undefined>(true, false, undefined),
        fc.constantFrom<Caller["kind"]>("session", "admin"),
        (asks, slug, header, form, kind) => {
          const caller: Caller = { ...PERSON, kind, isAdmin: kind === "admin", ...(asks === undefined ? { asks: undefined } : { asks }) };
          const got = build(slug, caller, header, form);
          const all = asks === "client" && server(slug).clientQuestions && header === null && form === true;
          if (all) expect(got).toMatchObject({ ask: "client" });
          else {
            // Without the client question the channel is the one a service-asking caller gets.
            const before = build(slug, { ...caller, asks: "service" }, header, form);
            expect(got).toEqual(before);
            expect(got === undefined || !("ask" in got)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a caller that sends an approval URL asks its approval service, even when declared asks: client", () => {
    expect(build("asks-client", PERSON, `${PREFIX}tok`, true)).toMatchObject({ url: `${PREFIX}tok` });
  });

  it("a 2025-era call, or one whose client declared no form elicitation, is refused as before: there is no one to ask", () => {
    expect(build("asks-client", PERSON, null, false)).toMatchObject({ refused: expect.stringContaining("X-Elicitation-Url") });
    expect(build("asks-client", PERSON, null, undefined)).toMatchObject({ refused: expect.stringContaining("X-Elicitation-Url") });
  });

  it("a slug without clientQuestions never asks at the client, whoever calls", () => {
    expect(build("asks-service", PERSON, null, true)).toMatchObject({ refused: expect.stringContaining("X-Elicitation-Url") });
  });

  it("a waived slug keeps its waiver for a caller declared asks: client", () => {
    expect(build("waived", PERSON, null, true)).toMatchObject({ skip: true });
  });

  it("the bundle reads a client channel without its caller, or with a short nonce, as a refusal, never a guess", () => {
    expect(ChannelSchema.safeParse({ slug: "s", ask: "client", ttlMs: 1, call: CALL }).success).toBe(false);
    expect(ChannelSchema.safeParse({ slug: "s", ask: "client", ttlMs: 1, call: { ...CALL, nonce: "short" }, caller: "c" }).success).toBe(false);
    expect(ChannelSchema.safeParse({ slug: "s", ask: "client", ttlMs: 1, call: CALL, caller: "c", url: `${PREFIX}x` }).success).toBe(false);
  });
});

describe("the roster keys", () => {
  it("asks defaults to service, and clientQuestions to false, on every caller and slug", () => {
    const result = rosterOf([{ ...BASE, slug: "gmail", path: "/gmail", confirmations: true }], [{ id: "c", kind: "session", tokenSecret: "T" }]);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.roster.callers[0]?.asks).toBe("service");
    expect(result.roster.servers[0]?.clientQuestions).toBe(false);
  });

  it("clientQuestions without confirmations: true is a roster error naming the field", () => {
    for (const entry of [
      { ...BASE, slug: "x", path: "/x", clientQuestions: true },
      { ...BASE, slug: "x", path: "/x", clientQuestions: true, skipConfirmations: true },
      { slug: "x", kind: "remote-http", url: "https://remote.example/mcp", entitlements: ["user"], clientQuestions: true },
    ]) {
      const result = rosterOf([entry]);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.errors).toContainEqual({ path: "servers[0].clientQuestions", message: expect.stringContaining("needs confirmations: true") });
    }
    expect(rosterOf([{ ...BASE, slug: "x", path: "/x", clientQuestions: true, confirmations: true }]).ok).toBe(true);
    expect(rosterOf([{ ...BASE, slug: "x", path: "/x", clientQuestions: false }]).ok).toBe(true);
  });

  it.each(["console", "grant"])("a %s caller cannot be asks: client: it has no client a person answers at", (kind) => {
    const result = rosterOf([], [{ id: "c", kind, tokenSecret: "T", asks: "client" }]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toContainEqual({ path: "callers[0].asks", message: expect.stringContaining(`a ${kind} caller`) });
    expect(rosterOf([], [{ id: "c", kind, tokenSecret: "T", asks: "service" }]).ok).toBe(true);
  });

  it("asks takes only service or client", () => {
    const result = rosterOf([], [{ id: "c", kind: "session", tokenSecret: "T", asks: "human" }]);
    expect(result.ok).toBe(false);
  });

  it("clientQuestions is set only by the checked-in roster: a runtime write may not name it", () => {
    expect(GUARD_KEYS).toContain("clientQuestions");
  });
});
