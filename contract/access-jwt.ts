// Verifies the Cf-Access-Jwt-Assertion that Cloudflare Access puts on every request it lets through
// (docs/rules.md R-APPR-4, and the gateway's /admin/roster operators, R-RT-1) with jose: RS256 only, the key its kid names in the team's certs, iss = the team domain,
// aud = the application's tag, inside its validity window; then tells a person from a service token by the
// claims Access documents. Kept small and pure so it can be reviewed on its own.
import { createRemoteJWKSet, customFetch, errors, type FetchImplementation, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";

/** Which Access application a token must be for: its team (the issuer), its audience tag, and where its keys are. */
export interface AccessConfig {
  /** https://<team>.cloudflareaccess.com */
  teamDomain: string;
  audience: string;
  /** <team domain>/cdn-cgi/access/certs, or a local key set in tests. */
  certsUrl: string;
}

export type AccessClaims = { type: "person"; email: string } | { type: "service"; commonName: string };

export type JwtError =
  | "malformed"
  | "unsupported_alg"
  | "unknown_kid"
  | "bad_signature"
  | "wrong_issuer"
  | "wrong_audience"
  | "expired"
  | "not_yet_valid"
  | "not_an_app_token"
  | "no_identity"
  | "certs_unavailable";

export type JwtResult = { ok: true; claims: AccessClaims } | { ok: false; error: JwtError };

/** Leeway for clock skew between Access and this Worker. */
const LEEWAY_S = 60;
const MAX_TOKEN_CHARS = 16_384;
/** Keys are served from cache this long; past it they are used only once a refetch succeeds, never stale. */
export const CERTS_MAX_AGE_MS = 10 * 60 * 1000;
/** An unknown kid refetches the certs (Access rotates keys), at most this often after a successful fetch. */
export const CERTS_COOLDOWN_MS = 30 * 1000;
/** After a failed fetch no other is tried for this long: while the certs URL fails, requests are refused without one each. */
export const CERTS_RETRY_MS = 10 * 1000;

/** One key set per certs URL and isolate; jose caches the fetched set and the imported keys. */
const keySets = new Map<string, JWTVerifyGetKey>();

function keySetFor(url: string): JWTVerifyGetKey {
  const known = keySets.get(url);
  if (known !== undefined) return known;
  let failedAt = Number.NEGATIVE_INFINITY;
  const backedOff: FetchImplementation = async (input, init) => {
    if (Date.now() - failedAt < CERTS_RETRY_MS) throw new Error("the certs fetch is backed off");
    try {
      const response = await fetch(input, init);
      if (response.status !== 200) failedAt = Date.now();
      return response;
    } catch (error) {
      failedAt = Date.now();
      throw error;
    }
  };
  const remote = createRemoteJWKSet(new URL(url), { cacheMaxAge: CERTS_MAX_AGE_MS, cooldownDuration: CERTS_COOLDOWN_MS, [customFetch]: backedOff });
  // Access always names its key; without a kid jose would try any single key of the set.
  const keySet: JWTVerifyGetKey = (header, token) => {
    if (typeof header.kid !== "string" || header.kid === "") throw new errors.JWKSNoMatchingKey();
    return remote(header, token);
  };
  keySets.set(url, keySet);
  return keySet;
}

function errorOf(error: unknown): JwtError {
  if (error instanceof errors.JOSEAlgNotAllowed) return "unsupported_alg";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) return "unknown_kid";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "bad_signature";
  if (error instanceof errors.JWTExpired) return "expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return "wrong_issuer";
      case "aud":
        return "wrong_audience";
      case "nbf":
        return "not_yet_valid";
      case "exp":
        return "expired";
      default:
        return "malformed";
    }
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid || error instanceof errors.JOSENotSupported) return "malformed";
  // What is left is the certs: unreachable, not 200, not JSON, not a key set, timed out, backed off.
  return "certs_unavailable";
}

/**
 * Both kinds of application token say type "app" (type "org" is the team-domain session token, never sent to an
 * origin). A person's carries their email and a non-empty sub; a service token's carries common_name (its
 * client id) and an empty sub. Anything else is refused rather than guessed at.
 */
export function classify(payload: JWTPayload): AccessClaims | "not_an_app_token" | "no_identity" {
  if (payload.type !== "app") return "not_an_app_token";
  const { email, sub, common_name: commonName } = payload;
  if (typeof commonName === "string" && commonName !== "" && sub === "") return { type: "service", commonName };
  if (commonName === undefined && typeof email === "string" && email !== "" && typeof sub === "string" && sub !== "") return { type: "person", email };
  return "no_identity";
}

export async function verifyAccessJwt(token: string, config: AccessConfig): Promise<JwtResult> {
  if (token.length > MAX_TOKEN_CHARS) return { ok: false, error: "malformed" };
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keySetFor(config.certsUrl), {
      // Only RS256: "none" and HS256 (a public key used as an HMAC secret) are the classic confusions.
      algorithms: ["RS256"],
      issuer: config.teamDomain,
      audience: config.audience,
      requiredClaims: ["exp"],
      clockTolerance: LEEWAY_S,
    }));
  } catch (error) {
    return { ok: false, error: errorOf(error) };
  }
  const claims = classify(payload);
  return typeof claims === "string" ? { ok: false, error: claims } : { ok: true, claims };
}
