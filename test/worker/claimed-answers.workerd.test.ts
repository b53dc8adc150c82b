// Covers how the gateway, as built, reads a bundle's answer across a real service binding on workerd (docs/rules.md
// R-BODY-3): the length a bundle declares is held as a cap, read in one native step (contract/body.ts readClaimed),
// refused one byte past it and never read far past it; an honest answer of any size and shape, one that arrives in
// pieces, and one shorter than it said all read as they are. The bundle here is a stand-in whose answers lie or not.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module without types
import { buildWorker, startRuntime } from "../../scripts/stack.mjs";

const TOKEN = "dev-session-token-0123456789abcdef";
const built = mkdtempSync(join(tmpdir(), "strad-claimed-"));
let runtime: { url: string; stop: () => Promise<void> };

/**
 * The stand-in bundle. Its tool's text names the answer: `exact:N` an honest answer whose text is N characters
 * (two bytes each, so multi-byte characters meet every cut); `over:D:E` a body E bytes longer than the D it
 * declares; `short:K` a declared length K bytes longer than the body; `pieces:N` an honest answer sent 7 bytes at a
 * time, each piece after a timer; `flood` 4 MiB declared as 100 bytes; `pulled` how many 64 KiB chunks the last
 * flood was asked for.
 */
const STANDIN = `
const encoder = new TextEncoder();
let pulled = 0;
const answer = (text) => encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text }], resultType: "complete" } }));
const streamOf = (bytes, size, delay) => {
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      if (at >= bytes.length) return controller.close();
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
};
const json = (body, length) => new Response(body, { headers: { "content-type": "application/json", "content-length": String(length) } });
export default {
  async fetch(request) {
    const call = await request.json();
    const [mode, a, b] = String(call.params.arguments.text).split(":");
    if (mode === "exact") { const bytes = answer("\\u00e9".repeat(Number(a))); return json(bytes, bytes.length); }
    if (mode === "pieces") { const bytes = answer("\\u00e9".repeat(Number(a))); return json(streamOf(bytes, 7, 2), bytes.length); }
    if (mode === "short") { const bytes = answer("ok"); return json(streamOf(bytes, 64, 0), bytes.length + Number(a)); }
    if (mode === "over") {
      // A valid answer padded with spaces to D + E bytes: what is refused is the length, never the shape.
      const head = answer("ok");
      const bytes = new Uint8Array(Number(a) + Number(b)).fill(0x20);
      bytes.set(head);
      return json(streamOf(bytes, 64 * 1024, 0), Number(a));
    }
    if (mode === "flood") {
      pulled = 0;
      const head = answer("ok");
      const stream = new ReadableStream({
        pull(controller) {
          if (pulled >= 64) return controller.close();
          pulled++;
          const chunk = new Uint8Array(64 * 1024).fill(0x20);
          if (pulled === 1) chunk.set(head);
          controller.enqueue(chunk);
        },
      });
      return json(stream, 100);
    }
    if (mode === "pulled") { const bytes = answer(String(pulled)); return json(bytes, bytes.length); }
    return new Response("unknown mode", { status: 400 });
  },
};
`;

beforeAll(async () => {
  const gateway = buildWorker("wrangler.toml", { into: built });
  // Every bundle the gateway binds is the stand-in, with the props the gateway gives its binding.
  const serviceBindings = Object.fromEntries(Object.entries(gateway.serviceBindings as Record<string, object>).map(([name, binding]) => [name, { ...binding, name: "standin" }]));
  runtime = await startRuntime([
    { ...gateway, serviceBindings },
    { name: "standin", modules: true, script: STANDIN, compatibilityDate: gateway.compatibilityDate },
  ]);
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(built, { recursive: true, force: true });
});

/** One 2026-07-28 echo call through the gateway; its JSON-RPC answer. */
async function call(text: string): Promise<{ result?: { content: { text: string }[] }; error?: { message: string } }> {
  const response = await fetch(`${runtime.url}/mcp?servers=echo`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
      "accept-encoding": "identity",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name: "echo",
        arguments: { text },
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "test", version: "0" } },
      },
    }),
  });
  expect(response.status).toBe(200);
  return response.json();
}

const TOO_LARGE = 'server "echo" gave an unusable answer: the answer is too large';
const textOf = (answer: Awaited<ReturnType<typeof call>>) => answer.result?.content[0]?.text;

describe("a bundle's answer across a service binding, held to the length it declares (R-BODY-3)", () => {
  it("reads honest answers of every size whole, multi-byte characters included", async () => {
    for (const n of [0, 1, 2, 63, 64, 4095, 32_768, 300_000]) expect(textOf(await call(`exact:${n}`)), `exact:${n}`).toBe("\u00e9".repeat(n));
  });

  it("reads an answer that comes in 7-byte pieces, each after a timer, as one", async () => {
    for (const n of [0, 5, 200]) expect(textOf(await call(`pieces:${n}`)), `pieces:${n}`).toBe("\u00e9".repeat(n));
  });

  it("takes an answer shorter than it declared as what it is", async () => {
    for (const k of [1, 1000]) expect(textOf(await call(`short:${k}`)), `short:${k}`).toBe("ok");
  });

  it("refuses an answer one byte past its declared length, and one far past it, at every declared size", async () => {
    for (const declared of [200, 65_535, 65_536, 65_537, 1_000_000]) {
      for (const excess of [1, 2, 64 * 1024]) expect((await call(`over:${declared}:${excess}`)).error?.message, `over:${declared}:${excess}`).toBe(TOO_LARGE);
      // The same body at its true length is fine: the refusal is the lie, not the size or the padding.
      expect(textOf(await call(`over:${declared}:0`)), `over:${declared}:0`).toBe("ok");
    }
  });

  it("stops a flood declared as 100 bytes after its first chunks, never reading the 4 MiB", async () => {
    expect((await call("flood")).error?.message).toBe(TOO_LARGE);
    const pulled = Number(textOf(await call("pulled")));
    // The first 64 KiB chunk is past the declaration; the stream may have been asked for one or two ahead.
    expect(pulled).toBeGreaterThanOrEqual(1);
    expect(pulled).toBeLessThanOrEqual(3);
  });
});
