// The pads tools edited by the person, against the Rustpad fake: set_document's new text and replace_in_document's replacement ride on the card as free text, what is written is the person's text, a plain accept writes the model's, and an edit past the tool's limits writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_QUESTION_KEY } from "../../../bundles/kit/confirm";
import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import { MIN_SEAL_KEY_CHARS } from "../../../bundles/kit/seal";
import handler from "../../../bundles/pads/pads.app";
import { MAX_PAIR_CHARS } from "../../../bundles/pads/pads.tools";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import type { ServerEntry } from "../../../worker/roster";
import { callUpstream } from "../../../worker/upstream";
import { callBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { ask, CALL, editsTo, fakeRegistry, freshPad, padText, seedPad, useRustpad } from "./helpers";

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

describe("an edit made at the caller's own client (docs/rules.md R-SEAL-1, R-EDIT-2)", () => {
  const SEAL_KEY = "k".repeat(MIN_SEAL_KEY_CHARS);
  const SERVER = { slug: "pads", kind: "bundle", bundle: "PADS", path: "/pads" } as unknown as ServerEntry;
  let round = 0;

  /** One call on a client channel, as the gateway sends it on 2026-07-28: a record of its own, live; the retry's members if any. */
  async function viaClient(registry: ReturnType<typeof fakeRegistry>, spent: Set<string>, args: Record<string, unknown>, retry: Record<string, unknown> = {}) {
    const call = { scope: "dev-person", key: `c:client-${++round}`, nonce: `client-nonce-${round}-0123456789` };
    registry.live(call.scope, call.key);
    const ns = {
      idFromName: (name: string) => name,
      get: (scope: string) => ({
        ...registry.ns.get(scope),
        spendSeal: async (nonce: string) => !spent.has(nonce) && spent.add(nonce) !== undefined,
      }),
    };
    const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;
    const env = { RUSTPAD_URL: rustpad.fake().url, CALLS: ns, STRAD_SEAL_KEY: SEAL_KEY };
    const answer = await callUpstream({
      server: SERVER,
      method: "tools/call",
      params: { name: "set_document", arguments: args, ...retry },
      meta: { [CHANNEL_META_KEY]: { slug: "pads", ask: "client", ttlMs: 10_000, call, caller: "dev-person" } },
      capabilities: { elicitation: { form: {} } },
      headers: {},
      signal: new AbortController().signal,
      fetcher: (url, init) => Promise.resolve((handler.fetch as NonNullable<typeof handler.fetch>)(new Request(url, init) as never, env, ctx)),
    });
    if (!answer.ok) throw new Error(`the bundle failed: ${answer.error.code}`);
    return answer.result;
  }

  it("carries the editable text in the question's form, and the retry writes the person's text, once", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "old");
    const registry = fakeRegistry();
    const spent = new Set<string>();
    const args = { pad_id: pad, content: "the model's text" };
    const first = await viaClient(registry, spent, args);
    expect(first.resultType).toBe("input_required");
    const question = (first.inputRequests as Record<string, { params: { requestedSchema: { properties: Record<string, Record<string, unknown>> } } }>)[CLIENT_QUESTION_KEY];
    expect(question?.params.requestedSchema.properties.content).toMatchObject({ type: "string", default: "the model's text" });
    expect(padText(rustpad.fake(), pad)).toBe("old");

    const edited = { [CLIENT_QUESTION_KEY]: { action: "accept", content: { confirm: true, content: "the person's text" } } };
    const done = await viaClient(registry, spent, args, { inputResponses: edited, requestState: first.requestState });
    expect(done.isError).not.toBe(true);
    expect(padText(rustpad.fake(), pad)).toBe("the person's text");
    expect(JSON.stringify(done.content)).toContain("The person edited this call before approving it");
    // The same answer and seal again: a fresh question, and the pad keeps the one write.
    const again = await viaClient(registry, spent, args, { inputResponses: edited, requestState: first.requestState });
    expect(again.resultType).toBe("input_required");
    expect(editsTo(rustpad.fake(), pad, "edit")).toHaveLength(1);
  });
});
