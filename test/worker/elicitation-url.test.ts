// Covers the X-Elicitation-Url allowlist check (worker/elicitation-url.ts): the table of accepted and refused values, checkPrefix, isLoopbackHost.
import { describe, expect, it } from "vitest";
import { checkPrefix, isLoopbackHost } from "../../contract/url-policy";
import { checkElicitationUrl, describeUrlError, MAX_ELICITATION_URL_LENGTH, type UrlCheckError } from "../../worker/elicitation-url";

const ZIMMER = "https://zimmer.tadasant.com/api/v1/elicitations/session/";
const LOCAL = "http://127.0.0.1:8788/api/v1/elicitations/session/";
const LOCAL6 = "http://[::1]:8788/approvals/";
const LOCALHOST = "http://localhost:8788/approvals/";
const ALT_PORT = "https://approvals.example.com:8443/s/";
/** Every value in the table carries this token where it can, so a leak into an error is visible. */
const TOKEN = "tok-S3CRET-22867";

type Expect = { ok: string } | { code: UrlCheckError["code"]; why?: RegExp };

interface Case {
  name: string;
  raw: string | null;
  prefixes?: readonly string[];
  expect: Expect;
}

const NOT_UNDER = /not under any of gateway\.elicitation\.allowedUrlPrefixes/;

const padded = (length: number): string => {
  const head = `${ZIMMER}${TOKEN}/`;
  return head + "a".repeat(length - head.length);
};

