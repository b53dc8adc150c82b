// Covers the approval service's pure modules in Node: settings validation, the HMAC-derived tokens and the Prefer: wait parser.
import { describe, expect, it } from "vitest";
import { preferredWait } from "../../approvals/protocol.routes";
import { readSettings } from "../../approvals/settings";
import { csrfToken, newSessionId, reviewKey, sessionFromReviewKey, sessionFromToken, sessionToken } from "../../approvals/tokens";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

describe("settings", () => {
  const base = { SESSION_SECRET: SECRET };
  it("defaults to 7 days of retention, no dev mode and no edge", () => {
    const r = readSettings(base);
    expect(r.ok && r.settings).toMatchObject({ retentionMs: 7 * 24 * 3600 * 1000, devMode: false, emulation: undefined, access: undefined });
  });

  it.each([
    ["a missing secret", {}, /SESSION_SECRET/],
    ["a short secret", { SESSION_SECRET: "short-secret" }, /SESSION_SECRET/],
    ["the edge switch without a service token", { ...base, ACCESS_EMULATION: "true", ACCESS_CLIENT_ID: "id" }, /ACCESS_CLIENT_SECRET/],
    ["a team domain without an audience", { ...base, ACCESS_TEAM_DOMAIN: "https://t.cloudflareaccess.com" }, /ACCESS_AUD/],
    ["a team domain that is not Access", { ...base, ACCESS_TEAM_DOMAIN: "https://evil.example.com", ACCESS_AUD: "a" }, /ACCESS_TEAM_DOMAIN/],
    ["a retention that is not whole seconds", { ...base, RETENTION_SECONDS: "1.5" }, /RETENTION_SECONDS/],
    ["a short operator token", { ...base, OPERATOR_TOKEN: "short-token" }, /OPERATOR_TOKEN/],
  ])("refuses %s and names the variable, never a value", (_name, env, problem) => {
    const r = readSettings(env);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.join("; ")).toMatch(problem);
      for (const value of Object.values(env)) if (value.length >= 5) expect(r.problems.join("; ")).not.toContain(value);
    }
  });

  it("derives the certs URL from the team domain unless one is given", () => {
    const r = readSettings({ ...base, ACCESS_TEAM_DOMAIN: "https://team.cloudflareaccess.com/", ACCESS_AUD: "aud" });
    expect(r.ok && r.settings.access).toEqual({ teamDomain: "https://team.cloudflareaccess.com", audience: "aud", certsUrl: "https://team.cloudflareaccess.com/cdn-cgi/access/certs" });
  });
});

describe("tokens", () => {
  it("round-trips a session through its token and its review key, which differ", async () => {
    const id = newSessionId();
    const token = await sessionToken(SECRET, id);
    const key = await reviewKey(SECRET, id);
    expect(await sessionFromToken(SECRET, token)).toBe(id);
    expect(await sessionFromReviewKey(SECRET, key)).toBe(id);
    expect(token).not.toBe(key);
    expect(await sessionFromReviewKey(SECRET, token)).toBeUndefined();
    expect(await sessionFromToken(SECRET, key)).toBeUndefined();
  });

  it("refuses a token minted under another secret", async () => {
    const id = newSessionId();
    expect(await sessionFromToken(SECRET, await sessionToken(`${SECRET}-other`, id))).toBeUndefined();
  });

  it("binds the CSRF token to the session and the person", async () => {
    const id = newSessionId();
    const a = await csrfToken(SECRET, id, "ann@example.com");
    expect(await csrfToken(SECRET, id, "bob@example.com")).not.toBe(a);
    expect(await csrfToken(SECRET, newSessionId(), "ann@example.com")).not.toBe(a);
  });
});

describe("Prefer: wait", () => {
  it.each([
    [null, undefined],
    ["", undefined],
    ["respond-async", undefined],
    ["wait=5", 5],
    ["respond-async, wait=10", 10],
    ['wait="7"', 7],
    ["WAIT = 3", 3],
    ["wait=600", 25],
    ["wait=-1", undefined],
    ["wait=abc", undefined],
  ])("reads %j as %j", (header, seconds) => {
    expect(preferredWait(header)).toBe(seconds);
  });
});
