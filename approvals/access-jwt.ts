// Verifies the Cf-Access-Jwt-Assertion that Cloudflare Access puts on every request it lets through
// (PROTOCOLS §3): RS256 against the team's certs, matching kid, iss = the team domain, aud = the
// application's tag, inside its validity window. Kept small and pure so it can be reviewed on its own.
import type { AccessConfig } from "./settings";

export type AccessClaims = { type: "person"; email: string } | { type: "service"; commonName: string };

export type JwtError = "malformed" | "unsupported_alg" | "unknown_kid" | "bad_signature" | "wrong_issuer" | "wrong_audience" | "expired" | "not_yet_valid" | "no_identity" | "certs_unavailable";

export type JwtResult = { ok: true; claims: AccessClaims } | { ok: false; error: JwtError };

/** Leeway for clock skew between Access and this Worker. */
const LEEWAY_S = 60;
const CERTS_TTL_MS = 10 * 60 * 1000;
/** An unknown kid refetches the certs (Access rotates keys), but at most this often. */
const REFETCH_MIN_MS = 30 * 1000;

interface Jwk {
  kid?: string;
  kty?: string;
  n?: string;
  e?: string;
  alg?: string;
}

const certs = new Map<string, { keys: Jwk[]; fetchedAt: number }>();

export type FetchCerts = (url: string) => Promise<Jwk[]>;

const defaultFetchCerts: FetchCerts = async (url) => {
  const response = await fetch(url, { redirect: "manual", headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`certs answered ${response.status}`);
  const body = (await response.json()) as { keys?: unknown };
  return Array.isArray(body.keys) ? (body.keys as Jwk[]) : [];
};

async function keyFor(kid: string, url: string, now: number, fetchCerts: FetchCerts): Promise<Jwk | undefined | "unavailable"> {
  let cached = certs.get(url);
  const stale = cached === undefined || now - cached.fetchedAt > CERTS_TTL_MS;
  const missing = cached !== undefined && !cached.keys.some((k) => k.kid === kid) && now - cached.fetchedAt > REFETCH_MIN_MS;
  if (stale || missing) {
    try {
      cached = { keys: await fetchCerts(url), fetchedAt: now };
      certs.set(url, cached);
    } catch {
      if (cached === undefined) return "unavailable";
    }
  }
  return cached?.keys.find((k) => k.kid === kid);
}

function decodeSegment(segment: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return undefined;
  try {
    const binary = atob(segment.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(segment.length / 4) * 4, "="));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function decodeJson(segment: string): Record<string, unknown> | undefined {
  const bytes = decodeSegment(segment);
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function verifyAccessJwt(token: string, config: AccessConfig, now = Date.now(), fetchCerts: FetchCerts = defaultFetchCerts): Promise<JwtResult> {
  const fail = (error: JwtError): JwtResult => ({ ok: false, error });
  const parts = token.split(".");
  if (parts.length !== 3 || token.length > 16_384) return fail("malformed");
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h);
  const payload = decodeJson(p);
  const signature = decodeSegment(s);
  if (header === undefined || payload === undefined || signature === undefined) return fail("malformed");
  // Only RS256: "none" and HS256 (a public key used as an HMAC secret) are the classic confusions.
  if (header.alg !== "RS256") return fail("unsupported_alg");
  if (typeof header.kid !== "string") return fail("unknown_kid");

  const jwk = await keyFor(header.kid, config.certsUrl, now, fetchCerts);
  if (jwk === "unavailable") return fail("certs_unavailable");
  if (jwk === undefined || jwk.kty !== "RSA" || typeof jwk.n !== "string" || typeof jwk.e !== "string") return fail("unknown_kid");
  let valid: boolean;
  try {
    const key = await crypto.subtle.importKey("jwk", { kty: "RSA", n: jwk.n, e: jwk.e, ext: true }, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"]);
    valid = await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, signature, new TextEncoder().encode(`${h}.${p}`));
  } catch {
    return fail("bad_signature");
  }
  if (!valid) return fail("bad_signature");

  if (payload.iss !== config.teamDomain) return fail("wrong_issuer");
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!aud.includes(config.audience)) return fail("wrong_audience");
  const seconds = now / 1000;
  if (typeof payload.exp !== "number" || payload.exp + LEEWAY_S <= seconds) return fail("expired");
  if (typeof payload.nbf === "number" && payload.nbf - LEEWAY_S > seconds) return fail("not_yet_valid");

  // A service token's JWT says type "app" and carries no email: a machine, not a person.
  if (payload.type === "app") return { ok: true, claims: { type: "service", commonName: typeof payload.common_name === "string" ? payload.common_name : "" } };
  if (typeof payload.email !== "string" || payload.email === "") return fail("no_identity");
  return { ok: true, claims: { type: "person", email: payload.email } };
}
