// The runtime roster overlay (docs/rules.md R-RT-1): one global object holding the overlay's text, its version, and
// the history of every write (who, when, what, before/after digest). It stores what the gateway's admin API has
// already checked (worker/admin.ts, worker/overlay.ts); the gateway re-checks on every read, so a bad text here
// can never take it down (R-RT-6).
import { DurableObject } from "cloudflare:workers";
import { HISTORY_LIMIT, type HistoryEntry, type HistoryInput, type OverlayWrite, type RosterOverlayApi } from "../contract/roster-overlay";

export class RosterOverlay extends DurableObject implements RosterOverlayApi {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS overlay (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, text TEXT NOT NULL)");
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS history (seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL, op TEXT NOT NULL, slug TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL, version INTEGER NOT NULL)",
    );
  }

  read(): { version: number; text: string | null } {
    const row = this.ctx.storage.sql.exec<{ version: number; text: string }>("SELECT version, text FROM overlay WHERE id = 1").toArray()[0];
    return row === undefined ? { version: 0, text: null } : { version: row.version, text: row.text };
  }

  /**
   * Replaces the overlay only if it is still at `expected` (two operators writing at once: the second is told and
   * retries against the new one), and records the write in the same transaction.
   */
  write(expected: number, text: string, entry: HistoryInput): OverlayWrite {
    return this.ctx.storage.transactionSync(() => {
      const current = this.read().version;
      if (current !== expected) return { ok: false, version: current };
      const version = current + 1;
      this.ctx.storage.sql.exec("INSERT INTO overlay (id, version, text) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version, text = excluded.text", version, text);
      this.ctx.storage.sql.exec(
        "INSERT INTO history (at, who, op, slug, before, after, version) VALUES (?, ?, ?, ?, ?, ?, ?)",
        new Date().toISOString(),
        entry.who,
        entry.op,
        entry.slug,
        entry.before,
        entry.after,
        version,
      );
      this.ctx.storage.sql.exec("DELETE FROM history WHERE seq <= (SELECT MAX(seq) FROM history) - ?", HISTORY_LIMIT);
      return { ok: true, version };
    });
  }

  history(limit = 100): HistoryEntry[] {
    const n = Math.max(1, Math.min(HISTORY_LIMIT, Math.floor(limit)));
    return this.ctx.storage.sql.exec<HistoryEntry & Record<string, SqlStorageValue>>("SELECT * FROM history ORDER BY seq DESC LIMIT ?", n).toArray();
  }
}
