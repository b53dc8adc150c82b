// Who is answering: a person Cloudflare Access signed in (their Cf-Access-Jwt-Assertion), or, on a
// loopback host only, the explicit dev mode the page announces in a banner. A service token is a
// machine: it may reach the protocol endpoints, never answer (docs/rules.md R-APPR-4, R-APPR-5).

import { verifyAccessJwt } from "../contract/access-jwt";
import { isLoopbackHost } from "../contract/url-policy";
import type { Settings } from "./settings";

export type Person = { ok: true; identity: string; devMode: boolean } | { ok: false; status: 401 | 403 | 503; reason: string };

export const DEV_IDENTITY = "dev mode (nobody signed in)";

export function reachedLoopback(request: Request): boolean {
  return isLoopbackHost(new URL(request.url).hostname);
}

export async function identifyPerson(request: Request, settings: Settings): Promise<Person> {
  if (settings.devMode) {
    // A dev config deployed by mistake must not leave every session answerable by anyone.
    if (!reachedLoopback(request)) {
      return { ok: false, status: 503, reason: "DEV_MODE is on but this request did not reach a loopback host; DEV_MODE belongs in .dev.vars only (npm run deploy:check fails on it)" };
    }
    return { ok: true, identity: DEV_IDENTITY, devMode: true };
  }
  if (settings.access === undefined) {
    return { ok: false, status: 503, reason: "no one can answer: set ACCESS_TEAM_DOMAIN and ACCESS_AUD (or DEV_MODE for local use)" };
  }
  const assertion = request.headers.get("cf-access-jwt-assertion");
  if (assertion === null || assertion === "") return { ok: false, status: 401, reason: "sign in through Cloudflare Access to answer prompts" };
  const result = await verifyAccessJwt(assertion, settings.access);
  if (!result.ok) return { ok: false, status: 401, reason: `the Cloudflare Access sign-in was not accepted (${result.error}); sign in again` };
  if (result.claims.type === "service") return { ok: false, status: 403, reason: "a service token cannot answer prompts: a person must sign in" };
  return { ok: true, identity: result.claims.email, devMode: false };
}
