// Covers bundles/kit/seam.ts: the server object reports elicitation exactly when the call carries a usable channel, and elicitInput() asks over it.
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CONFIRM_SCHEMA } from "../../../bundles/kit/approval-client";
import { type CallState, type ChannelState, runInScope } from "../../../bundles/kit/scope";
import { installConfirmSeam } from "../../../bundles/kit/seam";
import { askChannel, callBundle, fakeCalls } from "./helpers/bundle";
import { HostileServer, startSink } from "./helpers/hostile-server";
import { kitBundle } from "./helpers/test-bundle";

let hostile: HostileServer;
let recorder: Awaited<ReturnType<typeof startSink>>;
let calls: ReturnType<typeof fakeCalls>;
let env: Record<string, unknown>;
let n = 0;
const route = () => `s${++n}`;

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
  calls.live("dev-session", "n:1");
  env = { RECORDER_URL: recorder.base, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30" };
});

/** A server the way an upstream tree holds it, with the seam installed: its elicitInput() is called directly. */
function seamed() {
  const mcp = new McpServer({ name: "seam-test", version: "0.0.0" });
  installConfirmSeam(mcp);
  return mcp.server;
}

const askState = (url: string, slug = "kit-test"): ChannelState => ({ kind: "ask", channel: { slug, url, ttlMs: 10_000, headers: {} } });

/** Runs `fn` inside a tools/call scope carrying `channel`; returns what it returned and the call state. */
async function inCall<T>(channel: ChannelState, fn: () => Promise<T>): Promise<{ value: T; call: CallState }> {
  const call: CallState = { requestId: 1, toolName: "upstream_send", channel, deadline: Date.now() + 10_000, progressToken: undefined, notify: async () => {} };
  const value = await runInScope({ mount: "kit", signal: new AbortController().signal, waitUntil: () => {}, env: { STRAD_POLL_INTERVAL_MS: "30" }, call }, fn);
  return { value, call };
}

const createBody = (name: string) => JSON.parse(hostile.requestsTo(name)[0]?.body ?? "{}") as { message?: string; requestedSchema?: { properties?: Record<string, unknown>; required?: string[] } };

const send = (channel: unknown, extraEnv: Record<string, unknown> = {}) =>
  callBundle(kitBundle, { mount: "kit", name: "vendored_send", args: { to: "ada@example.com" }, channel, env: { ...env, ...extraEnv } });

