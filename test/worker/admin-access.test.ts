// Covers /admin/roster's second operator credential (worker/admin.ts, contract/access-jwt.ts): a person Cloudflare
// Access signed in, whose email gateway.operatorAccess lists, verified as the approval service verifies its people,
// against a local key set on loopback. Tokens are shaped as Cloudflare's "Application token" page shows them (as in
// test/approvals/review-access.unit.test.ts). Every refusal writes nothing; the audit line names the person's email.
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { HistoryEntry } from "../../contract/roster-overlay";
import { createGateway } from "../../worker/gateway";
import type { GatewayEnv } from "../../worker/mcp";
import { parseRoster } from "../../worker/roster-text";
import { accessMinter, nowSeconds } from "../fakes/access/tokens";
import { executionContext } from "./helpers/gateway";
import { MemoryOverlay, overlayBinding } from "./helpers/overlay";

const TEAM = "https://strad-test.cloudflareaccess.com";
const AUD = "0123456789abcdef-gateway-admin-aud";
const KID = "gateway-test-key-1";
const ADMIN = "admin-token-0123456789abcdef";
const minter = accessMinter({ team: TEAM, aud: AUD, kid: KID });
const { keys, person, service } = minter;
const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 });
const now = nowSeconds;

let jwks: Server;
let certsUrl: string;

/** The roster with (or without) gateway.operatorAccess naming ann as the one operator; the email is matched case-blind. */
const roster = (withAccess: boolean) => `callers:
  - { id: ops, kind: admin, roles: [], tokenSecret: TOKEN_ADMIN }
${withAccess ? `gateway:\n  operatorAccess: { teamDomain: "${TEAM}", audience: "${AUD}", certsUrl: "${certsUrl}", operators: [ "Ann@Example.com" ] }\n` : ""}servers:
  - { slug: plain, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
`;

