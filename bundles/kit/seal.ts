// The sealed requestState of a question asked at the client on 2026-07-28 (docs/rules.md R-SEAL-1, R-SEAL-2): the
// retry carrying the person's answer comes back as ordinary request content, so what ties that answer to its question
// (caller, slug, tool, the arguments' fingerprint, the question's digest, the fingerprint of the target the approval
// binds, an expiry and a single-use nonce) is HMAC-
// SHA-256 sealed with the bundle's secret STRAD_SEAL_KEY. STRAD_SEAL_KEY_PREVIOUS also opens a seal, so a key rotates
// without breaking questions in flight. A key is never logged, echoed or put in an answer.

/** The secret that seals, and the one a rotation keeps accepting for the questions already asked. */
export const SEAL_KEY = "STRAD_SEAL_KEY";
export const SEAL_KEY_PREVIOUS = "STRAD_SEAL_KEY_PREVIOUS";
/** A key shorter than this is no key: 32 characters of a random value is the least an HMAC key should hold. */
export const MIN_SEAL_KEY_CHARS = 32;
/** How long a person has to answer at the client, by default (STRAD_SEAL_TTL_MS may shorten or lengthen it within bounds). */
export const SEAL_TTL_MS = { fallback: 5 * 60 * 1000, min: 1_000, max: 15 * 60 * 1000 } as const;
/** A seal as a client carries it: `v1.<payload>.<mac>`, base64url without padding; anything longer is not read. */
export const MAX_SEAL_CHARS = 4_096;

/** What a seal binds: digests and names only, never an argument or the question's words. */
export interface SealTarget {
  caller: string;
  slug: string;
  tool: string;
  /** bundles/kit/fingerprint.ts over the call's arguments as they came. */
  args: string;
  /** SHA-256 of the question exactly as asked (bundles/kit/audit.ts cardDigest: its message and requestedSchema). */
  question: string;
  /**
   * The fingerprint the approval binds (bundles/kit/fingerprint.ts over the target the card was made of), or "" where
   * the asker has none: what the card shows is not all an approval binds (a mailbox's UIDVALIDITY, a pad's content),
   * so a retry whose target changed meanwhile is asked again, as a wait on the approval service would be refused.
   */
  binds: string;
}

export interface SealPayload extends SealTarget {
  /** Epoch ms: the seal opens onto nothing from this instant on. */
  exp: number;
  /** 16 random bytes, base64url: spent once in the caller's CallRegistry object (contract/call-registry.ts spendSeal). */
  nonce: string;
}

export type SealKeys = { current: string; previous?: string };
export type KeysResult = { ok: true; keys: SealKeys } | { ok: false; reason: string };

/** Why a seal does not count as an answer; each one is answered with a fresh question, never an error (docs/rules.md R-SEAL-2). */
export type SealProblem = "malformed" | "bad_mac" | "expired" | "other_target";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const usable = (value: unknown): value is string => typeof value === "string" && value.length >= MIN_SEAL_KEY_CHARS;

/**
 * The bundle's seal keys, or why the client path must refuse: a missing or short key never means an unsealed state.
 * The reason names the variable, never its value. A short previous key is left out (it can only fail to open).
 */
export function sealKeys(env: Record<string, unknown>): KeysResult {
  const current = env[SEAL_KEY];
  if (!usable(current)) {
    return { ok: false, reason: `this bundle's secret ${SEAL_KEY} is not set (or is shorter than ${MIN_SEAL_KEY_CHARS} characters), so it cannot seal a question for the client` };
  }
  const previous = env[SEAL_KEY_PREVIOUS];
  return { ok: true, keys: usable(previous) && previous !== current ? { current, previous } : { current } };
}

/** The seal's lifetime in force: STRAD_SEAL_TTL_MS clamped to its bounds, or the default. */
export function sealTtlMs(env: Record<string, unknown>): number {
  const raw = Number(env.STRAD_SEAL_TTL_MS);
  if (!Number.isFinite(raw) || raw <= 0) return SEAL_TTL_MS.fallback;
  return Math.min(SEAL_TTL_MS.max, Math.max(SEAL_TTL_MS.min, Math.floor(raw)));
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - (text.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  // Only the canonical spelling opens: two texts never seal one payload.
  return toBase64Url(bytes) === text ? bytes : undefined;
}

function hmacKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

/** A fresh single-use nonce. */
export function sealNonce(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

const PREFIX = "v1.";

/** Seals a payload with the current key. */
export async function seal(payload: SealPayload, keys: SealKeys): Promise<string> {
  const body = toBase64Url(encoder.encode(JSON.stringify(payload)));
  const signed = `${PREFIX}${body}`;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(keys.current, "sign"), encoder.encode(signed)));
  return `${signed}.${toBase64Url(mac)}`;
}

function isPayload(value: unknown): value is SealPayload {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const strings = ["caller", "slug", "tool", "args", "question", "binds", "nonce"].every((k) => typeof v[k] === "string");
  return strings && Number.isSafeInteger(v.exp) && Object.keys(v).length === 8;
}

export type Opened = { ok: true; payload: SealPayload } | { ok: false; problem: Exclude<SealProblem, "other_target"> };

/**
 * Opens a seal with the current key or the previous one (verified in constant time by WebCrypto), then holds it to
 * its expiry: expired from `exp` on. Anything that is not a seal this bundle made is `malformed` or `bad_mac`.
 */
export async function openSeal(state: unknown, keys: SealKeys, now: number = Date.now()): Promise<Opened> {
  if (typeof state !== "string" || state.length > MAX_SEAL_CHARS || !state.startsWith(PREFIX)) return { ok: false, problem: "malformed" };
  const parts = state.slice(PREFIX.length).split(".");
  if (parts.length !== 2) return { ok: false, problem: "malformed" };
  const [body, macText] = parts as [string, string];
  const mac = fromBase64Url(macText);
  const bytes = fromBase64Url(body);
  if (mac === undefined || bytes === undefined || mac.length !== 32) return { ok: false, problem: "malformed" };
  const signed = encoder.encode(`${PREFIX}${body}`);
  let verified = false;
  for (const secret of keys.previous === undefined ? [keys.current] : [keys.current, keys.previous]) {
    if (await crypto.subtle.verify("HMAC", await hmacKey(secret, "verify"), mac, signed)) verified = true;
  }
  if (!verified) return { ok: false, problem: "bad_mac" };
  let payload: unknown;
  try {
    payload = JSON.parse(decoder.decode(bytes));
  } catch {
    return { ok: false, problem: "malformed" };
  }
  if (!isPayload(payload)) return { ok: false, problem: "malformed" };
  if (now >= payload.exp) return { ok: false, problem: "expired" };
  return { ok: true, payload };
}

/** Whether an opened seal is for exactly this call's target: the same caller, slug, tool, arguments, question and bound target. */
export function sameTarget(payload: SealTarget, target: SealTarget): boolean {
  return (
    payload.caller === target.caller &&
    payload.slug === target.slug &&
    payload.tool === target.tool &&
    payload.args === target.args &&
    payload.question === target.question &&
    payload.binds === target.binds
  );
}
