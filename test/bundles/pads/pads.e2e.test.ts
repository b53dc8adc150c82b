// The pads bundle end to end: MCP clients through the gateway to the bundle, its outbound WebSocket to the Rustpad
// fake on 8791, and the approval service on 8788 deciding as a person would (its dev API). set_document acts unasked
// on an empty pad and asks on a non-empty one (a decline leaves it, an accept replaces it); replace_in_document acts
// unasked on one match and asks on three, executing only while the count is still three, so another client's edit
// while the person decides stops it; pads-token answers a call with no approval address with a two-call token, and
// acts on the second call with the same arguments, once. The fake's pads and its record of edits are the ground truth.
import { describe, expect, it } from "vitest";
import { decidePrompt, mintSession, waitForPendingPrompt } from "../../../approvals/dev-api.mjs";
import { bearer, connectLegacy, connectModern, TOKENS, textOf } from "../../e2e/helpers";

const RUSTPAD = "http://127.0.0.1:8791";

const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** A fresh pad id of Rustpad's shape. */
function padId(): string {
  return [...crypto.getRandomValues(new Uint8Array(6))].map((b) => ALPHABET[b % 62]).join("");
}

async function seed(pad: string, text: string): Promise<void> {
  const response = await fetch(`${RUSTPAD}/_fake/pads/${pad}`, { method: "PUT", body: JSON.stringify({ text }) });
  expect(response.status).toBe(200);
  await response.body?.cancel();
}

async function padText(pad: string): Promise<string> {
  return (await fetch(`${RUSTPAD}/api/text/${pad}`)).text();
}

async function edits(pad: string): Promise<{ kind: string; operation?: unknown }[]> {
  return (await (await fetch(`${RUSTPAD}/_fake/edits?pad=${pad}`)).json()) as { kind: string; operation?: unknown }[];
}

async function otherClientAppends(pad: string, text: string): Promise<void> {
  const response = await fetch(`${RUSTPAD}/_fake/pads/${pad}/edit`, { method: "POST", body: JSON.stringify({ append: text }) });
  expect(response.status).toBe(200);
  await response.body?.cancel();
}

async function callThrough(slug: string, tool: string, args: Record<string, unknown>, approvalUrl?: string, connect = connectModern) {
  const client = await connect(slug, { ...bearer(TOKENS.session), ...(approvalUrl === undefined ? {} : { "x-elicitation-url": approvalUrl }) });
  try {
    const result = await client.callTool(tool, args);
    return { result, text: textOf(result) };
  } finally {
    await client.close();
  }
}

describe("the tools as listed through the gateway", () => {
  it("are the seven pads tools, each declaring all four annotations truthfully", async () => {
    const client = await connectLegacy("pads", bearer(TOKENS.session));
    try {
      const { tools } = await client.listTools();
      expect(Object.fromEntries(tools.map((t) => [t.name, t.annotations]))).toEqual({
        get_document: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        get_server_stats: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        create_document: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
        append_to_document: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
        set_language: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        set_document: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        replace_in_document: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      });
    } finally {
      await client.close();
    }
  });

  it("create, append, set a language and read a pad, asking nobody", async () => {
    const session = await mintSession();
    const made = await callThrough("pads", "create_document", { content: "one\n", language: "markdown" }, session.elicitationUrl);
    const { pad_id: pad } = JSON.parse(made.text) as { pad_id: string };
    expect(pad).toMatch(/^[A-Za-z0-9]{6}$/);
    expect((await callThrough("pads", "append_to_document", { pad_id: pad, text: "two\n" }, session.elicitationUrl)).text).toBe(`Appended 4 characters to pad "${pad}"; it now holds 8 characters.`);
    expect((await callThrough("pads", "set_language", { pad_id: pad, language: "python" }, session.elicitationUrl)).text).toBe(`Pad "${pad}" is now in python.`);
    expect(JSON.parse((await callThrough("pads", "get_document", { pad_id: pad })).text)).toEqual({ pad_id: pad, characters: 8, text: "one\ntwo\n" });
    await expect(waitForPendingPrompt(session.sessionId, { timeoutMs: 300 })).rejects.toThrow(/no pending prompt/);
  });
});

