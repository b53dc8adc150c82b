// Covers the gateway's overlay reader (worker/overlay.ts overlayReader, docs/rules.md R-RT-2): no request waits on a read
// another request made (workerd cancels such a waiter as hung), yet every isolate serves a write within OVERLAY_TTL_MS
// plus one bounded read of it, and reads the object once per OVERLAY_TTL_MS under steady traffic.
import { describe, expect, it } from "vitest";
import { type EffectiveView, OVERLAY_READ_TIMEOUT_MS, OVERLAY_TTL_MS, overlayReader } from "../../worker/overlay";
import type { Roster } from "../../worker/roster";
import { parseRoster } from "../../worker/roster-text";

const BASE = parseRoster(`callers:
  - id: alice
    kind: session
    roles: [user]
    tokenSecret: STRAD_TOKEN_ALICE
servers:
  - slug: echo
    kind: bundle
    bundle: ECHO
    path: /echo
    entitlements: [user]
`);
if (!BASE.ok) throw new Error("the test roster does not parse");
const roster: Roster = BASE.roster;

/** An object whose every read waits until the test releases it, one by one. */
class HeldStore {
  version = 0;
  readonly held: { release: () => void; version: number }[] = [];
  read() {
    const version = this.version;
    return new Promise<{ version: number; text: string | null }>((resolve) => {
      this.held.push({ version, release: () => resolve({ version, text: null }) });
    });
  }
}

/** A clock the test sets, and a reader over `store` on it. */
function reader(store: HeldStore) {
  const clock = { t: 1_000_000 };
  const view = overlayReader(
    roster,
    () => store,
    OVERLAY_TTL_MS,
    () => clock.t,
    OVERLAY_READ_TIMEOUT_MS,
  );
  return { clock, view: () => view({}) };
}

/** Lets the reads just asked for reach the object (the bounded read asks it a microtask later). */
const flush = () => new Promise((r) => setTimeout(r, 0));

/** A reader whose first view (version 0) was read and released: the isolate's state once warm. */
async function warmed(store: HeldStore) {
  const warm = reader(store);
  const first = warm.view();
  await flush();
  expect(store.held).toHaveLength(1);
  store.held[0]?.release();
  expect((await first).version).toBe(0);
  return warm;
}

/** Whether `p` settled after the microtasks queued now have run (nothing else is released meanwhile). */
async function settled(p: Promise<EffectiveView>): Promise<EffectiveView | "pending"> {
  const pending = Symbol("pending");
  const first = await Promise.race([p, new Promise<typeof pending>((r) => setTimeout(() => r(pending), 20))]);
  return first === pending ? "pending" : first;
}

describe("the overlay reader", () => {
  it("while one request's read is in flight, every other request is served the view it will replace, without waiting on it", async () => {
    const store = new HeldStore();
    const { clock, view } = await warmed(store);

    // The view turns stale: the next request reads, and a write lands at the object meanwhile.
    clock.t += OVERLAY_TTL_MS;
    store.version = 1;
    const refresher = view();
    await flush();
    expect(store.held).toHaveLength(2);
    // Requests up to one bounded read past the stale view's age are answered at once, from the old view.
    for (const at of [0, 1, OVERLAY_READ_TIMEOUT_MS - 1]) {
      clock.t = 1_000_000 + OVERLAY_TTL_MS + at;
      const other = await settled(view());
      expect(other, `${at} ms into the read`).not.toBe("pending");
      expect((other as EffectiveView).version).toBe(0);
    }
    await flush();
    expect(store.held).toHaveLength(2);
    expect(await settled(refresher)).toBe("pending");
    store.held[1]?.release();
    expect((await refresher).version).toBe(1);
    // From then on the new view, with no further read.
    expect((await view()).version).toBe(1);
    await flush();
    expect(store.held).toHaveLength(2);
  });

  it("a request whose only view is older than OVERLAY_TTL_MS plus one bounded read reads for itself, and never waits on another's read", async () => {
    const store = new HeldStore();
    const { clock, view } = await warmed(store);
    // A refresh starts just before the view passes the bound (the isolate was idle until then).
    clock.t = 1_000_000 + OVERLAY_TTL_MS + OVERLAY_READ_TIMEOUT_MS - 1;
    store.version = 1;
    const refresher = view();
    await flush();
    expect(store.held).toHaveLength(2);
    // One millisecond later the old view is past the bound: this request reads the object itself...
    clock.t += 1;
    const late = view();
    await flush();
    expect(store.held).toHaveLength(3);
    // ...and its answer is its own read's, while the other read is still held.
    store.held[2]?.release();
    expect(await settled(late)).toMatchObject({ version: 1 });
    expect(await settled(refresher)).toBe("pending");
    store.held[1]?.release();
    expect((await refresher).version).toBe(1);
  });

  it("requests that find no view at all each read for themselves, none waiting on another's read", async () => {
    const store = new HeldStore();
    const { view } = reader(store);
    const a = view();
    const b = view();
    await flush();
    expect(store.held).toHaveLength(2);
    store.held[1]?.release();
    expect(await settled(b)).toMatchObject({ version: 0 });
    expect(await settled(a)).toBe("pending");
    store.held[0]?.release();
    expect((await a).version).toBe(0);
  });

  it("under steady traffic reads the object once per OVERLAY_TTL_MS, however many requests arrive during the read", async () => {
    const store = new HeldStore();
    const { clock, view } = await warmed(store);
    for (let round = 1; round <= 5; round++) {
      clock.t = 1_000_000 + round * OVERLAY_TTL_MS;
      const refresher = view();
      const others = Array.from({ length: 20 }, () => view());
      await flush();
      expect(store.held, `round ${round}`).toHaveLength(round + 1);
      for (const other of others) expect(await settled(other)).not.toBe("pending");
      store.held[round]?.release();
      await refresher;
      clock.t += OVERLAY_TTL_MS - 1;
      await view();
      await flush();
      expect(store.held, `round ${round}, still fresh`).toHaveLength(round + 1);
    }
  });

  it("a read that never answers stops counting as the isolate's refresh after OVERLAY_READ_TIMEOUT_MS: the next request refreshes", async () => {
    const store = new HeldStore();
    const { clock, view } = await warmed(store);
    clock.t = 1_000_000 + OVERLAY_TTL_MS;
    void view();
    await flush();
    expect(store.held).toHaveLength(2);
    // Within the bound, the old view answers; the held read is still the refresh.
    clock.t += OVERLAY_READ_TIMEOUT_MS - 1;
    expect(await settled(view())).not.toBe("pending");
    await flush();
    expect(store.held).toHaveLength(2);
    // Past it, the view is too old to serve and the held read no longer counts: this request reads.
    clock.t += 1;
    const next = view();
    await flush();
    expect(store.held).toHaveLength(3);
    store.held[2]?.release();
    expect(await settled(next)).toMatchObject({ version: 0 });
    // Nothing is left held for a later file's clock (its bounded read would give up after OVERLAY_READ_TIMEOUT_MS).
    store.held[1]?.release();
  });
});
