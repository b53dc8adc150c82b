// Cloudflare Access application tokens as its "Application token" page shows them, minted against a local RSA key for
// the tests of everything that verifies one (contract/access-jwt.ts: the approval service's people, the gateway's
// /admin/roster operators). A token is signed RS256 under a kid; a test's own key set serves the public half.
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";

export const b64url = (value: string | Buffer): string => Buffer.from(value).toString("base64url");
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export interface Minter {
  keys: { publicKey: KeyObject; privateKey: KeyObject };
  /** A token of `payload`, signed by the minter's key (or `key`) under its kid (or `kid`), with `alg` in its header. */
  jwt: (payload: Record<string, unknown>, options?: { kid?: string; alg?: string; key?: KeyObject }) => string;
  /** A person's payload: the identity-based one of the page, for `email`, valid for ten minutes. */
  personPayload: (email: string, extra?: Record<string, unknown>) => Record<string, unknown>;
  /** A service token's payload: common_name is the client id, sub is empty. */
  servicePayload: (extra?: Record<string, unknown>) => Record<string, unknown>;
  person: (email: string, extra?: Record<string, unknown>, key?: KeyObject) => string;
  service: (extra?: Record<string, unknown>) => string;
}

/** A minter for one Access application: its team domain (`iss`), audience tag and key id. */
export function accessMinter({ team, aud, kid }: { team: string; aud: string; kid: string }): Minter {
  const keys = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwt: Minter["jwt"] = (payload, options = {}) => {
    const header = b64url(JSON.stringify({ alg: options.alg ?? "RS256", kid: options.kid ?? kid, typ: "JWT" }));
    const body = b64url(JSON.stringify(payload));
    return `${header}.${body}.${b64url(sign("sha256", Buffer.from(`${header}.${body}`), options.key ?? keys.privateKey))}`;
  };
  const personPayload: Minter["personPayload"] = (email, extra = {}) => ({
    aud: [aud],
    email,
    exp: nowSeconds() + 600,
    iat: nowSeconds(),
    nbf: nowSeconds(),
    iss: team,
    type: "app",
    identity_nonce: "6ei69kawdKzMIAPF",
    sub: "7335d417-61da-459d-899c-0a01c76a2f94",
    country: "US",
    ...extra,
  });
  const servicePayload: Minter["servicePayload"] = (extra = {}) => ({
    type: "app",
    aud: [aud],
    exp: nowSeconds() + 600,
    iss: team,
    common_name: "e367826f93b8d71185e03fe518aff3b4.access",
    iat: nowSeconds(),
    sub: "",
    ...extra,
  });
  return {
    keys,
    jwt,
    personPayload,
    servicePayload,
    person: (email, extra, key) => jwt(personPayload(email, extra), key === undefined ? {} : { key }),
    service: (extra) => jwt(servicePayload(extra)),
  };
}
