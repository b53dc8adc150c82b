// Everything the service derives from its own secret: the session token in the elicitation URL, the
// review key in the review URL and the page's CSRF token. Each is an HMAC over a distinct label, so
// holding one (the agent holds the elicitation URL) reveals nothing about another: the token can create
// and poll a prompt, never answer one (docs/rules.md R-APPR-2, R-APPR-3). Pure Web Crypto: runs in workerd and in Node.
import { timingSafeEqualText } from "../contract/compare";

const encoder = new TextEncoder();
const SESSION_ID = /^[0-9a-f]{32}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;

export function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64url(bytes: ArrayBuffer): string {
  let binary = "";
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

async function mac(secret: string, label: string, value: string): Promise<string> {
  return base64url(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`strad-approvals/${label}/v1:${value}`)));
}

/** Compares without an early exit, so timing does not say how much of a guess was right. */
export const constantTimeEqual = timingSafeEqualText;

/** SHA-256 both sides first, so neither length nor content leaks through timing. */
export async function secretEquals(presented: string, expected: string): Promise<boolean> {
  const digest = async (v: string) => base64url(await crypto.subtle.digest("SHA-256", encoder.encode(v)));
  return constantTimeEqual(await digest(presented), await digest(expected));
}

async function signed(secret: string, label: string, sessionId: string): Promise<string> {
  return `${sessionId}.${await mac(secret, label, sessionId)}`;
}

async function verified(secret: string, label: string, value: string): Promise<string | undefined> {
  const [sessionId, presented, ...rest] = value.split(".");
  if (sessionId === undefined || presented === undefined || rest.length > 0 || !SESSION_ID.test(sessionId) || !MAC.test(presented)) return undefined;
  return constantTimeEqual(presented, await mac(secret, label, sessionId)) ? sessionId : undefined;
}

/** The path segment of the elicitation URL: create and poll only. */
export const sessionToken = (secret: string, sessionId: string) => signed(secret, "elicitation-token", sessionId);
/** The session a token names, or undefined for anything the service did not mint. */
export const sessionFromToken = (secret: string, token: string) => verified(secret, "elicitation-token", token);

/** The path segment of the review URL: where a person answers. */
export const reviewKey = (secret: string, sessionId: string) => signed(secret, "review-key", sessionId);
export const sessionFromReviewKey = (secret: string, key: string) => verified(secret, "review-key", key);

/**
 * The path segment of one prompt's own review page (`/prompt/<requestId>/<key>`), which a create may ask for
 * (contract/elicitation.ts META_REVIEW_URL): it shows and decides that prompt alone, and reveals nothing about
 * the session's review key or any other prompt. Answering there still needs a person (docs/rules.md R-APPR-4).
 */
export async function promptReviewKey(secret: string, sessionId: string, requestId: string): Promise<string> {
  return `${sessionId}.${await mac(secret, "prompt-review-key", `${sessionId}\n${requestId}`)}`;
}

/** The session a prompt's review key names, for that request id only; undefined for anything the service did not mint. */
export async function sessionFromPromptReviewKey(secret: string, key: string, requestId: string): Promise<string | undefined> {
  const [sessionId, presented, ...rest] = key.split(".");
  if (sessionId === undefined || presented === undefined || rest.length > 0 || !SESSION_ID.test(sessionId) || !MAC.test(presented)) return undefined;
  return constantTimeEqual(presented, await mac(secret, "prompt-review-key", `${sessionId}\n${requestId}`)) ? sessionId : undefined;
}

/** The page's CSRF token, bound to the session and to who is answering. */
export function csrfToken(secret: string, sessionId: string, identity: string): Promise<string> {
  return mac(secret, "csrf", `${sessionId}\n${identity}`);
}

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}
