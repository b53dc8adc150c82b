// Issue 15 #4: the attachment sizes Gmail's schema advertises are reachable. A slug's maxRequestBytes (default
// 1 MiB, at most 8 MiB) is the cap the gateway holds that slug's tools/call to; the kit's mount reads what the
// gateway forwards at the largest cap; send_email's content_base64 limit is what a body at that cap carries
// (docs/rules.md R-LIMIT-4, R-LIMIT-5). Here the gateway's app in Node, in front of the kit's real mount serving
// a tool with send_email's own input schema.
import { McpServer } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_CONTENT_BASE64_CHARS } from "../../bundles/google/google.attachments";
import { SendEmailSchema } from "../../bundles/google/google.send";
import { MAX_BUNDLE_BODY_BYTES, serveBundle } from "../../bundles/kit/mount";
import { DEFAULT_MAX_REQUEST_BYTES, GATEWAY_META_ALLOWANCE_BYTES, MAX_REQUEST_BYTES_CEILING, UNAUTHENTICATED_DRAIN_BYTES } from "../../contract/body";
import { createGateway } from "../../worker/gateway";
import type { GatewayEnv } from "../../worker/mcp";
import { ALICE_TOKEN, binding, executionContext } from "./helpers/gateway";
import { messageOf } from "./helpers/message";

const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: mail, kind: bundle, bundle: MAIL, path: /mail, entitlements: [user] }
  - { slug: mail-big, kind: bundle, bundle: MAIL, path: /mail, entitlements: [user], maxRequestBytes: ${MAX_REQUEST_BYTES_CEILING} }
  - { slug: mail-tight, kind: bundle, bundle: MAIL, path: /mail, entitlements: [user], maxRequestBytes: 65536 }
`;

/** The kit's mount, serving one tool that takes send_email's arguments and says how much file content reached it. */
const mount = serveBundle({
  mounts: {
    "/mail": () => {
      const server = new McpServer({ name: "cap-test", version: "0" });
      server.registerTool(
        "send_email",
        { description: "Stands in for Gmail's send_email.", inputSchema: SendEmailSchema, annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } },
        async (args) => ({ content: [{ type: "text", text: `received ${(args.attachments ?? []).reduce((n, a) => n + (a.content_base64?.length ?? 0), 0)} characters` }] }),
      );
      return server;
    },
  },
});

let forwarded: number[] = [];
const noCtx = executionContext();
const MAIL = binding(async (request) => {
  const body = await request.clone().arrayBuffer();
  forwarded.push(body.byteLength);
  return (mount.fetch as NonNullable<typeof mount.fetch>)(request as never, {}, noCtx);
});
const env = (): Record<string, unknown> => ({ TOKEN_ALICE: ALICE_TOKEN, MAIL, CALLS: {} });

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "cap-test", version: "0" },
};

/** A 2026-07-28 tools/call body sending one inline file whose base64 is `chars` long. */
function sendBody(chars: number, name = "send_email"): string {
  const args = { to: ["Ada Lovelace <ada@example.com>"], subject: "The file", attachments: [{ filename: "file.bin", content_base64: "A".repeat(chars) }] };
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: META } });
}

/** The base64 length that makes sendBody exactly `bytes` long. */
const charsForBody = (bytes: number) => bytes - sendBody(0).length;

function post(servers: string, body: string | ReadableStream<Uint8Array>, method = "tools/call", name = "send_email"): Request {
  return new Request(`https://gateway.test/mcp?servers=${servers}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${ALICE_TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(method === "tools/call" ? { "mcp-name": name } : {}),
    },
    body,
    ...(typeof body === "string" ? {} : { duplex: "half" }),
  } as RequestInit);
}

async function serve(request: Request): Promise<{ status: number; message: Record<string, unknown> }> {
  const ctx = executionContext();
  const response = await (createGateway(ROSTER).fetch as NonNullable<ExportedHandler<GatewayEnv>["fetch"]>)(request as never, env() as never, ctx);
  const text = await response.text();
  await ctx.settle();
  return { status: response.status, message: messageOf(text) };
}

