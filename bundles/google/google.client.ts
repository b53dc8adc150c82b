// The Gmail REST API over fetch: the mount's own OAuth credentials, an access token minted from its refresh
// token and cached for that mount alone until shortly before it expires (never used for another mount; why a
// cache is right for the mount's own service credential: ARCHITECTURE.md, "Provider tokens"; docs/rules.md
// R-GMAIL-5), and JSON reads with a size cap. Errors name a status or a reason, never a byte of an upstream
// body; no request follows a redirect with a token on it.

import { readCappedText } from "../../contract/body";
import { slugNamespace } from "../../contract/slug";
import { isSecureOrLoopback } from "../../contract/url-policy";

export const DEFAULT_API_BASE = "https://gmail.googleapis.com";
export const DEFAULT_TOKEN_URL = "https://oauth2.googleapis.com/token";
export const CREDENTIAL_NAMES = ["GMAIL_CLIENT_ID", "GMAIL_CLIENT_SECRET", "GMAIL_REFRESH_TOKEN"] as const;
export const REQUEST_TIMEOUT_MS = 30_000;
/** A Gmail answer larger than this is refused unread (format=full never carries attachment bytes). */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export class GmailError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "GmailError";
  }
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

export interface Endpoints {
  apiBase: string;
  tokenUrl: string;
}

/**
 * The mount's own credentials, and nothing else: a bare GMAIL_REFRESH_TOKEN or another slug's belongs to
 * another mailbox, and answering from it under this slug's name would fail nowhere (docs/rules.md R-CONF-10).
 */
export function credentialsFor(mount: string, env: Record<string, unknown>): { ok: true; credentials: Credentials } | { ok: false; missing: string } {
  const values: string[] = [];
  for (const name of CREDENTIAL_NAMES) {
    const key = `${slugNamespace(mount)}${name}`;
    const value = env[key];
    if (typeof value !== "string" || value.trim() === "") return { ok: false, missing: key };
    values.push(value);
  }
  const [clientId, clientSecret, refreshToken] = values as [string, string, string];
  return { ok: true, credentials: { clientId, clientSecret, refreshToken } };
}

function endpoint(env: Record<string, unknown>, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw new GmailError(`${name} is not an absolute URL`);
  }
  // A refresh token goes to this address: https only, plain http only for a loopback fake.
  if (!isSecureOrLoopback(url)) throw new GmailError(`${name} must be https (plain http only for a loopback host)`);
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") throw new GmailError(`${name} must carry no userinfo, query or fragment`);
  return url.href.replace(/\/$/, "");
}

export function endpointsFor(env: Record<string, unknown>): Endpoints {
  return { apiBase: endpoint(env, "GMAIL_API_BASE_URL", DEFAULT_API_BASE), tokenUrl: endpoint(env, "GMAIL_TOKEN_URL", DEFAULT_TOKEN_URL) };
}

interface CachedToken {
  /**
   * Which credentials minted it, the env's own strings (no copy joined from them per request): a rotated secret must
   * not be served an old token.
   */
  source: Credentials & { tokenUrl: string };
  token: string;
  expiresAt: number;
}

function sameSource(a: CachedToken["source"], tokenUrl: string, { clientId, clientSecret, refreshToken }: Credentials): boolean {
  return a.tokenUrl === tokenUrl && a.clientId === clientId && a.clientSecret === clientSecret && a.refreshToken === refreshToken;
}

const tokens = new Map<string, CachedToken>();

/** Tests only: forget every cached access token. */
export function forgetTokens(): void {
  tokens.clear();
}

function callSignal(signal: AbortSignal): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);
}

export async function readJson(response: Response, what = "Gmail"): Promise<unknown> {
  const read = await readCappedText(response, MAX_ANSWER_BYTES);
  if (!read.ok) throw new GmailError(read.tooLarge ? `${what}'s answer is too large` : `${what}'s answer could not be read`);
  const text = read.value;
  try {
    return text.trim() === "" ? undefined : (JSON.parse(text) as unknown);
  } catch {
    throw new GmailError(`${what} gave an answer that is not JSON`);
  }
}

