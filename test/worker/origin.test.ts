// The gateway's Origin check (worker/origin.ts) against the SDK's originValidationResponse, which it restates so that
// the fast lane never loads the SDK: the same verdict, status, headers and body for the same Origin and list, at the
// cases that matter (none, empty, opaque, a port, a scheme wildcard, IPv6, a listed and an unlisted host) and random ones.
import { originValidationResponse } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { originRefusal } from "../../worker/origin";

const LISTS: readonly string[][] = [[], ["localhost"], ["app.example.com", "127.0.0.1"], ["[::1]"], ["moz-extension://*"], ["http://*", "https://*"], ["abcdefghijklmnop"]];

const ORIGINS: readonly (string | undefined)[] = [
  undefined,
  "",
  "null",
  "http://localhost",
  "http://localhost:5173",
  "https://app.example.com",
  "https://APP.example.com",
  "https://app.example.com.evil.test",
  "https://evil.test",
  "http://127.0.0.1:8787",
  "http://[::1]:3000",
  "moz-extension://0a1b2c3d",
  "chrome-extension://abcdefghijklmnop",
  "file://",
  "file:///etc/passwd",
  "not a url",
  "http://",
  "https://user:pw@app.example.com",
  "http://xn--nxasmq6b.example",
  "http://ünïcode.example",
];

async function answerOf(response: Response | undefined): Promise<unknown> {
  if (response === undefined) return undefined;
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

function requestWith(origin: string | undefined): Request {
  const headers = new Headers();
  if (origin !== undefined) headers.set("origin", origin);
  return new Request("http://127.0.0.1:8787/mcp", { method: "POST", headers });
}

describe("the gateway's Origin check answers as the SDK's", () => {
  it("for every listed Origin against every list", async () => {
    for (const list of LISTS) {
      for (const origin of ORIGINS) {
        const ours = await answerOf(originRefusal(requestWith(origin), list));
        const sdks = await answerOf(originValidationResponse(requestWith(origin), list));
        expect(ours, `${origin} against ${JSON.stringify(list)}`).toEqual(sdks);
      }
    }
  });

  it("refuses what it must: an unlisted host, the opaque origin, an unparsable one (so the check cannot pass everything)", () => {
    expect(originRefusal(requestWith("https://evil.test"), ["app.example.com"])?.status).toBe(403);
    expect(originRefusal(requestWith("null"), ["app.example.com"])?.status).toBe(403);
    expect(originRefusal(requestWith("http://"), ["localhost"])?.status).toBe(403);
    expect(originRefusal(requestWith("https://app.example.com:8443"), ["app.example.com"])).toBeUndefined();
    expect(originRefusal(requestWith(undefined), [])).toBeUndefined();
  });

  it("for random Origins and lists", async () => {
    const host = fc.constantFrom("localhost", "app.example.com", "127.0.0.1", "[::1]", "evil.test", "a.b", "x");
    const origin = fc.oneof(
      fc.tuple(fc.constantFrom("http://", "https://", "moz-extension://", "chrome-extension://", "ws://", ""), host, fc.constantFrom("", ":1", ":8787", "/", "/p?q#f")).map((parts) => parts.join("")),
      fc.string({ maxLength: 24 }),
    );
    const list = fc.array(fc.oneof(host, fc.constantFrom("moz-extension://*", "https://*", "ws://*")), { maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(origin, list, async (o, l) => {
        // A header value cannot hold every string: the ones Headers refuses are refused before any check.
        let request: Request;
        try {
          request = requestWith(o);
        } catch {
          return;
        }
        expect(await answerOf(originRefusal(request, l))).toEqual(await answerOf(originValidationResponse(requestWith(o), l)));
      }),
      { numRuns: 300 },
    );
  });
});
