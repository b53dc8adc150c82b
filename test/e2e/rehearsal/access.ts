// The rehearsal's stand-in for Cloudflare Access (test/scripts/production-rehearsal.test.ts): a team's signing key with its public
// key set served on loopback (what the approval service's ACCESS_CERTS_URL names), application tokens shaped as
// Cloudflare's "Application token" page shows them, and the edge in front of the approval host. Nothing here is
// part of strad: it plays what a deployment gets from Cloudflare.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import type { Miniflare } from "miniflare";
import { Response as MiniflareResponse } from "miniflare";

/** A request as Miniflare hands it to a Node function (an outbound service), or as a test builds it. */
export interface EdgeRequest {
  url: string;
  method: string;
  headers: Iterable<[string, string]>;
  body?: ArrayBuffer | Uint8Array;
}

export interface ServiceToken {
  clientId: string;
  clientSecret: string;
}

/** A new Access service token, as the dashboard shows one: a client id ending in `.access` and a long secret. */
export function newServiceToken(): ServiceToken {
  return { clientId: `${randomBytes(16).toString("hex")}.access`, clientSecret: randomBytes(32).toString("hex") };
}

/** The team's key: it signs application tokens (RS256, named by `kid`), and its public set is served like the team's certs. */
export class AccessTeam {
  readonly kid = randomBytes(32).toString("hex");
  /** How often the certs were fetched. */
  certsFetches = 0;
  private server: Server | undefined;
  private privateKey: CryptoKey | undefined;
  private publicJwk: Record<string, unknown> | undefined;

  constructor(
    /** https://<team>.cloudflareaccess.com */
    readonly teamDomain: string,
    /** The Access application's audience tag. */
    readonly audience: string,
  ) {}

  /** Generates the key and serves its public set at <origin>/cdn-cgi/access/certs; resolves with that URL. */
  async start(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    this.privateKey = privateKey as CryptoKey;
    this.publicJwk = { ...(await exportJWK(publicKey)), kid: this.kid, alg: "RS256", use: "sig" };
    const body = JSON.stringify({ keys: [this.publicJwk] });
    this.server = createServer((req, res) => {
      if (req.method !== "GET" || req.url !== "/cdn-cgi/access/certs") {
        res.writeHead(404).end();
        return;
      }
      this.certsFetches += 1;
      res.writeHead(200, { "content-type": "application/json" }).end(body);
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/cdn-cgi/access/certs`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private sign(payload: JWTPayload): Promise<string> {
    if (this.privateKey === undefined) throw new Error("the team's key is not generated yet: call start()");
    return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: this.kid, typ: "JWT" }).sign(this.privateKey);
  }

  /** A person's application token: the identity-based payload of Cloudflare's "Application token" page. */
  personToken(email: string, lifetimeS = 3600): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return this.sign({
      aud: [this.audience],
      email,
      exp: now + lifetimeS,
      iat: now,
      nbf: now,
      iss: this.teamDomain,
      type: "app",
      identity_nonce: randomBytes(12).toString("base64url"),
      sub: randomUUID(),
      country: "US",
    });
  }

  /** A service token's application token: `common_name` is the client id and `sub` is empty. */
  serviceToken(clientId: string, lifetimeS = 3600): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return this.sign({ type: "app", aud: [this.audience], exp: now + lifetimeS, iss: this.teamDomain, common_name: clientId, iat: now, nbf: now, sub: "" });
  }
}

/** Headers a relay drops: the body was read (and decoded) on the way, so its length and coding no longer hold. */
const RELAY_DROPPED = new Set(["content-length", "content-encoding", "transfer-encoding", "connection", "mf-content-encoding"]);

/** What came back from a runtime or a fetch, as a Response Miniflare hands back to a Worker unchanged (no redirect followed). */
export async function relayed(response: { status: number; statusText: string; headers: Iterable<[string, string]>; arrayBuffer(): Promise<ArrayBuffer> }): Promise<MiniflareResponse> {
  const headers = [...response.headers].filter(([name]) => !RELAY_DROPPED.has(name.toLowerCase()));
  const nullBody = [101, 204, 205, 304].includes(response.status);
  const body = nullBody ? null : new Uint8Array(await response.arrayBuffer());
  return new MiniflareResponse(body, { status: response.status, statusText: response.statusText, headers });
}

export interface EdgeEntry {
  method: string;
  path: string;
  /** "service": admitted with the service token; "refused": the token was missing or wrong (403). */
  outcome: "service" | "refused";
}

/**
 * Cloudflare Access in front of the approval service's whole host, for clients that present a service token (the
 * bundle's approval requests, the operator's session minting): a request without the right
 * CF-Access-Client-Id/CF-Access-Client-Secret pair is answered 403 and never reaches the service; an admitted one
 * reaches it unchanged (method, path, headers, body) with the service token's application token in
 * Cf-Access-Jwt-Assertion. The service's answer comes back as it is: the edge follows no redirect.
 */
export class AccessEdge {
  readonly entries: EdgeEntry[] = [];

  constructor(
    readonly host: string,
    private readonly team: AccessTeam,
    private readonly token: ServiceToken,
    private readonly origin: () => Miniflare,
  ) {}

  async service(request: EdgeRequest): Promise<MiniflareResponse> {
    const url = new URL(request.url);
    if (url.protocol !== "https:" || url.host !== this.host) throw new Error(`the Access edge stands in front of https://${this.host} only`);
    const headers = new Headers([...request.headers]);
    const id = headers.get("cf-access-client-id");
    const secret = headers.get("cf-access-client-secret");
    if (id !== this.token.clientId || secret !== this.token.clientSecret) {
      this.entries.push({ method: request.method, path: url.pathname, outcome: "refused" });
      return new MiniflareResponse("Forbidden: Cloudflare Access denied this request (no valid service token)", { status: 403, headers: { "content-type": "text/plain" } });
    }
    this.entries.push({ method: request.method, path: url.pathname, outcome: "service" });
    headers.set("cf-access-jwt-assertion", await this.team.serviceToken(id));
    return this.forward(request.url, request.method, headers, request.body);
  }

  /** The approval service's answer to a request Access admitted, as it gave it. */
  async forward(url: string, method: string, headers: Headers, body: ArrayBuffer | Uint8Array | undefined): Promise<MiniflareResponse> {
    const hasBody = method !== "GET" && method !== "HEAD" && body !== undefined;
    const response = await this.origin().dispatchFetch(url, { method, headers: [...headers], body: hasBody ? new Uint8Array(body) : undefined, redirect: "manual" });
    return relayed(response);
  }
}
