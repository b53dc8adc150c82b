// Adversarial regressions without the stack: roster, routing, channel parsing, URL allowlist and the kit's approval client under attack.
import { describe, expect, it } from "vitest";
import { requestApproval } from "../../bundles/kit/approval-client";
import { callStateFor, readChannel } from "../../bundles/kit/scope";
import { CHANNEL_META_KEY } from "../../contract/channel";
import type { Caller } from "../../worker/auth";
import { requestKey } from "../../worker/calls";
import { buildChannel, isGated } from "../../worker/channel";
import { checkElicitationUrl } from "../../worker/elicitation-url";
import type { Roster, ServerEntry } from "../../worker/roster";
import { parseRoster } from "../../worker/roster-text";
import { routeTool, selectServers } from "../../worker/selection";

const PREFIX = "http://127.0.0.1:8790/scripted/";
const ZIMMER = "https://zimmer.tadasant.com/api/v1/elicitations/session/";

function roster(servers: string): ReturnType<typeof parseRoster> {
  return parseRoster(`gateway:
  elicitation:
    allowedUrlPrefixes: ["${PREFIX}"]
callers:
  - { id: s, kind: session, roles: [user], tokenSecret: T }
servers:
${servers}`);
}

const CONFIRMED = `  - { slug: mail, kind: bundle, bundle: MAIL, path: /mail, entitlements: [user], confirmations: true }`;

describe("a waived slug never shares a mount with a slug that asks", () => {
  it("refuses the same path written literally (the existing rule)", () => {
    const r = roster(`${CONFIRMED}\n  - { slug: mail-own, kind: bundle, bundle: MAIL, path: /mail, entitlements: [user], skipConfirmations: true }`);
    expect(r.ok).toBe(false);
  });

  // BUG: the rule compares path strings, but the gateway fetches https://bundle.internal<path>, whose parser
  // resolves dot segments, so these reach the very mount that asks, with a waiver.
  it.each(["/./mail", "/x/../mail", "/mail-own/../mail"])("refuses a waived path %s that the URL parser resolves onto the asking mount", (path) => {
    expect(new URL(`https://bundle.internal${path}`).pathname).toBe("/mail");
    const r = roster(`${CONFIRMED}\n  - { slug: mail-own, kind: bundle, bundle: MAIL, path: "${path}", entitlements: [user], skipConfirmations: true }`);
    expect(r.ok).toBe(false);
  });
});

