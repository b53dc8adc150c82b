// The approval service's configuration, read from its vars and secrets. Pure: the Worker and the Durable
// Object read the same settings, and a misconfiguration names the variable, never its value.
import type { AccessConfig } from "../contract/access-jwt";
import type { SessionStore } from "./session-store";

export interface ApprovalsEnv {
  SESSIONS: DurableObjectNamespace<SessionStore>;
  /** HMAC key the session tokens, review keys and CSRF tokens are derived from. */
  SESSION_SECRET?: string;
  /** Bearer token of the operator API (minting sessions, reading prompt stats). */
  OPERATOR_TOKEN?: string;
  /** "true": no sign-in, the page says so in a banner. Honoured only on a loopback host. */
  DEV_MODE?: string;
  /** "true": the protocol endpoints demand the Access service-token headers, as Access would. */
  ACCESS_EMULATION?: string;
  ACCESS_CLIENT_ID?: string;
  ACCESS_CLIENT_SECRET?: string;
  /** https://<team>.cloudflareaccess.com: the issuer of the Cf-Access-Jwt-Assertion a person brings. */
  ACCESS_TEAM_DOMAIN?: string;
  /** The Access application's audience tag. */
  ACCESS_AUD?: string;
  /** Defaults to <team domain>/cdn-cgi/access/certs; tests point it at a local JWKS. */
  ACCESS_CERTS_URL?: string;
  /** How long a decided or expired prompt is kept, in seconds (default 7 days). */
  RETENTION_SECONDS?: string;
  /** The origin printed in minted URLs when the service sits behind a proxy that rewrites the host. */
  PUBLIC_ORIGIN?: string;
  /** Tests only: delays a session's alarms by this many ms, so a decision can race an expiry the alarm has not settled yet. Dev mode on loopback only. */
  DEV_ALARM_DELAY_MS?: string;
}

export type { AccessConfig } from "../contract/access-jwt";

export interface Settings {
  secret: string;
  operatorToken: string | undefined;
  devMode: boolean;
  /** The service token the emulated edge demands; undefined when the switch is off. */
  emulation: { clientId: string; clientSecret: string } | undefined;
  /** The service token, when configured, whether or not it is demanded: a matching pair is recorded. */
  serviceToken: { clientId: string; clientSecret: string } | undefined;
  access: AccessConfig | undefined;
  retentionMs: number;
  publicOrigin: string | undefined;
  /** DEV_ALARM_DELAY_MS: honoured only in dev mode, and only for a session minted through a loopback host. */
  devAlarmDelayMs: number;
}

export const DEFAULT_RETENTION_SECONDS = 7 * 24 * 3600;
export const MIN_SECRET_LENGTH = 32;
export const MIN_OPERATOR_TOKEN_LENGTH = 16;
export const MAX_DEV_ALARM_DELAY_MS = 10 * 60 * 1000;
/** Pending prompts a session may hold at once, the one hard cap: a runaway caller cannot fill the store (R-APPR-9). */
export const MAX_PENDING = 100;
/**
 * Prompts a session keeps in all (pending, decided, expired, dismissed): a busy session cannot grow its store for
 * ever. At the cap a create drops the oldest settled prompt (history), never a pending one (R-APPR-17).
 */
export const MAX_PROMPTS = 500;
/** The settled history a session at its pending cap still keeps: what is left of MAX_PROMPTS. */
export const MIN_HISTORY = MAX_PROMPTS - MAX_PENDING;
/**
 * Request ids a session records as used over its whole life (R-APPR-8: an id is used once per session, for good), each
 * as 16 bytes of its SHA-256 that neither eviction nor retention deletes: at most ~24 MB of storage a session, freed with
 * the session itself. A session that has used them all refuses further creates (409): mint a new session.
 */
export const MAX_REQUEST_IDS = 1_000_000;
/** Settled prompts the review page's JSON carries besides every pending one; older ones are only counted. */
export const REVIEW_RECENT = 20;

export type SettingsResult = { ok: true; settings: Settings } | { ok: false; problems: string[] };

const isOn = (v: string | undefined): boolean => v?.trim().toLowerCase() === "true";
const present = (v: string | undefined): string | undefined => (v === undefined || v.trim() === "" ? undefined : v.trim());

export function readSettings(env: Omit<ApprovalsEnv, "SESSIONS">): SettingsResult {
  const problems: string[] = [];
  const secret = present(env.SESSION_SECRET);
  if (secret === undefined || secret.length < MIN_SECRET_LENGTH) problems.push(`SESSION_SECRET must be set to at least ${MIN_SECRET_LENGTH} characters`);
  const operatorToken = present(env.OPERATOR_TOKEN);
  if (operatorToken !== undefined && operatorToken.length < MIN_OPERATOR_TOKEN_LENGTH) {
    problems.push(`OPERATOR_TOKEN must be at least ${MIN_OPERATOR_TOKEN_LENGTH} characters when set`);
  }

  const clientId = present(env.ACCESS_CLIENT_ID);
  const clientSecret = present(env.ACCESS_CLIENT_SECRET);
  const serviceToken = clientId !== undefined && clientSecret !== undefined ? { clientId, clientSecret } : undefined;
  const emulate = isOn(env.ACCESS_EMULATION);
  if (emulate && serviceToken === undefined) problems.push("ACCESS_EMULATION is on: ACCESS_CLIENT_ID and ACCESS_CLIENT_SECRET must be set");

  let access: AccessConfig | undefined;
  const teamDomain = present(env.ACCESS_TEAM_DOMAIN)?.replace(/\/+$/, "");
  const audience = present(env.ACCESS_AUD);
  if (teamDomain !== undefined || audience !== undefined) {
    if (teamDomain === undefined || audience === undefined) problems.push("ACCESS_TEAM_DOMAIN and ACCESS_AUD must be set together");
    else if (!/^https:\/\/[a-z0-9-]+\.cloudflareaccess\.com$/.test(teamDomain)) problems.push("ACCESS_TEAM_DOMAIN must look like https://<team>.cloudflareaccess.com");
    else access = { teamDomain, audience, certsUrl: present(env.ACCESS_CERTS_URL) ?? `${teamDomain}/cdn-cgi/access/certs` };
  }

  let retentionMs = DEFAULT_RETENTION_SECONDS * 1000;
  const retention = present(env.RETENTION_SECONDS);
  if (retention !== undefined) {
    const seconds = Number(retention);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 365 * 24 * 3600) problems.push("RETENTION_SECONDS must be a whole number of seconds between 1 and one year");
    else retentionMs = seconds * 1000;
  }

  let devAlarmDelayMs = 0;
  const delay = present(env.DEV_ALARM_DELAY_MS);
  if (delay !== undefined) {
    const ms = Number(delay);
    if (!Number.isInteger(ms) || ms < 0 || ms > MAX_DEV_ALARM_DELAY_MS) problems.push(`DEV_ALARM_DELAY_MS must be a whole number of ms between 0 and ${MAX_DEV_ALARM_DELAY_MS}`);
    else if (!isOn(env.DEV_MODE)) problems.push("DEV_ALARM_DELAY_MS is a test setting: it needs DEV_MODE");
    else devAlarmDelayMs = ms;
  }

  if (problems.length > 0 || secret === undefined) return { ok: false, problems };
  return {
    ok: true,
    settings: {
      secret,
      operatorToken,
      devMode: isOn(env.DEV_MODE),
      emulation: emulate ? serviceToken : undefined,
      serviceToken,
      access,
      retentionMs,
      publicOrigin: present(env.PUBLIC_ORIGIN)?.replace(/\/+$/, ""),
      devAlarmDelayMs,
    },
  };
}
