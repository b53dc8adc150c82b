// Covers runtime roster writes through the gateway's /admin/roster in Node (worker/admin.ts, worker/overlay.ts), with
// an in-memory stand-in for the RosterOverlay object: the operator credential, every guard key refused on a new and an
// existing entry, the audit line, the TTL bound across two isolates, and the fallback to the base on a bad overlay.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HistoryEntry } from "../../contract/roster-overlay";
import { checkConfigText } from "../../scripts/check-config";
import { createGateway } from "../../worker/gateway";
import type { GatewayEnv } from "../../worker/mcp";
import { GUARD_KEYS, OVERLAY_READ_TIMEOUT_MS, OVERLAY_TTL_MS } from "../../worker/overlay";
import { parseRoster } from "../../worker/roster-text";
import { executionContext } from "./helpers/gateway";
import { MemoryOverlay, overlayBinding } from "./helpers/overlay";

const ADMIN = "admin-token-0123456789abcdef";
const ALICE = "alice-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: ops, kind: admin, roles: [], tokenSecret: TOKEN_ADMIN }
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
gateway:
  elicitation:
    allowedUrlPrefixes: [ "https://approve.example/s/" ]
servers:
  - { slug: plain, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: guarded, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true, clientQuestions: true, confirmationHeaders: { CF-Access-Client-Id: "\${GUARD_ID}" }, approvalUrlPrefixes: [ "https://approve.example/s/" ] }
  - { slug: waived, kind: bundle, bundle: ECHO, path: /echo-waived, entitlements: [user], skipConfirmations: true }
  - { slug: tokened, kind: bundle, bundle: PADS, path: /pads, entitlements: [user], fallback: token }
  - { slug: remote, kind: remote-http, url: "https://remote.example/mcp", entitlements: [user], headers: { Authorization: "Bearer \${REMOTE_KEY}" } }
`;

function env(store: MemoryOverlay): Record<string, unknown> {
  return {
    TOKEN_ADMIN: ADMIN,
    TOKEN_ALICE: ALICE,
    GUARD_ID: "guard-id-value",
    REMOTE_KEY: "remote-key-value",
    CALLS: {},
    ROSTER_OVERLAY: overlayBinding(store),
  };
}

let logged: string[];
beforeEach(() => {
  logged = [];
  for (const level of ["log", "error", "warn"] as const) {
    vi.spyOn(console, level).mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
  }
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function serve(gateway: ExportedHandler<GatewayEnv>, request: Request, e: Record<string, unknown>): Promise<Response> {
  const ctx = executionContext();
  const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, e, ctx);
  await response.clone().text();
  await ctx.settle();
  return response;
}

function admin(method: string, path: string, body?: unknown, token = ADMIN): Request {
  return new Request(`https://gateway.test/admin/roster${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A tools/list for the slugs in `servers` as alice: 400 names an unknown slug. */
