// The pads tools in Node against the Rustpad fake (test/fakes/rustpad/), the bundle's handler driven as the gateway
// drives it: reads that create nothing, the three tools that never ask, set_document asking only on a non-empty pad,
// replace_in_document asking only past one occurrence with the count measured in the open session and the approval
// bound to pad, pair and count, prompts that never carry a pad's content, edits merged by Rustpad over a concurrent
// one, and pad ids checked before anything is sent.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CALLER_VALUES_HEADING } from "../../../bundles/kit/prompt";
import handler from "../../../bundles/pads/pads.app";
import { callBundle, listBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { ask, CALL, editsTo, fakeRegistry, freshPad, otherEdit, padText, seedPad, useRustpad } from "./helpers";

const rustpad = useRustpad();
let approvals: HostileServer;
beforeAll(async () => {
  approvals = await new HostileServer().start();
});
afterAll(async () => {
  await approvals.stop();
});

const ACCEPT = { body: { action: "accept", content: { confirm: true } } };
const DECLINE = { body: { action: "decline", content: null } };

let routes = 0;
/** An approval address that must never be asked: a tool that acts unasked still gets a channel on a pads slug. */
function unused(): { url: string; prompts: () => string[] } {
  return approval({ body: { action: "decline", content: null } });
}

/** A route on the stand-in approval service whose first poll runs `during` (the person deciding), then answers. */
function approval(answer: { body: unknown }, during?: () => Promise<void>): { url: string; prompts: () => string[] } {
  const name = `r${++routes}`;
  const url = approvals.route(name, {
    poll: async () => {
      await during?.();
      return answer;
    },
  });
  return {
    url,
    prompts: () =>
      approvals
        .requestsTo(name)
        .filter((r) => r.method === "POST")
        .map((r) => (JSON.parse(r.body) as { message: string }).message),
  };
}

function envWith(registry = fakeRegistry()) {
  registry.live(CALL.scope, CALL.key);
  return { RUSTPAD_URL: rustpad.fake().url, CALLS: registry.ns, STRAD_POLL_INTERVAL_MS: "20" };
}

async function call(name: string, args: Record<string, unknown>, channel?: unknown, env: Record<string, unknown> = envWith(), mount = "pads") {
  return callBundle(handler, { mount, name, args, channel, env });
}

describe("reads", () => {
  it("get_document reads a pad's text over Rustpad's text endpoint, and creates no pad it reads", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "héllo 🌍 world");
    const read = await call("get_document", { pad_id: pad });
    expect(JSON.parse(read.text)).toEqual({ pad_id: pad, characters: 13, text: "héllo 🌍 world" });
    const absent = freshPad();
    expect(JSON.parse((await call("get_document", { pad_id: absent })).text)).toEqual({ pad_id: absent, characters: 0, text: "" });
    expect(rustpad.fake().pads.has(absent)).toBe(false);
  });

  it("get_server_stats answers Rustpad's statistics", async () => {
    const raw = (await call("get_server_stats", {})).text;
    const stats = JSON.parse(raw) as Record<string, unknown>;
    expect(Object.keys(stats).sort()).toEqual(["num_documents", "start_time"]);
    expect(stats.num_documents).toEqual(rustpad.fake().pads.size);
  });
});

describe("the tools that never ask", () => {
  it("create_document makes a new pad with a fresh six-character id, its text and language, without a channel", async () => {
    const made = await call("create_document", { content: "first line\n", language: "markdown" });
    expect(made.isError).toBe(false);
    const { pad_id, characters, language } = JSON.parse(made.text) as { pad_id: string; characters: number; language: string };
    expect(pad_id).toMatch(/^[A-Za-z0-9]{6}$/);
    expect({ characters, language }).toEqual({ characters: 11, language: "markdown" });
    expect(rustpad.fake().pads.get(pad_id)).toMatchObject({ text: "first line\n", language: "markdown" });
  });

  it("append_to_document adds at the end, and set_language sets the language, each through one edit", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "abc");
    expect((await call("append_to_document", { pad_id: pad, text: "déf" })).text).toBe(`Appended 3 characters to pad "${pad}"; it now holds 6 characters.`);
    expect((await call("set_language", { pad_id: pad, language: "python" })).text).toBe(`Pad "${pad}" is now in python.`);
    expect(rustpad.fake().pads.get(pad)).toMatchObject({ text: "abcdéf", language: "python" });
    expect(editsTo(rustpad.fake(), pad, "edit").map((e) => e.operation)).toEqual([[3, "déf"]]);
    expect(editsTo(rustpad.fake(), pad, "language").map((e) => e.language)).toEqual(["python"]);
  });
});

