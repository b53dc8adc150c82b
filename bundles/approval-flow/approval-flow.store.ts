// The approval requests Approval Flow keeps: one SQLite Durable Object per caller (idFromName of the roster caller
// id), so one caller's request ids are never even looked up in another's (docs/rules.md R-FLOW-5). A request holds
// the payload exactly as given (compact JSON, capped), the approval request id, the approval session it was made on
// (a digest of the approval URL, never the URL), its expiry, and its status; the status only moves forward:
// pending -> approved | rejected | expired, approved -> applied, once and only before the expiry the person was shown
// (docs/rules.md R-FLOW-4, R-FLOW-12).
import { DurableObject } from "cloudflare:workers";

export type FlowStatus = "pending" | "approved" | "rejected" | "applied" | "expired";
/** What a poll of the approval service (or the deadline) settles a pending request as. */
export type Settled = "approved" | "rejected" | "expired";

export interface NewFlow {
  /** The elicitationId the agent holds: the bundle's own UUID. */
  id: string;
  /** The approval service's request id (the protocol's `com.pulsemcp/request-id`, or the one it named). */
  requestId: string;
  caller: string;
  /** The slug the request was asked under (its card named it): only a call on that slug reads it. Null on a request kept before slugs were (R-FLOW-5). */
  slug?: string | null;
  /** SHA-256 (hex) of the approval URL the request was made on: the approval session. */
  session: string;
  purpose: string;
  /** The payload as given, compact JSON. */
  payload: string;
  /** SHA-256 (hex) the approval is bound to: the request id, the purpose and the payload (bundles/kit/fingerprint.ts). */
  fingerprint: string;
  /** The card's digest as the approval service received it (bundles/kit/audit.ts cardDigest): every later line carries it (R-EDIT-6). */
  card?: string | null;
  createdAt: number;
  expiresAt: number;
}

export interface FlowRecord extends NewFlow {
  status: FlowStatus;
  approver: string | null;
  settledAt: number | null;
  appliedAt: number | null;
}

export type CreateFlow = { ok: true } | { ok: false; reason: "too_many" | "full" | "duplicate" };
/** `changed`: this call moved the request out of pending (and so writes the audit line for it). */
export type SettleFlow = { record: FlowRecord; changed: boolean } | undefined;
export type ApplyFlow = { ok: true; payload: string } | { ok: false; record: FlowRecord | undefined };

/** The object's RPC methods, as the tools call them (typed without the Rpc mapping, like the approval service's stub). */
export interface FlowStoreApi {
  create(flow: NewFlow): Promise<CreateFlow>;
  /** The approval service named another request id than the one proposed. */
  rebind(id: string, requestId: string): Promise<void>;
  /** The approval service refused the create: the request never existed. */
  drop(id: string): Promise<void>;
  get(id: string): Promise<FlowRecord | undefined>;
  settle(id: string, status: Settled, approver: string | null): Promise<SettleFlow>;
  /**
   * approved -> applied, once and only while the expiry is still ahead: the payload for the one call that moved it,
   * nothing for any other. `at` is the caller's clock (epoch ms); it can only move the check later than the store's
   * own clock, never earlier.
   */
  apply(id: string, at?: number): Promise<ApplyFlow>;
}

/** Pending requests one caller may hold at once, and requests kept in all, so a runaway agent cannot fill the store. */
export const MAX_PENDING_PER_CALLER = 100;
export const MAX_KEPT_PER_CALLER = 1_000;
/** A request is deleted this long after its expiry, whatever its status (an approval not applied by then is gone too). */
export const RETENTION_MS = 7 * 24 * 3600 * 1000;

type Row = {
  id: string;
  request_id: string;
  caller: string;
  session: string;
  purpose: string;
  payload: string;
  fingerprint: string;
  card: string | null;
  slug: string | null;
  created_at: number;
  expires_at: number;
  status: string;
  approver: string | null;
  settled_at: number | null;
  applied_at: number | null;
};

function toRecord(r: Row): FlowRecord {
  return {
    id: r.id,
    requestId: r.request_id,
    caller: r.caller,
    session: r.session,
    purpose: r.purpose,
    payload: r.payload,
    fingerprint: r.fingerprint,
    card: r.card ?? null,
    slug: r.slug ?? null,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    status: r.status as FlowStatus,
    approver: r.approver,
    settledAt: r.settled_at,
    appliedAt: r.applied_at,
  };
}

