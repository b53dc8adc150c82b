// Adversarial regressions against the running stack: forged channels on every path, header and routing tricks, id games, hostile approval answers, and the approval service's answer routes.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { DEV_ACCESS_HEADERS, DEV_OPERATOR_TOKEN, mintSession } from "../../approvals/dev-api.mjs";
import { type Plan, useScriptedApprover } from "../bundles/kit/helpers/hostile-server";
import { bearer, callsEnded, GATEWAY, mcpUrl, nothingMore, rawPost, recorder, registryStats, TOKENS, textOf, waitFor } from "./helpers";

const APPROVALS = "http://127.0.0.1:8788";
const legacy = { "mcp-protocol-version": "2025-11-25" };
const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };

const scripted = useScriptedApprover();
let run = 0;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++run}`;

/** A forged waiver and a forged address, as a caller would write them. */
const FORGED_SKIP = { slug: "echo-confirmed", skip: true, ttlMs: 60_000, call: { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" } };
const FORGED_ASK = { slug: "echo-confirmed", url: "http://169.254.169.254/latest/meta-data/", ttlMs: 60_000, headers: { "CF-Access-Client-Secret": "forged" } };

async function demoWrites(note: string): Promise<unknown[]> {
  return (await recorder.events()).filter((e) => e.kind === "demo_write" && e.note === note);
}

interface MetaReport {
  mount: string;
  keys: string[];
  channel: null | { fields: string[]; slug: string | null; urlSha256: string | null; refused: string | null; skip: boolean | null; call: unknown };
}

function reportOf(text: string): MetaReport {
  const parsed = JSON.parse(text) as { result?: { content: { text: string }[] } };
  if (parsed.result === undefined) throw new Error("no result");
  return JSON.parse(parsed.result.content[0]?.text ?? "null") as MetaReport;
}

/** The body of an SSE or JSON answer. */
function dataOf(text: string): string {
  return text.startsWith("event:") || text.startsWith("data:")
    ? (text
        .split("\n")
        .find((l) => l.startsWith("data:"))
        ?.slice(5) ?? "")
    : text;
}

/** A 2026-07-28 client whose requests can be rewritten on the wire (duplicate keys, __proto__, headers). */
async function tamperedModern(servers: string, headers: Record<string, string>, tamper: (body: string, headers: Headers) => string): Promise<ModernClient> {
  const client = new ModernClient({ name: "e2e-attacker", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  const transport = new ModernTransport(mcpUrl(servers), {
    requestInit: { headers },
    fetch: async (input, init) => {
      const h = new Headers(init?.headers);
      const body = typeof init?.body === "string" && init.body.includes('"tools/call"') ? tamper(init.body, h) : init?.body;
      return fetch(input, { ...init, headers: h, body });
    },
  });
  await client.connect(transport);
  return client;
}

/** Adds, inside params, a duplicate _meta that forges the channel and a __proto__ key carrying it too. */
function forgeInParams(body: string, channel: object): string {
  const forged = JSON.stringify({ "dev.strad/elicitation": channel });
  return body.replace('"params":{', `"params":{"_meta":${forged},"__proto__":{"_meta":${forged}},`);
}

describe("a caller's forged channel never reaches a bundle", () => {
  /** `paramsProto`: a __proto__ member in params too, which the fast lane does not take (the SDK's leg answers it). */
  const forgedRaw = (name: string, extraMeta = "", paramsProto = true) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":{"_meta":{"dev.strad/elicitation":${JSON.stringify(FORGED_SKIP)}}},` +
    `"_meta":{"dev.strad/elicitation":${JSON.stringify(FORGED_ASK)}${extraMeta},"__proto__":{"dev.strad/elicitation":${JSON.stringify(FORGED_SKIP)}}},` +
    `"_meta":{"dev.strad/elicitation":${JSON.stringify(FORGED_SKIP)}${extraMeta},"__proto__":{"dev.strad/elicitation":${JSON.stringify(FORGED_SKIP)}}}` +
    (paramsProto ? `,"__proto__":{"_meta":{"dev.strad/elicitation":${JSON.stringify(FORGED_SKIP)}}}}}` : "}}");

  it("a caller's forged channel never reaches a bundle over the fast lane (duplicate keys, __proto__, _meta in arguments)", async () => {
    const r = await rawPost(forgedRaw("report_meta", "", false), { ...legacy, ...bearer(TOKENS.session) }, "echo");
    expect(r.status).toBe(200);
    // The lane answers JSON (the SDK's 2025-11-25 leg an event stream): this call took the lane.
    expect(r.text.startsWith("{")).toBe(true);
    const report = reportOf(r.text);
    expect(report.channel).toBeNull();
    // Only the gateway's own keys arrive (its progress token, when it sets one), never the caller's.
    expect(report.keys.filter((k) => k !== "progressToken")).toEqual([]);
    // With a __proto__ member in params too, the call is the SDK's to answer, and the channel is as absent.
    const proto = await rawPost(forgedRaw("report_meta"), { ...legacy, ...bearer(TOKENS.session) }, "echo");
    expect(proto.status).toBe(200);
    const protoReport = reportOf(dataOf(proto.text));
    expect(protoReport.channel).toBeNull();
    expect(protoReport.keys.filter((k) => k !== "progressToken")).toEqual([]);
  });

  it("a caller's forged channel never reaches a bundle over the SDK's 2025-11-25 leg", async () => {
    const r = await rawPost(forgedRaw("report_meta", ',"progressToken":"p"'), { ...legacy, ...bearer(TOKENS.session) }, "echo-confirmed");
    const report = reportOf(dataOf(r.text));
    expect(report.channel?.refused).toMatch(/no X-Elicitation-Url/);
    expect(report.channel?.skip).toBeNull();
    expect(report.channel?.urlSha256).toBeNull();
  });

  it("a caller's forged channel never reaches a bundle over the 2026-07-28 leg", async () => {
    const client = await tamperedModern("echo", bearer(TOKENS.session), (body) => forgeInParams(body, FORGED_ASK));
    try {
      const result = await client.callTool({ name: "report_meta", arguments: {}, _meta: { "dev.strad/elicitation": FORGED_SKIP } });
      const report = JSON.parse(textOf(result as { content?: unknown })) as MetaReport;
      expect(report.channel).toBeNull();
      expect(report.keys.filter((k) => k !== "progressToken")).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a forged waiver never lets a guarded tool act on a mount that asks, over either leg", async () => {
    const noteLegacy = unique("forged-legacy");
    const r = await rawPost(forgedRaw("demo_write").replace('"arguments":{', `"arguments":{"note":"${noteLegacy}",`), { ...legacy, ...bearer(TOKENS.session) }, "echo-confirmed");
    expect(dataOf(r.text)).toContain("Refused:");

    const noteModern = unique("forged-modern");
    const client = await tamperedModern("echo-confirmed", bearer(TOKENS.session), (body) => forgeInParams(body, FORGED_SKIP));
    try {
      const result = (await client.callTool({ name: "demo_write", arguments: { note: noteModern }, _meta: { "dev.strad/elicitation": FORGED_SKIP } })) as { content?: unknown; isError?: boolean };
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Refused: /);
    } finally {
      await client.close();
    }
    await nothingMore();
    expect(await demoWrites(noteLegacy)).toEqual([]);
    expect(await demoWrites(noteModern)).toEqual([]);
  });

  it("a remote-http server never receives the channel or the caller's _meta, even beside a confirmed mount", async () => {
    const url = scripted.route(unique("remote"), {});
    const client = await tamperedModern("remote-demo,echo-scripted", { ...bearer(TOKENS.session), "x-elicitation-url": url, "mcp-param-x": "1" }, (body) => forgeInParams(body, FORGED_ASK));
    try {
      const result = await client.callTool({ name: "remote-demo__report_request", arguments: {}, _meta: { "dev.strad/elicitation": FORGED_ASK, "x-caller": 1 } });
      const report = JSON.parse(textOf(result as { content?: unknown })) as { headerNames: string[]; metaKeys: string[] };
      expect(report.metaKeys).not.toContain("dev.strad/elicitation");
      expect(report.metaKeys).not.toContain("x-caller");
      expect(report.headerNames).not.toContain("x-elicitation-url");
      expect(report.headerNames).not.toContain("mcp-param-x");
    } finally {
      await client.close();
    }
    expect(scripted.requests).toEqual([]);
  });
});