const cases: Case[] = [
  // Accepted: strictly under a prefix once the parser has normalised it.
  { name: "a session URL under the prefix passes unchanged", raw: `${ZIMMER}${TOKEN}`, expect: { ok: `${ZIMMER}${TOKEN}` } },
  { name: "a deeper path under the prefix passes", raw: `${ZIMMER}${TOKEN}/poll`, expect: { ok: `${ZIMMER}${TOKEN}/poll` } },
  {
    name: "upper-case scheme and host are normalised and pass",
    raw: `HTTPS://ZIMMER.TadaSant.COM/api/v1/elicitations/session/${TOKEN}`,
    expect: { ok: `${ZIMMER}${TOKEN}` },
  },
  {
    name: "the explicit default port :443 equals no port",
    raw: `https://zimmer.tadasant.com:443/api/v1/elicitations/session/${TOKEN}`,
    expect: { ok: `${ZIMMER}${TOKEN}` },
  },
  // A query is accepted after a path strictly under the prefix: the check is on scheme, host, port and
  // path, and a query cannot move the request to another host or path (docs/rules.md R-URL-1).
  { name: "a query after a path strictly under the prefix passes", raw: `${ZIMMER}${TOKEN}?x=1`, expect: { ok: `${ZIMMER}${TOKEN}?x=1` } },
  { name: "a .. that stays inside the prefix is resolved and passes", raw: `${ZIMMER}other/../${TOKEN}`, expect: { ok: `${ZIMMER}${TOKEN}` } },
  { name: "a mixed-case %2E%2e that stays inside is resolved and passes", raw: `${ZIMMER}other/%2E%2e/${TOKEN}`, expect: { ok: `${ZIMMER}${TOKEN}` } },
  { name: "a /./ segment is resolved and passes", raw: `${ZIMMER}./${TOKEN}`, expect: { ok: `${ZIMMER}${TOKEN}` } },
  { name: "plain http to 127.0.0.1 passes under a loopback prefix", raw: `${LOCAL}${TOKEN}`, prefixes: [LOCAL], expect: { ok: `${LOCAL}${TOKEN}` } },
  { name: "127.1 is normalised to 127.0.0.1 and passes", raw: `http://127.1:8788/api/v1/elicitations/session/${TOKEN}`, prefixes: [LOCAL], expect: { ok: `${LOCAL}${TOKEN}` } },
  { name: "0x7f.0.0.1 is normalised to 127.0.0.1 and passes", raw: `http://0x7f.0.0.1:8788/api/v1/elicitations/session/${TOKEN}`, prefixes: [LOCAL], expect: { ok: `${LOCAL}${TOKEN}` } },
  {
    name: "a decimal 2130706433 host is normalised to 127.0.0.1 and passes",
    raw: `http://2130706433:8788/api/v1/elicitations/session/${TOKEN}`,
    prefixes: [LOCAL],
    expect: { ok: `${LOCAL}${TOKEN}` },
  },
  { name: "plain http to [::1] passes under an IPv6 loopback prefix", raw: `${LOCAL6}${TOKEN}`, prefixes: [LOCAL6], expect: { ok: `${LOCAL6}${TOKEN}` } },
  { name: "a long-form IPv6 loopback is normalised to [::1] and passes", raw: `http://[0:0:0:0:0:0:0:1]:8788/approvals/${TOKEN}`, prefixes: [LOCAL6], expect: { ok: `${LOCAL6}${TOKEN}` } },
  { name: "plain http to localhost passes under a localhost prefix", raw: `${LOCALHOST}${TOKEN}`, prefixes: [LOCALHOST], expect: { ok: `${LOCALHOST}${TOKEN}` } },
  { name: "an explicit non-default port passes when the prefix names it", raw: `${ALT_PORT}${TOKEN}`, prefixes: [ALT_PORT], expect: { ok: `${ALT_PORT}${TOKEN}` } },
  { name: "with several prefixes, a URL under the second one passes", raw: `${LOCAL}${TOKEN}`, prefixes: [ZIMMER, LOCAL], expect: { ok: `${LOCAL}${TOKEN}` } },
  { name: "a value of exactly the maximum length passes", raw: padded(MAX_ELICITATION_URL_LENGTH), expect: { ok: padded(MAX_ELICITATION_URL_LENGTH) } },
  // The parser maps a fullwidth letter to its ASCII form (IDNA), so the match is on the host it really names.
  { name: "a fullwidth host letter is judged as the host the parser reads", raw: `https://\uff5aimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { ok: `${ZIMMER}${TOKEN}` } },

  // Refused before parsing: not exactly one value.
  { name: "no header at all is missing", raw: null, expect: { code: "ELICITATION_URL_MISSING" } },
  { name: "an empty value is refused", raw: "", expect: { code: "ELICITATION_URL_MALFORMED", why: /empty/ } },
  { name: "a value over the maximum length is refused", raw: padded(MAX_ELICITATION_URL_LENGTH + 1), expect: { code: "ELICITATION_URL_MALFORMED", why: /longer than 2048/ } },
  { name: "a repeated header joined with a comma is refused", raw: `${ZIMMER}${TOKEN}, ${ZIMMER}other`, expect: { code: "ELICITATION_URL_MALFORMED", why: /more than one value/ } },
  { name: "a comma with no space (two values) is refused", raw: `${ZIMMER}${TOKEN},https://evil.example/`, expect: { code: "ELICITATION_URL_MALFORMED", why: /more than one value/ } },
  { name: "leading whitespace is refused", raw: ` ${ZIMMER}${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /whitespace/ } },
  { name: "trailing whitespace is refused", raw: `${ZIMMER}${TOKEN} `, expect: { code: "ELICITATION_URL_MALFORMED", why: /whitespace/ } },
  // The parser would silently strip a tab or newline; the check refuses them instead.
  { name: "a tab inside the value is refused", raw: `${ZIMMER}tok\t${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /whitespace/ } },
  { name: "a CRLF header injection is refused", raw: `${ZIMMER}${TOKEN}\r\nX-Evil: 1`, expect: { code: "ELICITATION_URL_MALFORMED", why: /whitespace/ } },
  { name: "a NUL character is refused", raw: `${ZIMMER}${TOKEN}\u0000`, expect: { code: "ELICITATION_URL_MALFORMED", why: /control/ } },
  { name: "a DEL character is refused", raw: `${ZIMMER}${TOKEN}\u007f`, expect: { code: "ELICITATION_URL_MALFORMED", why: /control/ } },
  { name: "a zero-width space is refused", raw: `${ZIMMER}\u200b${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /control/ } },
  { name: "a bidi override is refused", raw: `${ZIMMER}\u202e${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /control/ } },
  ...(
    [
      ["a bidi isolate (U+2066)", "\u2066"],
      ["a pop directional isolate (U+2069)", "\u2069"],
      ["a byte order mark (U+FEFF)", "\ufeff"],
      ["a next-line character (U+0085)", "\u0085"],
      ["a no-break space (U+00A0)", "\u00a0"],
      ["a line separator (U+2028)", "\u2028"],
      ["a left-to-right mark (U+200E)", "\u200e"],
    ] as const
  ).map(([what, char]): Case => ({ name: `${what} is refused`, raw: `${ZIMMER}${char}${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /whitespace or control/ } })),
  { name: "a fragment is refused", raw: `${ZIMMER}${TOKEN}#frag`, expect: { code: "ELICITATION_URL_MALFORMED", why: /fragment/ } },
  { name: "an empty fragment is refused", raw: `${ZIMMER}${TOKEN}#`, expect: { code: "ELICITATION_URL_MALFORMED", why: /fragment/ } },
  // The parser reads "\" as "/" in an https URL, so a raw backslash could hide a host or a path change.
  {
    name: "a raw backslash in the authority is refused",
    raw: `https://evil.example\\zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`,
    expect: { code: "ELICITATION_URL_MALFORMED", why: /backslash/ },
  },
  { name: "a raw backslash in the path is refused", raw: `${ZIMMER}${TOKEN}\\..\\..\\admin`, expect: { code: "ELICITATION_URL_MALFORMED", why: /backslash/ } },
  { name: "user@ is refused", raw: `https://user@zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /userinfo/ } },
  { name: "user:pw@ is refused", raw: `https://user:pw@zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /userinfo/ } },
  { name: "a bare @ is refused", raw: `https://@zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /userinfo/ } },
  {
    name: "an allowed host written as userinfo before another host is refused",
    raw: `https://zimmer.tadasant.com@evil.example/api/v1/elicitations/session/${TOKEN}`,
    expect: { code: "ELICITATION_URL_MALFORMED", why: /userinfo/ },
  },
  // The parser skips the missing or extra slashes after https:, so the "@" is still userinfo to it.
  {
    name: "a bare @ with no slashes after the scheme is refused",
    raw: `https:@zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`,
    expect: { code: "ELICITATION_URL_MALFORMED", why: /userinfo/ },
  },
  { name: "a bare @ after three slashes is refused", raw: `https:///@zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /userinfo/ } },
  { name: "a relative path is refused", raw: `/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED", why: /not an absolute URL/ } },
  { name: "a value that is no URL at all is refused", raw: "not-a-url", expect: { code: "ELICITATION_URL_MALFORMED", why: /not an absolute URL/ } },
  { name: "an https URL with an invalid host is refused", raw: `https://zimmer tadasant.com/${TOKEN}`, expect: { code: "ELICITATION_URL_MALFORMED" } },

  // Refused: scheme.
  { name: "a javascript: URL is refused", raw: "javascript:alert(1)", expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /only https/ } },
  { name: "a file: URL is refused", raw: "file:///etc/passwd", expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /only https/ } },
  { name: "a data: URL is refused", raw: "data:text/html;base64", expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /only https/ } },
  { name: "an ftp: URL is refused", raw: `ftp://zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /only https/ } },
  { name: "plain http to a non-loopback host is refused", raw: `http://zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /loopback/ } },
  {
    name: "plain http to a private address is refused",
    raw: `http://10.0.0.1/api/v1/elicitations/session/${TOKEN}`,
    prefixes: ["https://10.0.0.1/api/"],
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /loopback/ },
  },
  // Only 127.0.0.0/8, [::1] and localhost count as loopback; an IPv4-mapped address is refused over http.
  {
    name: "plain http to an IPv4-mapped [::ffff:127.0.0.1] is refused",
    raw: `http://[::ffff:127.0.0.1]:8788/approvals/${TOKEN}`,
    prefixes: [LOCAL6],
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /loopback/ },
  },
  { name: "plain http to 0.0.0.0 is refused", raw: `http://0.0.0.0:8788/api/v1/elicitations/session/${TOKEN}`, prefixes: [LOCAL], expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /loopback/ } },

  // Refused: traversal out of the prefix, resolved by the parser or refused when it stays encoded.
  { name: "../ out of the prefix is refused", raw: `${ZIMMER}../../admin/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "a .. that lands on the prefix itself is refused", raw: `${ZIMMER}${TOKEN}/..`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "a /. that lands on the prefix itself is refused", raw: `${ZIMMER}.`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "%2e%2e out of the prefix is refused", raw: `${ZIMMER}%2e%2e/%2e%2e/admin/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "mixed-case %2E%2e out of the prefix is refused", raw: `${ZIMMER}%2E%2e/%2e%2E/admin/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "half-encoded .%2e out of the prefix is refused", raw: `${ZIMMER}.%2e/admin/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  // The parser leaves %252e alone; a server behind the prefix that decodes twice would see "..".
  { name: "double-encoded %252e%252e is refused", raw: `${ZIMMER}%252e%252e/admin/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /encoded dot or percent/ } },
  { name: "an encoded dot left in a segment is refused", raw: `${ZIMMER}${TOKEN}%2ejson`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /encoded dot or percent/ } },
  { name: "an encoded slash %2f is refused", raw: `${ZIMMER}..%2f..%2fadmin`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /encoded slash or backslash/ } },
  { name: "an upper-case encoded slash %2F is refused", raw: `${ZIMMER}${TOKEN}%2F..`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /encoded slash or backslash/ } },
  { name: "an encoded backslash %5c is refused", raw: `${ZIMMER}..%5c..%5cadmin`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: /encoded slash or backslash/ } },

  // Refused: not strictly under.
  { name: "the prefix itself with nothing after it is refused", raw: ZIMMER, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "the prefix with only a query after it is refused", raw: `${ZIMMER}?token=${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "the prefix without its trailing slash is refused", raw: "https://zimmer.tadasant.com/api/v1/elicitations/session", expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "a sibling path /session-evil/ is refused", raw: `https://zimmer.tadasant.com/api/v1/elicitations/session-evil/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "a sibling path /sessionx is refused", raw: `https://zimmer.tadasant.com/api/v1/elicitations/sessionx${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "a path differing only in case is refused", raw: `https://zimmer.tadasant.com/API/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  { name: "another host is refused", raw: `https://evil.example/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  {
    name: "a host that merely starts with the allowed one is refused",
    raw: `https://zimmer.tadasant.com.evil.example/api/v1/elicitations/session/${TOKEN}`,
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER },
  },
  { name: "a subdomain of the allowed host is refused", raw: `https://a.zimmer.tadasant.com/api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  // The parser keeps a trailing dot, and strad does not equate "host." with "host".
  { name: "a trailing dot on the host is refused", raw: `https://zimmer.tadasant.com./api/v1/elicitations/session/${TOKEN}`, expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  {
    name: "an explicit :8443 differs from the default port and is refused",
    raw: `https://zimmer.tadasant.com:8443/api/v1/elicitations/session/${TOKEN}`,
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER },
  },
  {
    name: "the default port differs from a prefix's explicit :8443 and is refused",
    raw: `https://approvals.example.com/s/${TOKEN}`,
    prefixes: [ALT_PORT],
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER },
  },
  {
    name: "https to a loopback host under an http prefix is refused (scheme differs)",
    raw: `https://127.0.0.1:8788/api/v1/elicitations/session/${TOKEN}`,
    prefixes: [LOCAL],
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER },
  },
  { name: "another loopback port is refused", raw: `http://127.0.0.1:8789/api/v1/elicitations/session/${TOKEN}`, prefixes: [LOCAL], expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER } },
  {
    name: "another loopback address is refused",
    raw: `http://127.0.0.2:8788/api/v1/elicitations/session/${TOKEN}`,
    prefixes: [LOCAL],
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER },
  },
  {
    name: "with several prefixes, a URL under none of them is refused",
    raw: `https://evil.example/s/${TOKEN}`,
    prefixes: [ZIMMER, LOCAL, ALT_PORT],
    expect: { code: "ELICITATION_URL_NOT_ALLOWED", why: NOT_UNDER },
  },

  // Empty allowlist: every confirmed tool refuses.
  { name: "an empty allowlist refuses a well-formed https URL", raw: `${ZIMMER}${TOKEN}`, prefixes: [], expect: { code: "ELICITATION_ALLOWLIST_EMPTY" } },
  { name: "an empty allowlist refuses a loopback URL", raw: `${LOCAL}${TOKEN}`, prefixes: [], expect: { code: "ELICITATION_ALLOWLIST_EMPTY" } },
];

