// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the pads bundle on every mount its bundle.json lists: the reads and the three writes that never ask answer without a channel, set_document and replace_in_document are its registry of confirmed tools and each refuses without a usable channel before it reads or writes; and its writes leave only through the gate.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import manifest from "../../../bundles/pads/bundle.json";
import handler from "../../../bundles/pads/pads.app";
import { CONFIRMED_TOOLS, padsServer } from "../../../bundles/pads/pads.tools";
import { bundleContract } from "../kit/contract";

const mounts = manifest.mounts.map((path) => path.slice(1));

bundleContract({
  bundle: "pads",
  handler,
  factory: padsServer,
  mounts,
  registry: CONFIRMED_TOOLS,
  env: { RUSTPAD_URL: "http://127.0.0.1:9" },
  allowProperties: { two_call_token: "the two-call token this server handed out on the call's first try: this server's own, not a credential of the caller's" },
  tools: {
    get_document: { asks: "never", args: { pad_id: "abc123" } },
    get_server_stats: { asks: "never", args: {} },
    create_document: { asks: "never", args: { content: "hello" } },
    append_to_document: { asks: "never", args: { pad_id: "abc123", text: "more" } },
    set_language: { asks: "never", args: { pad_id: "abc123", language: "markdown" } },
    set_document: { asks: "when", args: { pad_id: "abc123", content: "new" } },
    replace_in_document: { asks: "when", args: { pad_id: "abc123", search: "a", replace: "b", replace_all: true } },
  },
});

describe("the pads bundle's declarations", () => {
  it("confirms set_document and replace_in_document, and nothing else", () => {
    expect([...CONFIRMED_TOOLS].sort()).toEqual(["replace_in_document", "set_document"]);
  });

  it("reaches Rustpad's socket only through the gate: the tools make no fetch, and each change leaves through the door the gate opens", () => {
    const tools = readFileSync(new URL("../../../bundles/pads/pads.tools.ts", import.meta.url), "utf8");
    expect(tools).not.toMatch(/(^|[^.\w])fetch\s*\(/m);
    expect(tools).not.toMatch(/\.send\(/);
    // The client's HTTP reads and the session together: every frame a pad's socket is sent comes from one of them.
    const client = ["client", "session"].map((m) => readFileSync(new URL(`../../../bundles/pads/pads.${m}.ts`, import.meta.url), "utf8")).join("\n");
    // The two frames that change a pad are sent from one place each, reached only from the door handed to the gate.
    expect(client.match(/this\.send\(\{ Edit:/g)).toHaveLength(1);
    expect(client.match(/this\.send\(\{ SetLanguage:/g)).toHaveLength(1);
    expect(client.match(/this\.sendEdit\(/g)).toHaveLength(1);
    expect(client.match(/this\.sendLanguage\(/g)).toHaveLength(1);
    expect(client).toMatch(/const door = async \(\): Promise<Response> => \{\s*try \{\s*ack = await this\.sendEdit\(op, at\);/);
    expect(client).toMatch(/const door = async \(\): Promise<Response> => \{\s*try \{\s*await this\.sendLanguage\(language\);/);
    expect(client.match(/await write\(`rustpad:\/\/\$\{this\.pad\}\/(edit|language)`, \{ method: "POST" \}, \{ \.\.\.options, words: PAD_WORDS, fetch: door \}\)/g)).toHaveLength(2);
    // The only other frame it sends says who it is (the sync barrier).
    expect(client.match(/this\.send\(\{/g)).toHaveLength(3);
  });
});
