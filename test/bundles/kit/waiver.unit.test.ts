// Covers the waiver's announcement (bundles/kit/guard.ts, confirm.ts waivedLine; docs/rules.md R-CHAN-14): on pads and on echo's demo tool, every guarded call a slug's skipConfirmations let through says in its answer that nobody was asked, written or not; a call that would not have asked says nothing of the kind.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import echo from "../../../bundles/echo/echo.app";
import { waivedLine } from "../../../bundles/kit/confirm";
import pads from "../../../bundles/pads/pads.app";
import { CALL, editsTo, fakeRegistry, freshPad, padText, seedPad, useRustpad } from "../pads/helpers";
import { callBundle } from "./helpers/bundle";
import { startSink } from "./helpers/hostile-server";

const rustpad = useRustpad();
let recorder: Awaited<ReturnType<typeof startSink>>;
beforeAll(async () => {
  recorder = await startSink();
});
afterAll(async () => {
  await recorder.stop();
});
beforeEach(() => {
  recorder.requests.length = 0;
});

/** The waiver as the gateway sends it for a skipConfirmations slug. */
const waiver = (slug: string) => ({ slug, skip: true, ttlMs: 5_000, call: CALL, caller: "dev-session" });

/** The env of a call the gateway holds live (or not), with a registry of its own. */
function envOf(live = true): Record<string, unknown> {
  const registry = fakeRegistry();
  if (live) registry.live(CALL.scope, CALL.key);
  return { RUSTPAD_URL: rustpad.fake().url, RECORDER_URL: recorder.base, CALLS: registry.ns };
}

const texts = (result: Record<string, unknown>) => ((result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text);

describe("a waived guarded call says nobody was asked", () => {
  it("pads: set_document on a non-empty pad replaces it, and its answer ends with the line", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "text nobody was asked about");
    const answer = await callBundle(pads, { mount: "pads", name: "set_document", args: { pad_id: pad, content: "new" }, channel: waiver("pads-agent"), env: envOf() });
    expect(answer.isError).toBe(false);
    expect(texts(answer.result)).toEqual([`Pad "${pad}" now holds the new text: 3 characters (it held 27 characters).`, waivedLine("pads-agent")]);
    expect(padText(rustpad.fake(), pad)).toBe("new");
  });

  it("pads: a replace of three occurrences says so too, and one that writes nothing (the call is no longer live) still says nobody was asked", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const done = await callBundle(pads, {
      mount: "pads",
      name: "replace_in_document",
      args: { pad_id: pad, search: "a", replace: "o", replace_all: true },
      channel: waiver("pads-agent"),
      env: envOf(),
    });
    expect(texts(done.result)).toEqual([`Replaced 3 occurrences in pad "${pad}"; it now holds 6 characters.`, waivedLine("pads-agent")]);
    const other = freshPad();
    await seedPad(rustpad.fake(), other, "banana");
    const dropped = await callBundle(pads, { mount: "pads", name: "set_document", args: { pad_id: other, content: "x" }, channel: waiver("pads-agent"), env: envOf(false) });
    expect(dropped.isError).toBe(true);
    expect(texts(dropped.result)).toEqual(["Not done: the call is no longer live or was already used for a change; nothing was changed.", waivedLine("pads-agent")]);
    expect(editsTo(rustpad.fake(), other, "edit")).toEqual([]);
  });

  it("pads: an edit that would not have asked anyone (an empty pad set, one small replace) carries no such line", async () => {
    const pad = freshPad();
    const set = await callBundle(pads, { mount: "pads", name: "set_document", args: { pad_id: pad, content: "a cat, a hat, a mat" }, channel: waiver("pads-agent"), env: envOf() });
    expect(texts(set.result)).toEqual([`Pad "${pad}" now holds the new text: 19 characters (it held 0 characters).`]);
    const replace = await callBundle(pads, { mount: "pads", name: "replace_in_document", args: { pad_id: pad, search: "cat", replace: "dog" }, channel: waiver("pads-agent"), env: envOf() });
    expect(texts(replace.result)).toEqual([`Replaced 1 occurrence in pad "${pad}"; it now holds 19 characters.`]);
  });

  it("echo: demo_write records the note, and its answer ends with the line naming the slug", async () => {
    const answer = await callBundle(echo, { mount: "echo-waived", name: "demo_write", args: { note: "hello" }, channel: waiver("echo-waived"), env: envOf() });
    expect(texts(answer.result)).toEqual(["Recorded.", waivedLine("echo-waived")]);
    expect(recorder.requests.map((r) => JSON.parse(r.body))).toEqual([{ kind: "demo_write", note: "hello", mount: "echo-waived" }]);
  });

  it("the line names the slug and the setting, and says nobody was asked", () => {
    expect(waivedLine("agent-own")).toBe('Nobody was asked: the roster\'s skipConfirmations on slug "agent-own" waived the question this call would have put to a person.');
  });
});
