// Covers the client question's sealed requestState (bundles/kit/seal.ts, docs/rules.md R-SEAL-1, R-SEAL-2): a round trip, every byte tampered, the expiry's edge, another caller, slug, tool, arguments or question, key rotation, and a missing or short key.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argumentsFingerprint } from "../../../bundles/kit/confirm";
import { MIN_SEAL_KEY_CHARS, openSeal, SEAL_TTL_MS, type SealPayload, type SealTarget, sameTarget, seal, sealKeys, sealNonce, sealTtlMs } from "../../../bundles/kit/seal";

const KEY = "k".repeat(MIN_SEAL_KEY_CHARS);
const OTHER_KEY = "o".repeat(MIN_SEAL_KEY_CHARS);
const NOW = 1_800_000_000_000;
const TARGET: SealTarget = { caller: "dev-person", slug: "echo-client", tool: "demo_write", args: "a".repeat(64), question: "q".repeat(64), binds: "b".repeat(64) };
const PAYLOAD: SealPayload = { ...TARGET, exp: NOW + 60_000, nonce: sealNonce() };

describe("the seal", () => {
  it("opens onto exactly what was sealed, and a fresh nonce is 16 random bytes", async () => {
    const state = await seal(PAYLOAD, { current: KEY });
    expect(state).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await openSeal(state, { current: KEY }, NOW)).toEqual({ ok: true, payload: PAYLOAD });
    expect(PAYLOAD.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(sealNonce()).not.toBe(sealNonce());
    // What it holds is digests and names, never the key.
    expect(state).not.toContain(KEY);
    expect(atob((state.split(".")[1] as string).replaceAll("-", "+").replaceAll("_", "/"))).not.toContain(KEY);
  });

  it("does not open with one character changed anywhere in it", async () => {
    const state = await seal(PAYLOAD, { current: KEY });
    for (let i = 0; i < state.length; i++) {
      const swapped = state[i] === "A" ? "B" : "A";
      const tampered = `${state.slice(0, i)}${swapped}${state.slice(i + 1)}`;
      const opened = await openSeal(tampered, { current: KEY }, NOW);
      expect(opened.ok, `character ${i}`).toBe(false);
    }
  });

  it("does not open with a character added or taken away, or as anything that is not a seal", async () => {
    const state = await seal(PAYLOAD, { current: KEY });
    for (const bad of [`${state}A`, state.slice(0, -1), `A${state}`, state.slice(1), "", "v1..", "v1.e30.", undefined, 42, `v1.${"A".repeat(5000)}`]) {
      expect((await openSeal(bad, { current: KEY }, NOW)).ok).toBe(false);
    }
  });

  it("does not open a payload sealed with another key (the key is unknown to this bundle)", async () => {
    const state = await seal(PAYLOAD, { current: OTHER_KEY });
    expect(await openSeal(state, { current: KEY }, NOW)).toEqual({ ok: false, problem: "bad_mac" });
    expect(await openSeal(state, { current: KEY, previous: "p".repeat(MIN_SEAL_KEY_CHARS) }, NOW)).toEqual({ ok: false, problem: "bad_mac" });
  });

  it("opens a seal made before a rotation with the previous key, and a new one with the current key", async () => {
    const before = await seal(PAYLOAD, { current: OTHER_KEY });
    const rotated = { current: KEY, previous: OTHER_KEY };
    expect(await openSeal(before, rotated, NOW)).toEqual({ ok: true, payload: PAYLOAD });
    const after = await seal(PAYLOAD, rotated);
    expect(await openSeal(after, { current: KEY }, NOW)).toEqual({ ok: true, payload: PAYLOAD });
    // Once the previous key is dropped, the old seal no longer opens.
    expect(await openSeal(before, { current: KEY }, NOW)).toEqual({ ok: false, problem: "bad_mac" });
  });

  it("is good up to 1 ms before its expiry and expired from its expiry on", async () => {
    const state = await seal(PAYLOAD, { current: KEY });
    expect((await openSeal(state, { current: KEY }, PAYLOAD.exp - 1)).ok).toBe(true);
    expect(await openSeal(state, { current: KEY }, PAYLOAD.exp)).toEqual({ ok: false, problem: "expired" });
    expect(await openSeal(state, { current: KEY }, PAYLOAD.exp + 1)).toEqual({ ok: false, problem: "expired" });
  });

  it("does not open a seal made before it bound the target (its payload of seven members): the client is asked again", async () => {
    const { binds: _binds, ...before } = PAYLOAD;
    const body = btoa(JSON.stringify(before)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    const signed = `v1.${body}`;
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(signed)));
    const state = `${signed}.${btoa(String.fromCharCode(...mac))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "")}`;
    expect(await openSeal(state, { current: KEY }, NOW)).toEqual({ ok: false, problem: "malformed" });
  });

  it.each(["caller", "slug", "tool", "args", "question", "binds"] as const)("opens onto another target when its %s differs", async (field) => {
    const state = await seal(PAYLOAD, { current: KEY });
    const opened = await openSeal(state, { current: KEY }, NOW);
    if (!opened.ok) throw new Error("did not open");
    expect(sameTarget(opened.payload, TARGET)).toBe(true);
    expect(sameTarget(opened.payload, { ...TARGET, [field]: `${TARGET[field]}x` })).toBe(false);
  });

  it("binds the arguments by fingerprint: other arguments give another one, key order does not (randomized)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean())), fc.string({ minLength: 1, maxLength: 8 }), async (args, extra) => {
        const same = Object.fromEntries(Object.entries(args).reverse());
        expect(await argumentsFingerprint("demo_write", same)).toBe(await argumentsFingerprint("demo_write", args));
        const other = { ...args, [`${extra}-other`]: extra };
        expect(await argumentsFingerprint("demo_write", other)).not.toBe(await argumentsFingerprint("demo_write", args));
        expect(await argumentsFingerprint("other_tool", args)).not.toBe(await argumentsFingerprint("demo_write", args));
      }),
      { numRuns: 50 },
    );
  });
});

