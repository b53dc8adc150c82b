// Covers the two-call token's store in the CallRegistry Durable Object (durable-objects/call-registry.ts) on
// workerd, as the gateway build deploys it: a token is random and single-use, checked against exactly the binding it
// was issued for, in the caller's own object only, until it expires; a caller holds a bounded number. The pads
// bundle's Node tests use a stand-in with these rules; this is the real one.
import { describe, expect, it } from "vitest";
import { MAX_LIVE_TOKENS, TOKEN_PATTERN } from "../../contract/call-registry";
import type { CallRegistry } from "../../durable-objects/call-registry";
import { useCallRegistry } from "./helpers";

interface Store {
  mintToken: CallRegistry["mintToken"];
  redeemToken: CallRegistry["redeemToken"];
}

const calls = useCallRegistry();
let scopes = 0;

async function store(scope = `token-scope-${++scopes}`): Promise<Store> {
  const ns = await calls();
  return ns.get(ns.idFromName(scope)) as unknown as Store;
}

const BINDING = { args: "a".repeat(64), target: "b".repeat(64) };

async function mint(s: Store, binding = BINDING, ttlMs = 60_000): Promise<string> {
  const minted = await s.mintToken(binding, ttlMs);
  if (!minted.ok) throw new Error("no token");
  return minted.token;
}

describe("the CallRegistry's two-call tokens", () => {
  it("issues a random token of 32 bytes, which spends once for exactly its binding", async () => {
    const s = await store();
    const token = await mint(s);
    expect(token).toMatch(TOKEN_PATTERN);
    expect(await mint(s)).not.toBe(token);
    expect(await s.redeemToken(token, BINDING)).toBe("ok");
    expect(await s.redeemToken(token, BINDING)).toBe("used");
  });

  it("refuses other arguments or another target without spending the token", async () => {
    const s = await store();
    const token = await mint(s);
    expect(await s.redeemToken(token, { ...BINDING, args: "c".repeat(64) })).toBe("arguments_differ");
    expect(await s.redeemToken(token, { ...BINDING, target: "c".repeat(64) })).toBe("target_changed");
    expect(await s.redeemToken(token, BINDING)).toBe("ok");
  });

  it("knows no forged token, and no token of another caller's object", async () => {
    const s = await store();
    const token = await mint(s);
    expect(await s.redeemToken("A".repeat(43), BINDING)).toBe("unknown");
    expect(await s.redeemToken("not a token", BINDING)).toBe("unknown");
    expect(await (await store()).redeemToken(token, BINDING)).toBe("unknown");
    expect(await s.redeemToken(token, BINDING)).toBe("ok");
  });

  it("refuses a token past its expiry", async () => {
    const s = await store();
    const token = await mint(s, BINDING, 50);
    await new Promise((r) => setTimeout(r, 120));
    expect(await s.redeemToken(token, BINDING)).toBe("expired");
  });

  it(`holds at most ${MAX_LIVE_TOKENS} unexpired tokens per caller`, async () => {
    const s = await store();
    for (let i = 0; i < MAX_LIVE_TOKENS; i++) expect((await s.mintToken(BINDING, 60_000)).ok).toBe(true);
    expect(await s.mintToken(BINDING, 60_000)).toEqual({ ok: false, reason: "too_many" });
  });
});
