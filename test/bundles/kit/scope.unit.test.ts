// Covers bundles/kit/scope.ts and the call scope mount.ts builds: each call sees its own channel, deadline and progress token, never another's.
import { describe, expect, it } from "vitest";
import { callStateFor, readChannel } from "../../../bundles/kit/scope";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import { askChannel, callBundle } from "./helpers/bundle";
import { kitBundle } from "./helpers/test-bundle";

const env = {};

describe("the call scope", () => {
  it("keeps 100 concurrent calls on 100 different channels apart", async () => {
    const calls = Array.from({ length: 100 }, (_, i) => ({
      url: `http://127.0.0.1:9/session-${i}/`,
      token: `progress-${i}`,
      ttlMs: 10_000 + i,
      mount: i % 2 === 0 ? "kit" : "kit-other",
    }));
    const started = Date.now();
    const answers = await Promise.all(
      calls.map((c) =>
        callBundle(kitBundle, { mount: c.mount, name: "whoami", args: { pauseMs: Math.floor(Math.random() * 40) }, channel: askChannel(c.url, { ttlMs: c.ttlMs }), progressToken: c.token, env }),
      ),
    );
    answers.forEach((answer, i) => {
      const c = calls[i] as (typeof calls)[number];
      const seen = JSON.parse(answer.text);
      expect(seen.channel).toBe(c.url);
      expect(seen.progressToken).toBe(c.token);
      expect(seen.mount).toBe(c.mount);
      expect(seen.toolName).toBe("whoami");
      expect(seen.deadline).toBeGreaterThanOrEqual(started + c.ttlMs);
      expect(seen.deadline).toBeLessThanOrEqual(Date.now() + c.ttlMs);
    });
  });

  it("reads a channel the schema rejects as a refusal, never as a guess", async () => {
    for (const channel of [
      { slug: "s", url: "not a url", ttlMs: 1, headers: {} },
      { slug: "s", url: "http://127.0.0.1:9/x/", ttlMs: 1, headers: {}, extra: true },
      "http://127.0.0.1:9/x/",
      null,
      { slug: "s", skip: false },
    ]) {
      const answer = await callBundle(kitBundle, { mount: "kit", name: "whoami", args: { pauseMs: 0 }, channel, env });
      expect(JSON.parse(answer.text).channel, JSON.stringify(channel)).toBe("refused: malformed channel");
    }
  });

  it("has no channel and no deadline when the gateway sent none", async () => {
    const answer = await callBundle(kitBundle, { mount: "kit", name: "whoami", args: { pauseMs: 0 }, env });
    expect(JSON.parse(answer.text)).toMatchObject({ channel: "none", deadline: null, progressToken: null });
  });
});

describe("reading the gateway's entry", () => {
  it("tells ask, skip, refused and absent apart", () => {
    const url = "http://127.0.0.1:8790/scripted/a/";
    expect(readChannel({ [CHANNEL_META_KEY]: { slug: "s", url, ttlMs: 5, headers: {} } })).toMatchObject({ kind: "ask", channel: { url } });
    expect(readChannel({ [CHANNEL_META_KEY]: { slug: "s", skip: true, ttlMs: 5, call: { scope: "a", key: "n:1", nonce: "test-nonce-0123456789" } } })).toMatchObject({ kind: "skip" });
    expect(readChannel({ [CHANNEL_META_KEY]: { slug: "s", refused: "why" } })).toEqual({ kind: "refused", reason: "why", slug: "s" });
    expect(readChannel({ [CHANNEL_META_KEY]: { slug: "s", refused: "why", caller: "dev-session" } })).toEqual({ kind: "refused", reason: "why", slug: "s", caller: "dev-session" });
    expect(readChannel({ progressToken: 1 })).toEqual({ kind: "none" });
    expect(readChannel(undefined)).toEqual({ kind: "none" });
  });

  it.each<[string, Record<string, unknown>]>([
    ["a call record whose nonce is too short to be the gateway's", { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 5, headers: {}, call: { scope: "a", key: "n:1", nonce: "short" } }],
    ["a call record with a field of its own", { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 5, headers: {}, call: { scope: "a", key: "n:1", nonce: "test-nonce-0123456789", claimed: true } }],
    ["a fractional ttl", { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 1.5, headers: {} }],
    ["a zero ttl", { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 0, headers: {} }],
    ["a negative skip ttl", { slug: "s", skip: true, ttlMs: -1 }],
    ["a refusal without a reason", { slug: "s", refused: "" }],
  ])("reads %s as a malformed channel, never as one to act on", (_what, channel) => {
    expect(readChannel({ [CHANNEL_META_KEY]: channel })).toEqual({ kind: "refused", reason: "malformed channel", malformed: true });
  });

  it("sets the deadline to the arrival time plus the channel's ttl, and keeps the progress token", () => {
    const state = callStateFor(7, { name: "t", _meta: { progressToken: "p", [CHANNEL_META_KEY]: { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 1234, headers: {} } } }, 1_000);
    expect(state).toMatchObject({ requestId: 7, toolName: "t", deadline: 2_234, progressToken: "p" });
    expect(callStateFor(7, { name: "t", _meta: { progressToken: { no: 1 } } }).progressToken).toBeUndefined();
  });
});
