// Covers the roster's `fallback` field (worker/roster.ts) and what the gateway forwards for it (worker/channel.ts):
// "none" by default; "token" gates the slug, rides on an accepted channel, and turns "nobody to ask" (no approval
// address, or no confirmations) into a channel that names why and carries the call's record; every other refusal
// stays a refusal, and the schema refuses "token" beside skipConfirmations or on a remote server.
import { describe, expect, it } from "vitest";
import { type Channel, ChannelSchema } from "../../contract/channel";
import type { Caller } from "../../worker/auth";
import { buildChannel, isGated, NO_ADDRESS_REASON, NO_CONFIRMATIONS_REASON } from "../../worker/channel";
import { type Roster, type ServerEntry, validateRoster } from "../../worker/roster";

const PREFIX = "https://approvals.example.com/api/v1/elicitations/session/";
const CALL = { scope: "caller:s1", key: "req-1", nonce: "test-nonce-0123456789" };

function roster(servers: Record<string, unknown>[]): Roster {
  const result = validateRoster({ gateway: { elicitation: { allowedUrlPrefixes: [PREFIX] } }, servers });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.roster;
}

const R = roster([
  { slug: "pads", kind: "bundle", bundle: "PADS", path: "/pads", entitlements: ["user"], confirmations: true },
  { slug: "pads-token", kind: "bundle", bundle: "PADS", path: "/pads-token", entitlements: ["user"], confirmations: true, fallback: "token", timeoutMs: 60_000 },
  { slug: "pads-token-only", kind: "bundle", bundle: "PADS", path: "/pads-token", entitlements: ["user"], fallback: "token" },
]);

function server(slug: string): ServerEntry {
  const s = R.servers.find((x) => x.slug === slug);
  if (s === undefined) throw new Error(`no server ${slug}`);
  return s;
}

function build(slug: string, headerValue: string | null, kind: Caller["kind"] = "session"): Channel | undefined {
  const caller: Caller = { id: "dev-session", kind, roles: ["user"], tokenSecret: "T", isAdmin: false };
  const channel = buildChannel({ server: server(slug), caller, headerValue, roster: R, env: {}, call: CALL });
  if (channel !== undefined) expect(ChannelSchema.safeParse(channel).success).toBe(true);
  return channel;
}

describe("the roster's fallback field", () => {
  it('is "none" unless a slug says "token"', () => {
    expect(server("pads").fallback).toBe("none");
    expect(server("pads-token").fallback).toBe("token");
  });

  it.each([
    ["beside skipConfirmations", { slug: "a", kind: "bundle", bundle: "PADS", path: "/pads", entitlements: ["user"], skipConfirmations: true, fallback: "token" }, "skipConfirmations acts unasked"],
    [
      "on a remote-http server",
      { slug: "a", kind: "remote-http", url: "https://mcp.example.com/mcp", entitlements: ["user"], fallback: "token" },
      "a remote-http server cannot take the two-call token",
    ],
    ["with another value", { slug: "a", kind: "bundle", bundle: "PADS", path: "/pads", entitlements: ["user"], fallback: "yes" }, ""],
  ])("is refused %s", (_what, entry, message) => {
    const result = validateRoster({ servers: [entry] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toContainEqual({ path: "servers[0].fallback", message: expect.stringContaining(message) });
  });
});

describe("the channel of a fallback: token slug", () => {
  it("gates the slug even without confirmations", () => {
    expect(isGated(server("pads-token-only"))).toBe(true);
  });

  it("carries the setting on an accepted channel, and on that slug's only", () => {
    expect(build("pads-token", `${PREFIX}tok`)).toMatchObject({ slug: "pads-token", url: `${PREFIX}tok`, fallback: "token", call: CALL });
    expect(build("pads", `${PREFIX}tok`)).not.toHaveProperty("fallback");
  });

  it("turns a call with no approval address into a fallback channel that carries the call's record and says why, blaming no one", () => {
    expect(build("pads-token", null)).toEqual({ slug: "pads-token", fallback: "token", reason: NO_ADDRESS_REASON, ttlMs: 45_000, call: CALL, caller: "dev-session" });
    expect(NO_ADDRESS_REASON).toBe("no approval address came with this call");
    expect(build("pads", null)).toMatchObject({ slug: "pads", refused: expect.stringContaining("X-Elicitation-Url") });
  });

  it("turns a slug without confirmations into a fallback channel for every session caller", () => {
    expect(build("pads-token-only", `${PREFIX}tok`)).toMatchObject({ fallback: "token", reason: NO_CONFIRMATIONS_REASON, call: CALL });
  });

  it("keeps every other refusal a refusal: an address that is not allowed, and a console or grant caller", () => {
    expect(build("pads-token", "https://elsewhere.example.com/x")).toMatchObject({ refused: expect.any(String) });
    expect(build("pads-token", null, "console")).toMatchObject({ refused: expect.stringContaining("has no session to ask") });
    expect(build("pads-token-only", null, "grant")).toMatchObject({ refused: expect.stringContaining("has no session to ask") });
  });
});
