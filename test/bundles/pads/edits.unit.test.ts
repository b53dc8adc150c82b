// The pads tools edited by the person, against the Rustpad fake: set_document's new text and replace_in_document's replacement ride on the card as free text, what is written is the person's text, a plain accept writes the model's, and an edit past the tool's limits writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import handler from "../../../bundles/pads/pads.app";
import { MAX_PAIR_CHARS } from "../../../bundles/pads/pads.tools";
import { callBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { ask, CALL, fakeRegistry, freshPad, padText, seedPad, useRustpad } from "./helpers";

const rustpad = useRustpad();
let approvals: HostileServer;
beforeAll(async () => {
  approvals = await new HostileServer().start();
});
afterAll(async () => {
  await approvals.stop();
});

let routes = 0;
/** A route that answers an accept with `content`, and what the bundle asked it. */
function approval(content: Record<string, unknown> | null) {
  const name = `p${++routes}`;
  const url = approvals.route(name, { poll: () => ({ body: content === null ? { action: "decline", content: null } : { action: "accept", content: { confirm: true, ...content } } }) });
  const form = () => {
    const post = approvals.requestsTo(name).find((r) => r.method === "POST");
    return (JSON.parse(post?.body ?? "{}") as { requestedSchema?: { properties: Record<string, Record<string, unknown>> } }).requestedSchema?.properties ?? {};
  };
  return { url, form };
}

async function call(name: string, args: Record<string, unknown>, channel: unknown) {
  const registry = fakeRegistry();
  registry.live(CALL.scope, CALL.key);
  return callBundle(handler, { mount: "pads", name, args, channel, env: { RUSTPAD_URL: rustpad.fake().url, CALLS: registry.ns, STRAD_POLL_INTERVAL_MS: "20" } });
}

describe("set_document", () => {
  it("carries the new text on the card, and writes the person's text when they changed it", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "the old text, all of it");
    const asked = approval({ content: "the person's text\nsecond line" });
    const answer = await call("set_document", { pad_id: pad, content: "the model's text" }, ask(asked.url));
    expect(asked.form().content).toMatchObject({ type: "string", title: "New text", default: "the model's text" });
    expect(answer.isError, answer.text).toBe(false);
    expect(padText(rustpad.fake(), pad)).toBe("the person's text\nsecond line");
    expect(answer.text).toBe(
      `Pad "${pad}" now holds the new text: 29 characters (it held 23 characters).\nThe person edited this call before approving it, and what ran is their version, not the one proposed: content is now "the person's text\\nsecond line".`.replace(
        "\n",
        "",
      ),
    );
  });

  it("a plain accept writes the model's text", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "old");
    const asked = approval({});
    const answer = await call("set_document", { pad_id: pad, content: "the model's text" }, ask(asked.url));
    expect(answer.isError, answer.text).toBe(false);
    expect(padText(rustpad.fake(), pad)).toBe("the model's text");
  });

  it("writes nothing when the person's text holds a lone surrogate the tool's schema refuses", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "old");
    const asked = approval({ content: "bad \ud800 text" });
    const answer = await call("set_document", { pad_id: pad, content: "the model's text" }, ask(asked.url));
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the person's answer was refused before anything ran: /);
    expect(padText(rustpad.fake(), pad)).toBe("old");
  });
});

describe("replace_in_document", () => {
  it("carries the replacement on the card, and replaces with the person's text", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "a cat, a cat, a cat");
    const asked = approval({ replace: "dog" });
    const answer = await call("replace_in_document", { pad_id: pad, search: "cat", replace: "bird", replace_all: true }, ask(asked.url));
    expect(Object.keys(asked.form())).toEqual(["replace", "confirm"]);
    expect(asked.form().replace).toMatchObject({ type: "string", title: "Replace with", default: "bird" });
    expect(answer.isError, answer.text).toBe(false);
    expect(padText(rustpad.fake(), pad)).toBe("a dog, a dog, a dog");
    expect(answer.text).toContain('replace is now "dog"');
  });

  it("writes nothing when the replacement would pass the tool's limit, one character past it", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "a cat, a cat");
    const over = approval({ replace: "x".repeat(MAX_PAIR_CHARS + 1) });
    const refused = await call("replace_in_document", { pad_id: pad, search: "cat", replace: "bird", replace_all: true }, ask(over.url));
    expect(refused.isError).toBe(true);
    expect(padText(rustpad.fake(), pad)).toBe("a cat, a cat");
    // At the limit itself the edit is the tool's own kind of call: two occurrences, asked, approved, written.
    const at = approval({ replace: "y".repeat(MAX_PAIR_CHARS) });
    const written = await call("replace_in_document", { pad_id: pad, search: "cat", replace: "bird", replace_all: true }, ask(at.url));
    expect(written.isError, written.text).toBe(false);
    expect(padText(rustpad.fake(), pad)).toBe(`a ${"y".repeat(MAX_PAIR_CHARS)}, a ${"y".repeat(MAX_PAIR_CHARS)}`);
  });
});
