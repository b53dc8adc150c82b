// Covers the pads bundle on the kit's lane (bundles/kit/lane.ts): every call, read or guarded, valid or not, is
// answered byte for byte as the SDK's path answers it, the two reads are served without an SDK server, and every
// tool is built once per isolate.
import type { McpServer } from "@modelcontextprotocol/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { serveBundle } from "../../../bundles/kit/mount";
import manifest from "../../../bundles/pads/bundle.json";
import { padsServer } from "../../../bundles/pads/pads.tools";
// @ts-expect-error: plain ESM helper without types
import { socketFetch } from "../../fakes/rustpad/node-socket.mjs";
// @ts-expect-error: plain ESM helper without types
import { startRustpadFake } from "../../fakes/rustpad/rustpad.fake.mjs";
import { answer, both, call, list, onGatedHop, type Raw } from "../kit/helpers/lane";
import { editsTo, freshPad, type RustpadFake, seedPad } from "./helpers";

/** Where /pads-token's Rustpad is a closed loopback port: its reads and sessions fail at once, the same way on both paths. */
const CLOSED = "http://127.0.0.1:9";
const TOOLS = ["get_document", "get_server_stats", "create_document", "append_to_document", "set_language", "set_document", "replace_in_document"];

let fake: RustpadFake;
const unexpected: string[] = [];
beforeAll(async () => {
  fake = (await startRustpadFake({ port: 0 })) as RustpadFake;
  // Rustpad's sockets open as workerd opens them; a request to any origin but the fake's and the closed port fails.
  const sockets = socketFetch(globalThis.fetch) as typeof fetch;
  vi.stubGlobal("fetch", (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== new URL(fake.url).origin && url.origin !== CLOSED) {
      unexpected.push(url.href);
      return Promise.reject(new TypeError("unexpected outbound request"));
    }
    return sockets(input, init);
  });
});
afterAll(async () => {
  vi.unstubAllGlobals();
  await fake?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
  expect(unexpected, "requests to an origin the test did not name").toEqual([]);
});

describe("the pads bundle on the lane", () => {
  const lanes = {
    on: serveBundle({ manifest, server: padsServer, elicitationSwitch: { bundle: "pads" } }),
    off: serveBundle({ manifest, server: padsServer, elicitationSwitch: { bundle: "pads" } }, { fastLane: false }),
  };
  // One env object for every request, so the lane keeps the table it learnt: /pads reads the Rustpad fake, and
  // /pads-token its own server, a closed port.
  const env: Record<string, unknown> = { PADS_TOKEN__RUSTPAD_URL: CLOSED };
  // A text whose answer JSON must escape: quotes, a line break, a character outside the BMP and U+2028.
  const TEXT = 'héllo 👋 world\n"quoted" and <tagged>\u2028';
  const pad = freshPad();
  const unknown = freshPad();
  beforeAll(async () => {
    env.RUSTPAD_URL = fake.url;
    await seedPad(fake, pad, TEXT, "markdown");
  });
  const CALLS: Raw[] = [
    call("/pads", "get_document", { pad_id: pad }),
    call("/pads", "get_document", { pad_id: "bad" }),
    call("/pads", "get_document", { pad_id: unknown }),
    call("/pads", "get_server_stats", {}),
    call("/pads", "get_document", {}),
    call("/pads-token", "get_document", { pad_id: pad }),
    call("/pads-token", "get_server_stats", {}),
    call("/pads-token", "create_document", { content: "x" }),
    call("/pads-token", "append_to_document", { pad_id: pad, text: "x" }),
    call("/pads-token", "set_language", { pad_id: pad, language: "python" }),
    call("/pads-token", "set_document", { pad_id: pad, content: "x" }),
    call("/pads-token", "replace_in_document", { pad_id: pad, search: "h", replace: "j" }),
    call("/pads", "nope", {}),
  ];

  it("answers every call as the SDK does, and takes the reads with good arguments without an SDK server", async () => {
    for (const path of ["/pads", "/pads-token"]) await answer(lanes.on, list(path), env);
    const taken: string[] = [];
    const texts: string[] = [];
    for (const raw of CALLS) {
      const { on, off } = await both(raw, lanes, env);
      expect(on.text, raw.label).toBe(off.text);
      texts.push(on.text);
      if (on.servers === 0) taken.push(raw.label);
    }
    // Five reads with good arguments; a refused argument, the guarded tools and an unknown name are the SDK's.
    expect(taken).toEqual(CALLS.filter((_, i) => [0, 2, 3, 5, 6].includes(i)).map((r) => r.label));
    // What the lane answered is the bundle's: the pad's text, an empty pad, the server's statistics, a failure's reason.
    expect(texts[0]).toContain(`\\"characters\\": ${[...TEXT].length}`);
    expect(texts[2]).toContain('\\"characters\\": 0');
    expect(texts[3]).toContain("num_documents");
    expect(texts[5]).toContain("Not done: ");
    expect(texts[6]).toContain("Not done: ");
    // The tools that never ask failed on the closed port; the two that may ask refused without a channel, unread.
    for (const i of [7, 8, 9]) expect(texts[i], CALLS[i]?.label).toContain("Not done: ");
    for (const i of [10, 11]) expect(texts[i], CALLS[i]?.label).toContain("Refused: no approval channel reached this call");
    expect(editsTo(fake, pad)).toEqual([]);
  });

  it("takes the reads as a gated mount's hop sends them (the gateway's progress token and channel), answering as the SDK does", async () => {
    for (const path of ["/pads", "/pads-token"]) await answer(lanes.on, list(path), env);
    const reads = [0, 2, 3, 5, 6].map((i) => onGatedHop(CALLS[i] as Raw));
    const guarded = onGatedHop(CALLS[10] as Raw, { slug: "pads-token", refused: "no approval URL", caller: "dev-session" });
    for (const raw of [...reads, guarded]) {
      const { on, off } = await both(raw, lanes, env);
      expect(on.text, raw.label).toBe(off.text);
      expect(on.servers, raw.label).toBe(raw === guarded ? 1 : 0);
    }
    expect((await both(reads[0] as Raw, lanes, env)).on.text).toContain(`\\"characters\\": ${[...TEXT].length}`);
    expect((await both(guarded, lanes, env)).on.text).toContain("Refused: ");
    expect(editsTo(fake, pad)).toEqual([]);
  });

  it("builds each tool's schema once per isolate: two requests' servers hold the same schema objects", () => {
    const schemaOf = (server: McpServer, name: string) => (server as unknown as { _registeredTools: Record<string, { inputSchema: unknown }> })._registeredTools[name]?.inputSchema;
    const [a, b] = [padsServer("pads"), padsServer("pads")];
    for (const name of TOOLS) {
      expect(schemaOf(a, name), name).toBeDefined();
      expect(schemaOf(a, name), name).toBe(schemaOf(b, name));
    }
  });
});
