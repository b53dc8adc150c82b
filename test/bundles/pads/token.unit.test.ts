// The two-call token (bundles/kit/token.ts) as the pads bundle takes it, in Node against the Rustpad fake and a
// stand-in for the CallRegistry's token store: the first call acts on nothing and hands out a token saying what it
// proves and which server did not ask; the second call with the same arguments acts once; other arguments, a
// changed count, a reused, expired or forged token act on nothing and say why. ELICITATION=false takes the token
// where the slug allows it and refuses elsewhere; any other value fails every request naming both valid values, and
// the start-up line is written once. Gmail and 1Password never take the token.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import google from "../../../bundles/google/google.app";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import { canonicalJson, TOKEN_PROVES } from "../../../bundles/kit/token";
import onepassword from "../../../bundles/onepassword/onepassword.app";
import handler from "../../../bundles/pads/pads.app";
import { IDS } from "../../fakes/onepassword/seed";
import { callBundle, listBundle } from "../kit/helpers/bundle";
import { ask, CALL, editsTo, fakeRegistry, fallback, freshPad, padText, seedPad, useRustpad } from "./helpers";

const rustpad = useRustpad();
type Registry = ReturnType<typeof fakeRegistry>;

let calls = 0;
/** One tools/call as the gateway makes it: a record of its own, held live while it runs. */
async function call(registry: Registry, name: string, args: Record<string, unknown>, channel: Record<string, unknown> = fallback(), extra: Record<string, unknown> = {}) {
  const ref = { ...(channel.call as typeof CALL), key: `n:${++calls}` };
  registry.live(ref.scope, ref.key);
  const env = { RUSTPAD_URL: rustpad.fake().url, CALLS: registry.ns, ...extra };
  return callBundle(handler, { mount: "pads-token", name, args, channel: { ...channel, call: ref }, env });
}

const TOKEN_LINE = /^[A-Za-z0-9_-]{43}$/m;
function tokenOf(text: string): string {
  const token = TOKEN_LINE.exec(text)?.[0];
  if (token === undefined) throw new Error(`no token in:\n${text}`);
  return token;
}