const textOf = (message: Record<string, unknown>) => ((message.result as { content?: { text?: string }[] } | undefined)?.content ?? []).map((c) => c.text ?? "").join("");
const errorOf = (message: Record<string, unknown>) => (message.error as { message?: string } | undefined)?.message ?? "";

beforeEach(() => {
  forwarded = [];
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("issue 15 #4: the gateway's cap is the slug's, and the schema says what it takes", () => {
  it("content_base64's schema limit is what a body at the largest cap carries beside its envelope", () => {
    expect(SendEmailSchema.safeParse({ to: ["a@b.cc"], attachments: [{ filename: "f", content_base64: "A".repeat(MAX_CONTENT_BASE64_CHARS) }] }).success).toBe(true);
    expect(SendEmailSchema.safeParse({ to: ["a@b.cc"], attachments: [{ filename: "f", content_base64: "A".repeat(MAX_CONTENT_BASE64_CHARS + 1) }] }).success).toBe(false);
    expect(sendBody(MAX_CONTENT_BASE64_CHARS).length).toBeLessThanOrEqual(MAX_REQUEST_BYTES_CEILING);
    // The bundle reads what the gateway forwards at that cap: the body and the gateway's own _meta.
    expect(MAX_BUNDLE_BODY_BYTES).toBeGreaterThanOrEqual(MAX_REQUEST_BYTES_CEILING + GATEWAY_META_ALLOWANCE_BYTES);
  });

  it("a send_email carrying content_base64 at the schema's limit reaches the tool through a slug at the largest cap", async () => {
    const { status, message } = await serve(post("mail-big", sendBody(MAX_CONTENT_BASE64_CHARS)));
    expect(status, errorOf(message)).toBe(200);
    expect(textOf(message)).toBe(`received ${MAX_CONTENT_BASE64_CHARS} characters`);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]).toBeLessThanOrEqual(MAX_BUNDLE_BODY_BYTES);
  });

  it("the same call on a slug at the default cap is refused 413, naming the cap and the slug, and reaches no bundle", async () => {
    const { status, message } = await serve(post("mail", sendBody(MAX_CONTENT_BASE64_CHARS)));
    expect(status).toBe(413);
    expect(errorOf(message)).toBe(`the request body is larger than ${DEFAULT_MAX_REQUEST_BYTES} bytes`);
    expect(forwarded).toEqual([]);
  });

  it("a selection with a larger cap decodes strictly: invalid UTF-8 is refused 400 before anything is forwarded, never tripled into U+FFFD", async () => {
    const prefix = new TextEncoder().encode(sendBody(0).replace('"content_base64":""', '"content_base64":"'));
    const tail = new TextEncoder().encode('"}]}}}');
    // Well inside the 8 MiB cap as bytes; decoded leniently it would be three times as large.
    const junk = new Uint8Array(2 * 1024 * 1024).fill(0xff);
    const bytes = new Uint8Array([...prefix, ...junk, ...tail]);
    const big = await serve(post("mail-big", new Blob([bytes]).stream()));
    expect(big.status).toBe(400);
    expect(errorOf(big.message)).toBe("the request body could not be read as UTF-8");
    expect(forwarded).toEqual([]);
  });

  it("holds a slug at its cap to the byte: a body of exactly the cap passes, one byte more is 413", async () => {
    const at = await serve(post("mail", sendBody(charsForBody(DEFAULT_MAX_REQUEST_BYTES))));
    expect(at.status, errorOf(at.message)).toBe(200);
    expect(textOf(at.message)).toBe(`received ${charsForBody(DEFAULT_MAX_REQUEST_BYTES)} characters`);
    const over = await serve(post("mail", sendBody(charsForBody(DEFAULT_MAX_REQUEST_BYTES) + 1)));
    expect(over.status).toBe(413);
  });

  it("holds each tools/call to its own slug's cap when the selection holds a larger one", async () => {
    const body = (name: string) => sendBody(charsForBody(100 * 1024), name);
    const tight = await serve(post("mail-big,mail-tight", body("mail-tight__send_email"), "tools/call", "mail-tight__send_email"));
    expect(tight.status).toBe(413);
    expect(errorOf(tight.message)).toBe('the request body is larger than 65536 bytes, the most "mail-tight" takes');
    const big = await serve(post("mail-big,mail-tight", body("mail-big__send_email"), "tools/call", "mail-big__send_email"));
    expect(big.status, errorOf(big.message)).toBe(200);
    expect(forwarded).toHaveLength(1);
  });

  it("holds anything but a tools/call to the default cap, whatever the slug allows", async () => {
    const pad = "x".repeat(DEFAULT_MAX_REQUEST_BYTES);
    const { status } = await serve(post("mail-big", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META, pad } }), "tools/list"));
    expect(status).toBe(413);
    expect(forwarded).toEqual([]);
  });

  it("counts a body sent without a declared length the same way", async () => {
    const streamed = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(text);
          for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
          controller.close();
        },
      });
    const big = await serve(post("mail-big", streamed(sendBody(2 * DEFAULT_MAX_REQUEST_BYTES))));
    expect(big.status, errorOf(big.message)).toBe(200);
    const small = await serve(post("mail", streamed(sendBody(2 * DEFAULT_MAX_REQUEST_BYTES))));
    expect(small.status).toBe(413);
  });
});

