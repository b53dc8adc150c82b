// Covers the one URL policy (contract/url-policy.ts) on the paths a lenient server behind a prefix would read as
// another path: each is refused with a reason, whichever Worker asks (approval address or attachment URL).
import { describe, expect, it } from "vitest";
import { checkUnderPrefix } from "../../contract/url-policy";

const PREFIX = "https://approvals.example.com/s/";

describe("the URL policy refuses what a server could read outside the prefix (issue 13 #8)", () => {
  it.each([
    ["a Tomcat/Spring path parameter dot segment", `${PREFIX}..;/admin`, /";"/],
    ["a path parameter", `${PREFIX}tok;jsessionid=1`, /";"/],
    ["an overlong UTF-8 dot", `${PREFIX}%C0%AE%C0%AE/admin`, /percent-encoded or non-ASCII/],
    ["an encoded NUL", `${PREFIX}tok%00.json`, /percent-encoded or non-ASCII/],
    ["a two-dot leader", `${PREFIX}‥/admin`, /percent-encoded or non-ASCII/],
    ["fullwidth dots", `${PREFIX}．．/admin`, /percent-encoded or non-ASCII/],
    ["an empty segment", `${PREFIX}tok//admin`, /empty segment/],
    ["a dot segment the parser left in place", `${PREFIX}.a/../../admin`, /dot segment/],
    ["an encoded dot", `${PREFIX}x%2e%2e/admin`, /encoded dot/],
    ["an encoded dot segment, which the parser resolves out of the prefix", `${PREFIX}%2e%2e/admin`, /not under any/],
    ["an encoded slash", `${PREFIX}a%2fb`, /encoded slash/],
  ])("%s", (_name, raw, why) => {
    const checked = checkUnderPrefix(raw, [PREFIX], "the prefixes");
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.error.code).toBe("URL_NOT_ALLOWED");
    expect("why" in checked.error ? checked.error.why : "").toMatch(why);
  });

  it("still accepts an ordinary token path, with or without a trailing slash", () => {
    expect(checkUnderPrefix(`${PREFIX}abc_DEF-123`, [PREFIX], "p").ok).toBe(true);
    expect(checkUnderPrefix(`${PREFIX}abc/def/`, [PREFIX], "p").ok).toBe(true);
  });
});
