// Covers the review page in production mode: only a person's Cf-Access-Jwt-Assertion (RS256, matching kid, iss, aud, validity) may see and answer; a service token cannot; CSRF binds to the person; the edge switch off. Tokens are shaped as Cloudflare's "Application token" page shows them.
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listPrompts } from "../../approvals/dev-api.mjs";
import { accessMinter, b64url, nowSeconds } from "../fakes/access/tokens";
import { createBody, createPrompt, DEV_ACCESS_HEADERS, DEV_OPERATOR_TOKEN, decide, mint, newPrompt, poll, type Running, requestIdOf, reviewPage, START_TIMEOUT_MS, startApprovals } from "./helpers";

const TEAM = "https://strad-test.cloudflareaccess.com";
const AUD = "0123456789abcdef-test-audience-tag";
const KID = "test-key-1";
const minter = accessMinter({ team: TEAM, aud: AUD, kid: KID });
const { keys, jwt, personPayload, person, service } = minter;
const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 });
const now = nowSeconds;
let svc: Running;
let jwks: Server;

const as = (assertion: string) => ({ "cf-access-jwt-assertion": assertion });

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
  const port = (jwks.address() as AddressInfo).port;
  svc = await startApprovals({
    DEV_MODE: "false",
    ACCESS_EMULATION: "false",
    ACCESS_TEAM_DOMAIN: TEAM,
    ACCESS_AUD: AUD,
    ACCESS_CERTS_URL: `http://127.0.0.1:${port}/cdn-cgi/access/certs`,
  });
}, START_TIMEOUT_MS);

afterAll(async () => {
  await svc?.stop();
  await new Promise((resolve) => jwks?.close(resolve));
});

describe("a person signed in through Access", () => {
  it("sees the page without a dev banner, under their own name", async () => {
    const { reviewUrl } = await mint(svc.origin);
    const { html, response } = await reviewPage(reviewUrl, as(person("ann+<b>@example.com")));
    expect(response.status).toBe(200);
    expect(html).not.toContain("dev-mode-banner");
    expect(html).toContain("ann+&lt;b&gt;@example.com");
  });

  it("accepts a prompt, and the decision names them", async () => {
    const { elicitationUrl, reviewUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const ann = as(person("ann@example.com"));
    const { csrf } = await reviewPage(reviewUrl, ann);
    const result = await decide(reviewUrl, id, "accept", { csrf, headers: ann });
    expect(result.status).toBe(200);
    expect((await poll(elicitationUrl, id)).body).toMatchObject({ action: "accept", content: { confirm: true } });
    const [stored] = await listPrompts(sessionId, { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN });
    expect(stored?.decidedBy).toBe("ann@example.com");
  });

  it("names the person who decided, by the email Access verified, in the poll answer's _meta", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const ann = as(person("ann@example.com"));
    const bob = as(person("bob@example.com"));
    const accepted = await newPrompt(elicitationUrl);
    const declined = await newPrompt(elicitationUrl);
    expect((await decide(reviewUrl, accepted, "accept", { csrf: (await reviewPage(reviewUrl, ann)).csrf, headers: ann })).status).toBe(200);
    expect((await decide(reviewUrl, declined, "decline", { csrf: (await reviewPage(reviewUrl, bob)).csrf, headers: bob })).status).toBe(200);
    expect((await poll(elicitationUrl, accepted)).body).toMatchObject({ action: "accept", _meta: { "dev.strad/approver": "ann@example.com" } });
    expect((await poll(elicitationUrl, declined)).body).toMatchObject({ action: "decline", _meta: { "dev.strad/approver": "bob@example.com" } });
  });

  it("cannot use another person's CSRF token", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl, as(person("ann@example.com")));
    expect((await decide(reviewUrl, id, "accept", { csrf, headers: as(person("bob@example.com")) })).status).toBe(403);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });

  it("is accepted with a single-string aud too", async () => {
    const { reviewUrl } = await mint(svc.origin);
    expect((await fetch(`${reviewUrl}/list`, { headers: as(person("ann@example.com", { aud: AUD })) })).status).toBe(200);
  });
});

describe("both kinds of application token say type app", () => {
  it('issue 13 #5: a person\'s type-app token decides a prompt; a service token (common_name, sub "") creates and polls but never decides', async () => {
    const { elicitationUrl, reviewUrl, sessionId } = await mint(svc.origin);
    const machine = as(service());
    const first = createBody();
    expect((await createPrompt(elicitationUrl, first, { ...DEV_ACCESS_HEADERS, ...machine })).status).toBe(201);
    const firstId = requestIdOf(first);
    const second = await newPrompt(elicitationUrl, {}, { ...DEV_ACCESS_HEADERS, ...machine });
    expect((await poll(elicitationUrl, firstId, { ...DEV_ACCESS_HEADERS, ...machine })).body.action).toBe("pending");

    expect((await reviewPage(reviewUrl, machine)).response.status).toBe(403);
    for (const action of ["accept", "decline"] as const) {
      const refused = await decide(reviewUrl, firstId, action, { csrf: "x", headers: machine });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toContain("a service token cannot answer");
    }
    expect((await poll(elicitationUrl, firstId)).body.action).toBe("pending");

    const ann = as(person("ann@example.com"));
    const { csrf } = await reviewPage(reviewUrl, ann);
    expect((await decide(reviewUrl, firstId, "accept", { csrf, headers: ann })).status).toBe(200);
    expect((await decide(reviewUrl, second, "decline", { csrf, headers: ann })).status).toBe(200);
    expect((await poll(elicitationUrl, firstId, { ...DEV_ACCESS_HEADERS, ...machine })).body).toMatchObject({ action: "accept", content: { confirm: true } });
    expect((await poll(elicitationUrl, second, { ...DEV_ACCESS_HEADERS, ...machine })).body.action).toBe("decline");
    const stored = await listPrompts(sessionId, { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN });
    expect(stored.map((p) => p.decidedBy)).toEqual(["ann@example.com", "ann@example.com"]);
  });
});

