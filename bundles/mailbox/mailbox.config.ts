// A mount's IMAP account, from its own `<SLUG>__` variables only (one credential, one mount; docs/rules.md
// R-MAIL-6), and how the bundle may reach it: implicit TLS (port 993 by default) or STARTTLS, and plain TCP only
// to a loopback host, which only a developer's machine has (R-MAIL-1). `npm run deploy:check` refuses a plaintext
// setting with the same function.
import { slugNamespace } from "../../contract/slug";
import { isLoopbackHost as isLoopbackUrlHost } from "../../contract/url-policy";

export type Security = "tls" | "starttls" | "plain";
export const SECURITY_VALUES: readonly Security[] = ["tls", "starttls", "plain"];

export interface ImapAccount {
  host: string;
  port: number;
  user: string;
  password: string;
  security: Security;
}

/** The variables a mount reads, under its own namespace. */
export const IMAP_VARIABLES = { host: "IMAP_HOST", port: "IMAP_PORT", user: "IMAP_USER", password: "IMAP_PASSWORD", security: "IMAP_SECURITY" } as const;

/** 127.0.0.0/8, ::1 and localhost (contract/url-policy.ts, the gateway's rule too): where plain IMAP may be used. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return isLoopbackUrlHost(h.includes(":") ? `[${h}]` : h);
}

/** A hostname or IP literal, nothing else (no scheme, path, port or credentials). */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/;

export type TransportCheck = { ok: true; security: Security; port: number } | { ok: false; reason: string };

/**
 * Whether a host, port and security setting may be used: plaintext only to a loopback host. `security` unset: "tls"
 * unless the port is 143 ("starttls"). Never echoes a value but the port and the security word.
 */
export function checkTransport(
  host: string,
  portText: string | undefined,
  securityText: string | undefined,
  names: { port: string; security: string } = { port: IMAP_VARIABLES.port, security: IMAP_VARIABLES.security },
): TransportCheck {
  let port = 993;
  if (portText !== undefined && portText.trim() !== "") {
    if (!/^\d{1,5}$/.test(portText.trim()) || Number(portText) < 1 || Number(portText) > 65535) return { ok: false, reason: `${names.port} is not a port number (1 to 65535)` };
    port = Number(portText);
  }
  let security: Security;
  if (securityText === undefined || securityText.trim() === "") security = port === 143 ? "starttls" : "tls";
  else if ((SECURITY_VALUES as readonly string[]).includes(securityText.trim())) security = securityText.trim() as Security;
  else return { ok: false, reason: `${names.security} must be one of ${SECURITY_VALUES.join(", ")}` };
  if (security === "plain" && !isLoopbackHost(host)) {
    return { ok: false, reason: `${names.security} is "plain", which is refused for any host but a loopback one: IMAP passwords and mail travel in clear text. Use "tls" (port 993) or "starttls"` };
  }
  return { ok: true, security, port };
}

export type AccountResult = { ok: true; account: ImapAccount } | { ok: false; reason: string };

/** The mount's account from its own variables; a reason naming variables (never a value) when it cannot be used. */
export function accountFor(mount: string, env: Record<string, unknown>): AccountResult {
  const ns = slugNamespace(mount);
  const read = (name: string) => {
    const v = env[`${ns}${name}`];
    return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
  };
  const host = read(IMAP_VARIABLES.host);
  const user = read(IMAP_VARIABLES.user);
  const password = env[`${ns}${IMAP_VARIABLES.password}`];
  const missing = [
    host === undefined ? `${ns}${IMAP_VARIABLES.host}` : undefined,
    user === undefined ? `${ns}${IMAP_VARIABLES.user}` : undefined,
    typeof password !== "string" || password === "" ? `${ns}${IMAP_VARIABLES.password}` : undefined,
  ].filter((x) => x !== undefined);
  if (missing.length > 0 || host === undefined || user === undefined || typeof password !== "string")
    return { ok: false, reason: `this mount's IMAP account is not configured: ${missing.join(", ")} not set` };
  if (!HOST.test(host)) return { ok: false, reason: `${ns}${IMAP_VARIABLES.host} is not a host name or IP address` };
  const transport = checkTransport(host, read(IMAP_VARIABLES.port), read(IMAP_VARIABLES.security), { port: `${ns}${IMAP_VARIABLES.port}`, security: `${ns}${IMAP_VARIABLES.security}` });
  if (!transport.ok) return transport;
  return { ok: true, account: { host: host.replace(/^\[|\]$/g, ""), port: transport.port, user, password, security: transport.security } };
}
