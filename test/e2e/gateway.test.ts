// The gateway's spine, end to end: both client generations, callers and entitlements, bad input, forwarding.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bearer, connectLegacy, connectModern, DEV_VARS, GATEWAY, mcpUrl, rawPost, recorder, requestLogLines, STACK_LOG, sha256, TOKENS, textOf, waitFor } from "./helpers";

const legacyHeaders = { "mcp-protocol-version": "2025-11-25" };

describe.each([
  ["2025-11-25 (@modelcontextprotocol/sdk 1.x)", connectLegacy, "2025-11-25"],
  ["2026-07-28 (@modelcontextprotocol/client 2.x)", connectModern, "2026-07-28"],
] as const)("a %s client", (_label, connect, revision) => {
  it("negotiates its revision, lists the echo tools unchanged and calls one", async () => {
    const client = await connect("echo", bearer(TOKENS.session));
    try {
      expect(client.revision).toBe(revision);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(expect.arrayContaining(["add", "echo", "report_meta"]));
      for (const tool of tools) expect(tool.annotations).toBeDefined();
      const result = await client.callTool("echo", { text: "hello through strad" });
      expect(textOf(result)).toBe("hello through strad");
      const sum = await client.callTool("add", { a: 2, b: 40 });
      expect(sum.structuredContent).toEqual({ sum: 42 });
      // The hop's own fields (the bundle's serverInfo) are not the caller's.
      expect(JSON.stringify(result)).not.toContain("strad-echo");
    } finally {
      await client.close();
    }
  });

  it("prefixes every tool with its slug when several servers are selected, and routes by the prefix", async () => {
    const client = await connect("echo,remote-demo", bearer(TOKENS.session));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("echo__echo");
      expect(names).toContain("remote-demo__report_request");
      expect(names.every((n) => n.startsWith("echo__") || n.startsWith("remote-demo__"))).toBe(true);
      expect(textOf(await client.callTool("echo__echo", { text: "prefixed" }))).toBe("prefixed");
    } finally {
      await client.close();
    }
  });
});

describe("callers", () => {
  it("answers a request without a bearer token with 401, WWW-Authenticate and a JSON-RPC error", async () => {
    const r = await rawPost({ jsonrpc: "2.0", id: 1, method: "tools/list" }, legacyHeaders);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(r.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: expect.any(Number), message: expect.stringContaining("bearer") } });
  });

  it("answers an unknown token, a malformed scheme and a token of another's prefix with 401", async () => {
    for (const authorization of ["Bearer not-a-real-token-000000000000", `Basic ${TOKENS.session}`, `Bearer ${TOKENS.session.slice(0, -1)}`, `Bearer ${TOKENS.session}x`, "Bearer"]) {
      const r = await rawPost({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...legacyHeaders, authorization });
      expect(r.status, authorization.slice(0, 12)).toBe(401);
    }
  });

  it("never lists a tool the caller cannot call, and refuses a server it is not entitled to by name", async () => {
    const reader = await connectLegacy(undefined, bearer(TOKENS.reader));
    try {
      const names = (await reader.listTools()).tools.map((t) => t.name);
      // The reader's only entitled server is echo: one server, so names are unprefixed.
      expect(names).toEqual(expect.arrayContaining(["add", "echo", "report_meta"]));
      expect(names.some((n) => n.includes("__"))).toBe(false);
    } finally {
      await reader.close();
    }
    const r = await rawPost({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } }, { ...legacyHeaders, ...bearer(TOKENS.reader) }, "echo-confirmed");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ id: 3, error: { code: -32602, message: expect.stringContaining('"echo-confirmed"') } });
    // Unknown and not-entitled read the same.
    const unknown = await rawPost({ jsonrpc: "2.0", id: 4, method: "tools/list" }, { ...legacyHeaders, ...bearer(TOKENS.reader) }, "no-such-server");
    expect((unknown.json as { error: { message: string } }).error.message).toBe('unknown server "no-such-server" (or not one this caller may use)');
  });

  it("gives an admin every server, and lists the answering ones when another fails", async () => {
    const admin = await connectLegacy(undefined, bearer(TOKENS.admin));
    try {
      const names = (await admin.listTools()).tools.map((t) => t.name);
      for (const slug of ["echo", "echo-confirmed", "echo-waived", "remote-demo"]) expect(names.some((n) => n.startsWith(`${slug}__`))).toBe(true);
      expect(names.some((n) => n.startsWith("remote-broken__"))).toBe(false);
    } finally {
      await admin.close();
    }
  });

  it("refuses a prefixed tool name whose slug is not among the selected servers", async () => {
    const r = await rawPost(
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo-confirmed__echo", arguments: {} } },
      { ...legacyHeaders, ...bearer(TOKENS.session) },
      "echo,remote-demo",
    );
    expect(r.json).toMatchObject({
      id: 5,
      error: {
        code: -32602,
        message: 'unknown tool "echo-confirmed__echo": "echo-confirmed" is not one of the selected servers (echo, remote-demo); tools are named <slug>__<tool> after a selected server',
      },
    });
  });
});