describe("set_document", () => {
  it("acts unasked on an empty pad", async () => {
    const session = await mintSession();
    const pad = padId();
    expect((await callThrough("pads", "set_document", { pad_id: pad, content: "fresh" }, session.elicitationUrl)).text).toBe(
      `Pad "${pad}" now holds the new text: 5 characters (it held 0 characters).`,
    );
    expect(await padText(pad)).toBe("fresh");
    await expect(waitForPendingPrompt(session.sessionId, { timeoutMs: 300 })).rejects.toThrow(/no pending prompt/);
  });

  it("asks on a non-empty pad, showing its id and character counts and never its content: a decline leaves it unchanged, an accept replaces it", async () => {
    const pad = padId();
    await seed(pad, "PAD-CONTENT-NOBODY-SHOWS");
    for (const action of ["decline", "accept"] as const) {
      const session = await mintSession();
      const call = callThrough("pads", "set_document", { pad_id: pad, content: "replaced" }, session.elicitationUrl);
      const prompt = await waitForPendingPrompt(session.sessionId);
      expect(prompt.message).toMatch(new RegExp(`^pads: This will replace the whole of pad "${pad}": 24 characters now, 8 characters after\\.`));
      expect(prompt.message).toContain(`  Pad: ${pad}`);
      expect(prompt.message).not.toContain("PAD-CONTENT");
      await decidePrompt(session.sessionId, prompt.requestId, action);
      const { text } = await call;
      if (action === "decline") {
        expect(text).toMatch(/^Not done: the person declined/);
        expect(await padText(pad)).toBe("PAD-CONTENT-NOBODY-SHOWS");
      } else {
        expect(text).toBe(`Pad "${pad}" now holds the new text: 8 characters (it held 24 characters).`);
        expect(await padText(pad)).toBe("replaced");
      }
    }
    expect((await edits(pad)).filter((e) => e.kind === "edit")).toHaveLength(1);
  });

  it("refuses without an approval address on a slug that asks, before it reads the pad", async () => {
    const pad = padId();
    await seed(pad, "keep");
    const { text } = await callThrough("pads", "set_document", { pad_id: pad, content: "x" }, undefined, connectLegacy);
    expect(text).toMatch(/^Refused: the gateway refused the approval channel: /);
    expect(await padText(pad)).toBe("keep");
  });
});

