// The Approval Flow store (approval-flow.store.ts) as deployed, a SQLite Durable Object on workerd through Miniflare: apply hands the payload out only for an approved request, once, and only before its expiry (1 ms before, at, 1 ms after).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FlowStoreApi, NewFlow } from "../../../bundles/approval-flow/approval-flow.store";
// @ts-expect-error: a plain ES module without types
import { buildWorker, startRuntime } from "../../../scripts/stack.mjs";

const built = mkdtempSync(join(tmpdir(), "strad-flow-store-"));
let runtime: { miniflare: { getDurableObjectNamespace(name: string): Promise<DurableObjectNamespace> }; stop: () => Promise<void> };

// A build (`wrangler deploy --dry-run`) and a workerd start: a few seconds on an idle machine, and several times that
// on the shared 2-core one under other engineers' suites; 120 s is the bound the other workerd tests here use.
beforeAll(async () => {
  const flow = buildWorker("bundles/approval-flow/wrangler.toml", { into: built }) as { durableObjects: Record<string, unknown> };
  // The CallRegistry binding points at the gateway's script, which no store method uses: left out, so one Worker runs.
  const { CALLS: _gateway, ...objects } = flow.durableObjects;
  runtime = await startRuntime([{ ...flow, durableObjects: objects }]);
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(built, { recursive: true, force: true });
});

// Each store call is an RPC into workerd: a few ms idle, up to half a second each on the loaded 2-core machine, and a
// test makes up to a dozen.
const RPC_TEST_MS = 30_000;

let callers = 0;
/** A store of its own for each test, named as the tools name one (one object per caller). */
async function store(): Promise<FlowStoreApi> {
  const ns = await runtime.miniflare.getDurableObjectNamespace("FLOWS");
  return ns.get(ns.idFromName(`caller:store-test-${++callers}`)) as unknown as FlowStoreApi;
}

function flow(expiresAt: number, payload = '{"deploy":"api"}'): NewFlow {
  return {
    id: crypto.randomUUID(),
    requestId: crypto.randomUUID(),
    caller: "dev-session",
    session: "0".repeat(64),
    purpose: "Deploy",
    payload,
    fingerprint: "f".repeat(64),
    createdAt: expiresAt - 60_000,
    expiresAt,
  };
}

describe("issue 26: the real store applies only an approved request, before its expiry", () => {
  it(
    "issue 26: refuses a pending, a rejected and an expired request, leaving each as it was; applies an approved one once",
    async () => {
      const s = await store();
      const later = Date.now() + 60_000;
      const [pending, rejected, expired, approved] = [flow(later), flow(later), flow(later), flow(later, '{"run":"payroll"}')];
      for (const f of [pending, rejected, expired, approved]) expect(await s.create(f)).toEqual({ ok: true });
      await s.settle(rejected.id, "rejected", "ada@example.com");
      await s.settle(expired.id, "expired", null);
      await s.settle(approved.id, "approved", "ada@example.com");
      for (const [f, status] of [
        [pending, "pending"],
        [rejected, "rejected"],
        [expired, "expired"],
      ] as const) {
        const refused = await s.apply(f.id);
        expect(refused.ok).toBe(false);
        expect(refused.ok ? undefined : refused.record?.status).toBe(status);
        expect((await s.get(f.id))?.appliedAt).toBeNull();
      }
      expect(await s.apply(approved.id)).toEqual({ ok: true, payload: '{"run":"payroll"}' });
      const again = await s.apply(approved.id);
      expect(again.ok).toBe(false);
      expect(again.ok ? undefined : again.record?.status).toBe("applied");
      // An unknown id is refused with no record.
      expect(await s.apply(crypto.randomUUID())).toEqual({ ok: false, record: undefined });
    },
    RPC_TEST_MS,
  );

  it.each([
    [-1, "hands the payload out"],
    [0, "refuses it"],
    [1, "refuses it"],
  ])(
    "issue 26: an approval applied %i ms from its expiry: the store %s",
    async (offset, outcome) => {
      const handed = outcome === "hands the payload out";
      const s = await store();
      // The expiry is ahead on the store's own clock, so the caller's clock decides the edge.
      const f = flow(Date.now() + 60_000);
      await s.create(f);
      await s.settle(f.id, "approved", "ada@example.com");
      const applied = await s.apply(f.id, f.expiresAt + offset);
      if (handed) {
        expect(applied).toEqual({ ok: true, payload: f.payload });
        expect((await s.get(f.id))?.status).toBe("applied");
        return;
      }
      expect(applied.ok).toBe(false);
      // Nothing handed out, and nothing moved: still approved, never applied.
      expect(await s.get(f.id)).toMatchObject({ status: "approved", appliedAt: null });
    },
    RPC_TEST_MS,
  );

  it(
    "issue 26: goes by its own clock when it is the later one: an approval whose expiry has passed is refused, whatever earlier time the caller says",
    async () => {
      const s = await store();
      const f = flow(Date.now() - 1);
      await s.create(f);
      await s.settle(f.id, "approved", null);
      for (const at of [undefined, f.expiresAt - 1, f.expiresAt - 60_000, Number.NaN, Number.NEGATIVE_INFINITY]) {
        const applied = await s.apply(f.id, at);
        expect(applied.ok, String(at)).toBe(false);
      }
      expect(await s.get(f.id)).toMatchObject({ status: "approved", appliedAt: null });
    },
    RPC_TEST_MS,
  );
});
