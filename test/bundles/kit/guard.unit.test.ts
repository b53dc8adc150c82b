// Covers bundles/kit/guard.ts with confirm.ts, gate.ts and keepalive.ts: when a guarded tool asks, refuses, acts once, or never acts.
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { waivedLine } from "../../../bundles/kit/confirm";
import { always, guardDeclarations, guardedTool, never } from "../../../bundles/kit/guard";
import { askChannel, callBundle, fakeCalls } from "./helpers/bundle";
import { HostileServer, startSink } from "./helpers/hostile-server";
import { KIT_CONFIRMED, kitBundle, kitServer, store } from "./helpers/test-bundle";

const ACCEPT = { body: { action: "accept", content: { confirm: true } } };
let hostile: HostileServer;
let recorder: Awaited<ReturnType<typeof startSink>>;
let calls: ReturnType<typeof fakeCalls>;
let env: Record<string, unknown>;
let n = 0;
const route = () => `g${++n}`;

beforeAll(async () => {
  hostile = await new HostileServer().start();
  recorder = await startSink();
});
afterAll(async () => {
  await hostile.stop();
  await recorder.stop();
});
beforeEach(() => {
  recorder.requests.length = 0;
  calls = fakeCalls();
  env = { RECORDER_URL: recorder.base, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30", STRAD_KEEPALIVE_MS: "40" };
  store.messages = new Map([
    [1, "invoice march"],
    [2, "lunch"],
    [3, "invoice april"],
  ]);
  store.pads = new Map([
    ["one", "a cat"],
    ["many", "a cat, a hat, a bat"],
  ]);
});

/** A call the gateway registered as live, with an ask channel to a fresh hostile route. */
function live(key: string, url: string, over: Record<string, unknown> = {}) {
  calls.live("dev-session", key);
  return askChannel(url, { call: { scope: "dev-session", key, nonce: "test-nonce-0123456789" }, ...over });
}

const writes = () => recorder.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe("declarations", () => {
  it("refuses to register a tool that asks but is missing from the bundle's registry, or one that never asks but is listed", () => {
    const server = new McpServer({ name: "t", version: "0" });
    const guard = { resolve: () => ({}), fingerprint: () => ({ operation: "x", target: {} }), prompt: () => ({ heading: "h", consequence: "c", values: [] }), act: async () => ({ content: [] }) };
    const config = { description: "d", inputSchema: z.object({}), annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false } };
    expect(() => guardedTool(server, new Set(), "asks", config, { ...guard, rule: always })).toThrow(/missing from its bundle's registry/);
    expect(() => guardedTool(server, new Set(["quiet"]), "quiet", config, { ...guard, rule: never })).toThrow(/never asks but is listed/);
  });

  it("records what each tool declared, and the registry is exactly the tools that ask", () => {
    const declared = guardDeclarations(kitServer("kit"));
    expect(Object.fromEntries(declared)).toEqual({ delete_matching: "always", move_items: "always", replace_text: "when", append_note: "never" });
    expect(new Set([...declared].filter(([, kind]) => kind !== "never").map(([name]) => name))).toEqual(KIT_CONFIRMED);
  });
});

describe("refusing before anything is read or written", () => {
  it.each([
    ["no channel", undefined, {}, "no approval channel reached this call"],
    ["a refused channel", { slug: "echo-unseeded", refused: "confirmationHeaders need secret UNSEEDED_ACCESS_ID, which is not seeded" }, {}, "UNSEEDED_ACCESS_ID"],
    ["a malformed channel", { slug: "x", url: 5 }, {}, "malformed channel"],
    ["ELICITATION_ENABLED=false", "ask", { ELICITATION_ENABLED: "false" }, "ELICITATION_ENABLED=false"],
    ["ELICITATION_ENABLED=off", "ask", { ELICITATION_ENABLED: "off" }, "ELICITATION_ENABLED"],
    ["ELICITATION_REQUEST_URL", "ask", { ELICITATION_REQUEST_URL: "http://127.0.0.1:1/container/" }, "ELICITATION_REQUEST_URL"],
    ["ELICITATION_POLL_URL", "ask", { ELICITATION_POLL_URL: "http://127.0.0.1:1/container/" }, "ELICITATION_POLL_URL"],
    ["a waiver under ELICITATION_REQUEST_URL", "skip", { ELICITATION_REQUEST_URL: "http://127.0.0.1:1/container/" }, "ELICITATION_REQUEST_URL"],
  ])("refuses with %s, repeating the reason", async (_label, channel, extraEnv, reason) => {
    const name = route();
    const url = hostile.route(name, { poll: () => ACCEPT });
    const ch =
      channel === "ask" ? live("n:1", url) : channel === "skip" ? { slug: "w", skip: true, ttlMs: 5_000, call: { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" } } : channel;
    let reads = 0;
    const messages = store.messages;
    store.messages = new Proxy(messages, {
      get: (target, key) => {
        reads++;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: ch, env: { ...env, ...extraEnv } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Refused: /);
    expect(answer.text).toContain(reason);
    expect(answer.text).toContain("Nothing was read or written");
    expect(reads).toBe(0);
    expect(hostile.requestsTo(name)).toEqual([]);
    expect(recorder.requests).toEqual([]);
    // A container-wide approval address is a credential: the refusal names the variable, never its value.
    for (const value of Object.values(extraEnv)) if (value.startsWith("http")) expect(answer.text).not.toContain(value);
  });
});

describe("asking", () => {
  it("acts exactly once on an approval, with the target the person saw", async () => {
    const name = route();
    const url = hostile.route(name, { poll: (_r, i) => (i < 2 ? { body: { action: "pending" } } : ACCEPT) });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env });
    expect(answer.text).toBe("deleted 2");
    expect(writes()).toEqual([{ kind: "delete", uids: [1, 3] }]);
    const prompt = JSON.parse(hostile.requestsTo(name)[0]?.body ?? "{}").message as string;
    expect(prompt).toBe(
      ["kit-test: This will delete 2 message(s).", "", "A deleted message cannot be restored.", "", "Values below are supplied by the caller, not by this server:", "  UIDs: 1, 3"].join("\n"),
    );
  });

  it.each(["decline", "cancel", "expired"])("writes nothing on %s", async (action) => {
    const url = hostile.route(route(), { poll: () => ({ body: { action } }) });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: .*Nothing was written\.$/);
    expect(recorder.requests).toEqual([]);
  });

  it("gives up at the channel's deadline: nobody answered in time, nothing is written", async () => {
    const name = route();
    const url = hostile.route(name, {});
    const started = Date.now();
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url, { ttlMs: 400 }), env });
    expect(answer.text).toBe("Not done: the approval expired before anyone answered (the deadline passed). Nothing was written.");
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(recorder.requests).toEqual([]);
  });

  it("fails the call naming the status when the approval service errs, and writes nothing", async () => {
    const url = hostile.route(route(), { create: () => ({ status: 502, body: "upstream secret-body-xyz" }) });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env });
    expect(answer.text).toBe("Not done: the approval service answered HTTP 502. Nothing was written.");
    expect(recorder.requests).toEqual([]);
  });

  it("writes nothing when the target grew between the approval and the write: an approval for [1, 3] never executes [1, 3, 4]", async () => {
    const url = hostile.route(route(), {
      poll: () => {
        store.messages.set(4, "invoice may");
        return ACCEPT;
      },
    });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env });
    expect(answer.text).toContain("the target changed after it was approved");
    expect(recorder.requests).toEqual([]);
  });

  it("asks a `when` tool only when its predicate holds on the live target", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ACCEPT });
    const single = await callBundle(kitBundle, { mount: "kit", name: "replace_text", args: { pad: "one", search: "at", replace: "og" }, channel: live("n:1", url), env });
    expect(single.text).toBe("replaced 1");
    expect(hostile.requestsTo(name)).toEqual([]);
    const many = await callBundle(kitBundle, { mount: "kit", name: "replace_text", args: { pad: "many", search: "at", replace: "og" }, channel: live("n:2", url), env });
    expect(many.text).toBe("replaced 3");
    expect(JSON.parse(hostile.requestsTo(name)[0]?.body ?? "{}").message).toContain('This will replace 3 occurrences in pad "many".');
    expect(writes()).toEqual([
      { kind: "replace", pad: "one", count: 1 },
      { kind: "replace", pad: "many", count: 3 },
    ]);
  });

  it("lets a `never` tool write through the gate without a channel", async () => {
    const answer = await callBundle(kitBundle, { mount: "kit", name: "append_note", args: { note: "hi" }, env });
    expect(answer.text).toBe("appended");
    expect(writes()).toEqual([{ kind: "append", note: "hi" }]);
  });

  it("answers a waiver with accept inside the bundle: nobody is asked, the write happens once", async () => {
    calls.live("dev-session", "n:9");
    const answer = await callBundle(kitBundle, {
      mount: "kit",
      name: "delete_matching",
      args: { contains: "lunch" },
      channel: { slug: "agent-own", skip: true, ttlMs: 5_000, call: { scope: "dev-session", key: "n:9", nonce: "test-nonce-0123456789" } },
      env,
    });
    // The answer ends with the line saying nobody was asked (docs/rules.md R-CHAN-14).
    expect(answer.result.content).toEqual([
      { type: "text", text: "deleted 1" },
      { type: "text", text: waivedLine("agent-own") },
    ]);
    expect(writes()).toEqual([{ kind: "delete", uids: [2] }]);
    expect(calls.claims).toEqual([{ scope: "dev-session", key: "n:9", won: true }]);
  });

  it("keeps the channel's edge credential off the write", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT });
    await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "lunch" }, channel: live("n:1", url), env });
    expect(recorder.requests).toHaveLength(1);
    const headerNames = Object.keys(recorder.requests[0]?.headers ?? {});
    expect(headerNames.filter((h) => h.startsWith("cf-access"))).toEqual([]);
  });
});