/** A non-2xx (or redirect) answer becomes an error naming only its status; the body is discarded unread. */
export async function checkStatus(response: Response, what = "Gmail"): Promise<void> {
  if ((response.type as string) === "opaqueredirect" || response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    throw new GmailError(`${what} answered HTTP ${response.status}`, response.status);
  }
}

function failedFetch(signal: AbortSignal, what: string): GmailError {
  return new GmailError(signal.aborted ? "the call was dropped" : `${what} could not be reached`);
}

const TOKEN_SHAPE = /^[\x21-\x7e]{1,4096}$/;

export class GmailClient {
  constructor(
    readonly mount: string,
    private readonly credentials: Credentials,
    readonly endpoints: Endpoints,
    private readonly doFetch: Fetch = (input, init) => fetch(input, init),
  ) {}

  url(path: string, query: Record<string, string | readonly string[] | undefined> = {}): string {
    const url = new URL(`${this.endpoints.apiBase}${path}`);
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const v of typeof value === "string" ? [value] : value) url.searchParams.append(key, v);
    }
    return url.href;
  }

  /** A valid access token for this mount: the cached one, or a fresh one from the refresh token. */
  async accessToken(signal: AbortSignal): Promise<string> {
    const { clientId, clientSecret, refreshToken } = this.credentials;
    const cached = tokens.get(this.mount);
    if (cached !== undefined && cached.expiresAt > Date.now() && sameSource(cached.source, this.endpoints.tokenUrl, this.credentials)) return cached.token;
    let response: Response;
    try {
      response = await this.doFetch(this.endpoints.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: new URLSearchParams({ grant_type: "refresh_token", client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken }).toString(),
        redirect: "manual",
        signal: callSignal(signal),
      });
    } catch {
      throw failedFetch(signal, "the Gmail token endpoint");
    }
    await checkStatus(response, "the Gmail token endpoint");
    const body = (await readJson(response, "the Gmail token endpoint")) as { access_token?: unknown; expires_in?: unknown } | undefined;
    const token = body?.access_token;
    if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) throw new GmailError("the Gmail token endpoint gave no usable access token");
    const lifetimeMs = typeof body?.expires_in === "number" && body.expires_in > 0 ? body.expires_in * 1000 : 300_000;
    // Renew a little early so a token never expires between the check and the request.
    tokens.set(this.mount, { source: { tokenUrl: this.endpoints.tokenUrl, clientId, clientSecret, refreshToken }, token, expiresAt: Date.now() + lifetimeMs - Math.min(60_000, lifetimeMs / 2) });
    return token;
  }

  /** Drops this mount's token after Gmail refused it, so the next request mints a fresh one. */
  invalidate(token: string): void {
    if (tokens.get(this.mount)?.token === token) tokens.delete(this.mount);
  }

  /**
   * A GET against the API. Reads are safe to repeat: a refused token is renewed once, and a connection that failed
   * before any answer (a kept-alive connection closed under the request) is tried once more, never once the call was
   * dropped or the request's own time ran out.
   */
  async get(path: string, query: Record<string, string | readonly string[] | undefined>, signal: AbortSignal): Promise<unknown> {
    const url = this.url(path, query);
    let reconnected = false;
    let renewed = false;
    for (;;) {
      const token = await this.accessToken(signal);
      let response: Response;
      const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      try {
        response = await this.doFetch(url, {
          method: "GET",
          headers: { authorization: `Bearer ${token}`, accept: "application/json" },
          redirect: "manual",
          signal: AbortSignal.any([signal, timeout]),
        });
      } catch {
        if (!reconnected && !signal.aborted && !timeout.aborted) {
          reconnected = true;
          continue;
        }
        throw failedFetch(signal, "Gmail");
      }
      if (response.status === 401 && !renewed) {
        renewed = true;
        await response.body?.cancel().catch(() => {});
        this.invalidate(token);
        continue;
      }
      await checkStatus(response);
      return readJson(response);
    }
  }
}