describe("set_document", () => {
  it("acts unasked on an empty pad: an empty pad has nothing to lose", async () => {
    const pad = freshPad();
    const asked = unused();
    const answer = await call("set_document", { pad_id: pad, content: "new text" }, ask(asked.url));
    expect(answer.text).toBe(`Pad "${pad}" now holds the new text: 8 characters (it held 0 characters).`);
    expect(padText(rustpad.fake(), pad)).toBe("new text");
    expect(asked.prompts()).toEqual([]);
  });

  it("asks on a non-empty pad, showing its id and character counts and never its content; a decline leaves it unchanged", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "SECRET-PAD-CONTENT 12345");
    const asked = approval(DECLINE);
    const answer = await call("set_document", { pad_id: pad, content: "replacement" }, ask(asked.url));
    expect(answer.text).toMatch(/^Not done: the person declined/);
    expect(padText(rustpad.fake(), pad)).toBe("SECRET-PAD-CONTENT 12345");
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
    expect(asked.prompts()).toEqual([
      [
        `pads: This will replace the whole of pad "${pad}": 24 characters now, 11 characters after.`,
        "",
        "What is replaced cannot be restored. The pad's content is not shown here: pads are world-writable.",
        "",
        CALLER_VALUES_HEADING,
        `  Pad: ${pad}`,
      ].join("\n"),
    ]);
  });

  it("replaces the whole pad once the person accepts", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "old 🌍 text");
    const answer = await call("set_document", { pad_id: pad, content: "brand new" }, ask(approval(ACCEPT).url));
    expect(answer.text).toBe(`Pad "${pad}" now holds the new text: 9 characters (it held 10 characters).`);
    expect(padText(rustpad.fake(), pad)).toBe("brand new");
    expect(editsTo(rustpad.fake(), pad, "edit").map((e) => e.operation)).toEqual([["brand new", -10]]);
  });
});

