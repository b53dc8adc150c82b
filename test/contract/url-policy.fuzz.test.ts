// Property-based tests of the URL policy (contract/url-policy.ts): URLs generated around the allowed prefixes, with
// every trick a server behind a prefix might decode (dot segments, encodings, ";", "//", look-alike dots), are never
// accepted outside a prefix after any normalisation the WHATWG parser or a lenient server does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkPrefix, checkUnderPrefix } from "../../contract/url-policy";

const PREFIXES = ["https://approvals.example.com/api/v1/elicitations/session/", "http://127.0.0.1:8788/s/"];
const ORIGINS = [
  "https://approvals.example.com",
  "http://127.0.0.1:8788",
  "https://approvals.example.com:443",
  "https://APPROVALS.example.com",
  "https://approvals.example.com.evil.example",
  "http://approvals.example.com",
  "http://127.1:8788",
  "https://evil.example",
];
const HEADS = ["/api/v1/elicitations/session/", "/api/v1/elicitations/session", "/api/v1/elicitations/", "/s/", "/s", "/", "/api/v1/elicitations/session//", "/S/"];
/** Segments a lenient server (or the parser) might read as something else. */
const TRICKY = [
  "..",
  ".",
  "%2e",
  "%2E",
  "%2e%2e",
  ".%2e",
  "%252e%252e",
  "..;",
  ";",
  ";x=1",
  "%c0%ae",
  "%c0%ae%c0%ae",
  "‥",
  "．",
  "。",
  "．．",
  "%00",
  "%2f",
  "%5c",
  "\\",
  "@",
  "a@b",
  "%40",
  "",
  "%e2%80%a5",
  "~",
  "-",
  "_",
  "tok3n",
  "A-z_9",
];

const segment = fc.oneof(fc.constantFrom(...TRICKY), fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/));
const rawUrl = fc
  .tuple(fc.constantFrom(...ORIGINS), fc.constantFrom(...HEADS), fc.array(segment, { maxLength: 6 }), fc.constantFrom("", "/", "?x=1", "#f", "?a=/../b"))
  .map(([origin, head, segs, tail]) => `${origin}${head}${segs.join("/")}${tail}`);

/** Is `path` (already resolved) on the prefix's origin and strictly under its path? */
function under(url: URL, prefix: string): boolean {
  const p = new URL(prefix);
  return url.protocol === p.protocol && url.host === p.host && url.pathname.startsWith(p.pathname) && url.pathname.length > p.pathname.length;
}

/** What a lenient server might make of an accepted path before routing it. */
function lenientReadings(url: URL): string[] {
  const path = url.pathname;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {}
  return [
    path,
    decoded,
    decoded.normalize("NFKC"),
    path.replace(/;[^/]*/g, ""), // Tomcat / Spring path parameters
    path.replace(/\/{2,}/g, "/"), // merged slashes
    decoded.replaceAll("\\", "/"),
  ];
}

describe("the URL policy under generated input", () => {
  it("accepts nothing that any lenient reading puts outside a prefix", () => {
    fc.assert(
      fc.property(rawUrl, (raw) => {
        const checked = checkUnderPrefix(raw, PREFIXES, "the test prefixes");
        if (!checked.ok) return;
        const prefix = PREFIXES.find((p) => under(checked.url, p));
        expect(prefix, `${raw} accepted but not under a prefix`).toBeDefined();
        // The parser's own form is stable: parsing it again changes nothing.
        expect(new URL(checked.url.href).href).toBe(checked.url.href);
        for (const reading of lenientReadings(checked.url)) {
          const resolved = new URL(reading, checked.url.origin);
          expect(under(resolved, prefix as string), `${raw} read as ${reading} leaves ${prefix}`).toBe(true);
          expect(
            reading.split("/").some((s) => s === ".." || s === "."),
            `${raw} read as ${reading} has a dot segment`,
          ).toBe(false);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("accepts every plain token path strictly under a prefix (no false refusal of ordinary approval URLs)", () => {
    const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
    fc.assert(
      fc.property(fc.constantFrom(...PREFIXES), fc.array(token, { minLength: 1, maxLength: 3 }), fc.boolean(), (prefix, segs, slash) => {
        const raw = `${prefix}${segs.join("/")}${slash ? "/" : ""}`;
        const checked = checkUnderPrefix(raw, PREFIXES, "the test prefixes");
        expect(checked.ok, raw).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("takes as a prefix only what it will later hold a URL to: a valid prefix accepts a token under it", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ORIGINS), fc.constantFrom(...HEADS), (origin, head) => {
        const prefix = `${origin}${head}`;
        if (checkPrefix(prefix) !== undefined) return;
        expect(checkUnderPrefix(`${prefix}tok3n`, [prefix], "p").ok, prefix).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