describe("the seal's keys", () => {
  it.each([
    ["unset", {}],
    ["empty", { STRAD_SEAL_KEY: "" }],
    [`one character short of ${MIN_SEAL_KEY_CHARS}`, { STRAD_SEAL_KEY: "s".repeat(MIN_SEAL_KEY_CHARS - 1) }],
    ["not a string", { STRAD_SEAL_KEY: 12345 }],
  ])("%s: the client path refuses, naming the variable and never its value", (_label, env) => {
    const keys = sealKeys(env);
    expect(keys.ok).toBe(false);
    if (keys.ok) return;
    expect(keys.reason).toContain("STRAD_SEAL_KEY");
    const value = (env as Record<string, unknown>).STRAD_SEAL_KEY;
    if (typeof value === "string" && value !== "") expect(keys.reason).not.toContain(value);
  });

  it("takes a key of 32 characters, and a previous key only when it is one too and differs", () => {
    expect(MIN_SEAL_KEY_CHARS).toBe(32);
    expect(sealKeys({ STRAD_SEAL_KEY: KEY })).toEqual({ ok: true, keys: { current: KEY } });
    expect(sealKeys({ STRAD_SEAL_KEY: KEY, STRAD_SEAL_KEY_PREVIOUS: OTHER_KEY })).toEqual({ ok: true, keys: { current: KEY, previous: OTHER_KEY } });
    expect(sealKeys({ STRAD_SEAL_KEY: KEY, STRAD_SEAL_KEY_PREVIOUS: "short" })).toEqual({ ok: true, keys: { current: KEY } });
    expect(sealKeys({ STRAD_SEAL_KEY: KEY, STRAD_SEAL_KEY_PREVIOUS: KEY })).toEqual({ ok: true, keys: { current: KEY } });
  });

  it("a seal lasts five minutes unless STRAD_SEAL_TTL_MS says otherwise, within its bounds", () => {
    expect(sealTtlMs({})).toBe(SEAL_TTL_MS.fallback);
    expect(sealTtlMs({ STRAD_SEAL_TTL_MS: "2000" })).toBe(2000);
    expect(sealTtlMs({ STRAD_SEAL_TTL_MS: "1" })).toBe(SEAL_TTL_MS.min);
    expect(sealTtlMs({ STRAD_SEAL_TTL_MS: String(SEAL_TTL_MS.max + 1) })).toBe(SEAL_TTL_MS.max);
    expect(sealTtlMs({ STRAD_SEAL_TTL_MS: "soon" })).toBe(SEAL_TTL_MS.fallback);
  });
});
