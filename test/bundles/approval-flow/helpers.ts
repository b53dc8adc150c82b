// An in-memory stand-in for the Approval Flow store (approval-flow.store.ts), with the same rules: one object per
// name, a status that only moves forward, and apply handing the payload out once, before the expiry. The real one is
// run on workerd by store.workerd.unit.test.ts and by the e2e suite.
import type { ApplyFlow, CreateFlow, FlowRecord, FlowStoreApi, NewFlow, Settled, SettleFlow } from "../../../bundles/approval-flow/approval-flow.store";

class MemoryFlows implements FlowStoreApi {
  readonly rows = new Map<string, FlowRecord>();
  async create(flow: NewFlow): Promise<CreateFlow> {
    if (this.rows.has(flow.id)) return { ok: false, reason: "duplicate" };
    this.rows.set(flow.id, { ...flow, status: "pending", approver: null, settledAt: null, appliedAt: null });
    return { ok: true };
  }
  async rebind(id: string, requestId: string): Promise<void> {
    const row = this.rows.get(id);
    if (row?.status === "pending") row.requestId = requestId;
  }
  async drop(id: string): Promise<void> {
    if (this.rows.get(id)?.status === "pending") this.rows.delete(id);
  }
  async get(id: string): Promise<FlowRecord | undefined> {
    const row = this.rows.get(id);
    return row === undefined ? undefined : { ...row };
  }
  async settle(id: string, status: Settled, approver: string | null): Promise<SettleFlow> {
    const row = this.rows.get(id);
    if (row === undefined) return undefined;
    const changed = row.status === "pending";
    if (changed) Object.assign(row, { status, approver, settledAt: Date.now() });
    return { record: { ...row }, changed };
  }
  async apply(id: string, at?: number): Promise<ApplyFlow> {
    const row = this.rows.get(id);
    const now = Math.max(Date.now(), at ?? 0);
    if (row?.status !== "approved" || row.expiresAt <= now) return { ok: false, record: row === undefined ? undefined : { ...row } };
    Object.assign(row, { status: "applied", appliedAt: Date.now() });
    return { ok: true, payload: row.payload };
  }
}

/** A FLOWS namespace: `objects` maps each name (`caller:<id>`) to its store. */
export function memoryFlows() {
  const objects = new Map<string, MemoryFlows>();
  const ns = {
    idFromName: (name: string) => name,
    get: (name: string) => {
      let store = objects.get(name);
      if (store === undefined) {
        store = new MemoryFlows();
        objects.set(name, store);
      }
      return store;
    },
  };
  return { ns, objects };
}