describe("a dropped call", () => {
  it("writes nothing when the caller leaves while the person decides, and stops polling", async () => {
    const name = route();
    const drop = new AbortController();
    const url = hostile.route(name, {
      poll: (_r, i) => {
        if (i === 3) drop.abort();
        return { body: { action: "pending" } };
      },
    });
    const answer = callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env, signal: drop.signal });
    expect((await answer).ok).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(hostile.requestsTo(name).filter((r) => r.method === "GET").length).toBe(3);
    expect(recorder.requests).toEqual([]);
  });

  it("turns an approval that lands as the caller leaves into a cancel", async () => {
    const drop = new AbortController();
    const url = hostile.route(route(), {
      poll: () => {
        drop.abort();
        return ACCEPT;
      },
    });
    await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env, signal: drop.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(recorder.requests).toEqual([]);
  });

  it("writes nothing when the gateway has already ended the call: the claim fails", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT });
    const channel = live("n:1", url);
    calls.end("dev-session", "n:1");
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel, env });
    expect(answer.text).toContain("no longer live or was already used");
    expect(recorder.requests).toEqual([]);
  });

  it("writes once when one call's approval reaches the bundle twice", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT });
    const channel = live("n:5", url);
    const answers = await Promise.all([1, 2].map(() => callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel, env })));
    expect(answers.map((a) => a.text).sort()).toEqual(["Not done: the call is no longer live or was already used for a write; nothing was written.", "deleted 2"]);
    expect(writes()).toEqual([{ kind: "delete", uids: [1, 3] }]);
  });

  it("refuses an approved write when the channel names no call record to claim", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: askChannel(url, { call: undefined }), env });
    expect(answer.text).toContain("carries no record to claim");
    expect(recorder.requests).toEqual([]);
  });
});

describe("the gate", () => {
  it("refuses a write that no guard declaration covers", async () => {
    const answer = await callBundle(kitBundle, { mount: "kit", name: "sneaky_write", args: {}, channel: live("n:1", "http://127.0.0.1:9/x/"), env });
    expect(answer.ok && answer.isError).toBe(true);
    expect(recorder.requests).toEqual([]);
  });
});

describe("keepalive", () => {
  it("sends progress against the call's token while the person decides, and stops when they answer", async () => {
    const url = hostile.route(route(), { poll: (_r, i) => (i < 12 ? { body: { action: "pending" } } : { body: { action: "decline" } }) });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), progressToken: "gw-token-1", env });
    expect(answer.progress.length).toBeGreaterThanOrEqual(3);
    for (const [i, p] of answer.progress.entries()) expect(p).toMatchObject({ progressToken: "gw-token-1", progress: i + 1, message: "waiting for a person to approve" });
  });

  it("sends nothing without a progress token", async () => {
    const url = hostile.route(route(), { poll: (_r, i) => (i < 12 ? { body: { action: "pending" } } : { body: { action: "decline" } }) });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "invoice" }, channel: live("n:1", url), env });
    expect(answer.progress).toEqual([]);
  });
});