beforeAll(async () => {
  jwks = createServer((req, res) => {
    if (req.url !== "/cdn-cgi/access/certs") {
      res.writeHead(404).end();
      return;
    }
    const jwk = { ...keys.publicKey.export({ format: "jwk" }), kid: KID, alg: "RS256", use: "sig" };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
  certsUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/cdn-cgi/access/certs`;
});
afterAll(async () => {
  await new Promise((resolve) => jwks?.close(resolve));
});

let logged: string[];
beforeEach(() => {
  logged = [];
  for (const level of ["log", "error", "warn"] as const) {
    vi.spyOn(console, level).mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function serve(gateway: ExportedHandler<GatewayEnv>, request: Request, store: MemoryOverlay): Promise<Response> {
  const ctx = executionContext();
  const env = { TOKEN_ADMIN: ADMIN, CALLS: {}, ROSTER_OVERLAY: overlayBinding(store) };
  const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env, ctx);
  await response.clone().text();
  await ctx.settle();
  return response;
}

const NEW_REMOTE = { slug: "added", kind: "remote-http", url: "https://added.example/mcp", entitlements: ["user"] };
const signedIn = (assertion: string, method = "POST", path = "/servers", body: unknown = NEW_REMOTE) =>
  new Request(`https://gateway.test/admin/roster${path}`, {
    method,
    headers: { "cf-access-jwt-assertion": assertion, ...(body === null ? {} : { "content-type": "application/json" }) },
    body: body === null ? undefined : JSON.stringify(body),
  });

describe("an operator signed in through Cloudflare Access", () => {
  it("the roster's schema takes gateway.operatorAccess and lower-cases its emails; a team domain Access would not issue is refused", () => {
    const ok = parseRoster(roster(true));
    expect(ok.ok && ok.roster.gateway.operatorAccess?.operators).toEqual(["ann@example.com"]);
    const bad = parseRoster(roster(true).replace(TEAM, "https://evil.example.com"));
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors[0]?.path).toBe("gateway.operatorAccess.teamDomain");
    // Plain http for the key set only on loopback: the keys decide who is an operator.
    const plain = parseRoster(roster(true).replace(certsUrl, "http://keys.example.com/certs"));
    expect(!plain.ok && plain.errors[0]?.path).toBe("gateway.operatorAccess.certsUrl");
  });

  it("a listed operator's valid token may read and write, and the audit line and history name the person's email", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(roster(true));
    const token = person("ann@example.com");
    const written = await serve(gateway, signedIn(token), store);
    expect(written.status).toBe(200);
    expect(store.version).toBe(1);
    expect(JSON.parse(store.text ?? "")).toMatchObject({ add: [{ slug: "added" }] });
    const listed = await serve(gateway, signedIn(token, "GET", "", null), store);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { servers: { slug: string; source: string }[] }).servers.map((s) => [s.slug, s.source])).toEqual([
      ["plain", "base"],
      ["added", "runtime:added"],
    ]);
    const audit = logged.filter((l) => l.includes('"event":"roster_write"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ who: "ann@example.com", op: "add", slug: "added", version: 1 });
    expect(store.rows.map((r: HistoryEntry) => r.who)).toEqual(["ann@example.com"]);
    // The token is never logged, nor any part of its signature.
    expect(logged.join("\n")).not.toContain(token.split(".")[2]);
  });

  it.each([
    ["an unlisted email", () => person("mallory@example.com"), 403, "NOT_OPERATOR", undefined],
    ["a bad signature", () => person("ann@example.com", {}, stranger.privateKey), 401, "ACCESS_REFUSED", "bad_signature"],
    ["a wrong audience", () => person("ann@example.com", { aud: ["another-application-aud"] }), 401, "ACCESS_REFUSED", "wrong_audience"],
    ["another team", () => person("ann@example.com", { iss: "https://other-team.cloudflareaccess.com" }), 401, "ACCESS_REFUSED", "wrong_issuer"],
    ["an expired token", () => person("ann@example.com", { exp: now() - 3600, iat: now() - 7200, nbf: now() - 7200 }), 401, "ACCESS_REFUSED", "expired"],
    ["a service token", () => service(), 403, "NOT_OPERATOR", undefined],
    ["a token that is not a JWT", () => "not-a-jwt", 401, "ACCESS_REFUSED", "malformed"],
  ])("%s is refused, for a read and every write, and nothing is written", async (_what, make, status, code, reason) => {
    const store = new MemoryOverlay();
    const gateway = createGateway(roster(true));
    const token = make();
    for (const request of [signedIn(token), signedIn(token, "PATCH", "/servers/plain", { timeoutMs: 5000 }), signedIn(token, "DELETE", "", null), signedIn(token, "GET", "", null)]) {
      const response = await serve(gateway, request, store);
      expect(response.status).toBe(status);
      const body = (await response.json()) as { code: string; error: string };
      expect(body.code).toBe(code);
      if (reason !== undefined) expect(body.error).toContain(`(${reason})`);
      // The answer names no claim: not the email, not the token.
      expect(body.error).not.toContain("ann@example.com");
      expect(body.error).not.toContain(token);
    }
    expect(store.version).toBe(0);
    expect(store.text).toBeNull();
    expect(logged.filter((l) => l.includes("roster_write"))).toEqual([]);
  });

  it("a write a page of another site could make with the operator's sign-in is refused before anything is read: a form's body, another Origin, cross-site fetch metadata", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(roster(true));
    const token = person("ann@example.com");
    const forged = (headers: Record<string, string>, method = "POST", path = "/servers", body: string | null = JSON.stringify(NEW_REMOTE)) =>
      new Request(`https://gateway.test/admin/roster${path}`, { method, headers: { "cf-access-jwt-assertion": token, ...headers }, body: body ?? undefined });
    const cases: [string, Request, number, string][] = [
      // What <form enctype="text/plain"> sends: no preflight, the cookie attached.
      ["a text/plain form", forged({ "content-type": "text/plain", origin: "https://attacker.example", "sec-fetch-site": "cross-site" }), 403, "CROSS_SITE"],
      ["a form with no Origin but cross-site metadata", forged({ "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site" }), 403, "CROSS_SITE"],
      ["a sibling subdomain", forged({ "content-type": "application/json", origin: "https://tools.gateway.test", "sec-fetch-site": "same-site" }), 403, "CROSS_SITE"],
      ["another Origin with a JSON body", forged({ "content-type": "application/json", origin: "https://attacker.example" }), 403, "CROSS_SITE"],
      ["a DELETE from another Origin", forged({ origin: "https://attacker.example" }, "DELETE", "/servers/added", null), 403, "CROSS_SITE"],
      ["a body not sent as JSON, with no Origin", forged({ "content-type": "text/plain" }), 415, "BAD_CONTENT_TYPE"],
    ];
    for (const [label, request, status, code] of cases) {
      const response = await serve(gateway, request, store);
      expect(response.status, label).toBe(status);
      expect(((await response.json()) as { code: string }).code, label).toBe(code);
    }
    expect(store.version).toBe(0);
    // The same write as a program sends it, or from the gateway's own origin, is taken.
    expect((await serve(gateway, forged({ "content-type": "application/json", origin: "https://gateway.test", "sec-fetch-site": "same-origin" }), store)).status).toBe(200);
    expect((await serve(gateway, signedIn(token, "PATCH", "/servers/added", { entitlements: ["admin"] }), store)).status).toBe(200);
    expect(store.version).toBe(2);
  });

  it("a roster without operatorAccess has no Access path: a listed person's valid token is refused as no credential", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(roster(false));
    const response = await serve(gateway, signedIn(person("ann@example.com")), store);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "UNAUTHENTICATED" });
    expect(store.version).toBe(0);
  });

  it("a bearer token decides when a request carries one: an unknown bearer is refused even beside a listed operator's valid token", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(roster(true));
    const both = (bearer: string) => {
      const request = signedIn(person("ann@example.com"));
      const headers = new Headers(request.headers);
      headers.set("authorization", `Bearer ${bearer}`);
      return new Request(request, { headers });
    };
    expect((await serve(gateway, both("unknown-token-0123456789"), store)).status).toBe(401);
    expect(store.version).toBe(0);
    const admin = await serve(gateway, both(ADMIN), store);
    expect(admin.status).toBe(200);
    expect(store.rows[0]?.who).toBe("ops");
  });
});