describe("checkElicitationUrl", () => {
  it("has a table of at least 40 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases)("$name", ({ raw, prefixes, expect: want }) => {
    const result = checkElicitationUrl(raw, prefixes ?? [ZIMMER]);
    if ("ok" in want) {
      expect(result).toEqual({ ok: true, url: want.ok });
      return;
    }
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe(want.code);
    if (want.why !== undefined) expect("why" in result.error ? result.error.why : "").toMatch(want.why);
  });

  it.each(cases.filter((c) => !("ok" in c.expect)))("the reason given for '$name' never repeats the value", ({ raw, prefixes }) => {
    const result = checkElicitationUrl(raw, prefixes ?? [ZIMMER]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const text = describeUrlError(result.error);
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain("S3CRET");
    // Empty and very short values are substrings of anything; the marker above covers them.
    if (raw !== null && raw.trim().length >= 8) {
      expect(text).not.toContain(raw);
      expect(text).not.toContain(raw.trim().slice(0, 30));
    }
  });

  it("an accepted URL is returned in the parser's normal form, not as sent", () => {
    const result = checkElicitationUrl(`HTTPS://Zimmer.Tadasant.COM:443/api/v1/elicitations/session/a/../${TOKEN}`, [ZIMMER]);
    expect(result).toEqual({ ok: true, url: `${ZIMMER}${TOKEN}` });
  });
});