describe("bad input", () => {
  const auth = { ...legacyHeaders, ...bearer(TOKENS.session) };

  it("answers malformed JSON with 400 and -32700", async () => {
    const r = await rawPost("{not json", auth, "echo");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: -32700 } });
  });

  it("answers a body over 1 MiB with 413 and reads no further", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(1024 * 1024 + 10) } } });
    const r = await rawPost(big, auth, "echo");
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ error: { code: -32600, message: expect.stringContaining("larger than") } });
  });

  it("reads a body sent without a declared length (chunked) under the same 1 MiB cap", async () => {
    const chunked = async (text: string, pieces: number) => {
      const bytes = new TextEncoder().encode(text);
      const size = Math.ceil(bytes.length / pieces);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.slice(at, at + size));
          controller.close();
        },
      });
      const response = await fetch(mcpUrl("echo"), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...auth },
        body: stream,
        duplex: "half",
      } as RequestInit);
      return { status: response.status, text: await response.text() };
    };
    const small = await chunked(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "in pieces" } } }), 5);
    expect(small.status).toBe(200);
    expect(small.text).toContain("in pieces");
    const big = await chunked(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(1024 * 1024 + 10) } } }), 40);
    expect(big.status).toBe(413);
    expect(big.text).toContain("larger than");
  });

  it("answers a wrong content type with 415", async () => {
    const response = await fetch(mcpUrl("echo"), { method: "POST", headers: { ...auth, "content-type": "text/plain", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringContaining("Content-Type") } });
  });

  it("answers an unknown method with -32601", async () => {
    const r = await rawPost({ jsonrpc: "2.0", id: 9, method: "tools/destroy" }, auth, "echo");
    expect(r.json).toMatchObject({ id: 9, error: { code: -32601 } });
  });

  it("answers a batch and a non-JSON-RPC object with 400 -32600", async () => {
    expect((await rawPost([{ jsonrpc: "2.0", id: 1, method: "ping" }], auth, "echo")).status).toBe(400);
    const r = await rawPost({ id: 1, method: "ping" }, auth, "echo");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: -32600 } });
  });

  it("answers GET and DELETE on /mcp with 405", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(mcpUrl(), { method, headers: auth });
      expect(response.status, method).toBe(405);
      expect(await response.json()).toMatchObject({ error: { message: expect.stringContaining("POST") } });
    }
  });

  it("answers an empty ?servers= entry with a clear error", async () => {
    const r = await rawPost({ jsonrpc: "2.0", id: 2, method: "tools/list" }, auth, "echo,");
    expect(r.status).toBe(400);
    expect((r.json as { error: { message: string } }).error.message).toContain("empty slug");
  });
});

describe("forwarding", () => {
  it("sends a remote server its own configured headers and nothing of the caller's", async () => {
    const client = await connectLegacy("remote-demo", {
      ...bearer(TOKENS.session),
      "x-elicitation-url": "http://127.0.0.1:8790/scripted/forwarding/",
      "mcp-param-host": "evil.example.com",
      "x-custom-caller-header": "1",
    });
    try {
      const report = JSON.parse(textOf(await client.callTool("report_request", {}))) as { headerNames: string[]; authorizationSha256: string; metaKeys: string[] };
      expect(report.authorizationSha256).toBe(await sha256(`Bearer ${DEV_VARS.REMOTE_DEMO_TOKEN}`));
      expect(report.headerNames).not.toContain("x-elicitation-url");
      expect(report.headerNames).not.toContain("mcp-param-host");
      expect(report.headerNames).not.toContain("x-custom-caller-header");
      expect(report.metaKeys).not.toContain("dev.strad/elicitation");
    } finally {
      await client.close();
    }
  });

  it("names the slug and the status of a failing upstream, never its body", async () => {
    const r = await rawPost({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "anything", arguments: {} } }, { ...legacyHeaders, ...bearer(TOKENS.session) }, "remote-broken");
    expect(r.text).toContain('server \\"remote-broken\\" answered HTTP 502');
    expect(r.text).not.toContain("sk_live_do_not_leak");
    expect(r.text).not.toContain("upstream-secret-body");
  });

  it("aborts the upstream request itself when the hop's timeoutMs runs out", async () => {
    await recorder.clear();
    const tag = `timeout-${Date.now()}`;
    const client = await connectLegacy("echo-short", bearer(TOKENS.session));
    try {
      const started = Date.now();
      await expect(client.callTool("wait_for_abort", { ms: 20_000, tag })).rejects.toThrow(/timed out after 2000 ms/);
      expect(Date.now() - started).toBeLessThan(10_000);
      const event = await waitFor(async () => (await recorder.events()).find((e) => e.tag === tag));
      expect(event.outcome).toBe("aborted");
    } finally {
      await client.close();
    }
  });
});

describe("logs", () => {
  it("writes one JSON line per /mcp request, with caller, slugs, method, tool, outcome and duration", async () => {
    const marker = `log-marker-${Date.now()}`;
    const client = await connectLegacy("echo", bearer(TOKENS.session));
    await client.callTool("echo", { text: marker });
    await client.close();
    const line = await waitFor(
      async () => requestLogLines().find((l) => l.caller === "dev-session" && l.method === "tools/call" && l.tool === "echo" && JSON.stringify(l.slugs) === '["echo"]'),
      5_000,
      250,
    );
    expect(line).toMatchObject({ slugs: ["echo"], outcome: "ok", status: 200, durationMs: expect.any(Number) });
    // Arguments are not logged.
    expect(readFileSync(STACK_LOG, "utf8")).not.toContain(marker);
  });

  it("the gateway answers its health check", async () => {
    expect((await fetch(`${GATEWAY}/healthz`)).status).toBe(200);
  });
});

describe("the roster's servers[].env (issue 14 #4)", () => {
  it("reaches the bundle under the slug's namespace, and never another slug's mount", async () => {
    const client = await connectLegacy("echo,echo-waived", bearer(TOKENS.session));
    try {
      expect((await client.callTool("echo__about", {})).structuredContent).toEqual({ mount: "echo", greeting: "hello from strad.dev.yaml" });
      expect((await client.callTool("echo-waived__about", {})).structuredContent).toEqual({ mount: "echo-waived", greeting: null });
    } finally {
      await client.close();
    }
  });
});