export class ApprovalFlowStore extends DurableObject<Record<string, unknown>> implements FlowStoreApi {
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS flows (
      id TEXT PRIMARY KEY, request_id TEXT NOT NULL, caller TEXT NOT NULL, session TEXT NOT NULL, purpose TEXT NOT NULL,
      payload TEXT NOT NULL, fingerprint TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      status TEXT NOT NULL, approver TEXT, settled_at INTEGER, applied_at INTEGER, card TEXT)`);
    // A store made before the card's digest was kept gains the column; its earlier requests carry null (R-EDIT-6).
    const columns = this.ctx.storage.sql.exec<{ name: string }>("PRAGMA table_info(flows)").toArray();
    if (!columns.some((c) => c.name === "card")) this.ctx.storage.sql.exec("ALTER TABLE flows ADD COLUMN card TEXT");
    // And the slug it was asked under; earlier requests carry null (R-FLOW-5).
    if (!columns.some((c) => c.name === "slug")) this.ctx.storage.sql.exec("ALTER TABLE flows ADD COLUMN slug TEXT");
  }

  private row(id: string): FlowRecord | undefined {
    const row = this.ctx.storage.sql.exec<Row>("SELECT * FROM flows WHERE id = ?", id).toArray()[0];
    return row === undefined ? undefined : toRecord(row);
  }

  async create(flow: NewFlow): Promise<CreateFlow> {
    const now = Date.now();
    if (this.row(flow.id) !== undefined) return { ok: false, reason: "duplicate" };
    const pending = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM flows WHERE status = 'pending' AND expires_at > ?", now).one().n;
    if (pending >= MAX_PENDING_PER_CALLER) return { ok: false, reason: "too_many" };
    const kept = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM flows").one().n;
    if (kept >= MAX_KEPT_PER_CALLER) return { ok: false, reason: "full" };
    this.ctx.storage.sql.exec(
      `INSERT INTO flows (id, request_id, caller, session, purpose, payload, fingerprint, card, slug, created_at, expires_at, status)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
      flow.id,
      flow.requestId,
      flow.caller,
      flow.session,
      flow.purpose,
      flow.payload,
      flow.fingerprint,
      flow.card ?? null,
      flow.slug ?? null,
      flow.createdAt,
      flow.expiresAt,
    );
    await this.schedule();
    return { ok: true };
  }

  async rebind(id: string, requestId: string): Promise<void> {
    this.ctx.storage.sql.exec("UPDATE flows SET request_id = ? WHERE id = ? AND status = 'pending'", requestId, id);
  }

  async drop(id: string): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM flows WHERE id = ? AND status = 'pending'", id);
  }

  async get(id: string): Promise<FlowRecord | undefined> {
    return this.row(id);
  }

  async settle(id: string, status: Settled, approver: string | null): Promise<SettleFlow> {
    // Only a pending request settles, and only once: a later poll never changes what an earlier one recorded.
    const changed = this.ctx.storage.sql.exec("UPDATE flows SET status = ?, approver = ?, settled_at = ? WHERE id = ? AND status = 'pending'", status, approver, Date.now(), id).rowsWritten > 0;
    const record = this.row(id);
    return record === undefined ? undefined : { record, changed };
  }

  async apply(id: string, at?: number): Promise<ApplyFlow> {
    // The yes lasts as long as the person was told: an approval is applied only before its expiry, checked here, where
    // it is used, on the later of the two clocks (docs/rules.md R-FLOW-12).
    const now = Math.max(Date.now(), at !== undefined && Number.isFinite(at) ? at : 0);
    // Tested and moved in one statement: two applies racing on one request cannot both be handed the payload.
    const moved = this.ctx.storage.sql.exec("UPDATE flows SET status = 'applied', applied_at = ? WHERE id = ? AND status = 'approved' AND expires_at > ?", now, id, now).rowsWritten > 0;
    const record = this.row(id);
    if (moved && record !== undefined) return { ok: true, payload: record.payload };
    return { ok: false, record };
  }

  override async alarm(): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM flows WHERE expires_at + ? <= ?", RETENTION_MS, Date.now());
    await this.schedule();
  }

  private async schedule(): Promise<void> {
    const next = this.ctx.storage.sql.exec<{ at: number | null }>("SELECT min(expires_at) + ? AS at FROM flows", RETENTION_MS).one().at;
    if (next === null) {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    if ((await this.ctx.storage.getAlarm()) !== next) await this.ctx.storage.setAlarm(next);
  }
}
