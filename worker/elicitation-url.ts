// The X-Elicitation-Url check: the bundle will fetch this caller-chosen URL, so it is held to the one URL
// policy (contract/url-policy.ts) against gateway.elicitation.allowedUrlPrefixes, after the header's own
// rules. Pure: no I/O, no logging. The value is a credential, so no error message ever repeats it.
import { checkUnderPrefix } from "../contract/url-policy";

export type UrlCheckError =
  | { code: "ELICITATION_URL_MISSING" }
  | { code: "ELICITATION_URL_MALFORMED"; why: string }
  | { code: "ELICITATION_URL_NOT_ALLOWED"; why: string }
  | { code: "ELICITATION_ALLOWLIST_EMPTY" };

export type UrlCheckResult = { ok: true; url: string } | { ok: false; error: UrlCheckError };

/** Longest header value considered at all; anything longer is refused before parsing. */
export const MAX_ELICITATION_URL_LENGTH = 2048;

/**
 * Checks a raw X-Elicitation-Url header value against the allowlist.
 * `raw` is what Headers.get() returned: a repeated header arrives joined with ", ".
 */
export function checkElicitationUrl(raw: string | null, allowedPrefixes: readonly string[]): UrlCheckResult {
  if (raw === null) return { ok: false, error: { code: "ELICITATION_URL_MISSING" } };
  const malformed = (why: string): UrlCheckResult => ({ ok: false, error: { code: "ELICITATION_URL_MALFORMED", why } });
  if (raw.length === 0) return malformed("the header is empty");
  if (raw.length > MAX_ELICITATION_URL_LENGTH) return malformed(`the value is longer than ${MAX_ELICITATION_URL_LENGTH} characters`);
  if (raw.includes(",")) return malformed("the header holds more than one value (a repeated header is joined with a comma)");
  const checked = checkUnderPrefix(raw, allowedPrefixes, "gateway.elicitation.allowedUrlPrefixes");
  if (checked.ok) return { ok: true, url: checked.url.href };
  switch (checked.error.code) {
    case "URL_MALFORMED":
      return malformed(checked.error.why);
    case "URL_NOT_ALLOWED":
      return { ok: false, error: { code: "ELICITATION_URL_NOT_ALLOWED", why: checked.error.why } };
    case "URL_NO_PREFIXES":
      return { ok: false, error: { code: "ELICITATION_ALLOWLIST_EMPTY" } };
  }
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