describe("describeUrlError", () => {
  it("gives every error code a distinct reason a person can act on", () => {
    const errors: UrlCheckError[] = [
      { code: "ELICITATION_URL_MISSING" },
      { code: "ELICITATION_URL_MALFORMED", why: "the header is empty" },
      { code: "ELICITATION_URL_NOT_ALLOWED", why: "only https URLs are accepted" },
      { code: "ELICITATION_ALLOWLIST_EMPTY" },
    ];
    const texts = errors.map(describeUrlError);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts[0]).toMatch(/no X-Elicitation-Url header, so there is no one to ask/);
    expect(texts[1]).toMatch(/refused: the header is empty/);
    expect(texts[2]).toMatch(/refused: only https/);
    expect(texts[3]).toMatch(/allowedUrlPrefixes is empty/);
  });
});

describe("checkPrefix", () => {
  it.each([ZIMMER, LOCAL, LOCAL6, LOCALHOST, ALT_PORT, "http://127.10.20.30/x/", "https://host.example/"])("accepts %s", (prefix) => {
    expect(checkPrefix(prefix)).toBeUndefined();
  });

  it.each<[string, RegExp]>([
    ["/api/v1/elicitations/session/", /not an absolute URL/],
    ["http://zimmer.tadasant.com/api/", /must be https/],
    ["http://[::ffff:127.0.0.1]/api/", /must be https/],
    ["ftp://zimmer.tadasant.com/api/", /must be https/],
    ["https://user@zimmer.tadasant.com/api/", /userinfo/],
    ["https://zimmer.tadasant.com/api/?x=1", /query or fragment/],
    ["https://zimmer.tadasant.com/api/?", /query or fragment/],
    ["https://zimmer.tadasant.com/api/#", /query or fragment/],
    ["https://ZIMMER.tadasant.com/api/", /normal form/],
    ["HTTPS://zimmer.tadasant.com/api/", /normal form/],
    ["https://zimmer.tadasant.com:443/api/", /normal form/],
    ["https://zimmer.tadasant.com/a/../api/", /normal form/],
    ["https://zimmer.tadasant.com/a/%2e%2e/api/", /normal form/],
    ["https://zimmer.tadasant.com", /normal form/],
    ["http://127.1/api/", /normal form/],
    ["https://zimmer.tadasant.com/api/v1/elicitations/session", /must end in "\/"/],
  ])("refuses %s", (prefix, why) => {
    expect(checkPrefix(prefix)).toMatch(why);
  });
});

describe("isLoopbackHost", () => {
  it.each(["127.0.0.1", "127.255.255.254", "127.0.0.0", "localhost", "LOCALHOST", "[::1]"])("%s is loopback", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each(["128.0.0.1", "10.0.0.1", "0.0.0.0", "localhost.evil.example", "127.0.0.1.evil.example", "evil127.0.0.1", "[::ffff:7f00:1]", "[::2]", "::1", ""])("%s is not loopback", (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});
