// Covers bundles/kit/seam.ts: the server object reports elicitation exactly when the call carries a usable channel, and elicitInput() asks over it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
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

const send = (channel: unknown, extraEnv: Record<string, unknown> = {}) => callBundle(kitBundle, { mount: "kit", name: "vendored_send", args: { to: "ada@example.com" }, channel, env: { ...env, ...extraEnv } });

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
});