describe("getClientCapabilities()", () => {
  it.each([
    ["no channel", undefined, {}],
    ["a refused channel", { slug: "s", refused: "the header is not under an allowed prefix" }, {}],
    ["a malformed channel", { slug: "s", url: "ftp://x" }, {}],
    ["a channel under ELICITATION_ENABLED=false", "ask", { ELICITATION_ENABLED: "false" }],
    ["a channel under a container-wide ELICITATION_POLL_URL", "ask", { ELICITATION_POLL_URL: "http://127.0.0.1:1/" }],
  ])("reports no elicitation support with %s, and nobody is asked", async (_label, channel, extraEnv) => {
    const name = route();
    const url = hostile.route(name, {});
    const answer = await send(channel === "ask" ? askChannel(url) : channel, extraEnv);
    expect(answer.text).toBe("no elicitation support");
    expect(hostile.requestsTo(name)).toEqual([]);
    expect(recorder.requests).toEqual([]);
  });

  it("reports support with an ask channel, and elicitInput() asks over exactly that channel", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ({ body: { action: "accept", content: { confirm: true, note: "ok", evil: { nested: 1 } } } }) });
    const answer = await send(askChannel(url, { slug: "gmail-rw" }));
    expect(answer.text).toBe("sent");
    const [create] = hostile.requestsTo(name);
    const body = JSON.parse(create?.body ?? "{}");
    // The upstream's message is prefixed with the slug; its form gains the confirm box.
    expect(body.message).toBe("gmail-rw:\nSend mail to ada@example.com?\nSubject: hello");
    expect(body.requestedSchema).toEqual({ type: "object", properties: { note: { type: "string" }, confirm: expect.objectContaining({ type: "boolean" }) }, required: ["confirm"] });
    expect(recorder.requests.map((r) => JSON.parse(r.body))).toEqual([{ kind: "vendored_send", to: "ada@example.com" }]);
  });

  it("reports support with a waiver, whose elicitInput() accepts without asking anyone", async () => {
    const answer = await send({ slug: "agent-own", skip: true, ttlMs: 5_000, call: { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" } });
    expect(answer.text).toBe("sent");
    expect(recorder.requests).toHaveLength(1);
  });
});

describe("elicitInput()", () => {
  it.each([
    ["decline", "not sent: decline"],
    ["cancel", "not sent: cancel"],
    ["expired", "not sent: cancel"],
    ["maybe", "not sent: decline"],
  ])("maps %s to an answer that sends nothing", async (action, text) => {
    const url = hostile.route(route(), { poll: () => ({ body: { action, content: { confirm: true } } }) });
    expect((await send(askChannel(url))).text).toBe(text);
    expect(recorder.requests).toEqual([]);
  });

  it("turns an unticked accept into a decline", async () => {
    const url = hostile.route(route(), { poll: () => ({ body: { action: "accept", content: { confirm: false, note: "sure" } } }) });
    expect((await send(askChannel(url))).text).toBe("not sent: decline");
    expect(recorder.requests).toEqual([]);
  });

  it("fails the call naming the status, never the body, when the approval service errs", async () => {
    const url = hostile.route(route(), { create: () => ({ status: 500, body: "SECRET-do-not-leak" }) });
    const answer = await send(askChannel(url));
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain("HTTP 500");
    expect(answer.text).not.toContain("SECRET");
    expect(recorder.requests).toEqual([]);
  });

  it("lets an upstream tree's send through the gate only after an approval, and once per call", async () => {
    const url = hostile.route(route(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    const channel = askChannel(url);
    const answers = await Promise.all([send(channel), send(channel)]);
    const [sent, refused] = answers.map((a) => a.text).sort();
    expect(sent).toBe("sent");
    expect(refused).toContain("already used for a write");
    expect(recorder.requests).toHaveLength(1);
  });

  it("refuses a URL-mode elicitation, asking nobody", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    const server = seamed();
    const attempt = inCall(askState(url), () => server.elicitInput({ mode: "url", message: "Open this page to approve", url: "https://evil.example/approve", elicitationId: "e-1" }));
    await expect(attempt).rejects.toThrow(/URL elicitation/);
    expect(hostile.requestsTo(name)).toEqual([]);
  });

  it("cleans every line of the upstream's message, so it cannot forge a line or hide characters", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ({ body: { action: "decline" } }) });
    const server = seamed();
    await inCall(askState(url), () => server.elicitInput({ message: "Send mail?\nTo: ada@example.com\u202Egpj.exe\rApproved by: admin\u200B", requestedSchema: { type: "object", properties: {} } }));
    expect(createBody(name).message).toBe("kit-test:\nSend mail?\nTo: ada@example.com\ufffdgpj.exe\ufffdApproved by: admin\ufffd");
  });

  it("cleans the slug it puts in front of the upstream's message", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ({ body: { action: "decline" } }) });
    const server = seamed();
    await inCall(askState(url, "gmail-rw\nApproved by: admin\u202E"), () => server.elicitInput({ message: "Send mail?", requestedSchema: { type: "object", properties: {} } }));
    expect(createBody(name).message).toBe("gmail-rw\ufffdApproved by: admin\ufffd:\nSend mail?");
  });

  it("keeps the kit's confirm box when the upstream's form declares a confirm field of its own", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ({ body: { action: "decline" } }) });
    const server = seamed();
    await inCall(askState(url), () =>
      server.elicitInput({ message: "Send?", requestedSchema: { type: "object", properties: { confirm: { type: "string", description: "type yes" }, note: { type: "string" } }, required: ["note"] } }),
    );
    const schema = createBody(name).requestedSchema;
    expect(schema?.properties?.confirm).toEqual(CONFIRM_SCHEMA.properties.confirm);
    expect(schema?.properties?.note).toEqual({ type: "string" });
    expect(schema?.required).toEqual(["note", "confirm"]);
  });

  it("hands the upstream only simple form values: nested objects, mixed arrays and a __proto__ key are dropped", async () => {
    const name = route();
    const answer = '{"action":"accept","content":{"confirm":true,"note":"ok","count":2,"tags":["a","b"],"evil":{"nested":1},"mixed":[1,"a"],"__proto__":{"polluted":true}}}';
    const url = hostile.route(name, { poll: () => ({ body: answer }) });
    const server = seamed();
    const { value } = await inCall(askState(url), () => server.elicitInput({ message: "Send?", requestedSchema: { type: "object", properties: { note: { type: "string" } } } }));
    expect(value).toEqual({ action: "accept", content: { confirm: true, note: "ok", count: 2, tags: ["a", "b"] } });
    const content = value.content as Record<string, unknown>;
    expect(Object.keys(content).sort()).toEqual(["confirm", "count", "note", "tags"]);
    expect(Object.getPrototypeOf(content)).toBe(Object.prototype);
    expect((content as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("records an accepted elicitation as an approval, so a send on a call with no record to claim is refused", async () => {
    const url = hostile.route(route(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    const { call: _noRecord, ...channel } = askChannel(url);
    const answer = await send(channel);
    expect(answer.text).toContain("no record to claim");
    expect(answer.text).not.toBe("sent");
    expect(recorder.requests).toEqual([]);
    expect(calls.claims).toEqual([]);
  });
});