describe("replace_in_document", () => {
  it("acts unasked when it changes one occurrence", async () => {
    const session = await mintSession();
    const pad = padId();
    // Long enough that one word is under the 20% an edit may remove unasked (docs/rules.md R-PAD-13).
    await seed(pad, "one cat on the mat");
    expect((await callThrough("pads", "replace_in_document", { pad_id: pad, search: "cat", replace: "dog", replace_all: true }, session.elicitationUrl)).text).toBe(
      `Replaced 1 occurrence in pad "${pad}"; it now holds 18 characters.`,
    );
    expect(await padText(pad)).toBe("one dog on the mat");
    await expect(waitForPendingPrompt(session.sessionId, { timeoutMs: 300 })).rejects.toThrow(/no pending prompt/);
  });

  it("asks for three, showing the count and the search/replace pair, and executes while the count is still three", async () => {
    const session = await mintSession();
    const pad = padId();
    await seed(pad, "banana");
    const call = callThrough("pads", "replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, session.elicitationUrl);
    const prompt = await waitForPendingPrompt(session.sessionId);
    expect(prompt.message.split("\n")).toEqual([
      `pads: This will replace 3 occurrences in pad "${pad}".`,
      "",
      "What is replaced cannot be restored, and a search string that is shorter than",
      "intended matches in places nobody looked at.",
      "The pad holds 6 characters now and will hold 6 characters after.",
      "Asked because it removes 3 of the pad's 6 characters, more than the 20% an edit may remove unasked.",
      "",
      "Values below are supplied by the caller, not by this server:",
      `  Pad: ${pad}`,
      "  Search: a",
      "  Replace with: z",
    ]);
    await decidePrompt(session.sessionId, prompt.requestId, "accept");
    expect((await call).text).toBe(`Replaced 3 occurrences in pad "${pad}"; it now holds 6 characters.`);
    expect(await padText(pad)).toBe("bznznz");
  });

  it("does nothing when another client's edit changes the count between the question and the edit, and says so", async () => {
    const session = await mintSession();
    const pad = padId();
    await seed(pad, "banana");
    const call = callThrough("pads", "replace_in_document", { pad_id: pad, search: "a", replace: "z", replace_all: true }, session.elicitationUrl, connectLegacy);
    const prompt = await waitForPendingPrompt(session.sessionId);
    expect(prompt.message).toMatch(/^pads: This will replace 3 occurrences/);
    await otherClientAppends(pad, " a");
    await decidePrompt(session.sessionId, prompt.requestId, "accept");
    expect((await call).text).toBe(
      `Not done: the target changed after it was approved (approved: 3 occurrences in pad "${pad}"; now: 4 occurrences in pad "${pad}"), so the approval does not cover it. Nothing was written.`,
    );
    expect(await padText(pad)).toBe("banana a");
    expect((await edits(pad)).map((e) => e.kind)).toEqual(["injected"]);
  });
});

describe("the two-call token (pads-token, fallback: token)", () => {
  const TOKEN = /^[A-Za-z0-9_-]{43}$/m;

  it("acts on the second call only, with the same arguments, and once", async () => {
    const pad = padId();
    await seed(pad, "banana");
    const args = { pad_id: pad, search: "a", replace: "o", replace_all: true };
    const first = await callThrough("pads-token", "replace_in_document", args);
    expect(first.text).toMatch(/^Not done yet: pads-token did not ask a person about this call \(no approval address came with this call\), so nothing was written\./);
    expect(first.text).toContain("The token proves the call was made twice with the same arguments, and nothing more: nobody was asked, and nobody approved it.");
    const token = TOKEN.exec(first.text)?.[0] as string;
    expect(await padText(pad)).toBe("banana");

    const widened = await callThrough("pads-token", "replace_in_document", { ...args, search: "an", two_call_token: token });
    expect(widened.text).toMatch(/^Not done: the two_call_token was issued for other arguments/);
    expect(await padText(pad)).toBe("banana");

    const second = await callThrough("pads-token", "replace_in_document", { ...args, two_call_token: token }, undefined, connectLegacy);
    expect(second.text).toBe(
      `Replaced 3 occurrences in pad "${pad}"; it now holds 6 characters.Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: pads-token did not ask a person.`,
    );
    expect(await padText(pad)).toBe("bonono");

    await seed(pad, "banana");
    const again = await callThrough("pads-token", "replace_in_document", { ...args, two_call_token: token });
    expect(again.text).toMatch(/^Not done: the two_call_token was already used once/);
    expect(await padText(pad)).toBe("banana");
    // One edit in all: the second call's.
    expect((await edits(pad)).filter((e) => e.kind === "edit")).toHaveLength(1);
  });

  it("still asks a person when the call brings an approval address", async () => {
    const session = await mintSession();
    const pad = padId();
    await seed(pad, "keep me");
    const call = callThrough("pads-token", "set_document", { pad_id: pad, content: "x" }, session.elicitationUrl);
    const prompt = await waitForPendingPrompt(session.sessionId);
    expect(prompt.message).toMatch(/^pads-token: This will replace the whole of pad/);
    await decidePrompt(session.sessionId, prompt.requestId, "decline");
    expect((await call).text).toMatch(/^Not done: the person declined/);
    expect(await padText(pad)).toBe("keep me");
  });
});
