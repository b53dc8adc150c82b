// Covers one upstream exchange (worker/upstream.ts) against a stand-in fetcher: the request the gateway
// builds, the answers it accepts, and the cap on what it reads of an answer (MAX_UPSTREAM_BODY).
import { describe, expect, it } from "vitest";
import { validateRoster } from "../../worker/roster";
import { callUpstream, describeUpstreamError, MAX_UPSTREAM_BODY, type UpstreamRequest, type UpstreamResult } from "../../worker/upstream";

const roster = validateRoster({
  callers: [],
  servers: [{ slug: "echo", kind: "bundle", bundle: "ECHO", path: "/echo", entitlements: ["user"] }],
});
if (!roster.ok) throw new Error(JSON.stringify(roster.errors));
const server = roster.roster.servers[0];
if (server === undefined) throw new Error("no server");

interface Sent {
  url: string;
  init: RequestInit;
}

/** One exchange with the echo server; `over` replaces any part of the request the gateway would hand in. */
async function call(answer: (sent: Sent) => Response, over: Partial<UpstreamRequest> = {}): Promise<{ result: UpstreamResult; sent: Sent }> {
  let sent: Sent | undefined;
  const result = await callUpstream({
    server: server as NonNullable<typeof server>,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "hi" } },
    meta: { progressToken: "strad-1" },
    headers: { "x-configured": "yes" },
    signal: new AbortController().signal,
    ...over,
    fetcher: async (url, init) => {
      sent = { url, init };
      return answer(sent);
    },
  });
  if (sent === undefined) throw new Error("nothing was sent");
  return { result, sent };
}

/** A body of `total` bytes in 64 KiB chunks that counts how many it was asked for. */
function counted(total: number, prefix = ""): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let pulls = 0;
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      if (sent === 0 && prefix !== "") {
        const head = new TextEncoder().encode(prefix);
        sent += head.byteLength;
        controller.enqueue(head);
        return;
      }
      if (sent >= total) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => pulls };
}

const failure = (result: UpstreamResult) => (result.ok ? "ok" : describeUpstreamError("echo", result.error));