function list(servers: string): Request {
  return new Request(`https://gateway.test/mcp?servers=${servers}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}

const NEW_REMOTE = { slug: "added", kind: "remote-http", url: "https://added.example/mcp", entitlements: ["user"] };

/** A guard key's value that differs from what each checked-in entry has, so adding, changing and removing are all tried. */
const GUARD_VALUES: Record<(typeof GUARD_KEYS)[number], unknown> = {
  confirmations: true,
  confirmationHeaders: { "X-Edge": "literal" },
  skipConfirmations: true,
  approvalUrlPrefixes: ["https://approve.example/s/"],
  fallback: "token",
  clientQuestions: true,
};
/** The checked-in entry that declares each guard key, for the "remove it" case. */
const DECLARED_BY: Record<(typeof GUARD_KEYS)[number], string> = {
  confirmations: "guarded",
  confirmationHeaders: "guarded",
  skipConfirmations: "waived",
  approvalUrlPrefixes: "guarded",
  fallback: "tokened",
  clientQuestions: "guarded",
};

describe("the operator credential", () => {
  it.each([
    ["no token", null, 401, "UNAUTHENTICATED"],
    ["an unknown token", "unknown-token-0123456789", 401, "UNAUTHENTICATED"],
    ["a session caller's token", ALICE, 403, "NOT_OPERATOR"],
  ])("a write with %s is refused with a JSON error and writes nothing", async (_what, token, status, code) => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    for (const request of [admin("POST", "/servers", NEW_REMOTE), admin("PATCH", "/servers/plain", { timeoutMs: 5000 }), admin("DELETE", "/servers/plain"), admin("GET", "")]) {
      const headers = new Headers(request.headers);
      if (token === null) headers.delete("authorization");
      else headers.set("authorization", `Bearer ${token}`);
      const response = await serve(gateway, new Request(request, { headers }), env(store));
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ code });
    }
    expect(store.version).toBe(0);
    expect(store.text).toBeNull();
    expect(logged.filter((l) => l.includes("roster_write"))).toEqual([]);
  });
});

describe("guard keys are set by the checked-in roster only", () => {
  for (const key of GUARD_KEYS) {
    it(`"${key}" on a new entry is refused, naming the key`, async () => {
      const store = new MemoryOverlay();
      const gateway = createGateway(ROSTER);
      // A bundle mount of its own path, so nothing but the guard key is wrong with it.
      const entry = { slug: "fresh", kind: "bundle", bundle: "ECHO", path: "/echo-fresh", entitlements: ["user"], [key]: GUARD_VALUES[key] };
      const response = await serve(gateway, admin("POST", "/servers", entry), env(store));
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ code: "GUARD_KEY", key });
      // Even the default value is refused: the overlay never names the key at all.
      const quiet = await serve(
        gateway,
        admin("POST", "/servers", { ...NEW_REMOTE, [key]: key === "fallback" ? "none" : key === "confirmationHeaders" ? {} : key === "approvalUrlPrefixes" ? [] : false }),
        env(store),
      );
      expect(await quiet.json()).toMatchObject({ code: "GUARD_KEY", key });
      expect(store.version).toBe(0);
    });

    it(`"${key}" added or changed on an existing entry (PATCH) is refused, naming the key`, async () => {
      const store = new MemoryOverlay();
      const gateway = createGateway(ROSTER);
      for (const slug of ["plain", DECLARED_BY[key]]) {
        const response = await serve(gateway, admin("PATCH", `/servers/${slug}`, { [key]: GUARD_VALUES[key] }), env(store));
        expect(response.status).toBe(422);
        expect(await response.json()).toMatchObject({ code: "GUARD_KEY", key });
      }
      // On a runtime entry too, once it exists.
      expect((await serve(gateway, admin("POST", "/servers", NEW_REMOTE), env(store))).status).toBe(200);
      const onRuntime = await serve(gateway, admin("PATCH", "/servers/added", { [key]: GUARD_VALUES[key] }), env(store));
      expect(await onRuntime.json()).toMatchObject({ code: "GUARD_KEY", key });
      expect(store.version).toBe(1);
    });

    it(`"${key}" removed from the existing entry that declares it (PUT without it) is refused, naming the key`, async () => {
      const store = new MemoryOverlay();
      const gateway = createGateway(ROSTER);
      const listed = (await (await serve(gateway, admin("GET", ""), env(store))).json()) as { servers: Record<string, unknown>[] };
      const current = listed.servers.find((s) => s.slug === DECLARED_BY[key]) as Record<string, unknown>;
      const { source: _s, headers: _h, confirmationHeaders: _c, env: _e, ...rest } = current;
      // The entry as checked in, every other key kept (header maps as the roster has them), this one left out.
      const base = { ...rest, headers: {}, env: {}, confirmationHeaders: DECLARED_BY[key] === "guarded" ? { "CF-Access-Client-Id": "${GUARD_ID}" } : {} } as Record<string, unknown>;
      delete base[key];
      const response = await serve(gateway, admin("PUT", `/servers/${DECLARED_BY[key]}`, base), env(store));
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ code: "GUARD_KEY", key });
      expect(store.version).toBe(0);
    });
  }

  it.each([
    ["url", "remote", { url: "https://elsewhere.example/mcp" }],
    ["headers", "remote", { headers: { Authorization: "Bearer ${REMOTE_KEY}" } }],
    ["bundle", "plain", { bundle: "PADS" }],
    ["path", "plain", { path: "/other" }],
    ["env", "plain", { env: { A: "b" } }],
    ["kind", "plain", { kind: "remote-http" }],
    ["mayBeUnseeded", "plain", { mayBeUnseeded: ["X"] }],
  ])("a checked-in entry's %s is frozen: a runtime change is refused, naming it", async (key, slug, patch) => {
    const store = new MemoryOverlay();
    const response = await serve(createGateway(ROSTER), admin("PATCH", `/servers/${slug}`, patch), env(store));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "FROZEN_KEY", key });
    expect(store.version).toBe(0);
  });

  it.each([
    ["url", "remote", { url: "https://elsewhere.example/mcp" }],
    ["headers", "remote", { headers: { Authorization: "Bearer literal-instead" } }],
    ["bundle", "plain", { bundle: "PADS" }],
    ["path", "plain", { path: "/other" }],
    ["env", "plain", { env: { A: "b" } }],
    ["kind", "plain", { kind: "remote-http" }],
    ["mayBeUnseeded", "plain", { mayBeUnseeded: ["X"] }],
  ])("a checked-in entry's %s is frozen under PUT too: a whole replacement changing it is refused, naming it", async (key, slug, replaced) => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    const parsed = parseRoster(ROSTER);
    const entry = parsed.ok ? parsed.roster.servers.find((s) => s.slug === slug) : undefined;
    expect(entry).toBeDefined();
    // The entry as checked in, only this key replaced (and the timeout, which a PUT may change, so the frozen key is all that is wrong).
    const response = await serve(gateway, admin("PUT", `/servers/${slug}`, { ...entry, timeoutMs: 9000, ...replaced }), env(store));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "FROZEN_KEY", key });
    expect(store.version).toBe(0);
    // The same replacement without the frozen key is taken: PUT itself works.
    expect((await serve(gateway, admin("PUT", `/servers/${slug}`, { ...entry, timeoutMs: 9000 }), env(store))).status).toBe(200);
    expect(JSON.parse(store.text ?? "")).toEqual({ add: [], change: [{ slug, timeoutMs: 9000 }] });
  });

  it.each([
    ["env", { env: { A: "b" } }],
    ["mayBeUnseeded", { mayBeUnseeded: ["X"] }],
  ])("a new entry naming %s is refused, naming it: a runtime entry deploys no bundle variable and expects no secret", async (key, extra) => {
    const store = new MemoryOverlay();
    const entry = { slug: "fresh", kind: "bundle", bundle: "ECHO", path: "/echo-fresh", entitlements: ["user"], ...extra };
    const response = await serve(createGateway(ROSTER), admin("POST", "/servers", entry), env(store));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "KEY_NOT_RUNTIME", key });
    expect(store.version).toBe(0);
  });

  it.each([
    ["a bundle mount without a path", "{ slug: fresh, kind: bundle, bundle: ECHO, entitlements: [user] }", { slug: "fresh", kind: "bundle", bundle: "ECHO", entitlements: ["user"] }],
    [
      "a remote server naming a bundle",
      '{ slug: fresh, kind: remote-http, url: "https://fresh.example/mcp", bundle: ECHO, entitlements: [user] }',
      { slug: "fresh", kind: "remote-http", url: "https://fresh.example/mcp", bundle: "ECHO", entitlements: ["user"] },
    ],
  ])("a write breaking a cross-field rule (%s) is refused with check-config's own message for the same roster", async (_what, yamlEntry, entry) => {
    const store = new MemoryOverlay();
    const response = await serve(createGateway(ROSTER), admin("POST", "/servers", entry), env(store));
    expect(response.status).toBe(422);
    const body = (await response.json()) as { code: string; error: string };
    // The roster check-config would be given: the checked-in one with the entry appended, as the overlay merges it.
    const checked = checkConfigText(`${ROSTER}  - ${yamlEntry}\n`);
    expect(checked.ok).toBe(false);
    expect(checked.lines.length).toBeGreaterThan(0);
    expect(body).toEqual({ code: "SCHEMA", error: checked.lines.join("; ") });
    expect(store.version).toBe(0);
  });

  it("a new entry whose header references a secret is refused: a runtime entry never sends a stored secret", async () => {
    const store = new MemoryOverlay();
    const response = await serve(createGateway(ROSTER), admin("POST", "/servers", { ...NEW_REMOTE, headers: { Authorization: "Bearer ${REMOTE_KEY}" } }), env(store));
    expect(await response.json()).toMatchObject({ code: "SECRET_REF", key: "headers.Authorization" });
    // A literal header is the operator's own value, and allowed.
    const literal = await serve(createGateway(ROSTER), admin("POST", "/servers", { ...NEW_REMOTE, headers: { "X-Tenant": "acme" } }), env(store));
    expect(literal.status).toBe(200);
  });

  it("a new remote entry on plain http off loopback, or with userinfo, or a header value holding a line break, is refused; nothing is written", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ url: "http://10.0.0.5/mcp" }, /url must be https \(plain http only for a loopback host\)/],
      [{ url: "http://169.254.169.254/latest/" }, /url must be https/],
      [{ url: "https://user:s3cr3t@internal.example/mcp" }, /must not carry userinfo/],
      [{ headers: { "X-A": "v\r\nInjected: 1" } }, /only visible characters, spaces and tabs/],
    ];
    for (const [patch, message] of refusals) {
      const response = await serve(gateway, admin("POST", "/servers", { ...NEW_REMOTE, ...patch }), env(store));
      expect(response.status, JSON.stringify(patch)).toBe(422);
      const body = (await response.json()) as { code: string; error: string };
      expect(body.code).toBe("SCHEMA");
      expect(body.error).toMatch(message);
      // The refusal names what was wrong, never the value.
      expect(body.error).not.toContain("s3cr3t");
    }
    expect(store.version).toBe(0);
  });

  it("a runtime mount beside a guarded one (same bundle and path) is refused; another path of the bundle is allowed", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    const beside = await serve(gateway, admin("POST", "/servers", { slug: "shadow", kind: "bundle", bundle: "ECHO", path: "/echo-confirmed", entitlements: ["user"] }), env(store));
    expect(await beside.json()).toMatchObject({ code: "SHADOWS_GUARD" });
    const unknown = await serve(gateway, admin("POST", "/servers", { slug: "stray", kind: "bundle", bundle: "NOPE", path: "/x", entitlements: ["user"] }), env(store));
    expect(await unknown.json()).toMatchObject({ code: "UNKNOWN_BUNDLE" });
    const other = await serve(gateway, admin("POST", "/servers", { slug: "second", kind: "bundle", bundle: "ECHO", path: "/echo", entitlements: ["admin"] }), env(store));
    expect(other.status).toBe(200);
    expect(store.version).toBe(1);
  });

  it("a write the schema refuses is refused with check-config's message, and a checked-in slug cannot be added again", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    const bad = await serve(gateway, admin("POST", "/servers", { ...NEW_REMOTE, timeoutMs: 999 }), env(store));
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ code: "SCHEMA" });
    const again = await serve(gateway, admin("POST", "/servers", { ...NEW_REMOTE, slug: "plain" }), env(store));
    expect(again.status).toBe(409);
    const removeBase = await serve(gateway, admin("DELETE", "/servers/plain"), env(store));
    expect(removeBase.status).toBe(409);
    expect(store.version).toBe(0);
  });

  it("entitlements, timeouts and the body cap of a checked-in entry may change, and removing the change restores the base", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    const changed = await serve(gateway, admin("PATCH", "/servers/guarded", { entitlements: ["ops"], timeoutMs: 240_000 }), env(store));
    expect(changed.status).toBe(200);
    const listed = (await (await serve(gateway, admin("GET", ""), env(store))).json()) as { servers: Record<string, unknown>[] };
    const guarded = listed.servers.find((s) => s.slug === "guarded");
    expect(guarded).toMatchObject({ entitlements: ["ops"], timeoutMs: 240_000, confirmations: true, source: "runtime:changed" });
    // Header values are never shown, only names.
    expect(guarded?.confirmationHeaders).toEqual(["CF-Access-Client-Id"]);
    expect(JSON.stringify(listed)).not.toContain("GUARD_ID");
    expect((await serve(gateway, admin("DELETE", "/servers/guarded"), env(store))).status).toBe(200);
    expect(JSON.parse(store.text ?? "")).toEqual({ add: [], change: [] });
  });
});

describe("what a listing shows of a remote entry", () => {
  it("a remote url's query, which may carry a key, is withheld from the listing and the overlay as written; the url's path is shown", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    const written = await serve(gateway, admin("POST", "/servers", { ...NEW_REMOTE, url: "https://added.example/mcp?api_key=key-value-ZZZ&tenant=a" }), env(store));
    expect(written.status).toBe(200);
    const listed = (await (await serve(gateway, admin("GET", ""), env(store))).json()) as { servers: Record<string, unknown>[]; overlay: { add: Record<string, unknown>[] } };
    expect(listed.servers.find((s) => s.slug === "added")?.url).toBe("https://added.example/mcp?(query withheld)");
    expect(listed.overlay.add[0]?.url).toBe("https://added.example/mcp?(query withheld)");
    expect(JSON.stringify(listed)).not.toContain("key-value-ZZZ");
  });
});

describe("the audit line", () => {
  it("every write is one line with who, what and the before/after digests, and no token or header value", async () => {
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    await serve(gateway, admin("POST", "/servers", { ...NEW_REMOTE, headers: { "X-Tenant": "tenant-literal-value" } }), env(store));
    await serve(gateway, admin("PATCH", "/servers/added", { timeoutMs: 9000 }), env(store));
    await serve(gateway, admin("DELETE", "/servers/added"), env(store));
    const lines = logged.filter((l) => l.includes('"event":"roster_write"')).map((l) => JSON.parse(l) as Record<string, string | number>);
    expect(lines.map((l) => [l.who, l.op, l.slug, l.version])).toEqual([
      ["ops", "add", "added", 1],
      ["ops", "patch", "added", 2],
      ["ops", "remove", "added", 3],
    ]);
    for (const l of lines) {
      expect(l.before).toMatch(/^[0-9a-f]{64}$/);
      expect(l.after).toMatch(/^[0-9a-f]{64}$/);
    }
    // Each write's before is the previous one's after, and removing the entry returns to the empty overlay's digest.
    expect(lines[1]?.before).toBe(lines[0]?.after);
    expect(lines[2]?.after).toBe(lines[0]?.before);
    const all = logged.join("\n");
    for (const secret of [ADMIN, ALICE, "tenant-literal-value", "guard-id-value", "remote-key-value"]) expect(all).not.toContain(secret);
    // The history holds the same rows.
    const history = (await (await serve(gateway, admin("GET", "/history"), env(store))).json()) as { history: HistoryEntry[] };
    expect(history.history.map((h) => h.op)).toEqual(["remove", "patch", "add"]);
  });
});

describe("every isolate serves a write within OVERLAY_TTL_MS", () => {
  it("a second isolate serves the old roster until its read is OVERLAY_TTL_MS old, and the new one from then on", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_000_000);
    const store = new MemoryOverlay();
    const remoteAnswers = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      expect(String(input)).toBe(NEW_REMOTE.url);
      return Response.json({ jsonrpc: "2.0", id: 1, result: { tools: [{ name: "ping", inputSchema: { type: "object" } }] } });
    });
    // Two gateway instances are two isolates: each holds its own cache, and they share only the object.
    const a = createGateway(ROSTER);
    const b = createGateway(ROSTER);
    expect((await serve(b, list("added"), env(store))).status).toBe(400);
    const t0 = Date.now();
    expect((await serve(a, admin("POST", "/servers", NEW_REMOTE), env(store))).status).toBe(200);
    vi.setSystemTime(t0 + OVERLAY_TTL_MS - 1);
    expect((await serve(b, list("added"), env(store))).status).toBe(400);
    vi.setSystemTime(t0 + OVERLAY_TTL_MS);
    const served = await serve(b, list("added"), env(store));
    expect(served.status).toBe(200);
    expect(await served.text()).toContain(`"name":"ping"`);
    // Isolate a had not read before the write: its first request reads it.
    expect((await serve(a, list("added"), env(store))).status).toBe(200);
    expect(remoteAnswers).toHaveBeenCalled();
  });

  it("an isolate reads the object at most once per OVERLAY_TTL_MS, however many requests it serves", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(2_000_000);
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    await serve(gateway, list("plain"), env(store));
    await Promise.all(Array.from({ length: 5 }, () => serve(gateway, list("plain"), env(store))));
    vi.setSystemTime(2_000_000 + OVERLAY_TTL_MS - 1);
    await serve(gateway, list("plain"), env(store));
    expect(store.reads).toBe(1);
    // Five at once once it is stale: one of them reads, the others are served the view it replaces (R-RT-2).
    vi.setSystemTime(2_000_000 + OVERLAY_TTL_MS);
    await Promise.all(Array.from({ length: 5 }, () => serve(gateway, list("plain"), env(store))));
    expect(store.reads).toBe(2);
  });
});

describe("a bad overlay never takes the gateway down", () => {
  it.each([
    ["garbage", "\u0000not json{", []],
    ["the wrong shape", JSON.stringify({ servers: [] }), []],
    ["an entry failing the schema", JSON.stringify({ add: [{ ...NEW_REMOTE, timeoutMs: "soon" }], change: [] }), []],
    ["a guard key written past the API", JSON.stringify({ add: [], change: [{ slug: "plain", confirmations: true }] }), ["plain"]],
    ["a frozen key written past the API", JSON.stringify({ add: [], change: [{ slug: "remote", url: "https://evil.example/mcp" }] }), ["remote"]],
  ] as const)("an overlay holding %s: /mcp answers from the base roster, less the slugs it changes, and one log line says so", async (_what, text, withheld) => {
    const store = new MemoryOverlay();
    store.version = 7;
    store.text = text;
    const gateway = createGateway(ROSTER);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(3_000_000);
    const first = await serve(gateway, list("plain"), env(store));
    expect(first.status).not.toBe(503);
    expect(first.status).toBeLessThan(500);
    vi.setSystemTime(3_000_000 + OVERLAY_TTL_MS);
    await serve(gateway, list("plain"), env(store));
    const fallbacks = logged.filter((l) => l.includes('"event":"roster_overlay_fallback"'));
    // Read twice, said once: the same bad version is not repeated every OVERLAY_TTL_MS.
    expect(store.reads).toBe(2);
    expect(fallbacks).toHaveLength(1);
    const serving = withheld.length === 0 ? "base roster" : `base roster without ${withheld.join(", ")} (their runtime changes no longer apply)`;
    expect(JSON.parse(fallbacks[0] as string)).toMatchObject({ version: 7, serving });
    expect(fallbacks[0]).not.toContain("evil.example");
    // The runtime entry is not served, nor a checked-in slug the overlay changed; the base's others are.
    expect((await serve(gateway, list("added"), env(store))).status).toBe(400);
    for (const slug of ["plain", "remote"]) expect((await serve(gateway, list(slug), env(store))).status, slug).toBe((withheld as readonly string[]).includes(slug) ? 400 : 200);
  });

  it("a runtime narrowing that a redeploy made stop applying withholds its slug, never serves it wider than the operator left it", async () => {
    const store = new MemoryOverlay();
    // Written through the API against the first deploy: plain narrowed to ops, and a runtime remote added.
    const first = createGateway(ROSTER);
    expect((await serve(first, admin("PATCH", "/servers/plain", { entitlements: ["ops"] }), env(store))).status).toBe(200);
    expect((await serve(first, admin("POST", "/servers", NEW_REMOTE), env(store))).status).toBe(200);
    expect((await serve(first, list("plain"), env(store))).status).toBe(400);
    // The next deploy checks in a slug of the runtime entry's name: the overlay no longer applies.
    const redeployed = createGateway(`${ROSTER}  - { slug: added, kind: remote-http, url: "https://added.example/mcp", entitlements: [user] }\n`);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + OVERLAY_TTL_MS);
    // alice (role user) is not let back onto plain, which the operator narrowed to ops; the other slugs answer.
    expect((await serve(redeployed, list("plain"), env(store))).status).toBe(400);
    expect((await serve(redeployed, list("waived"), env(store))).status).toBe(200);
    const line = logged.filter((l) => l.includes('"event":"roster_overlay_fallback"')).at(-1);
    expect(JSON.parse(line as string)).toMatchObject({ serving: "base roster without plain (their runtime changes no longer apply)" });
  });

  it("an object that cannot be read serves the base and says so", async () => {
    const gateway = createGateway(ROSTER);
    const failing = {
      ...env(new MemoryOverlay()),
      ROSTER_OVERLAY: {
        idFromName: (n: string) => n,
        get: () => ({
          read: () => Promise.reject(new Error("object unavailable")),
        }),
      },
    };
    const response = await serve(gateway, list("plain"), failing);
    expect(response.status).toBeLessThan(500);
    expect(logged.filter((l) => l.includes("roster_overlay_fallback"))).toHaveLength(1);
  });
});

describe("an unreadable or hung overlay object (R-RT-6)", () => {
  /** alice's tools/list of plain: 400 "unknown server" once a runtime change has taken her entitlement away. */
  const plainFor = async (gateway: ExportedHandler<GatewayEnv>, e: Record<string, unknown>) => {
    const response = await serve(gateway, list("plain"), e);
    return { status: response.status, text: await response.text() };
  };

  it("a hung object: /mcp answers once OVERLAY_READ_TIMEOUT_MS have passed, from the base when the isolate never read the overlay, said once", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    vi.setSystemTime(4_000_000);
    const store = new MemoryOverlay();
    const hung = vi.spyOn(store, "read").mockImplementation(() => new Promise<never>(() => {}) as never);
    const gateway = createGateway(ROSTER);
    let answered = false;
    const pending = serve(gateway, list("plain"), env(store)).then((r) => {
      answered = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(OVERLAY_READ_TIMEOUT_MS - 1);
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const response = await pending;
    expect(response.status).toBeLessThan(500);
    expect(response.status).not.toBe(400);
    // The next read, past the TTL, hangs as well: still one line.
    vi.setSystemTime(4_000_000 + OVERLAY_TTL_MS + OVERLAY_READ_TIMEOUT_MS);
    const again = serve(gateway, list("plain"), env(store));
    await vi.advanceTimersByTimeAsync(OVERLAY_READ_TIMEOUT_MS);
    expect((await again).status).toBeLessThan(500);
    expect(hung).toHaveBeenCalledTimes(2);
    const lines = logged.filter((l) => l.includes('"event":"roster_overlay_fallback"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ serving: "base roster", reason: `the overlay read took longer than ${OVERLAY_READ_TIMEOUT_MS} ms` });
  });

  it.each([
    ["fails", () => Promise.reject(new Error("object unavailable"))],
    ["hangs", () => new Promise<never>(() => {})],
  ])("an object that %s after a runtime narrowing: the isolate keeps the last good overlay (the narrowing holds), logged once", async (_what, broken) => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    vi.setSystemTime(5_000_000);
    const store = new MemoryOverlay();
    const gateway = createGateway(ROSTER);
    expect((await plainFor(gateway, env(store))).status).not.toBe(400);
    // Narrow: plain is no longer alice's (user); only ops may use it.
    expect((await serve(gateway, admin("PATCH", "/servers/plain", { entitlements: ["ops"] }), env(store))).status).toBe(200);
    vi.setSystemTime(5_000_000 + OVERLAY_TTL_MS);
    const narrowed = await plainFor(gateway, env(store));
    expect(narrowed.status).toBe(400);
    expect(narrowed.text).toContain('unknown server \\"plain');
    // The object breaks; each read past the TTL fails or times out, twice.
    const read = vi.spyOn(store, "read").mockImplementation(broken as () => never);
    for (const at of [2, 3]) {
      vi.setSystemTime(5_000_000 + at * OVERLAY_TTL_MS);
      const pending = plainFor(gateway, env(store));
      await vi.advanceTimersByTimeAsync(OVERLAY_READ_TIMEOUT_MS);
      const during = await pending;
      // Serving the base would give plain back to alice: the outage must not undo the narrowing.
      expect(during.status).toBe(400);
      expect(during.text).toContain('unknown server \\"plain');
    }
    expect(read).toHaveBeenCalledTimes(2);
    const lines = logged.filter((l) => l.includes('"event":"roster_overlay_fallback"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ version: 1, serving: "last good overlay (version 1)" });
    // The object answers again: its overlay is read and served as before, and a new outage is said anew.
    read.mockRestore();
    vi.setSystemTime(5_000_000 + 4 * OVERLAY_TTL_MS);
    expect((await plainFor(gateway, env(store))).status).toBe(400);
    expect(store.reads).toBeGreaterThan(0);
  });

  it("/admin/roster against a hung object answers 503 once OVERLAY_READ_TIMEOUT_MS have passed, and writes nothing", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    const store = new MemoryOverlay();
    vi.spyOn(store, "read").mockImplementation(() => new Promise<never>(() => {}) as never);
    const write = vi.spyOn(store, "write");
    const gateway = createGateway(ROSTER);
    const pending = serve(gateway, admin("POST", "/servers", NEW_REMOTE), env(store));
    await vi.advanceTimersByTimeAsync(OVERLAY_READ_TIMEOUT_MS);
    const response = await pending;
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "OVERLAY_UNAVAILABLE" });
    expect(write).not.toHaveBeenCalled();
  });
});