describe("replace_in_document", () => {
  it("acts unasked when it changes one occurrence: one match, or the first of several without replace_all", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "a cat, a hat");
    const asked = unused();
    expect((await call("replace_in_document", { pad_id: pad, search: "cat", replace: "dog", replace_all: true }, ask(asked.url))).text).toBe(
      `Replaced 1 occurrence in pad "${pad}"; it now holds 12 characters.`,
    );
    expect((await call("replace_in_document", { pad_id: pad, search: "a ", replace: "the " }, ask(asked.url))).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds 14 characters.`);
    expect(padText(rustpad.fake(), pad)).toBe("the dog, a hat");
    expect(asked.prompts()).toEqual([]);
  });

  it("asks for three, showing the count and the search/replace pair, never the content, and replaces all three on accept", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const asked = approval(ACCEPT);
    const answer = await call("replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, ask(asked.url));
    expect(answer.text).toBe(`Replaced 3 occurrences in pad "${pad}"; it now holds 6 characters.`);
    expect(padText(rustpad.fake(), pad)).toBe("bznznz");
    expect(asked.prompts()).toEqual([
      [
        `pads: This will replace 3 occurrences in pad "${pad}".`,
        "",
        "What is replaced cannot be restored, and a search string that is shorter than",
        "intended matches in places nobody looked at.",
        "The pad holds 6 characters now and will hold 6 characters after.",
        "",
        CALLER_VALUES_HEADING,
        `  Pad: ${pad}`,
        "  Search: a",
        "  Replace with: z",
      ].join("\n"),
    ]);
  });

  it("does nothing when another client adds a fourth occurrence while the person decides, and says the count changed", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const asked = approval(ACCEPT, () => otherEdit(rustpad.fake(), pad, { append: " and a" }));
    const answer = await call("replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, ask(asked.url));
    expect(answer.text).toBe(
      `Not done: the target changed after it was approved (approved: 3 occurrences in pad "${pad}"; now: 5 occurrences in pad "${pad}"), so the approval does not cover it. Nothing was written.`,
    );
    expect(padText(rustpad.fake(), pad)).toBe("banana and a");
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
  });

  it("still acts when another client's edit elsewhere leaves the count at three", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const asked = approval(ACCEPT, () => otherEdit(rustpad.fake(), pad, { append: "!" }));
    const answer = await call("replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, ask(asked.url));
    expect(answer.text).toBe(`Replaced 3 occurrences in pad "${pad}"; it now holds 7 characters.`);
    expect(padText(rustpad.fake(), pad)).toBe("bznznz!");
  });

  it("replaces exactly the approved occurrences when another edit lands between the send and Rustpad's apply: Rustpad merges it, and the answer says so", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    await otherEdit(rustpad.fake(), pad, { operation: ["a", 6], when: "before-next-edit" });
    const answer = await call("replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, ask(approval(ACCEPT).url));
    expect(answer.text).toBe(`Replaced 3 occurrences in pad "${pad}"; it now holds 7 characters. 1 edit by others landed first, and Rustpad merged this one after them.`);
    expect(padText(rustpad.fake(), pad)).toBe("abznznz");
    const [mine] = editsTo(rustpad.fake(), pad, "edit");
    expect(mine?.operation).toEqual([1, "z", -1, 1, "z", -1, 1, "z", -1]);
    expect(mine?.applied).toEqual([2, "z", -1, 1, "z", -1, 1, "z", -1]);
  });

  it("says so and changes nothing when nothing matches", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    expect((await call("replace_in_document", { pad_id: pad, search: "x", replace: "y", replace_all: true }, ask(unused().url))).text).toBe(
      `No occurrence of the search text in pad "${pad}": nothing was changed.`,
    );
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
  });
});

describe("the send gate", () => {
  it("changes nothing when the call is no longer live once the yes arrives: the gate's claim fails before the edit is sent", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const env = { RUSTPAD_URL: rustpad.fake().url, CALLS: fakeRegistry().ns, STRAD_POLL_INTERVAL_MS: "20" };
    const answer = await call("replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, ask(approval(ACCEPT).url), env);
    expect(answer.text).toBe("Not done: the call is no longer live or was already used for a change; nothing was changed.");
    expect(padText(rustpad.fake(), pad)).toBe("banana");
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
  });
});

describe("pad ids", () => {
  it.each(["abc", "abcdefg", "abc/de", "ab%2Fcd", "../abc", "abcdé1", "abc de"])("refuses the pad id %j before anything is sent", async (pad) => {
    const outbound = vi.fn(async () => new Response(""));
    vi.stubGlobal("fetch", outbound);
    for (const [name, args] of [
      ["get_document", { pad_id: pad }],
      ["append_to_document", { pad_id: pad, text: "x" }],
      ["set_language", { pad_id: pad, language: "rust" }],
      ["set_document", { pad_id: pad, content: "x" }],
      ["replace_in_document", { pad_id: pad, search: "a", replace: "b" }],
    ] as const) {
      const answer = await call(name, args, ask("http://127.0.0.1:9/never/"));
      expect(answer.ok && !answer.isError, name).toBe(false);
    }
    expect(outbound).not.toHaveBeenCalled();
  });
});

describe("the tool list", () => {
  it("lists every tool with all four annotations, as declared", async () => {
    const tools = await listBundle(handler, "pads", envWith());
    expect(Object.fromEntries(tools.map((t) => [t.name, t.annotations]))).toEqual({
      get_document: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      get_server_stats: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      create_document: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      append_to_document: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      set_language: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      set_document: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      replace_in_document: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    });
  });
});
