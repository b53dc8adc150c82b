// Covers the client question's seal nonces in the CallRegistry Durable Object (durable-objects/call-registry.ts spendSeal, docs/rules.md R-SEAL-3) on workerd, as the gateway build deploys it: a nonce spends once, only before its seal's expiry, in the caller's own object, racing retries included, and spent nonces are pruned once their seal expired.
import { describe, expect, it } from "vitest";
import { sealNonce } from "../../bundles/kit/seal";
import type { CallRegistry } from "../../durable-objects/call-registry";
import { useCallRegistry } from "./helpers";

interface Store {
  spendSeal: CallRegistry["spendSeal"];
  sealCount: CallRegistry["sealCount"];
}

const calls = useCallRegistry();
let scopes = 0;

async function store(scope = `seal-scope-${++scopes}`): Promise<Store> {
  const ns = await calls();
  return ns.get(ns.idFromName(scope)) as unknown as Store;
}

describe("the CallRegistry's seal nonces", () => {
  it("spends a nonce once, and never again", async () => {
    const s = await store();
    const nonce = sealNonce();
    expect(await s.spendSeal(nonce, Date.now() + 60_000)).toBe(true);
    expect(await s.spendSeal(nonce, Date.now() + 60_000)).toBe(false);
    expect(await s.spendSeal(sealNonce(), Date.now() + 60_000)).toBe(true);
  });

  it("lets exactly one of 20 racing retries with one nonce spend it", async () => {
    const s = await store();
    const nonce = sealNonce();
    const results = await Promise.all(Array.from({ length: 20 }, () => s.spendSeal(nonce, Date.now() + 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("keeps each caller's nonces apart: another caller's object never saw it", async () => {
    const nonce = sealNonce();
    expect(await (await store()).spendSeal(nonce, Date.now() + 60_000)).toBe(true);
    expect(await (await store()).spendSeal(nonce, Date.now() + 60_000)).toBe(true);
  });

  it("spends nothing for a seal already at or past its expiry, and refuses a nonce that is not one", async () => {
    const s = await store();
    expect(await s.spendSeal(sealNonce(), Date.now() - 1)).toBe(false);
    for (const bad of ["", "short", "A".repeat(23), "A".repeat(21), `${"A".repeat(21)}=`]) expect(await s.spendSeal(bad, Date.now() + 60_000)).toBe(false);
    expect(await s.spendSeal(sealNonce(), Number.NaN)).toBe(false);
    expect(await s.sealCount()).toBe(0);
  });

  it("drops a spent nonce once its seal expired, and keeps one whose seal has not", async () => {
    const s = await store();
    // 2 s, so both spends land before the first seal expires even on a loaded machine (150 ms did not, once, in a
    // full run under load: the second spend already pruned the first).
    const expires = Date.now() + 2_000;
    await s.spendSeal(sealNonce(), expires);
    await s.spendSeal(sealNonce(), Date.now() + 60_000);
    expect(await s.sealCount()).toBe(2);
    await new Promise((r) => setTimeout(r, expires + 100 - Date.now()));
    // The next spend prunes: the expired nonce goes, the live one stays, the new one joins.
    await s.spendSeal(sealNonce(), Date.now() + 60_000);
    expect(await s.sealCount()).toBe(2);
  });
});