describe("the two-call token", () => {
  it("acts on nothing on the first call: the answer hands out a token, says exactly what it proves, and names the server that did not ask", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "keep this");
    const registry = fakeRegistry();
    const first = await call(registry, "set_document", { pad_id: pad, content: "replaced" });
    expect(first.isError).toBe(false);
    const token = tokenOf(first.text);
    expect(first.text).toBe(
      [
        "Not done yet: pads-token did not ask a person about this call (no approval address came with this call), so nothing was written.",
        "To go ahead, call set_document again within 5 minutes, with exactly the same arguments and two_call_token set to:",
        token,
        "The token proves the call was made twice with the same arguments, and nothing more: nobody was asked, and nobody approved it.",
        "",
        "What the second call would do:",
        `pads-token: This will replace the whole of pad "${pad}": 9 characters now, 8 characters after.`,
        "",
        "What is replaced cannot be restored. The pad's content is not shown here: pads are world-writable.",
        "",
        "Values below are supplied by the caller, not by this server:",
        `  Pad: ${pad}`,
      ].join("\n"),
    );
    expect(first.text).toContain(TOKEN_PROVES);
    expect(first.text).not.toMatch(/client/i);
    expect(padText(rustpad.fake(), pad)).toBe("keep this");
    expect(registry.minted).toEqual([{ scope: CALL.scope, ttlMs: 5 * 60 * 1000 }]);
  });

  it("acts on the second call with the same arguments and the token, once; the same token again acts on nothing", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const args = { pad_id: pad, search: "a", replace: "o", replace_all: true };
    const token = tokenOf((await call(registry, "replace_in_document", args)).text);
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
    const second = await call(registry, "replace_in_document", { ...args, two_call_token: token });
    expect(second.text).toBe(
      `Replaced 3 occurrences in pad "${pad}"; it now holds 6 characters.Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: pads-token did not ask a person.`,
    );
    expect(padText(rustpad.fake(), pad)).toBe("bonono");
    expect(registry.claims).toEqual([{ scope: CALL.scope, key: expect.stringMatching(/^n:/), won: true }]);
    // Put the text back so the count matches again: a reused token is refused for being used, not for the count.
    await seedPad(rustpad.fake(), pad, "banana");
    const again = await call(registry, "replace_in_document", { ...args, two_call_token: token });
    expect(again.text).toBe("Not done: the two_call_token was already used once: a token acts once; call again without it for a new one. Nothing was written.");
    expect(padText(rustpad.fake(), pad)).toBe("banana");
    expect(editsTo(rustpad.fake(), pad, "edit")).toHaveLength(1);
  });

  it("acts on nothing when the second call's arguments differ from the first's, and says so", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const token = tokenOf((await call(registry, "replace_in_document", { pad_id: pad, search: "an", replace: "o", replace_all: true })).text);
    for (const args of [
      { pad_id: pad, search: "a", replace: "o", replace_all: true },
      { pad_id: pad, search: "an", replace: "0", replace_all: true },
    ]) {
      const answer = await call(registry, "replace_in_document", { ...args, two_call_token: token });
      expect(answer.text).toBe("Not done: the two_call_token was issued for other arguments: a token covers only the exact arguments of the call that got it. Nothing was written.");
    }
    // Another tool with the token: other arguments too.
    expect((await call(registry, "set_document", { pad_id: pad, content: "x", two_call_token: token })).text).toMatch(/^Not done: the two_call_token was issued for other arguments/);
    expect(padText(rustpad.fake(), pad)).toBe("banana");
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
  });

  it("acts on nothing when the count changed between the two calls: the token is bound to the measured count", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const args = { pad_id: pad, search: "a", replace: "o", replace_all: true };
    const token = tokenOf((await call(registry, "replace_in_document", args)).text);
    await seedPad(rustpad.fake(), pad, "banana and a");
    const answer = await call(registry, "replace_in_document", { ...args, two_call_token: token });
    expect(answer.text).toBe(
      `Not done: what this call would act on changed since the two_call_token was issued (now: 5 occurrences in pad "${pad}"), so the token does not cover it; call again without it for a new one. Nothing was written.`,
    );
    expect(padText(rustpad.fake(), pad)).toBe("banana and a");
  });

  it("acts on nothing with an expired token", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const args = { pad_id: pad, content: "new" };
    const token = tokenOf((await call(registry, "set_document", args)).text);
    registry.clock.offset = 5 * 60 * 1000 + 1;
    expect((await call(registry, "set_document", { ...args, two_call_token: token })).text).toBe("Not done: the two_call_token expired; call again without it for a new one. Nothing was written.");
    expect(padText(rustpad.fake(), pad)).toBe("banana");
  });

  it.each([
    ["a token of the right shape nobody issued", "A".repeat(43)],
    ["a token of another shape", "not-a-token"],
    ["a token issued to another caller", "other"],
  ])("acts on nothing with %s", async (_what, quoted) => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const args = { pad_id: pad, content: "new" };
    let token = quoted;
    if (quoted === "other") {
      const theirs = fallback({ call: { ...CALL, scope: "dev-session-2" } });
      token = tokenOf((await call(registry, "set_document", args, theirs)).text);
    }
    const answer = await call(registry, "set_document", { ...args, two_call_token: token });
    expect(answer.text).toMatch(/^Not done: the two_call_token is not one pads-token issued/);
    expect(padText(rustpad.fake(), pad)).toBe("banana");
  });

  it("is never needed where the tool would not ask: an empty pad and a single match act on the first call", async () => {
    const pad = freshPad();
    const registry = fakeRegistry();
    expect((await call(registry, "set_document", { pad_id: pad, content: "one a" })).text).toBe(`Pad "${pad}" now holds the new text: 5 characters (it held 0 characters).`);
    expect((await call(registry, "replace_in_document", { pad_id: pad, search: "a", replace: "b", replace_all: true })).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds 5 characters.`);
    expect(registry.minted).toEqual([]);
  });

  it("still asks a person on a token slug when the call brings an approval address", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const answer = await call(registry, "set_document", { pad_id: pad, content: "new" }, ask("http://127.0.0.1:9/approvals/", { slug: "pads-token", fallback: "token" }));
    expect(answer.text).toBe("Not done: the approval service could not be reached. Nothing was written.");
    expect(registry.minted).toEqual([]);
  });

  it("digests arguments whatever their key order", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: "z" } })).toBe('{"a":{"c":"z","d":[1,{"x":1,"y":2}]},"b":1}');
  });
});

describe("ELICITATION", () => {
  let lines: string[];
  beforeEach(() => {
    resetSwitchLog();
    lines = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    resetSwitchLog();
  });
  const startLines = () => lines.filter((l) => !l.startsWith('{"event":"audit"'));

  it("true (and unset) asks through the channel, and writes no start-up line", async () => {
    for (const value of ["true", undefined]) {
      resetSwitchLog();
      const pad = freshPad();
      await seedPad(rustpad.fake(), pad, "banana");
      const registry = fakeRegistry();
      const answer = await call(
        registry,
        "set_document",
        { pad_id: pad, content: "x" },
        ask("http://127.0.0.1:9/approvals/", { fallback: "token" }),
        value === undefined ? {} : { ELICITATION: value },
      );
      expect(answer.text).toBe("Not done: the approval service could not be reached. Nothing was written.");
      expect(registry.minted).toEqual([]);
    }
    expect(startLines()).toEqual([]);
  });

  it("false takes the two-call token even with an approval address, on a slug that allows it, and writes its one start-up line once", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const channel = ask("http://127.0.0.1:9/approvals/", { slug: "pads-token", fallback: "token" });
    const args = { pad_id: pad, content: "x" };
    const first = await call(registry, "set_document", args, channel, { ELICITATION: "false" });
    expect(first.text).toMatch(
      /^Not done yet: pads-token did not ask a person about this call \(this server runs with ELICITATION=false, so its guarded tools fall back to the two-call token\), so nothing was written\./,
    );
    const second = await call(registry, "set_document", { ...args, two_call_token: tokenOf(first.text) }, channel, { ELICITATION: "false" });
    expect(second.text).toMatch(/^Pad "\w+" now holds the new text: 1 character \(it held 6 characters\)\.Done on the two-call token/);
    expect(padText(rustpad.fake(), pad)).toBe("x");
    expect(startLines()).toEqual(["pads: ELICITATION=false — guarded tools fall back to the two-call token"]);
  });

  it("false turns the question at the caller's own client off too: the token on a slug that allows it, a refusal on one that does not, never a question", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const client = (over: Record<string, unknown>) => ({ slug: "pads-token", ask: "client", ttlMs: 10_000, call: CALL, caller: "dev-session", ...over });
    const env = { ELICITATION: "false", STRAD_SEAL_KEY: "a-seal-key-of-at-least-32-characters-0123" };
    const args = { pad_id: pad, content: "x" };
    const first = await call(registry, "set_document", args, client({ fallback: "token" }), env);
    expect(first.text).toMatch(/^Not done yet: pads-token did not ask a person about this call \(this server runs with ELICITATION=false/);
    expect(first.text).not.toContain("input_required");
    const second = await call(registry, "set_document", { ...args, two_call_token: tokenOf(first.text) }, client({ fallback: "token" }), env);
    expect(second.text).toMatch(/Done on the two-call token/);
    expect(padText(rustpad.fake(), pad)).toBe("x");
    const refused = await call(registry, "set_document", { pad_id: pad, content: "y" }, client({ slug: "pads" }), env);
    expect(refused.text).toMatch(/^Refused: this server runs with ELICITATION=false, so it asks nobody, and slug "pads" does not allow the two-call token/);
    expect(padText(rustpad.fake(), pad)).toBe("x");
  });

  it("false refuses a guarded call on a slug that does not allow the token: nothing goes unannounced", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const registry = fakeRegistry();
    const answer = await call(registry, "set_document", { pad_id: pad, content: "x" }, ask("http://127.0.0.1:9/approvals/"), { ELICITATION: "false" });
    expect(answer.text).toBe(
      'Refused: this server runs with ELICITATION=false, so it asks nobody, and slug "pads" does not allow the two-call token (its roster entry has no fallback: token). Nothing was read or written.',
    );
    expect(registry.minted).toEqual([]);
    expect(padText(rustpad.fake(), pad)).toBe("banana");
  });

  it.each(["1", "off", "yes", "", "TRUE", " false"])("%j fails every request of the bundle, naming both valid values, and says so once", async (value) => {
    const outbound = vi.fn(async () => new Response(""));
    vi.stubGlobal("fetch", outbound);
    const env = { RUSTPAD_URL: "http://127.0.0.1:9", ELICITATION: value };
    const both = /ELICITATION must be "true" \(ask a person through the approval channel, the default\) or "false" \(guarded tools fall back to the two-call token\)/;
    await expect(listBundle(handler, "pads", env)).rejects.toThrow(/tools\/list failed/);
    for (const [name, args] of [
      ["get_document", { pad_id: "abc123" }],
      ["append_to_document", { pad_id: "abc123", text: "x" }],
      ["set_document", { pad_id: "abc123", content: "x" }],
    ] as const) {
      const answer = await callBundle(handler, { mount: "pads", name, args, channel: ask("http://127.0.0.1:9/approvals/"), env });
      expect(answer.ok, name).toBe(false);
      expect(answer.error?.code).toBe("UPSTREAM_RPC");
      expect((answer.error as { message?: string }).message).toMatch(both);
    }
    expect(outbound).not.toHaveBeenCalled();
    expect(startLines()).toEqual(["pads: ELICITATION is neither true nor false — every request fails until it is one of the two"]);
  });
});

describe("Gmail and 1Password never take the two-call token", () => {
  it("send_email refuses on a channel that offers the token, and on ELICITATION=false it still asks (it never reads the switch)", async () => {
    const outbound = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", outbound);
    const env = {
      GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: "c",
      GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: "s",
      GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: "r",
      GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS: "readwrite_external",
    };
    const args = { to: ["ada@example.com"], subject: "hi", text: "hello" };
    const answer = await callBundle(google, { mount: "gmail-rw-external", name: "send_email", args, channel: fallback({ slug: "gmail-rw-external" }), env });
    expect(answer.text).toMatch(/^Refused: no approval channel reached this call/);
    expect(answer.text).not.toMatch(/token/);
    expect(outbound).not.toHaveBeenCalled();
    const listed = await listBundle(google, "gmail-rw-external", { ...env, ELICITATION: "false" });
    expect(listed.map((t) => t.name)).toContain("send_email");
  });

  it("a 1Password reveal, create and share refuse on a channel that offers the token", async () => {
    const outbound = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", outbound);
    const env = { OP_CONNECT_HOST: "http://127.0.0.1:9/onepassword", OP_CONNECT_TOKEN: "contract-connect-token" };
    const ref = { vault_id: IDS.engineering, item_id: IDS.github };
    for (const [name, args] of [
      ["onepassword_get_item", { items: [ref] }],
      ["onepassword_create_secure_note", { vault_id: IDS.engineering, items: [{ title: "t", note: "n" }] }],
      ["onepassword_share_item", { items: [ref] }],
    ] as const) {
      const answer = await callBundle(onepassword, { mount: "onepassword", name, args, channel: fallback({ slug: "onepassword" }), env });
      expect(answer.text, name).toMatch(/^Refused: no approval channel reached this call/);
      expect(answer.text, name).not.toMatch(/two_call_token/);
    }
    expect(outbound).not.toHaveBeenCalled();
  });
});
