// Covers the pads' edit lease in the CallRegistry Durable Object (durable-objects/call-registry.ts, contract/pad-lease.ts) on workerd, as the gateway build deploys it: one holder at a time per pad object, given back by its holder only, free again once it runs out, and never granted for longer than 10 s. The pads bundle's Node tests use a stand-in with these rules; this is the real one.
import { describe, expect, it } from "vitest";
import type { PadLeaseApi } from "../../contract/pad-lease";
import { PAD_LEASE_MS, padLeaseName } from "../../contract/pad-lease";
import { useCallRegistry } from "./helpers";

const calls = useCallRegistry();
let pads = 0;

/** The lease object of a pad of its own for each test, named as the bundle names it. */
async function padObject(pad = `Lease${++pads}`): Promise<PadLeaseApi> {
  const ns = await calls();
  return ns.get(ns.idFromName(await padLeaseName("http://127.0.0.1:3030", pad))) as unknown as PadLeaseApi;
}

const A = "holder-a-0123456789";
const B = "holder-b-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the CallRegistry's pad lease", () => {
  it("is one holder's at a time: another is refused until the holder gives it back", async () => {
    const lease = await padObject();
    expect(await lease.leasePad(A, PAD_LEASE_MS.request)).toBe(true);
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(false);
    await lease.releasePad(A);
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(true);
    expect(await lease.leasePad(A, PAD_LEASE_MS.request)).toBe(false);
  });

  it("is given back by its holder only: another holder's release frees nothing", async () => {
    const lease = await padObject();
    expect(await lease.leasePad(A, PAD_LEASE_MS.request)).toBe(true);
    await lease.releasePad(B);
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(false);
    // Its own holder may take it again.
    expect(await lease.leasePad(A, PAD_LEASE_MS.request)).toBe(true);
  });

  it("is free again once it runs out, so a holder that died never locks a pad for good", async () => {
    const lease = await padObject();
    // 2 s: long enough that the refusal below is asked while the lease surely holds, even when a loaded machine holds
    // an RPC for a few hundred milliseconds (300 ms once ran out between two of them), and B asks again just past it.
    const HELD_MS = 2_000;
    expect(await lease.leasePad(A, HELD_MS)).toBe(true);
    // The object started the lease before its answer came back: it has run out HELD_MS after this, at the latest.
    const granted = Date.now();
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(false);
    await sleep(granted + HELD_MS + 150 - Date.now());
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(true);
  });

  it("is granted for 10 s at most, whatever is asked for", { timeout: 30_000 }, async () => {
    // 10 s of waiting is the point of the test: the cap is what bounds a dead holder's lock. 30 s leaves room under load.
    const lease = await padObject();
    expect(PAD_LEASE_MS.max).toBe(10_000);
    expect(await lease.leasePad(A, 60 * 60 * 1000)).toBe(true);
    await sleep(PAD_LEASE_MS.max - 1_500);
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(false);
    await sleep(2_000);
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(true);
  });

  it("is per pad: another pad's lease is its own", async () => {
    const one = await padObject();
    const two = await padObject();
    expect(await one.leasePad(A, PAD_LEASE_MS.request)).toBe(true);
    expect(await two.leasePad(B, PAD_LEASE_MS.request)).toBe(true);
  });

  it("goes to exactly one of 16 holders asking at the same moment", async () => {
    const lease = await padObject();
    const holders = Array.from({ length: 16 }, (_, i) => `holder-${i.toString().padStart(2, "0")}-0123456789`);
    const won = await Promise.all(holders.map((h) => lease.leasePad(h, PAD_LEASE_MS.request)));
    expect(won.filter(Boolean)).toHaveLength(1);
  });

  it("refuses a malformed holder or a ttl that is not a number, and keeps the pad free", async () => {
    const lease = await padObject();
    expect(await lease.leasePad("short", PAD_LEASE_MS.request)).toBe(false);
    expect(await lease.leasePad("x".repeat(65), PAD_LEASE_MS.request)).toBe(false);
    expect(await lease.leasePad(A, Number.NaN)).toBe(false);
    expect(await lease.leasePad(B, PAD_LEASE_MS.request)).toBe(true);
  });
});
