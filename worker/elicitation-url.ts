// The X-Elicitation-Url check: the bundle will fetch this caller-chosen URL, so it must sit strictly
// under an operator-listed prefix or strad could be aimed anywhere on its own network (seed 000).
// Pure: no I/O, no logging. The value is a credential, so no error message ever repeats it.

export type UrlCheckError =
  | { code: "ELICITATION_URL_MISSING" }
  | { code: "ELICITATION_URL_MALFORMED"; why: string }
  | { code: "ELICITATION_URL_NOT_ALLOWED"; why: string }
  | { code: "ELICITATION_ALLOWLIST_EMPTY" };

export type UrlCheckResult = { ok: true; url: string } | { ok: false; error: UrlCheckError };

/** Longest header value considered at all; anything longer is refused before parsing. */
export const MAX_ELICITATION_URL_LENGTH = 2048;

/** 127.0.0.0/8, [::1] and localhost: the only hosts plain http is accepted for. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === "localhost" || host === "[::1]") return true;
  // The WHATWG parser has already normalised 127.1, 0x7f.1 and friends to dotted quads.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A roster prefix: absolute, https (http for loopback), normal form, path ending in "/". */
export function checkPrefix(prefix: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(prefix);
  } catch {
    return "is not an absolute URL";
  }
  if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && isLoopbackHost(parsed.hostname))) {
    return "must be https (plain http only for a loopback host)";
  }
  if (parsed.username !== "" || parsed.password !== "") return "must not carry userinfo";
  if (parsed.search !== "" || parsed.hash !== "" || prefix.includes("?") || prefix.includes("#")) {
    return "must not carry a query or fragment";
  }
  if (parsed.href !== prefix) return `is not in normal form (the parser reads it as ${parsed.href})`;
  if (!parsed.pathname.endsWith("/")) return 'path must end in "/" so that sibling paths cannot match';
  return undefined;
}

const REFUSE_CHARS = /[\s\u0000-\u001f\u007f\u0085\u00a0\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

/**
 * Checks a raw X-Elicitation-Url header value against the allowlist.
 * `raw` is what Headers.get() returned: a repeated header arrives joined with ", ".
 */
export function checkElicitationUrl(raw: string | null, allowedPrefixes: readonly string[]): UrlCheckResult {
  if (raw === null) return { ok: false, error: { code: "ELICITATION_URL_MISSING" } };
  const malformed = (why: string): UrlCheckResult => ({ ok: false, error: { code: "ELICITATION_URL_MALFORMED", why } });
  const notAllowed = (why: string): UrlCheckResult => ({ ok: false, error: { code: "ELICITATION_URL_NOT_ALLOWED", why } });

  if (raw.length === 0) return malformed("the header is empty");
  if (raw.length > MAX_ELICITATION_URL_LENGTH) return malformed(`the value is longer than ${MAX_ELICITATION_URL_LENGTH} characters`);
  if (raw.includes(",")) return malformed("the header holds more than one value (a repeated header is joined with a comma)");
  if (REFUSE_CHARS.test(raw)) return malformed("the value contains whitespace or control characters");
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
  if (url.username !== "" || url.password !== "" || authority.includes("@")) {
    return malformed("the value carries userinfo");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return notAllowed("only https URLs are accepted");
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) return notAllowed("plain http is accepted only for a loopback host");
  // Encoded separators and dot segments are refused outright: the parser leaves %2f and %2e%2e alone,
  // but a server behind the prefix may decode them into a path outside it.
  const path = url.pathname;
  if (/%2f|%5c/i.test(path)) return notAllowed("the path contains an encoded slash or backslash");
  if (/%2e|%25/i.test(path)) return notAllowed("the path contains an encoded dot or percent sign");
  if (allowedPrefixes.length === 0) return { ok: false, error: { code: "ELICITATION_ALLOWLIST_EMPTY" } };

  for (const prefix of allowedPrefixes) {
    const p = new URL(prefix);
    if (url.protocol !== p.protocol || url.host !== p.host) continue;
    if (path.startsWith(p.pathname) && path.length > p.pathname.length) return { ok: true, url: url.href };
  }
  return notAllowed("it is not under any of gateway.elicitation.allowedUrlPrefixes");
}

/** The reason a person can act on, never repeating the value. */
export function describeUrlError(error: UrlCheckError): string {
  switch (error.code) {
    case "ELICITATION_URL_MISSING":
      return "the /mcp request carried no X-Elicitation-Url header, so there is no one to ask";
    case "ELICITATION_URL_MALFORMED":
      return `X-Elicitation-Url was refused: ${error.why}`;
    case "ELICITATION_URL_NOT_ALLOWED":
      return `X-Elicitation-Url was refused: ${error.why}`;
    case "ELICITATION_ALLOWLIST_EMPTY":
      return "gateway.elicitation.allowedUrlPrefixes is empty, so no approval URL is accepted";
  }
}