describe("nobody else answers", () => {
  it("asks for a sign-in when there is no assertion", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const page = await fetch(reviewUrl);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain("sign in through Cloudflare Access");
    expect((await fetch(`${reviewUrl}/list`)).status).toBe(401);
    expect((await decide(reviewUrl, id, "accept", { csrf: "x" })).status).toBe(401);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });

  it("refuses a service token's JWT (type app), even one carrying an email", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    for (const token of [service(), service({ email: "robot@example.com" })]) {
      const page = await fetch(reviewUrl, { headers: as(token) });
      expect(page.status).toBe(403);
      expect(await page.text()).toContain("a service token cannot answer");
      expect((await fetch(`${reviewUrl}/list`, { headers: as(token) })).status).toBe(403);
      expect((await decide(reviewUrl, id, "accept", { csrf: "x", headers: as(token) })).status).toBe(403);
    }
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });

  const forged: [string, string, () => string][] = [
    ["the wrong audience", "wrong_audience", () => person("ann@example.com", { aud: ["another-app"] })],
    ["the wrong issuer", "wrong_issuer", () => person("ann@example.com", { iss: "https://other-team.cloudflareaccess.com" })],
    ["an expired token", "expired", () => person("ann@example.com", { exp: now() - 300 })],
    ["a token not yet valid", "not_yet_valid", () => person("ann@example.com", { nbf: now() + 600 })],
    ["a token without exp", "expired", () => person("ann@example.com", { exp: undefined })],
    ["a signature by another key under the same kid", "bad_signature", () => jwt(personPayload("ann@example.com"), { key: stranger.privateKey })],
    ["an unknown kid", "unknown_kid", () => jwt(personPayload("ann@example.com"), { kid: "nobody" })],
    ["alg HS256", "unsupported_alg", () => jwt(personPayload("ann@example.com"), { alg: "HS256" })],
    ["alg none", "unsupported_alg", () => `${b64url(JSON.stringify({ alg: "none", kid: KID }))}.${b64url(JSON.stringify(personPayload("ann@example.com")))}.`],
    [
      "a payload changed after signing",
      "bad_signature",
      () => {
        const [h, , s] = person("ann@example.com").split(".");
        return `${h}.${b64url(JSON.stringify(personPayload("mallory@example.com")))}.${s}`;
      },
    ],
    ["a person token without an email", "no_identity", () => person("")],
    ["a person token with an empty sub", "no_identity", () => person("ann@example.com", { sub: "" })],
    ["a person token without a sub", "no_identity", () => person("ann@example.com", { sub: undefined })],
    ["a token naming both a person and a service", "no_identity", () => person("ann@example.com", { common_name: "e367826f93b8d71185e03fe518aff3b4.access" })],
    ["a service token with an empty common_name", "no_identity", () => service({ common_name: "" })],
    ["a service token whose sub is not empty", "no_identity", () => service({ sub: "7335d417-61da-459d-899c-0a01c76a2f94" })],
    ["the team-domain session token (type org)", "not_an_app_token", () => person("ann@example.com", { type: "org" })],
    ["a token without a type", "not_an_app_token", () => person("ann@example.com", { type: undefined })],
    ["garbage", "malformed", () => "not.a.jwt"],
    ["a well-signed token over 16 KiB", "malformed", () => person("ann@example.com", { pad: "x".repeat(16_384) })],
  ];

  it.each(forged)("refuses %s (%s)", async (_name, reason, make) => {
    const { reviewUrl } = await mint(svc.origin);
    const response = await fetch(`${reviewUrl}/list`, { headers: as(make()) });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toContain(`(${reason})`);
  });

  it("refuses the operator API's dev decision outside dev mode", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const response = await fetch(`${svc.origin}/api/v1/sessions/${sessionId}/prompts/${id}/decision`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEV_OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ action: "accept" }),
    });
    expect(response.status).toBe(403);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });
});

describe("with the edge switch off", () => {
  it("serves the protocol without the service token and records which requests carried it", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const body = createBody();
    expect((await createPrompt(elicitationUrl, body, {})).status).toBe(201);
    const id = (body._meta as Record<string, string>)["com.pulsemcp/request-id"] as string;
    expect((await poll(elicitationUrl, id, {})).status).toBe(200);
    expect((await poll(elicitationUrl, id, { ...DEV_ACCESS_HEADERS })).status).toBe(200);
    expect((await poll(elicitationUrl, id, { ...DEV_ACCESS_HEADERS, "CF-Access-Client-Secret": "wrong-secret-0123456789abcdef0123" })).status).toBe(200);
    const [stored] = await listPrompts(sessionId, { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN });
    expect(stored).toMatchObject({ createdWithAccess: false, polls: 3, accessPolls: 1 });
  });
});
