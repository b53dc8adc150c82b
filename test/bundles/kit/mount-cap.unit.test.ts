// The kit's mount reads at most MAX_BUNDLE_BODY_BYTES of a request: what the gateway forwards at the largest
// cap a slug may set, and its own _meta; one byte more is 413 before anything is parsed (docs/rules.md R-BODY-4).
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import { MAX_BUNDLE_BODY_BYTES, serveBundle } from "../../../bundles/kit/mount";
import { GATEWAY_META_ALLOWANCE_BYTES, MAX_REQUEST_BYTES_CEILING } from "../../../contract/body";

const bundle = serveBundle({
  mounts: {
    "/m": () => {
      const server = new McpServer({ name: "mount-cap", version: "0" });
      server.registerTool("noop", { description: "Does nothing.", annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } }, async () => ({
        content: [],
      }));
      return server;
    },
  },
});

const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;

/** A tools/list body padded to exactly `bytes`. */
function body(bytes: number): string {
  const shell = (pad: string) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad } });
  return shell("x".repeat(bytes - shell("").length));
}

async function post(text: string): Promise<number> {
  const request = new Request("https://bundle.internal/m", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: text,
  });
  const response = await (bundle.fetch as NonNullable<typeof bundle.fetch>)(request as never, {}, ctx);
  await response.body?.cancel();
  return response.status;
}

describe("the kit's request cap", () => {
  it("is what the gateway forwards at the largest slug cap: refuses one byte more with 413, takes the cap itself", async () => {
    expect(MAX_BUNDLE_BODY_BYTES).toBe(MAX_REQUEST_BYTES_CEILING + GATEWAY_META_ALLOWANCE_BYTES);
    expect(await post(body(MAX_BUNDLE_BODY_BYTES + 1))).toBe(413);
    expect(await post(body(MAX_BUNDLE_BODY_BYTES))).not.toBe(413);
  });
});