describe("issue 26: a request refused before its caller is known is not read first", () => {
  /** A POST whose body is `total` bytes, declared or not, with `token`; `pulled` counts the 16 KiB chunks read. */
  function stranger(total: number, declared: boolean, headers: Record<string, string> = {}) {
    let pulled = 0;
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (sent >= total) return controller.close();
        const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += piece.length;
        controller.enqueue(piece);
      },
    });
    const request = new Request("https://gateway.test/mcp?servers=mail", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...(declared ? { "content-length": String(total) } : {}),
        ...headers,
      },
      body,
      duplex: "half",
    } as RequestInit);
    return { request, pulled: () => pulled };
  }

  async function answer(request: Request): Promise<Response> {
    const ctx = executionContext();
    const response = await (createGateway(ROSTER).fetch as NonNullable<ExportedHandler<GatewayEnv>["fetch"]>)(request as never, env() as never, ctx);
    await response.text();
    await ctx.settle();
    return response;
  }

  it.each([
    ["no token", {}],
    ["an unknown token", { authorization: "Bearer nobody-0123456789abcdef" }],
    ["an Origin the roster does not allow", { authorization: `Bearer ${ALICE_TOKEN}`, origin: "https://evil.example" }],
  ])("with %s, a body declared past the 64 KiB drain is refused unread, and the answer says the connection closes", async (_case, headers) => {
    const { request, pulled } = stranger(8 * 1024 * 1024, true, headers);
    const response = await answer(request);
    expect([401, 403]).toContain(response.status);
    expect(response.headers.get("connection")).toBe("close");
    // A stream pulls its first chunk when built: nothing past that was read.
    expect(pulled()).toBeLessThanOrEqual(1);
    expect(forwarded).toEqual([]);
  });

  it("a stranger's body within the drain is read to its end and the connection kept; an undeclared one is cut one chunk past it", async () => {
    const within = stranger(UNAUTHENTICATED_DRAIN_BYTES, true);
    const kept = await answer(within.request);
    expect(kept.status).toBe(401);
    expect(kept.headers.get("connection")).toBeNull();
    expect(within.pulled()).toBe(UNAUTHENTICATED_DRAIN_BYTES / (16 * 1024) + 1);
    const long = stranger(8 * 1024 * 1024, false);
    const cut = await answer(long.request);
    expect(cut.status).toBe(401);
    expect(cut.headers.get("connection")).toBe("close");
    expect(long.pulled()).toBeLessThanOrEqual(UNAUTHENTICATED_DRAIN_BYTES / (16 * 1024) + 2);
  });

  it("an authenticated caller's refused body is still drained as R-BODY-8 says: a 415 reads 2 MiB to its end", async () => {
    const { request, pulled } = stranger(2 * 1024 * 1024, true, { authorization: `Bearer ${ALICE_TOKEN}`, "content-type": "text/plain" });
    const response = await answer(request);
    expect(response.status).toBe(415);
    expect(response.headers.get("connection")).toBeNull();
    expect(pulled()).toBe((2 * 1024 * 1024) / (16 * 1024) + 1);
  });
});
