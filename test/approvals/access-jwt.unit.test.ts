// Covers how approvals/access-jwt.ts keeps Access's signing keys, against a local certs server and a set clock: rotated keys are picked up, stale keys are not trusted while the certs URL fails, and refetches are bounded.
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CERTS_COOLDOWN_MS, CERTS_MAX_AGE_MS, CERTS_RETRY_MS, verifyAccessJwt } from "../../approvals/access-jwt";
import type { AccessConfig } from "../../approvals/settings";

const TEAM = "https://strad-test.cloudflareaccess.com";
const AUD = "0123456789abcdef-test-audience-tag";
const first = { kid: "key-1", ...generateKeyPairSync("rsa", { modulusLength: 2048 }) };
const second = { kid: "key-2", ...generateKeyPairSync("rsa", { modulusLength: 2048 }) };
type Key = { kid: string; publicKey: KeyObject; privateKey: KeyObject };

const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

/** A person's application token as Cloudflare's "Application token" page shows it, signed by `key`. */
function token(key: Key, kid = key.kid): string {
  const header = b64url(JSON.stringify({ alg: "RS256", kid, typ: "JWT" }));
  const payload = b64url(
    JSON.stringify({
      aud: [AUD],
      email: "ann@example.com",
      exp: now() + 600,
      iat: now(),
      nbf: now(),
      iss: TEAM,
      type: "app",
      identity_nonce: "6ei69kawdKzMIAPF",
      sub: "7335d417-61da-459d-899c-0a01c76a2f94",
      country: "US",
    }),
  );
  return `${header}.${payload}.${b64url(sign("sha256", Buffer.from(`${header}.${payload}`), key.privateKey))}`;
}

/** The team's certs endpoint: serves `keys`, or 500 while `failing`; counts what it was asked. */
interface Certs {
  config: AccessConfig;
  keys: Key[];
  failing: boolean;
  fetches: number;
}

let server: Server;
let certs: Certs;

beforeEach(async () => {
  const state = { keys: [first], failing: false, fetches: 0 } as Omit<Certs, "config">;
  server = createServer((_req, res) => {
    state.fetches++;
    if (state.failing) {
      res.writeHead(500).end();
      return;
    }
    const jwks = state.keys.map((k) => ({ ...k.publicKey.export({ format: "jwk" }), kid: k.kid, alg: "RS256", use: "sig" }));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: jwks }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // A new port per test: the module keeps one key set per certs URL, so no test sees another's cache.
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cdn-cgi/access/certs`;
  certs = Object.assign(state, { config: { teamDomain: TEAM, audience: AUD, certsUrl: url } });
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-05-01T12:00:00Z"));
});

afterEach(async () => {
  vi.useRealTimers();
  await new Promise((resolve) => server.close(resolve));
});

const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
const verify = (jwt: string) => verifyAccessJwt(jwt, certs.config);

describe("the team's signing keys", () => {
  it("issue 13 #6: a rotated key is picked up once the cooldown after the last fetch has passed, and the retired key is then refused", async () => {
    expect(await verify(token(first))).toMatchObject({ ok: true });
    expect(certs.fetches).toBe(1);
    certs.keys = [second];
    later(CERTS_COOLDOWN_MS / 2);
    expect(await verify(token(second))).toEqual({ ok: false, error: "unknown_kid" });
    expect(certs.fetches).toBe(1);
    later(CERTS_COOLDOWN_MS);
    expect(await verify(token(second))).toEqual({ ok: true, claims: { type: "person", email: "ann@example.com" } });
    expect(certs.fetches).toBe(2);
    expect(await verify(token(first))).toEqual({ ok: false, error: "unknown_kid" });
    expect(certs.fetches).toBe(2);
  });

  it("issue 13 #6: while the certs URL fails, cached keys serve until their max age and are refused after it; refetches are backed off", async () => {
    expect(await verify(token(first))).toMatchObject({ ok: true });
    certs.failing = true;
    later(CERTS_MAX_AGE_MS - 60_000);
    expect(await verify(token(first))).toMatchObject({ ok: true });
    expect(certs.fetches).toBe(1);

    later(60_001);
    expect(await verify(token(first))).toEqual({ ok: false, error: "certs_unavailable" });
    expect(certs.fetches).toBe(2);
    for (let i = 0; i < 20; i++) expect(await verify(token(first))).toEqual({ ok: false, error: "certs_unavailable" });
    expect(certs.fetches).toBe(2);

    later(CERTS_RETRY_MS);
    expect(await verify(token(first))).toEqual({ ok: false, error: "certs_unavailable" });
    expect(certs.fetches).toBe(3);

    certs.failing = false;
    later(CERTS_RETRY_MS);
    expect(await verify(token(first))).toMatchObject({ ok: true });
    expect(certs.fetches).toBe(4);
  });

  it("issue 13 #6: a burst of requests with an unknown kid refetches at most once, whether the certs URL answers or fails", async () => {
    expect(await verify(token(first))).toMatchObject({ ok: true });
    later(CERTS_COOLDOWN_MS + 1);
    for (let i = 0; i < 50; i++) expect(await verify(token(first, "forged-kid"))).toEqual({ ok: false, error: "unknown_kid" });
    expect(certs.fetches).toBe(2);

    later(CERTS_COOLDOWN_MS + 1);
    const together = await Promise.all(Array.from({ length: 20 }, () => verify(token(first, "forged-kid"))));
    expect(together.every((r) => !r.ok)).toBe(true);
    expect(certs.fetches).toBe(3);

    certs.failing = true;
    later(CERTS_COOLDOWN_MS + 1);
    for (let i = 0; i < 50; i++) expect((await verify(token(first, "forged-kid"))).ok).toBe(false);
    expect(certs.fetches).toBe(4);
    // The known key is still served from the cache, inside its max age, while the URL fails.
    expect(await verify(token(first))).toMatchObject({ ok: true });
    expect(certs.fetches).toBe(4);
  });
});