describe("callUpstream", () => {
  it.each<[string, string]>([
    ["a plain name", "echo"],
    ["a name with a tab", "a\tb"],
    ["a name past ASCII", "日本"],
    ["a leading space", " echo"],
    ["a trailing space", "echo "],
    ["a name spelled as the Base64 form itself", "=?base64?ZWNobw==?="],
    ["an empty name", ""],
  ])("sends %s in Mcp-Name as the transport encodes it, so fetch neither trims it nor refuses it", async (_label, name) => {
    const { sent, result } = await call(() => Response.json({ jsonrpc: "2.0", id: 1, result: { content: [] } }), { params: { name, arguments: {} } });
    expect(result.ok).toBe(true);
    const header = (sent.init.headers as Record<string, string>)["mcp-name"] as string;
    const plain = name !== "" && name === name.trim() && /^[\t\x20-\x7e]*$/.test(name) && !/^=\?base64\?.*\?=$/.test(name);
    if (plain) expect(header).toBe(name);
    else {
      const inner = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(header)?.[1];
      expect(inner, header).toBeDefined();
      expect(new TextDecoder().decode(Uint8Array.from(atob(inner as string), (c) => c.charCodeAt(0)))).toBe(name);
    }
    // A header fetch takes as it is: visible ASCII with no space at either end.
    expect(new Headers({ "mcp-name": header }).get("mcp-name")).toBe(header);
  });

  it("builds the request itself: the mount path, 2026-07-28 framing, the configured headers, its own _meta, no redirects", async () => {
    const { sent } = await call(() => Response.json({ jsonrpc: "2.0", id: 1, result: { content: [] } }));
    expect(sent.url).toBe("https://bundle.internal/echo");
    expect(sent.init.redirect).toBe("manual");
    const headers = sent.init.headers as Record<string, string>;
    expect(headers).toMatchObject({ "x-configured": "yes", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo" });
    const body = JSON.parse(sent.init.body as string);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } });
    expect(body.params._meta).toMatchObject({ progressToken: "strad-1", "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
  });

  it("hands back the result without the hop's fields, keeping the upstream's other _meta, and says the answer was read to its end", async () => {
    const answer = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "hi" }], resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": {}, "vendor/x": 1 } } };
    const { result } = await call(() => Response.json(answer));
    // `bytes`: what was read of the answer, which a listing counts against its cap.
    expect(result).toEqual({ ok: true, result: { content: [{ type: "text", text: "hi" }], _meta: { "vendor/x": 1 } }, drained: true, bytes: JSON.stringify(answer).length });
  });

  it("issue 28: keeps a question's resultType, its requests and its state, rebuilt of those members alone and without the hop's _meta", async () => {
    const ask = { method: "elicitation/create", params: { mode: "form", message: "Proceed?", requestedSchema: { type: "object", properties: {} } } };
    const answer = {
      jsonrpc: "2.0",
      id: 1,
      result: {
        _meta: { "io.modelcontextprotocol/serverInfo": {}, "vendor/x": 1 },
        requestState: "s-1",
        content: [{ type: "text", text: "dropped" }],
        inputRequests: { q: ask },
        resultType: "input_required",
        extra: 1,
      },
    };
    const { result } = await call(() => Response.json(answer));
    expect(result).toEqual({
      ok: true,
      result: { resultType: "input_required", inputRequests: { q: ask }, requestState: "s-1", _meta: { "vendor/x": 1 } },
      drained: true,
      bytes: JSON.stringify(answer).length,
    });
    // In the inputRequired() builder's order, _meta last.
    if (!result.ok) throw new Error("expected a result");
    expect(Object.keys(result.result)).toEqual(["resultType", "inputRequests", "requestState", "_meta"]);
    // A state alone is a question too (a load-shedding retry), and so are requests alone; the hop's _meta alone goes.
    for (const only of [{ requestState: "" }, { inputRequests: { q: ask } }, { inputRequests: { a: { method: "roots/list" }, b: { method: "sampling/createMessage", params: {} } } }]) {
      const sent = { jsonrpc: "2.0", id: 1, result: { resultType: "input_required", ...only, _meta: { "io.modelcontextprotocol/serverInfo": {} } } };
      const { result: r } = await call(() => Response.json(sent));
      expect(r, JSON.stringify(only)).toEqual({ ok: true, result: { resultType: "input_required", ...only }, drained: true, bytes: JSON.stringify(sent).length });
    }
  });

  it.each([
    ["no requests and no state", {}, "neither inputRequests nor requestState"],
    ["empty requests and no state", { inputRequests: {} }, "neither inputRequests nor requestState"],
    ["requests that are a list", { inputRequests: [{ method: "roots/list" }], requestState: "s" }, "inputRequests that is not an object"],
    ["requests that are a string", { inputRequests: "abc" }, "inputRequests that is not an object"],
    ["a request of no method", { inputRequests: { q: { params: {} } } }, "an input request that is not"],
    ["a request of another method", { inputRequests: { q: { method: "tools/call", params: {} } } }, "an input request that is not"],
    ["a request that is not an object", { inputRequests: { q: "elicitation/create" } }, "an input request that is not"],
    ["a numeric state", { requestState: 5 }, "a requestState that is not a string"],
    ["a null state beside a request", { inputRequests: { q: { method: "roots/list" } }, requestState: null }, "a requestState that is not a string"],
  ])("issue 28: refuses a question with %s as an unusable answer that says why", async (_name, members, why) => {
    const { result } = await call(() => Response.json({ jsonrpc: "2.0", id: 1, result: { resultType: "input_required", ...members } }));
    expect(failure(result)).toContain(`server "echo" gave an unusable answer: input_required with ${why}`);
  });

  it("issue 28: declares the capabilities it is given on the hop, and none without them", async () => {
    const metaOf = (sent: Sent) => (JSON.parse(String(sent.init.body)) as { params: { _meta: Record<string, unknown> } }).params._meta;
    const answer = () => Response.json({ jsonrpc: "2.0", id: 1, result: {} });
    expect(metaOf((await call(answer)).sent)["io.modelcontextprotocol/clientCapabilities"]).toEqual({});
    const form = { elicitation: { form: {} } };
    expect(metaOf((await call(answer, { capabilities: form })).sent)["io.modelcontextprotocol/clientCapabilities"]).toEqual(form);
  });

  it("refuses an answer to another request", async () => {
    const { result } = await call(() => Response.json({ jsonrpc: "2.0", id: 2, result: {} }));
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the answer names another request');
  });

  it.each([502, 404, 400, 302, 307])("names the status of an HTTP %i answer and leaves its body unread, JSON or not", async (status) => {
    const body = counted(1024, '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"upstream-secret-body"}}');
    const { result } = await call(() => new Response(body.stream, { status, headers: { "content-type": "application/json", location: "https://elsewhere.example/" } }));
    expect(failure(result)).toBe(`server "echo" answered HTTP ${status}`);
    expect(body.pulled()).toBeLessThanOrEqual(1);
  });

  it("relays an upstream's JSON-RPC error as one plain line of at most 300 characters", async () => {
    const message = `bad\u0000thing\r\nInjected: line\u202eevil\u2028${"x".repeat(500)}`;
    const { result } = await call(() => Response.json({ jsonrpc: "2.0", id: 1, error: { code: -32010, message } }));
    expect(result.ok).toBe(false);
    if (result.ok || result.error.code !== "UPSTREAM_RPC") throw new Error("expected an RPC error");
    expect(result.error.rpcCode).toBe(-32010);
    expect(result.error.message).not.toMatch(/[\u0000-\u001f\u202e\u2028]/u);
    expect(result.error.message.startsWith("bad thing  Injected: line evil x")).toBe(true);
    // Cut at 300 characters with the shared sanitiser's marker, which says how long the whole was.
    expect(result.error.message).toMatch(/^[^…]{300}… \[cut: \d+ characters in all\]$/u);
  });

  it("keeps the hop's own headers over any the roster configures under the same names", async () => {
    const { sent } = await call(() => Response.json({ jsonrpc: "2.0", id: 1, result: {} }), {
      headers: { "content-type": "text/plain", accept: "text/html", "mcp-protocol-version": "2025-03-26", "mcp-method": "tools/list", "x-configured": "yes" },
    });
    expect(sent.init.headers).toMatchObject({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
      "x-configured": "yes",
    });
  });

  it("refuses a JSON answer that declares more than the cap without reading it", async () => {
    const body = counted(1024);
    const { result } = await call(() => new Response(body.stream, { headers: { "content-type": "application/json", "content-length": String(MAX_UPSTREAM_BODY + 1) } }));
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the answer is too large');
    expect(body.pulled()).toBeLessThanOrEqual(1);
  });

  it("stops reading a JSON answer of unknown length one chunk past the cap", async () => {
    const body = counted(4 * MAX_UPSTREAM_BODY, '{"jsonrpc":"2.0","id":1,"result":{"pad":"');
    const { result } = await call(() => new Response(body.stream, { headers: { "content-type": "application/json" } }));
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the answer is too large');
    const chunksToCap = MAX_UPSTREAM_BODY / (64 * 1024);
    expect(body.pulled()).toBeGreaterThan(chunksToCap);
    expect(body.pulled()).toBeLessThan(chunksToCap + 4);
  });

  it("refuses a bundle's answer longer than it declared, reading one chunk past its declaration", async () => {
    // workerd hands on whatever a bundle's stream yields across a service binding, whatever length it declared.
    const lying = counted(4 * 1024 * 1024, '{"jsonrpc":"2.0","id":1,"result":{"pad":"');
    const { result } = await call(() => new Response(lying.stream, { headers: { "content-type": "application/json", "content-length": "100" } }));
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the answer is too large');
    // The prefix, then one 64 KiB chunk past the 100 bytes declared: never the 4 MiB.
    expect(lying.pulled()).toBeLessThanOrEqual(3);

    const honest = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}';
    const fits = await call(() => new Response(honest, { headers: { "content-type": "application/json", "content-length": String(honest.length) } }));
    expect(fits.result).toEqual({ ok: true, result: { content: [{ type: "text", text: "hi" }] }, drained: true, bytes: new TextEncoder().encode(honest).length });
  });

  it("reads an event stream cut at every character, CRLF or LF, relaying progress and passing over other requests' answers", async () => {
    const text =
      'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"strad-1","progress":1}}\r\n\r\n' +
      ": keepalive\n\n" +
      'event: message\ndata: {"jsonrpc":"2.0","id":99,"result":{"content":[{"type":"text","text":"not this call"}]}}\n\n' +
      'event: message\ndata: {"jsonrpc":"2.0","id":1,\ndata: "result":{"content":[{"type":"text","text":"done ✓ 東京"}]}}\n\n';
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    const progress: unknown[] = [];
    const stream = new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, ++at));
      },
    });
    const { result } = await call(() => new Response(stream, { headers: { "content-type": "text/event-stream" } }), { onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([{ progressToken: "strad-1", progress: 1 }]);
    // An event stream is cancelled once the answer is in, not read to its end: the caller of callUpstream
    // still has to end the exchange.
    expect(result).toEqual({ ok: true, result: { content: [{ type: "text", text: "done ✓ 東京" }] }, bytes: bytes.length });
  });

  it("says the event stream ended without an answer, after relaying the progress it did carry", async () => {
    const progress: unknown[] = [];
    const text = 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"strad-1","progress":1}}\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}';
    const { result } = await call(() => new Response(text, { headers: { "content-type": "text/event-stream" } }), { onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([{ progressToken: "strad-1", progress: 1 }]);
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the event stream ended without an answer');
  });

  it("cancels the event stream once the answer is in, reading nothing after it and relaying no later frame", async () => {
    const answer = 'data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"strad-1","progress":2}}\n\n';
    const progress = 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"strad-1","progress":3}}\n\n';
    let pulls = 0;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode(++pulls === 1 ? answer : progress));
      },
      cancel() {
        cancelled = true;
      },
    });
    const relayed: unknown[] = [];
    const { result } = await call(() => new Response(stream, { headers: { "content-type": "text/event-stream" } }), { onProgress: (p) => relayed.push(p) });
    expect(result).toEqual({ ok: true, result: { content: [] }, bytes: new TextEncoder().encode(answer).length });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cancelled).toBe(true);
    expect(relayed).toEqual([]);
    // The stream's queue is filled ahead of the read; nothing past that was asked for.
    expect(pulls).toBeLessThanOrEqual(2);
  });

  it("refuses an event whose data is not JSON, naming no byte of it", async () => {
    const { result } = await call(() => new Response("data: upstream-secret {not json\n\n", { headers: { "content-type": "text/event-stream" } }));
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the answer is not JSON');
  });

  it("reads one frame of 8 MiB cut into 1 KiB chunks in linear time", async () => {
    const chunk = new TextEncoder().encode("x".repeat(1024));
    const head = new TextEncoder().encode('data: {"jsonrpc":"2.0","id":1,"result":{"pad":"');
    const tail = new TextEncoder().encode('"}}\n\n');
    const chunks = 8 * 1024;
    let sent = -1;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent++;
        controller.enqueue(sent === 0 ? head : sent <= chunks ? chunk : tail);
        if (sent > chunks) controller.close();
      },
    });
    const started = performance.now();
    const { result } = await call(() => new Response(stream, { headers: { "content-type": "text/event-stream" } }));
    // A rescan of the whole frame per chunk would scan about 32 GiB here, which takes minutes.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.ok && (result.result.pad as string).length).toBe(chunks * 1024);
  });

  it("stops reading an event stream one chunk past the cap", async () => {
    const body = counted(4 * MAX_UPSTREAM_BODY, 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"pad":"');
    const { result } = await call(() => new Response(body.stream, { headers: { "content-type": "text/event-stream" } }));
    expect(failure(result)).toBe('server "echo" gave an unusable answer: the answer is too large');
    const chunksToCap = MAX_UPSTREAM_BODY / (64 * 1024);
    expect(body.pulled()).toBeLessThan(chunksToCap + 4);
  });
});
