// One Durable Object per approval session: its prompts, their decisions, the polls held open on them.
// A prompt expires at its expiry (alarm), and is deleted a retention period after it was decided or
// expired, or sooner when a full session needs its room for a new prompt; a session with nothing left is
// deleted a retention period after its last activity.
import { DurableObject } from "cloudflare:workers";
import type { Json, NewPrompt } from "./prompt";
import { type ApprovalsEnv, DEFAULT_RETENTION_SECONDS, MAX_PENDING, MAX_PROMPTS, MAX_REQUEST_IDS, readSettings } from "./settings";

/** `cancel`: a person dismissed an abandoned prompt on the review page; a poll answers the protocol's `cancel`. */
export type PromptStatus = "pending" | "accept" | "decline" | "expired" | "cancel";

export interface PromptRecord extends NewPrompt {
  createdAt: number;
  status: PromptStatus;
  content: { [key: string]: Json } | null;
  decidedAt: number | null;
  decidedBy: string | null;
  /** Every poll, and those that carried the configured Access service token: proof the edge headers travelled. */
  polls: number;
  accessPolls: number;
  createdWithAccess: boolean;
}

export type Decision = { action: "accept"; content: { [key: string]: Json }; by: string } | { action: "decline"; by: string } | { action: "cancel"; by: string };

export type Missing = "unknown_session" | "unknown_prompt";
/** `evicted`: the settled prompts dropped, oldest first, to make room for this one (R-APPR-17). */
/** `ids_spent`: the session has used all MAX_REQUEST_IDS request ids it records (R-APPR-8). */
export type CreateResult = { ok: true; evicted: number } | { ok: false; reason: "unknown_session" | "duplicate" | "too_many" | "ids_spent" };
export type PollResult = { ok: true; prompt: PromptRecord; longPoll: boolean } | { ok: false; reason: Missing };
/**
 * A prompt as the review page's list carries it: no message (up to 48 KiB a prompt) and no schema (a form's defaults
 * may be 64 KiB), and for an accepted one only the names of the fields the person changed. The page fetches one
 * prompt whole, its message and form, once per card (R-APPR-17).
 */
export type PromptSummary = Omit<PromptRecord, "message" | "requestedSchema" | "content"> & { edited: string[] };
/** The review page's view: every pending prompt, the most recent settled ones, and how many older ones it leaves out. */
export type ReviewList = { prompts: PromptSummary[]; older: number };
export type DecideResult = { ok: true; prompt: PromptRecord } | { ok: false; reason: Missing } | { ok: false; reason: "not_pending"; prompt: PromptRecord };

/** What the routes call on a session's stub (the RPC methods below, typed without the Rpc mapping). */
export interface SessionApi {
  open(options?: { longPoll?: boolean; alarmDelayMs?: number }): Promise<void>;
  create(prompt: NewPrompt, access: boolean): Promise<CreateResult>;
  poll(requestId: string, waitMs: number, access: boolean): Promise<PollResult>;
  list(): Promise<PromptRecord[] | undefined>;
  /** Whether the session exists: what the review page's shell needs, without reading a single prompt. */
  live(): Promise<boolean>;
  /** One prompt as it stands (an expiry settled), for its own review page; undefined when the session or prompt is unknown. */
  prompt(requestId: string): Promise<PromptRecord | undefined>;
  review(recent: number): Promise<ReviewList | undefined>;
  decide(requestId: string, decision: Decision): Promise<DecideResult>;
}

type Row = {
  request_id: string;
  message: string;
  schema: string;
  tool_name: string | null;
  caller_session: string | null;
  created_at: number;
  expires_at: number;
  status: string;
  content: string | null;
  decided_at: number | null;
  decided_by: string | null;
  polls: number;
  access_polls: number;
  created_with_access: number;
  delete_at: number | null;
};

/** The columns of a summary: every one but the message and the schema, and the accepted content's keys in place of its values. */
const SUMMARY_COLUMNS = `request_id, tool_name, caller_session, created_at, expires_at, status, decided_at, decided_by, polls, access_polls,
  created_with_access, CASE WHEN status = 'accept' AND content IS NOT NULL
    THEN (SELECT json_group_array(key) FROM json_each(content) WHERE key != 'confirm') ELSE '[]' END AS edited`;

type SummaryRow = Omit<Row, "message" | "schema" | "content" | "delete_at"> & { edited: string };

