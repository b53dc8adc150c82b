// One URL policy for every caller-chosen URL a Worker will fetch (the approval address, attachment URLs):
// it must sit strictly under an operator-listed prefix, or strad could be aimed anywhere on its own network.
// Pure: no I/O, no logging, and no reason ever repeats the value (it may be a credential).
import { hasUnsafe } from "./text";

/** 127.0.0.0/8, [::1] and localhost: the only hosts plain http is accepted for. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === "localhost" || host === "[::1]") return true;
  // The WHATWG parser has already normalised 127.1, 0x7f.1 and friends to dotted quads.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** https, or plain http for a loopback host only. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/** A configured prefix: absolute, https (http for loopback), normal form, path ending in "/". Returns why not. */
export function checkPrefix(prefix: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(prefix);
  } catch {
    return "is not an absolute URL";
  }
  if (!isSecureOrLoopback(parsed)) return "must be https (plain http only for a loopback host)";
  if (parsed.username !== "" || parsed.password !== "") return "must not carry userinfo";
  if (parsed.search !== "" || parsed.hash !== "" || prefix.includes("?") || prefix.includes("#")) return "must not carry a query or fragment";
  if (parsed.href !== prefix) return `is not in normal form (the parser reads it as ${parsed.href})`;
  if (!parsed.pathname.endsWith("/")) return 'path must end in "/" so that sibling paths cannot match';
  if (!SAFE_PATH.test(parsed.pathname) || parsed.pathname.includes("//")) return "path may hold only letters, digits, / and - . _ ~ ! $ & ' ( ) * + , = : @";
  return undefined;
}

export type UrlPolicyError = { code: "URL_MALFORMED"; why: string } | { code: "URL_NOT_ALLOWED"; why: string } | { code: "URL_NO_PREFIXES" };
export type UrlPolicyResult = { ok: true; url: URL } | { ok: false; error: UrlPolicyError };

/**
 * What a path under a prefix may hold once the parser has resolved it: unreserved characters, "/" and the
 * sub-delimiters other than ";". No "%" at all: a server behind the prefix may decode %2e%2e, %2f, %00 or an
 * overlong %c0%ae into a path outside it, and the parser encodes every non-ASCII character (fullwidth or
 * two-dot leaders among them) as "%". No ";": Tomcat and Spring read "..;" as a dot segment.
 */
const SAFE_PATH = /^[A-Za-z0-9\-._~!$&'()*+,=:@/]*$/;

/**
 * Checks a raw URL against a list of prefixes (each already valid by checkPrefix). The URL must be https
 * (http for loopback), carry no userinfo, fragment, whitespace or invisible character, and its path must
 * sit strictly under a prefix's path on the same origin, with nothing in it that a server could decode
 * into another path.
 */
export function checkUnderPrefix(raw: string, prefixes: readonly string[], listName: string): UrlPolicyResult {
  const malformed = (why: string): UrlPolicyResult => ({ ok: false, error: { code: "URL_MALFORMED", why } });
  const notAllowed = (why: string): UrlPolicyResult => ({ ok: false, error: { code: "URL_NOT_ALLOWED", why } });

  if (/\s/u.test(raw) || hasUnsafe(raw) || /[\u0085\u00a0]/.test(raw)) return malformed("the value contains whitespace or control characters");
  if (raw.includes("\\")) return malformed("the value contains a backslash");
  if (raw.includes("#")) return malformed("the value carries a fragment");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return malformed("the value is not an absolute URL");
  }
  // The parser skips any run of slashes after a special scheme ("https:@host", "https:///@host"), so the
  // authority is read the same way here, or an "@" in it would slip past the userinfo rule.
  const authority = /^[a-z][a-z0-9+.-]*:\/*([^/?]*)/i.exec(raw)?.[1] ?? "";
  if (url.username !== "" || url.password !== "" || authority.includes("@")) return malformed("the value carries userinfo");
  if (url.protocol !== "https:" && url.protocol !== "http:") return notAllowed("only https URLs are accepted: it must be https (plain http only for a loopback host)");
  if (!isSecureOrLoopback(url)) return notAllowed("plain http is accepted only for a loopback host: it must be https");
  const path = url.pathname;
  if (/%2f|%5c/i.test(path)) return notAllowed("the path contains an encoded slash or backslash");
  if (/%2e|%25/i.test(path)) return notAllowed("the path contains an encoded dot or percent sign");
  if (path.includes("%")) return notAllowed("the path contains a percent-encoded or non-ASCII character");
  if (path.includes(";")) return notAllowed('the path contains ";"');
  if (!SAFE_PATH.test(path)) return notAllowed("the path contains a character outside the allowed set");
  if (path.includes("//")) return notAllowed('the path contains an empty segment ("//")');
  // The parser is meant to resolve dot segments, but Node 20's leaves "/.a/../.." alone (found by the fuzz
  // test): a "." or ".." segment still in the path is refused, whoever failed to resolve it.
  if (path.split("/").some((s) => s === "." || s === "..")) return notAllowed("the path contains a dot segment");
  if (prefixes.length === 0) return { ok: false, error: { code: "URL_NO_PREFIXES" } };
  for (const prefix of prefixes) {
    const p = new URL(prefix);
    if (url.protocol === p.protocol && url.host === p.host && path.startsWith(p.pathname) && path.length > p.pathname.length) return { ok: true, url };
  }
  return notAllowed(`it is not under any of ${listName}`);
}
