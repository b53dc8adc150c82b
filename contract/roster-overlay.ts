// What the gateway (worker/admin.ts, worker/overlay.ts) and the RosterOverlay Durable Object
// (durable-objects/roster-overlay.ts) share: the object's name, its API and its history rows (docs/rules.md R-RT-1).

/** The one global instance's name. */
export const OVERLAY_OBJECT = "global";
/** History rows kept; older ones are dropped on write. */
export const HISTORY_LIMIT = 1000;

/** One write: who (a caller id), what (op and slug), and the overlay's digest before and after; never a value. */
export interface HistoryEntry {
  seq: number;
  at: string;
  who: string;
  op: string;
  slug: string;
  before: string;
  after: string;
  version: number;
}

export type HistoryInput = Pick<HistoryEntry, "who" | "op" | "slug" | "before" | "after">;

export type OverlayWrite = { ok: true; version: number } | { ok: false; version: number };

export interface RosterOverlayApi {
  read(): { version: number; text: string | null } | Promise<{ version: number; text: string | null }>;
  /** Replaces the overlay only while it is still at `expected`, recording the write in the same transaction. */
  write(expected: number, text: string, entry: HistoryInput): OverlayWrite | Promise<OverlayWrite>;
  history(limit?: number): HistoryEntry[] | Promise<HistoryEntry[]>;
}

export type RosterOverlayNamespace = DurableObjectNamespace<RosterOverlayApi & Rpc.DurableObjectBranded>;