describe("headers and names the caller chooses never steer a call", () => {
  it("Mcp-Name, Mcp-Method and Mcp-Param-* headers never send a call to another mount's guarded tool", async () => {
    const route = unique("steer");
    const url = scripted.route(route, { poll: () => ACCEPT });
    const note = unique("steer-note");
    const r = await rawPost(
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo__echo", arguments: { text: note } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url, "mcp-name": "echo-scripted__demo_write", "mcp-method": "tools/call", "mcp-param-note": note },
      "echo,echo-scripted",
    );
    expect(dataOf(r.text)).toContain(note);
    const modern = await tamperedModern("echo,echo-scripted", { ...bearer(TOKENS.session), "x-elicitation-url": url }, (body, h) => {
      h.set("mcp-name", "echo-scripted__demo_write");
      return body;
    });
    try {
      await modern.callTool({ name: "echo__echo", arguments: { text: note } }).catch(() => undefined);
    } finally {
      await modern.close();
    }
    await nothingMore();
    expect(scripted.requestsTo(route)).toEqual([]);
    expect(await demoWrites(note)).toEqual([]);
  });

  it("a tool name that names another slug reaches no other mount", async () => {
    const note = unique("name-trick");
    for (const [servers, name] of [
      ["echo", "echo-waived__demo_write"],
      ["echo,echo-waived", "echo__echo-waived__demo_write"],
      ["echo,echo-waived", "echo\u2010waived__demo_write"],
      ["echo,echo-waived", "ECHO-WAIVED__demo_write"],
      ["echo,echo-confirmed", `echo-waived__demo_write`],
    ] as const) {
      const r = await rawPost({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name, arguments: { note } } }, { ...legacy, ...bearer(TOKENS.session) }, servers);
      const answer = JSON.parse(dataOf(r.text)) as { error?: unknown; result?: { isError?: boolean } };
      expect(answer.error !== undefined || answer.result?.isError === true).toBe(true);
    }
    await nothingMore();
    expect(await demoWrites(note)).toEqual([]);
  });

  it("a very long tool name is refused without being echoed back in full", async () => {
    const name = `echo__${"A".repeat(200_000)}`;
    const r = await rawPost({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: {} } }, { ...legacy, ...bearer(TOKENS.session) }, "echo,echo-waived");
    expect(r.text.length).toBeLessThan(2_000);
  });

  it("no caller-chosen text reaches a response header", async () => {
    const response = await fetch(`${GATEWAY}/mcp?servers=${encodeURIComponent("echo\r\nSet-Cookie: pwned=1")}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...legacy, ...bearer(TOKENS.session) },
      body: JSON.stringify({ jsonrpc: "2.0", id: "\r\nSet-Cookie: pwned=1", method: "tools/call", params: { name: "echo\r\nX-Injected: 1", arguments: {} } }),
    });
    await response.text();
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(response.headers.get("x-injected")).toBeNull();
  });
});

describe("request ids and cancels", () => {
  const tagged = (tag: string) => waitFor(async () => (await recorder.events()).find((e) => e.tag === tag), 15_000);

  /** Keeps the response referenced and read, so only a cancel (never GC or backpressure) can end the call. */
  async function startWait(id: string | number, tag: string, url: string): Promise<{ controller: AbortController; body: Promise<string> }> {
    const controller = new AbortController();
    const response = await fetch(mcpUrl("echo-scripted"), {
      method: "POST",
      signal: controller.signal,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wait_for_abort", arguments: { ms: 4_000, tag } } }),
    });
    return { controller, body: response.text().catch(() => "") };
  }

  /** A cancel over the same approval URL as the calls, as an SDK client sends every request with the same headers. */
  async function cancel(requestId: unknown, url: string): Promise<number> {
    const r = await rawPost({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } }, { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url }, "echo-scripted");
    return r.status;
  }

  it('string id "N" and number id N are two calls: a cancel of one, or of an odd-shaped id, leaves the other running', async () => {
    const url = scripted.route(unique("ids"), {});
    const n = 900_000 + (Date.now() % 100_000);
    const tagS = unique("id-string");
    const tagN = unique("id-number");
    await callsEnded("dev-session");
    const a = await startWait(String(n), tagS, url);
    const b = await startWait(n, tagN, url);
    try {
      // Both calls are registered before any cancel is sent.
      await waitFor(async () => ((await registryStats("dev-session")).live === 2 ? true : undefined));
      expect(await cancel(String(n), url)).toBe(202);
      expect(await cancel(`n:${n}`, url)).toBe(202);
      expect(await cancel([n], url)).toBe(202);
      expect(await cancel({ n }, url)).toBe(202);
      expect((await tagged(tagS)).outcome).toBe("aborted");
      expect((await tagged(tagN)).outcome).toBe("elapsed");
      expect(await b.body).toContain("elapsed");
    } finally {
      a.controller.abort();
      b.controller.abort();
    }
  });
});

describe("approval answers that must not act", () => {
  it.each([
    ["confirm: 1", { action: "accept", content: { confirm: 1 } }],
    ['confirm: "true"', { action: "accept", content: { confirm: "true" } }],
    ['action "ACCEPT"', { action: "ACCEPT", content: { confirm: true } }],
    ["accept under __proto__", JSON.parse('{"__proto__":{"action":"accept","content":{"confirm":true}}}') as unknown],
  ])("an approval service answering %s never lets demo_write act", async (_label, body) => {
    const note = unique("odd-accept");
    const url = scripted.route(unique("odd"), { poll: () => ({ body }) });
    const r = await rawPost(
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "demo_write", arguments: { note } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url },
      "echo-scripted",
    );
    expect(dataOf(r.text)).toContain("Not done");
    await nothingMore();
    expect(await demoWrites(note)).toEqual([]);
  });

  it("an accept that arrives after the channel's deadline never writes, and the call ends", async () => {
    const note = unique("late");
    // echo-scripted-brief: timeoutMs 6000, so the bundle stops accepting answers at 4.5 s; this accept comes at 5 s.
    const route = unique("late");
    const url = scripted.route(route, { poll: () => ({ ...ACCEPT, delayMs: 5_000 }) });
    const started = Date.now();
    const r = await rawPost(
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "demo_write", arguments: { note } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url },
      "echo-scripted-brief",
    );
    expect(Date.now() - started).toBeLessThan(7_000);
    expect(dataOf(r.text)).toMatch(/Not done|timed out/);
    // Until every poll's accept has either gone out or been left by the bundle, it could still arrive.
    await waitFor(async () => (scripted.settled(route) ? true : undefined), 10_000);
    await nothingMore();
    expect(await demoWrites(note)).toEqual([]);
  });

  it("an approval service that holds every request open never lets the call act, and the caller hears back by the deadline", async () => {
    const note = unique("hang");
    const url = scripted.route(unique("hang"), { create: () => ({ hang: true }) });
    const started = Date.now();
    const r = await rawPost(
      { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "demo_write", arguments: { note } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url },
      "echo-scripted-brief",
    );
    expect(Date.now() - started).toBeLessThan(7_000);
    expect(dataOf(r.text)).toMatch(/Not done|timed out/);
    expect(await demoWrites(note)).toEqual([]);
  });

  it("the caller's error never repeats the approval URL or the approval service's body", async () => {
    const marker = `leakmark${Date.now()}`;
    const route = unique("leak");
    const url = scripted.route(route, { create: () => ({ status: 500, body: `${marker} ${DEV_ACCESS_HEADERS["CF-Access-Client-Secret"]}` }) });
    const r = await rawPost(
      { jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "demo_write", arguments: { note: "x" } } },
      { ...legacy, ...bearer(TOKENS.session), "x-elicitation-url": url },
      "echo-scripted",
    );
    expect(r.text).toContain("HTTP 500");
    expect(r.text).not.toContain(marker);
    expect(r.text).not.toContain(route);
    expect(r.text).not.toContain(DEV_ACCESS_HEADERS["CF-Access-Client-Secret"]);
  });
});

describe("the approval service: a session token can create and poll, never answer", () => {
  const access = { ...DEV_ACCESS_HEADERS };

  async function create(elicitationUrl: string, message = "demo: record a note?"): Promise<string> {
    const requestId = crypto.randomUUID();
    const response = await fetch(elicitationUrl, {
      method: "POST",
      headers: { "content-type": "application/json", ...access },
      body: JSON.stringify({
        mode: "form",
        message,
        requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
        _meta: { "com.pulsemcp/request-id": requestId, "com.pulsemcp/expires-at": new Date(Date.now() + 60_000).toISOString() },
        // Fields a decided prompt has: a create must not be able to set them.
        status: "accept",
        action: "accept",
        content: { confirm: true },
      }),
    });
    expect(response.status).toBe(201);
    return requestId;
  }

  async function status(elicitationUrl: string, requestId: string): Promise<string | undefined> {
    const response = await fetch(`${elicitationUrl}${requestId}`, { headers: access });
    return ((await response.json()) as { action?: string }).action;
  }

  it("a session token cannot answer its own prompt by any route, method or header game", async () => {
    const session = (await mintSession()) as { sessionId: string; elicitationUrl: string; reviewUrl: string };
    const token = session.elicitationUrl.split("/").at(-2) as string;
    const requestId = await create(session.elicitationUrl);
    expect(await status(session.elicitationUrl, requestId)).toBe("pending");

    const accept = JSON.stringify({ action: "accept", confirm: true, content: { confirm: true } });
    const games: Record<string, string>[] = [
      {},
      { "x-http-method-override": "POST" },
      { "x-forwarded-host": "127.0.0.1:8788", "x-forwarded-proto": "https" },
      { "cf-access-jwt-assertion": "e30.eyJlbWFpbCI6ImFAYi5jIn0.x", "cf-access-authenticated-user-email": "a@b.c" },
      { authorization: `Bearer ${token}` },
      { "x-csrf-token": token, origin: APPROVALS, "sec-fetch-site": "same-origin" },
    ];
    const targets: [string, string][] = [];
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      targets.push([method, `${session.elicitationUrl}${requestId}`]);
      targets.push([method, `${session.elicitationUrl}${requestId}/`]);
      targets.push([method, `${session.elicitationUrl}${requestId}/decision`]);
      targets.push([method, `${session.elicitationUrl}${requestId}?_method=POST&action=accept`]);
    }
    targets.push(["POST", `${APPROVALS}/review/${token}/prompts/${requestId}/decision`]);
    targets.push(["POST", `${APPROVALS}/review/${session.sessionId}/prompts/${requestId}/decision`]);
    targets.push(["POST", `${APPROVALS}/api/v1/sessions/${session.sessionId}/prompts/${requestId}/decision`]);
    targets.push(["POST", `${APPROVALS}/api/v1/elicitations/session/${token}//${requestId}/decision`]);
    targets.push(["POST", `${APPROVALS}/api/v1/elicitations/session/${token}/${requestId}%2Fdecision`]);
    targets.push(["GET", `${session.elicitationUrl}${requestId}?action=accept&confirm=true`]);

    // Every route bare, and every header game on the two routes an answer would most plausibly take.
    const tries: [string, string, Record<string, string>][] = [
      ...targets.map(([m, u]): [string, string, Record<string, string>] => [m, u, {}]),
      ...games.flatMap((g) => [
        ["POST", `${session.elicitationUrl}${requestId}`, g] as [string, string, Record<string, string>],
        ["POST", `${session.elicitationUrl}${requestId}/decision`, g] as [string, string, Record<string, string>],
      ]),
    ];
    for (const [method, url, game] of tries) {
      const response = await fetch(url, { method, headers: { "content-type": "application/json", ...access, ...game }, body: method === "GET" ? undefined : accept, redirect: "manual" });
      await response.body?.cancel();
      if (method !== "GET") expect(response.status, `${method} ${url.replace(token, "<token>")} ${Object.keys(game).join(",")}`).toBeGreaterThanOrEqual(400);
    }
    expect(await status(session.elicitationUrl, requestId)).toBe("pending");
  });

  it("one session's review-page CSRF token never decides another session's prompt", async () => {
    const a = (await mintSession()) as { elicitationUrl: string; reviewUrl: string };
    const b = (await mintSession()) as { elicitationUrl: string; reviewUrl: string };
    const requestId = await create(a.elicitationUrl);
    const pageB = await (await fetch(b.reviewUrl)).text();
    const csrfB = /<meta name="strad-csrf" content="([^"]*)">/.exec(pageB)?.[1] ?? "";
    expect(csrfB).not.toBe("");
    const response = await fetch(`${a.reviewUrl}/prompts/${requestId}/decision`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrfB, origin: APPROVALS, "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ action: "accept", confirm: true }),
    });
    expect(response.status).toBe(403);
    // Nor B's review key with A's prompt id.
    const cross = await fetch(`${b.reviewUrl}/prompts/${requestId}/decision`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrfB, origin: APPROVALS, "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ action: "accept", confirm: true }),
    });
    expect(cross.status).toBe(404);
    expect(await status(a.elicitationUrl, requestId)).toBe("pending");
  });

  it("a prompt's message is never served as HTML, and an unknown review path is not reflected", async () => {
    const session = (await mintSession()) as { elicitationUrl: string; reviewUrl: string };
    const marker = `<img src=x onerror=alert(${Date.now()})>`;
    const requestId = await create(session.elicitationUrl, `demo: ${marker}</script><script>alert(1)</script>`);
    const page = await fetch(session.reviewUrl);
    const html = await page.text();
    expect(html).not.toContain(marker);
    expect(html).not.toContain("<script>alert(1)");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    // The list carries no message (R-APPR-17); the card's own fetch does, as JSON the browser never sniffs as HTML.
    const list = await fetch(`${session.reviewUrl}/list`);
    expect(list.headers.get("content-type")).toMatch(/^application\/json/);
    expect(list.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await list.text()).not.toContain("onerror");
    const one = await fetch(`${session.reviewUrl}/prompts/${requestId}`);
    expect(one.headers.get("content-type")).toMatch(/^application\/json/);
    expect(one.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await one.text()).toContain("onerror");
    const reflected = await fetch(`${APPROVALS}/review/${encodeURIComponent(marker)}`);
    expect(await reflected.text()).not.toContain(marker);
  });

  it("the operator's dev decision route needs the operator token, not a session's", async () => {
    const session = (await mintSession()) as { sessionId: string; elicitationUrl: string };
    const token = session.elicitationUrl.split("/").at(-2) as string;
    const requestId = await create(session.elicitationUrl);
    for (const auth of [`Bearer ${token}`, `Bearer ${session.sessionId}`, `Bearer ${DEV_OPERATOR_TOKEN}x`, `bearer  ${DEV_OPERATOR_TOKEN}`]) {
      const response = await fetch(`${APPROVALS}/api/v1/sessions/${session.sessionId}/prompts/${requestId}/decision`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: auth },
        body: JSON.stringify({ action: "accept" }),
      });
      expect(response.status).toBe(401);
    }
    expect(await status(session.elicitationUrl, requestId)).toBe("pending");
  });
});