function toSummary(r: SummaryRow): PromptSummary {
  return {
    requestId: r.request_id,
    toolName: r.tool_name,
    callerSessionId: r.caller_session,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    status: r.status as PromptStatus,
    decidedAt: r.decided_at,
    decidedBy: r.decided_by,
    polls: r.polls,
    accessPolls: r.access_polls,
    createdWithAccess: r.created_with_access === 1,
    edited: JSON.parse(r.edited) as string[],
  };
}

function toRecord(r: Row): PromptRecord {
  return {
    requestId: r.request_id,
    message: r.message,
    requestedSchema: JSON.parse(r.schema) as { [key: string]: Json },
    toolName: r.tool_name,
    callerSessionId: r.caller_session,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    status: r.status as PromptStatus,
    content: r.content === null ? null : (JSON.parse(r.content) as { [key: string]: Json }),
    decidedAt: r.decided_at,
    decidedBy: r.decided_by,
    polls: r.polls,
    accessPolls: r.access_polls,
    createdWithAccess: r.created_with_access === 1,
  };
}

/** What a session records of a request id it took: 16 bytes of its SHA-256 (a chance collision refuses a new id, never reopens an old one). */
async function usedId(requestId: string): Promise<ArrayBuffer> {
  return (await crypto.subtle.digest("SHA-256", new TextEncoder().encode(requestId))).slice(0, 16);
}

export class SessionStore extends DurableObject<ApprovalsEnv> implements SessionApi {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly retentionMs: number;
  /** DEV_ALARM_DELAY_MS as the session was minted with it (0 in production); loaded on first use. */
  private alarmDelayMs: number | undefined;

  constructor(ctx: DurableObjectState, env: ApprovalsEnv) {
    super(ctx, env);
    const settings = readSettings(env);
    this.retentionMs = settings.ok ? settings.settings.retentionMs : DEFAULT_RETENTION_SECONDS * 1000;
    this.schema();
  }