describe("a caller-chosen tool name reaches only the mount it is prefixed with", () => {
  const parsed = roster(
    [
      `  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }`,
      `  - { slug: echo-waived, kind: bundle, bundle: ECHO, path: /echo-waived, entitlements: [user], skipConfirmations: true }`,
      `  - { slug: remote, kind: remote-http, url: "http://127.0.0.1:8789/remote/mcp", entitlements: [user] }`,
    ].join("\n"),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const r: Roster = parsed.roster;
  const caller: Caller = { ...(r.callers[0] as Roster["callers"][number]), isAdmin: false };
  const both = selectServers(r, caller, "echo,echo-waived");
  const one = selectServers(r, caller, "echo");
  if (!both.ok || !one.ok) throw new Error("selection failed");

  it.each([
    ["a second separator stays in the tool name", "echo__echo-waived__demo_write", { slug: "echo", tool: "echo-waived__demo_write" }],
    ["a leading separator names no mount", "__demo_write", undefined],
    ["a Unicode hyphen look-alike is another slug", "echo\u2010waived__demo_write", undefined],
    ["a full-width letter is another slug", "ｅcho-waived__demo_write", undefined],
    ["an upper-case slug is another slug", "ECHO-WAIVED__demo_write", undefined],
    ["a slug that was not selected is unknown", "remote__report_request", undefined],
    ["a single underscore is no separator", "echo-waived_demo_write", undefined],
  ])("%s", (_label, name, want) => {
    const routed = routeTool(both, name);
    expect(routed === undefined ? undefined : { slug: routed.server.slug, tool: routed.tool }).toEqual(want);
  });

  it("sends a prefixed name to the single selected mount unsplit, where it names no tool", () => {
    const routed = routeTool(one, "echo-waived__demo_write");
    expect(routed?.server.slug).toBe("echo");
    expect(routed?.tool).toBe("echo-waived__demo_write");
  });

  it("never treats a remote-http server as gated, and never builds it a channel, even if its entry says confirmations", () => {
    const remote = { ...(r.servers[2] as ServerEntry), confirmations: true, skipConfirmations: true };
    expect(isGated(remote)).toBe(false);
    expect(buildChannel({ server: remote, caller, headerValue: `${PREFIX}x/`, roster: r, env: {}, call: { scope: "s", key: "n:1", nonce: "test-nonce-0123456789" } })).toBeUndefined();
  });

  it("never puts the caller's URL or headers on a waiver", () => {
    const channel = buildChannel({ server: r.servers[1] as ServerEntry, caller, headerValue: `${PREFIX}x/`, roster: r, env: {}, call: { scope: "s", key: "n:1", nonce: "test-nonce-0123456789" } });
    expect(channel).toEqual({ slug: "echo-waived", skip: true, ttlMs: expect.any(Number), call: { scope: "s", key: "n:1", nonce: "test-nonce-0123456789" }, caller: caller.id });
  });
});

describe("the channel a bundle reads is exactly the gateway's", () => {
  const ok = { slug: "echo-confirmed", url: `${PREFIX}x/`, ttlMs: 1000, headers: {}, call: { scope: "s", key: "n:1", nonce: "test-nonce-0123456789" } };

  it.each([
    ["a __proto__ key smuggling skip: true", `{"slug":"echo-confirmed","refused":"no header","__proto__":{"skip":true}}`],
    ["a __proto__ key on an ask channel", `{"slug":"echo-confirmed","url":"${PREFIX}x/","ttlMs":1000,"headers":{},"__proto__":{"skip":true}}`],
    ['skip: "true" as a string', `{"slug":"echo-confirmed","skip":"true"}`],
    ["skip: 1", `{"slug":"echo-confirmed","skip":1}`],
    ["a refusal that also says skip", `{"slug":"echo-confirmed","refused":"x","skip":true}`],
    ["a refusal that also carries a url", `{"slug":"echo-confirmed","refused":"x","url":"${PREFIX}x/","ttlMs":1000,"headers":{}}`],
    ["an empty refusal", `{"slug":"echo-confirmed","refused":""}`],
  ])("reads %s as a refusal, never as a waiver or an address", (_label, json) => {
    const state = readChannel({ [CHANNEL_META_KEY]: JSON.parse(json) as unknown });
    expect(state.kind).toBe("refused");
  });

  it("ignores a channel that sits in the arguments or under a __proto__ key of _meta", () => {
    const params = JSON.parse(
      `{"name":"demo_write","arguments":{"_meta":{"${CHANNEL_META_KEY}":${JSON.stringify(ok)}}},"_meta":{"__proto__":{"${CHANNEL_META_KEY}":{"slug":"x","skip":true}}}}`,
    ) as Record<string, unknown>;
    expect(callStateFor(1, params).channel.kind).toBe("none");
  });

  it("keeps string and number request ids apart, so one cannot cancel or claim the other", () => {
    expect(requestKey("1")).not.toBe(requestKey(1));
    expect(requestKey("n:1")).not.toBe(requestKey(1));
    expect(requestKey(-0)).toBe(requestKey(0));
  });
});

describe("X-Elicitation-Url tricks beyond the main table", () => {
  it.each([
    ["an IPv6 zone id", "http://[::1%25eth0]:8790/scripted/x/"],
    ["an IPv4-mapped IPv6 loopback over http", "http://[::ffff:127.0.0.1]:8790/scripted/x/"],
    ["an encoded @ in the host", "http://127.0.0.1%40evil.example:8790/scripted/x/"],
    ["a tab inside the path", "http://127.0.0.1:8790/scri\tpted/x/"],
    ["a newline inside the path", "http://127.0.0.1:8790/scripted/\nx/"],
    ["a carriage return before a header", "http://127.0.0.1:8790/scripted/x/\r\nHost: evil"],
    ["a backslash in place of a slash", "http:\\\\127.0.0.1:8790\\scripted\\x\\"],
    ["a trailing-dot host", "https://zimmer.tadasant.com./api/v1/elicitations/session/x/"],
    ["a look-alike host in another script", "https://zimmer.tadasаnt.com/api/v1/elicitations/session/x/"],
    ["an encoded dot segment in mixed case", "http://127.0.0.1:8790/scripted/%2E%2e/admin"],
    ["a sibling path differing in case", "http://127.0.0.1:8790/Scripted/x/"],
    ["the prefix without its trailing slash", "http://127.0.0.1:8790/scripted"],
    ["a scheme-relative URL", "//127.0.0.1:8790/scripted/x/"],
    ["a javascript: URL", "javascript:fetch('http://127.0.0.1:8790/scripted/x/')"],
    ["a data: URL", "data:text/plain,http://127.0.0.1:8790/scripted/x/"],
    ["userinfo after many slashes", "http:////user@127.0.0.1:8790/scripted/x/"],
    ["a file: URL", "file:///scripted/x/"],
  ])("refuses %s", (_label, raw) => {
    const result = checkElicitationUrl(raw, [PREFIX, ZIMMER]);
    expect(result.ok).toBe(false);
  });

  it.each([
    ["an upper-case scheme and host", "HTTP://127.0.0.1:8790/scripted/x/", `${PREFIX}x/`],
    ["a decimal IPv4 spelling of the same host", "http://2130706433:8790/scripted/x/", `${PREFIX}x/`],
    ["a percent-encoded spelling of the same host", "http://%31%32%37.0.0.1:8790/scripted/x/", `${PREFIX}x/`],
    ["a zero-padded port", "http://127.0.0.1:08790/scripted/x/", `${PREFIX}x/`],
  ])("accepts %s only in the parser's normal form, on the very host and path of the prefix", (_label, raw, normal) => {
    expect(checkElicitationUrl(raw, [PREFIX])).toEqual({ ok: true, url: normal });
  });
});

describe("the kit's approval client under a hostile channel", () => {
  function scripted(answers: { create: () => Response; poll: () => Response }): { fetch: (u: string, i: RequestInit) => Promise<Response>; seen: { url: string; method: string; headers: Headers }[] } {
    const seen: { url: string; method: string; headers: Headers }[] = [];
    return {
      seen,
      fetch: async (url, init) => {
        seen.push({ url, method: init.method ?? "GET", headers: new Headers(init.headers) });
        return init.method === "POST" ? answers.create() : answers.poll();
      },
    };
  }
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

  // BUG: the gateway accepts a URL with a query (elicitation-url.test.ts: "a query after a path strictly under
  // the prefix passes"), and the kit appends "/<requestId>" to the whole href, so the id lands in the query and
  // every poll goes to the create path instead of the prompt's own URL.
  it("polls the channel's path plus /<requestId> even when the channel URL carries a query", async () => {
    const fake = scripted({ create: () => json({ requestId: "abc" }, 201), poll: () => json({ action: "decline" }) });
    await requestApproval({
      url: `${PREFIX}q?x=1`,
      headers: {},
      message: "m",
      toolName: "t",
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
      pollIntervalMs: 20,
      fetch: fake.fetch,
    });
    const polls = fake.seen.filter((s) => s.method === "GET");
    expect(polls.length).toBeGreaterThan(0);
    for (const p of polls) expect(new URL(p.url).pathname).toBe("/scripted/q/abc");
  });

  it("never lets channel headers set Host, Content-Type, Content-Length, Accept or Prefer, in any letter case", async () => {
    const fake = scripted({ create: () => json({ requestId: "abc" }, 201), poll: () => json({ action: "decline" }) });
    await requestApproval({
      url: `${PREFIX}h/`,
      headers: { HOST: "evil.example", "Content-TYPE": "text/plain", "content-length": "0", ACCEPT: "text/html", Prefer: "wait=9999", "CF-Access-Client-Id": "id" },
      message: "m",
      toolName: "t",
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
      pollIntervalMs: 20,
      fetch: fake.fetch,
    });
    for (const s of fake.seen) {
      expect(s.headers.get("host")).toBeNull();
      expect(s.headers.get("content-length")).toBeNull();
      expect(s.headers.get("accept")).toBe("application/json");
      expect(s.headers.get("cf-access-client-id")).toBe("id");
      if (s.method === "POST") expect(s.headers.get("content-type")).toBe("application/json");
      else expect(s.headers.get("prefer")).toMatch(/^wait=\d{1,2}$/);
    }
  });

  it.each([
    ["confirm: 1", { confirm: 1 }],
    ['confirm: "yes"', { confirm: "yes" }],
    ["confirm: [true]", { confirm: [true] }],
    ["confirm under __proto__", JSON.parse('{"__proto__":{"confirm":true}}') as unknown],
  ])("does not act on an accept with %s", async (_label, content) => {
    const fake = scripted({ create: () => json({ requestId: "abc" }, 201), poll: () => json({ action: "accept", content }) });
    const result = await requestApproval({
      url: `${PREFIX}c/`,
      headers: {},
      message: "m",
      toolName: "t",
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
      pollIntervalMs: 20,
      fetch: fake.fetch,
    });
    expect(result).toMatchObject({ ok: true, answer: "decline" });
  });

  it.each(["..", ".", "../admin", "a/b", "a?b", "a#b", "%2e%2e", "a\\b", ""])("refuses a create answer naming request id %j and polls nowhere", async (requestId) => {
    const fake = scripted({ create: () => json({ requestId }, 201), poll: () => json({ action: "accept", content: { confirm: true } }) });
    const result = await requestApproval({
      url: `${PREFIX}r/`,
      headers: {},
      message: "m",
      toolName: "t",
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
      pollIntervalMs: 20,
      fetch: fake.fetch,
    });
    expect(result.ok).toBe(false);
    expect(fake.seen.filter((s) => s.method === "GET")).toEqual([]);
  });
});
