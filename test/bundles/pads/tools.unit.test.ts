// The pads tools in Node against the Rustpad fake (test/fakes/rustpad/), the bundle's handler driven as the gateway
// drives it: reads that create nothing, the three tools that never ask, set_document asking only on a non-empty pad,
// replace_in_document asking past one occurrence with the count measured in the open session and the approval
// bound to pad, pair and count, set_document bound to the pad's text digest, every edit asking by what it removes
// (each threshold at and one past it), prompts that never carry a pad's content, edits merged by Rustpad over a
// concurrent one, and pad ids checked before anything is sent.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { WriteOptions } from "../../../bundles/kit/gate";
import { CALLER_VALUES_HEADING } from "../../../bundles/kit/prompt";
import handler from "../../../bundles/pads/pads.app";
import { padLeases } from "../../../bundles/pads/pads.lease";
import { OpSeq } from "../../../bundles/pads/pads.ot";
import { PadSession, setOp } from "../../../bundles/pads/pads.session";
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

  it("does not replace a pad whose text became other text of the same length while the person decided, and says so", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "abcdef");
    // Another client rewrites all six characters: the length stays, the text does not.
    const asked = approval(ACCEPT, () => otherEdit(rustpad.fake(), pad, { operation: ["uvwxyz", -6] }));
    const answer = await call("set_document", { pad_id: pad, content: "brand new" }, ask(asked.url));
    const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);
    expect(answer.text).toBe(
      `Not done: the target changed after it was approved (approved: pad "${pad}" holds 6 characters, text sha-256 ${digest("abcdef")}…; now: pad "${pad}" holds 6 characters, text sha-256 ${digest("uvwxyz")}…), so the approval does not cover it. Nothing was written.`,
    );
    expect(padText(rustpad.fake(), pad)).toBe("uvwxyz");
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
    expect(asked.prompts()).toHaveLength(1);
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
    // Long enough that one word is under the 20% an edit may remove unasked (R-PAD-13).
    await seedPad(rustpad.fake(), pad, "a cat, a hat, a mat");
    const asked = unused();
    expect((await call("replace_in_document", { pad_id: pad, search: "cat", replace: "dog", replace_all: true }, ask(asked.url))).text).toBe(
      `Replaced 1 occurrence in pad "${pad}"; it now holds 19 characters.`,
    );
    expect((await call("replace_in_document", { pad_id: pad, search: "a ", replace: "the " }, ask(asked.url))).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds 21 characters.`);
    expect(padText(rustpad.fake(), pad)).toBe("the dog, a hat, a mat");
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
        "Asked because it removes 3 of the pad's 6 characters, more than the 20% an edit may remove unasked.",
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

describe("what an edit loses, whichever tool makes it (R-PAD-13)", () => {
  /** A pad of `length` characters that starts with its only run of "A"s, `run` long. */
  const padWith = (run: number, length: number) => "A".repeat(run) + "e".repeat(length - run);

  it("a one-occurrence replace that removes 200 characters is done unasked; one that removes 201 asks, saying why", async () => {
    const quiet = freshPad();
    await seedPad(rustpad.fake(), quiet, padWith(200, 10_000));
    const none = unused();
    expect((await call("replace_in_document", { pad_id: quiet, search: "A".repeat(200), replace: "" }, ask(none.url))).text).toBe(
      `Replaced 1 occurrence in pad "${quiet}"; it now holds 9800 characters.`,
    );
    expect(none.prompts()).toEqual([]);

    const loud = freshPad();
    await seedPad(rustpad.fake(), loud, padWith(201, 10_000));
    const asked = approval(DECLINE);
    const answer = await call("replace_in_document", { pad_id: loud, search: "A".repeat(201), replace: "" }, ask(asked.url));
    expect(answer.text).toMatch(/^Not done: the person declined/);
    expect(asked.prompts()[0]).toContain(`pads: This will replace 1 occurrence in pad "${loud}".`);
    expect(asked.prompts()[0]).toContain("Asked because it removes 201 characters, more than the 200 an edit may remove unasked.");
    expect(padText(rustpad.fake(), loud)).toBe(padWith(201, 10_000));
  });

  it("overwriting counts as losing: 100 of 500 characters replaced by 100 others is unasked, 101 asks though the length stays", async () => {
    const quiet = freshPad();
    await seedPad(rustpad.fake(), quiet, padWith(100, 500));
    const none = unused();
    expect((await call("replace_in_document", { pad_id: quiet, search: "A".repeat(100), replace: "Z".repeat(100) }, ask(none.url))).text).toBe(
      `Replaced 1 occurrence in pad "${quiet}"; it now holds 500 characters.`,
    );
    expect(none.prompts()).toEqual([]);

    const loud = freshPad();
    await seedPad(rustpad.fake(), loud, padWith(101, 500));
    const asked = approval(DECLINE);
    expect((await call("replace_in_document", { pad_id: loud, search: "A".repeat(101), replace: "Z".repeat(101) }, ask(asked.url))).text).toMatch(/^Not done: the person declined/);
    expect(asked.prompts()[0]).toContain("Asked because it removes 101 of the pad's 500 characters, more than the 20% an edit may remove unasked.");
    expect(padText(rustpad.fake(), loud)).toBe(padWith(101, 500));
  });

  it("one-occurrence replaces walk a pad down to exactly half of what it held unasked, and the next character asks", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, `${"A".repeat(200)}${"B".repeat(160)}${"C".repeat(128)}${"D".repeat(12)}${"E".repeat(500)}`);
    const none = unused();
    // Each removes the most one edit may (200 characters, or 20% of the pad), and none asks on its own.
    for (const [run, left] of [
      ["A".repeat(200), 800],
      ["B".repeat(160), 640],
      ["C".repeat(128), 512],
      ["D".repeat(12), 500],
    ] as const) {
      expect((await call("replace_in_document", { pad_id: pad, search: run, replace: "" }, ask(none.url))).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds ${left} characters.`);
    }
    expect(none.prompts()).toEqual([]);
    const asked = approval(DECLINE);
    expect((await call("replace_in_document", { pad_id: pad, search: "E", replace: "" }, ask(asked.url))).text).toMatch(/^Not done: the person declined/);
    expect(asked.prompts()[0]).toContain("Asked because it would leave 499 characters, under 50% of the 1000 the pad held since its last large edit.");
    expect(padText(rustpad.fake(), pad)).toBe("E".repeat(500));
  });

  it("one-occurrence overwrites, the length never dropping, replace at most half of a pad unasked: the one past half asks", async () => {
    const pad = freshPad();
    const runs = ["A", "B", "C", "D", "E"].map((c) => c.repeat(200));
    await seedPad(rustpad.fake(), pad, runs.join(""));
    const none = unused();
    for (const run of runs.slice(0, 2)) {
      expect((await call("replace_in_document", { pad_id: pad, search: run, replace: "x".repeat(200) }, ask(none.url))).text).toBe(
        `Replaced 1 occurrence in pad "${pad}"; it now holds 1000 characters.`,
      );
    }
    // 100 more is exactly half of the 1,000 the pad held: still unasked.
    expect((await call("replace_in_document", { pad_id: pad, search: "C".repeat(100), replace: "y".repeat(100) }, ask(none.url))).text).toBe(
      `Replaced 1 occurrence in pad "${pad}"; it now holds 1000 characters.`,
    );
    expect(none.prompts()).toEqual([]);
    const asked = approval(DECLINE);
    expect((await call("replace_in_document", { pad_id: pad, search: "C", replace: "z" }, ask(asked.url))).text).toMatch(/^Not done: the person declined/);
    expect(asked.prompts()[0]).toContain("Asked because with the edits since the pad's last large edit it would have removed 501 characters, more than 50% of the 1000 the pad held.");
    expect(padText(rustpad.fake(), pad)).toBe(`${"x".repeat(400)}${"y".repeat(100)}${"C".repeat(100)}${runs[3]}${runs[4]}`);
  });

  it("measures from what the pad held after the last edit a person approved that removed more than 200 characters", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, `${"A".repeat(300)}${"E".repeat(300)}`);
    const asked = approval(ACCEPT);
    expect((await call("replace_in_document", { pad_id: pad, search: "A".repeat(300), replace: "" }, ask(asked.url))).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds 300 characters.`);
    expect(asked.prompts()).toHaveLength(1);
    // 240 is under half of the 600 it held before, but not of the 300 it held once the person said yes.
    const none = unused();
    expect((await call("replace_in_document", { pad_id: pad, search: "E".repeat(60), replace: "" }, ask(none.url))).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds 240 characters.`);
    expect(none.prompts()).toEqual([]);
  });

  it("set_document asks even on a one-character pad: replacing the whole text loses all of it", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "x");
    const asked = approval(DECLINE);
    expect((await call("set_document", { pad_id: pad, content: "y" }, ask(asked.url))).text).toMatch(/^Not done: the person declined/);
    expect(asked.prompts()).toHaveLength(1);
    expect(padText(rustpad.fake(), pad)).toBe("x");
  });

  it("a session never sends an edit that needs a yes on a write that does not need one, whatever tool built it", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "x".repeat(300));
    const session = await PadSession.open(new URL(rustpad.fake().url), pad, new AbortController().signal, "strad", padLeases({ CALLS: fakeRegistry().ns }, rustpad.fake().url));
    try {
      // A stand-in for the gate that opens the door it is handed, so only the session's own check stands in the way.
      const write = vi.fn(async (url: string, init: RequestInit, options: WriteOptions) => (options.fetch as NonNullable<WriteOptions["fetch"]>)(url, init));
      await expect(session.edit(setOp(300, ""), write as never, { needsApproval: false })).rejects.toThrow(
        "the edit needs a person's yes and was not sent: it removes 300 characters, more than the 200 an edit may remove unasked",
      );
      expect(write).not.toHaveBeenCalled();
      // The same session sends a small edit on the same kind of write.
      await session.edit(new OpSeq().delete(1).retain(299), write as never, { needsApproval: false });
      expect(write).toHaveBeenCalledTimes(1);
    } finally {
      session.close();
    }
    expect(padText(rustpad.fake(), pad)).toBe("x".repeat(299));
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