  private schema(): void {
    this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY CHECK (id = 1), created_at INTEGER NOT NULL, last_active INTEGER NOT NULL)`);
    this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS prompts (
      request_id TEXT PRIMARY KEY, message TEXT NOT NULL, schema TEXT NOT NULL, tool_name TEXT, caller_session TEXT,
      created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, status TEXT NOT NULL, content TEXT,
      decided_at INTEGER, decided_by TEXT, polls INTEGER NOT NULL DEFAULT 0, access_polls INTEGER NOT NULL DEFAULT 0,
      created_with_access INTEGER NOT NULL DEFAULT 0, delete_at INTEGER)`);
    // Every request id the session has taken, kept when its prompt is evicted or deleted, so an id is never taken twice
    // (R-APPR-8): an old poll or one-prompt link never answers for another prompt. 16 bytes of SHA-256 each, bounded by MAX_REQUEST_IDS.
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS used_ids (id BLOB PRIMARY KEY) WITHOUT ROWID");
    // Their count, kept apart so a create reads one row rather than counting up to a million.
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS used_count (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)");
  }

  private exists(): boolean {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM session").one().n > 0;
  }

  private touch(now: number): void {
    this.ctx.storage.sql.exec("UPDATE session SET last_active = ?", now);
  }

  /** Settles a prompt whose expiry has passed even if the alarm has not run yet, and returns it. */
  private read(requestId: string, now = Date.now()): PromptRecord | undefined {
    this.settle(now, requestId);
    const row = this.ctx.storage.sql.exec<Row>("SELECT * FROM prompts WHERE request_id = ?", requestId).toArray()[0];
    return row === undefined ? undefined : toRecord(row);
  }

  /** Marks expired every pending prompt (or the one named) whose expiry has passed, whether or not its alarm ran. */
  private settle(now: number, requestId?: string): void {
    const expired = "UPDATE prompts SET status = 'expired', delete_at = expires_at + ? WHERE status = 'pending' AND expires_at <= ?";
    if (requestId === undefined) this.ctx.storage.sql.exec(expired, this.retentionMs, now);
    else this.ctx.storage.sql.exec(`${expired} AND request_id = ?`, this.retentionMs, now, requestId);
  }

  /**
   * Called when the operator mints the session: only a minted session accepts prompts. `longPoll: false`
   * makes its polls ignore `Prefer: wait`, as a plain pulsemcp service would (the bench compares both).
   */
  async open(options: { longPoll?: boolean; alarmDelayMs?: number } = {}): Promise<void> {
    const now = Date.now();
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO session (id, created_at, last_active) VALUES (1, ?, ?)", now, now);
    if (options.longPoll === false) await this.ctx.storage.put("longPoll", false);
    // Tests only (DEV_ALARM_DELAY_MS, dev mode on loopback): the route passes it; production never does.
    if (options.alarmDelayMs !== undefined && options.alarmDelayMs > 0) {
      this.alarmDelayMs = options.alarmDelayMs;
      await this.ctx.storage.put("alarmDelayMs", options.alarmDelayMs);
    }
    await this.schedule();
  }

  async create(prompt: NewPrompt, access: boolean): Promise<CreateResult> {
    // Hashed before any check: no await may fall between the checks and the insert below.
    const used = await usedId(prompt.requestId);
    if (!this.exists()) return { ok: false, reason: "unknown_session" };
    const now = Date.now();
    // A prompt past its expiry is history now, whether or not its alarm ran: it neither counts as pending nor is spared below.
    this.settle(now);
    // A stored prompt, or one evicted or deleted since (its id recorded): either way the id is spent (R-APPR-8).
    if (this.read(prompt.requestId, now) !== undefined) return { ok: false, reason: "duplicate" };
    if (this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM used_ids WHERE id = ?", used).one().n > 0) return { ok: false, reason: "duplicate" };
    const spent = this.ctx.storage.sql.exec<{ n: number }>("SELECT n FROM used_count").toArray()[0]?.n ?? 0;
    if (spent >= MAX_REQUEST_IDS) return { ok: false, reason: "ids_spent" };
    const pending = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM prompts WHERE status = 'pending'").one().n;
    if (pending >= MAX_PENDING) return { ok: false, reason: "too_many" };
    // R-APPR-17: a full session makes room by dropping its oldest settled prompts (by when they settled), never a
    // pending one; with fewer than MAX_PENDING pending there are always enough settled ones to drop.
    const kept = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM prompts").one().n;
    const evicted = Math.max(0, kept + 1 - MAX_PROMPTS);
    if (evicted > 0) {
      this.ctx.storage.sql.exec(
        `DELETE FROM prompts WHERE request_id IN (
           SELECT request_id FROM prompts WHERE status != 'pending' ORDER BY coalesce(decided_at, expires_at), created_at, request_id LIMIT ?)`,
        evicted,
      );
    }
    this.ctx.storage.sql.exec(
      `INSERT INTO prompts (request_id, message, schema, tool_name, caller_session, created_at, expires_at, status, created_with_access)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
      prompt.requestId,
      prompt.message,
      JSON.stringify(prompt.requestedSchema),
      prompt.toolName,
      prompt.callerSessionId,
      now,
      prompt.expiresAt,
      access ? 1 : 0,
    );
    this.ctx.storage.sql.exec("INSERT INTO used_ids (id) VALUES (?)", used);
    this.ctx.storage.sql.exec("INSERT INTO used_count (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1");
    this.touch(now);
    await this.schedule();
    return { ok: true, evicted };
  }

  /** Answers at once, or holds up to waitMs (never past the expiry) until the prompt is decided. */
  async poll(requestId: string, requestedWaitMs: number, access: boolean): Promise<PollResult> {
    if (!this.exists()) return { ok: false, reason: "unknown_session" };
    const longPoll = (await this.ctx.storage.get("longPoll")) !== false;
    const waitMs = longPoll ? requestedWaitMs : 0;
    const now = Date.now();
    let prompt = this.read(requestId, now);
    if (prompt === undefined) return { ok: false, reason: "unknown_prompt" };
    this.ctx.storage.sql.exec("UPDATE prompts SET polls = polls + 1, access_polls = access_polls + ? WHERE request_id = ?", access ? 1 : 0, requestId);
    this.touch(now);
    if (prompt.status === "pending" && waitMs > 0) {
      await this.wait(requestId, Math.min(waitMs, prompt.expiresAt - now));
      prompt = this.read(requestId);
      if (prompt === undefined) return { ok: false, reason: "unknown_prompt" };
    }
    return { ok: true, prompt, longPoll };
  }

  async live(): Promise<boolean> {
    return this.exists();
  }

  async list(): Promise<PromptRecord[] | undefined> {
    if (!this.exists()) return undefined;
    this.settle(Date.now());
    return this.ctx.storage.sql.exec<Row>("SELECT * FROM prompts ORDER BY created_at DESC").toArray().map(toRecord);
  }

  async prompt(requestId: string): Promise<PromptRecord | undefined> {
    if (!this.exists()) return undefined;
    return this.read(requestId);
  }

  /** What the review page polls every 2 s: every pending prompt (at most MAX_PENDING) and the `recent` latest settled ones. */
  async review(recent: number): Promise<ReviewList | undefined> {
    if (!this.exists()) return undefined;
    this.settle(Date.now());
    // Never the messages or the schemas: 100 pending prompts of 48 KiB and forms of 64 KiB would cost megabytes every
    // refresh of every open page.
    const pending = this.ctx.storage.sql.exec<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM prompts WHERE status = 'pending' ORDER BY expires_at`).toArray();
    const settled = this.ctx.storage.sql
      .exec<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM prompts WHERE status != 'pending' ORDER BY coalesce(decided_at, expires_at) DESC, created_at DESC LIMIT ?`, Math.max(0, recent))
      .toArray();
    const all = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM prompts WHERE status != 'pending'").one().n;
    return { prompts: [...pending, ...settled].map(toSummary), older: Math.max(0, all - settled.length) };
  }

  async decide(requestId: string, decision: Decision): Promise<DecideResult> {
    if (!this.exists()) return { ok: false, reason: "unknown_session" };
    const now = Date.now();
    // The expiry is checked again now, not left to the alarm: a decision racing the expiry alarm finds the prompt expired.
    const prompt = this.read(requestId, now);
    if (prompt === undefined) return { ok: false, reason: "unknown_prompt" };
    // Decided or expired is final: a late or second decision never changes the answer a poll saw.
    if (prompt.status !== "pending") return { ok: false, reason: "not_pending", prompt };
    this.ctx.storage.sql.exec(
      "UPDATE prompts SET status = ?, content = ?, decided_at = ?, decided_by = ?, delete_at = ? WHERE request_id = ? AND status = 'pending'",
      decision.action,
      decision.action === "accept" ? JSON.stringify(decision.content) : null,
      now,
      decision.by,
      now + this.retentionMs,
      requestId,
    );
    this.touch(now);
    this.wake(requestId);
    await this.schedule();
    const decided = this.read(requestId, now);
    return decided === undefined ? { ok: false, reason: "unknown_prompt" } : { ok: true, prompt: decided };
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const expiring = this.ctx.storage.sql.exec<{ request_id: string }>("SELECT request_id FROM prompts WHERE status = 'pending' AND expires_at <= ?", now).toArray();
    for (const { request_id } of expiring) {
      this.read(request_id, now);
      this.wake(request_id);
    }
    this.ctx.storage.sql.exec("DELETE FROM prompts WHERE delete_at IS NOT NULL AND delete_at <= ?", now);
    const left = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM prompts").one().n;
    const session = this.ctx.storage.sql.exec<{ last_active: number }>("SELECT last_active FROM session").toArray()[0];
    if (left === 0 && (session === undefined || session.last_active + this.retentionMs <= now)) {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.schema();
      return;
    }
    await this.schedule();
  }

  private async schedule(): Promise<void> {
    // The session's own deletion counts only once it holds no prompts, or the alarm would fire in a loop.
    const next = this.ctx.storage.sql
      .exec<{ at: number | null }>(
        `SELECT coalesce(
           (SELECT min(CASE WHEN status = 'pending' THEN expires_at ELSE delete_at END) FROM prompts),
           (SELECT last_active + ? FROM session)) AS at`,
        this.retentionMs,
      )
      .one().at;
    if (next === null) return;
    this.alarmDelayMs ??= (await this.ctx.storage.get<number>("alarmDelayMs")) ?? 0;
    const at = next + this.alarmDelayMs;
    if ((await this.ctx.storage.getAlarm()) !== at) await this.ctx.storage.setAlarm(at);
  }

  private wait(requestId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(requestId) ?? new Set<() => void>();
      this.waiters.set(requestId, set);
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(requestId) === set) this.waiters.delete(requestId);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
    });
  }

  private wake(requestId: string): void {
    for (const done of [...(this.waiters.get(requestId) ?? [])]) done();
  }
}
