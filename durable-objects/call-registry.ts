// Per-call state of confirmed tool calls, one object per caller. A call is registered by the gateway
// isolate that forwards it (watch), can be cancelled from any isolate by the same caller, expires at its
// deadline (alarm), and can be claimed by the bundle's send gate at most once, and only while live.
// Records live in one SQLite table indexed by key and by when each is next due (its deadline while live, its
// deletion after), so no request, alarm or restart walks every record; a caller holds at most MAX_LIVE_CALLS live.
// The caller's two-call tokens live here too, by digest, in a table of their own (docs/rules.md R-PAD-8).
import { DurableObject } from "cloudflare:workers";
import {
  ANSWER_WORD,
  type CallRegistryApi,
  CLAIM_CONFIRM_MAX_MS,
  claimHoldMs,
  MAX_LIVE_CALLS,
  MAX_LIVE_TOKENS,
  MAX_QUESTION_ROUNDS,
  type MintedToken,
  questionTag,
  SEAL_NONCE_PATTERN,
  TOKEN_PATTERN,
  TOKEN_TTL_MS,
  type TokenBinding,
  type TokenCheck,
  WATCH_PATH,
  type WatchRequest,
  type WatchWord,
} from "../contract/call-registry";
import { PAD_LEASE_HOLDER, PAD_LEASE_MS, type PadLeaseApi } from "../contract/pad-lease";

type State = "live" | "ended" | "cancelled" | "expired";

interface CallRow {
  /** The gateway's per-call value: only the call that registered the record can claim or end it. */
  nonce: string;
  deadline: number;
  state: State;
  claimed: number;
  [column: string]: SqlStorageValue;
}

/** The watching gateway's stream of a live record, on this activation only (a stream does not survive an eviction). */
interface Watcher {
  nonce: string;
  notify: WritableStreamDefaultWriter<Uint8Array>;
  /** The question rounds whose answer was handed on already: a second answer to one round is refused. */
  answered?: Set<number>;
}

/** A claim on hold, waiting for the gateway's confirm() or for the call to leave the live state. */
interface Held {
  nonce: string;
  confirmed: boolean;
  wake: () => void;
}

/** How long a finished call's record is kept: a claim or cancel that arrives late finds it ended rather than unknown. */
const RETAIN_MS = 15 * 60 * 1000;
/** Records the alarm settles per run; it runs again at once for the rest. */
const ALARM_BATCH = 512;
/** Storage layout: 2 is the SQL table; 1 kept one key-value entry per record ("call:<key>"). */
const LAYOUT = 2;
const encoder = new TextEncoder();

export class CallRegistry extends DurableObject implements CallRegistryApi, PadLeaseApi {
  private readonly watchers = new Map<string, Watcher>();
  private readonly held = new Map<string, Held>();
  /** Requests this object has served (stats() aside): the bench and tests hold the per-call cost to it. */
  private served = 0;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS calls (
      key TEXT PRIMARY KEY, nonce TEXT NOT NULL, deadline INTEGER NOT NULL, state TEXT NOT NULL,
      claimed INTEGER NOT NULL DEFAULT 0, due INTEGER NOT NULL)`);
    sql.exec("CREATE INDEX IF NOT EXISTS calls_due ON calls (due)");
    sql.exec("CREATE INDEX IF NOT EXISTS calls_state ON calls (state)");
    // Two-call tokens (docs/rules.md R-PAD-8), by digest: the token itself is never stored.
    sql.exec(`CREATE TABLE IF NOT EXISTS tokens (
      digest TEXT PRIMARY KEY, args TEXT NOT NULL, target TEXT NOT NULL, expires INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0)`);
    sql.exec("CREATE INDEX IF NOT EXISTS tokens_expires ON tokens (expires)");
    // The client question's spent seal nonces (docs/rules.md R-SEAL-3), kept until their seal expired.
    sql.exec("CREATE TABLE IF NOT EXISTS seals (nonce TEXT PRIMARY KEY, expires INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS seals_expires ON seals (expires)");
    // A record that survived an eviction has lost its gateway stream: it can no longer be live.
    sql.exec("UPDATE calls SET state = 'ended', due = deadline + ? WHERE state = 'live'", RETAIN_MS);
    void ctx.blockConcurrencyWhile(async () => {
      if ((await ctx.storage.get<number>("layout")) === LAYOUT) return;
      // Layout 1's records are at most 15 minutes from deletion and can no longer be live: drop them once.
      for (;;) {
        const keys = [...(await ctx.storage.list({ prefix: "call:", limit: 128 })).keys()];
        if (keys.length === 0) break;
        await ctx.storage.delete(keys);
      }
      await ctx.storage.put("layout", LAYOUT);
    });
  }

  private row(key: string): CallRow | undefined {
    return this.ctx.storage.sql.exec<CallRow>("SELECT nonce, deadline, state, claimed FROM calls WHERE key = ?", key).toArray()[0];
  }

  private liveCount(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM calls WHERE state = 'live'").one().n;
  }

  /** Leaves the live state: kept RETAIN_MS past the deadline so a late claim or cancel finds it finished. */
  private settle(key: string, state: Exclude<State, "live">): void {
    this.ctx.storage.sql.exec("UPDATE calls SET state = ?, due = deadline + ? WHERE key = ?", state, RETAIN_MS, key);
    // A claim on hold learns at once that its call is over.
    this.held.get(key)?.wake();
  }

  /** The watcher of this key, taken out of the map, if it belongs to the call with this nonce. */
  private takeWatcher(key: string, nonce: string): Watcher | undefined {
    const watcher = this.watchers.get(key);
    if (watcher === undefined || watcher.nonce !== nonce) return undefined;
    this.watchers.delete(key);
    return watcher;
  }

  /** Registers a call and answers with a stream that says "live", then "cancelled" or "deadline" if either happens. */
  override async fetch(request: Request): Promise<Response> {
    this.served++;
    const url = new URL(request.url);
    if (url.pathname !== WATCH_PATH || request.method !== "POST") return new Response("not found", { status: 404 });
    const { key, nonce, deadline } = (await request.json()) as WatchRequest;
    if (this.row(key)?.state === "live") return new Response("in flight", { status: 409 });
    // A caller's live records are capped: a runaway caller cannot grow this object without bound.
    if (this.liveCount() >= MAX_LIVE_CALLS) return new Response(`too many live calls: at most ${MAX_LIVE_CALLS} per caller`, { status: 429 });
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const notify = writable.getWriter();
    // A finished call's id may be reused by a new call (ids are per client session); that call starts unclaimed.
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO calls (key, nonce, deadline, state, claimed, due) VALUES (?, ?, ?, 'live', 0, ?)", key, nonce, deadline, deadline);
    this.watchers
      .get(key)
      ?.notify.close()
      .catch(() => {});
    this.watchers.set(key, { nonce, notify });
    await this.scheduleAlarm();
    void notify.write(encoder.encode(`${"live" satisfies WatchWord}\n`)).catch(() => {});
    return new Response(readable, { headers: { "content-type": "text/plain" } });
  }

  /** The gateway is done with the call (answered, caller left, timed out). */
  async end(key: string, nonce: string): Promise<void> {
    this.served++;
    const record = this.row(key);
    if (record === undefined || record.state !== "live" || record.nonce !== nonce) return;
    this.settle(key, "ended");
    this.takeWatcher(key, nonce)
      ?.notify.close()
      .catch(() => {});
    await this.scheduleAlarm();
  }

  /** notifications/cancelled from the same caller, on whichever isolate it landed. */
  async cancel(key: string): Promise<boolean> {
    this.served++;
    const record = this.row(key);
    if (record === undefined || record.state !== "live") return false;
    this.settle(key, "cancelled");
    this.signal(this.takeWatcher(key, record.nonce), "cancelled");
    await this.scheduleAlarm();
    return true;
  }

  /**
   * The send gate's single permission: true once per call, and only if the call is still live when it is
   * granted. The claim is spent when asked, so a second one is refused even while the first is on hold. The
   * watching gateway is told to probe its caller, and the claim is granted only once both the hold has passed
   * and the gateway has confirmed that its probes went out without failing: a caller that left before the claim
   * was asked is noticed and the call ended first, so a yes that lands after a drop never writes, and a gateway
   * too slow to probe delays the claim (up to CLAIM_CONFIRM_MAX_MS, then refuses it) rather than guessing.
   */
  async claim(key: string, nonce: string): Promise<boolean> {
    this.served++;
    const record = this.row(key);
    if (record === undefined || record.nonce !== nonce || record.state !== "live" || record.claimed !== 0 || Date.now() >= record.deadline) return false;
    this.ctx.storage.sql.exec("UPDATE calls SET claimed = 1 WHERE key = ?", key);
    let wake = () => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const held: Held = { nonce, confirmed: false, wake };
    this.held.set(key, held);
    const watcher = this.watchers.get(key);
    if (watcher?.nonce === nonce) void watcher.notify.write(encoder.encode(`${"probe" satisfies WatchWord}\n`)).catch(() => {});
    const timers: ReturnType<typeof setTimeout>[] = [];
    const after = (ms: number) => new Promise<void>((resolve) => timers.push(setTimeout(resolve, Math.max(0, ms))));
    const giveUp = after(Math.min(CLAIM_CONFIRM_MAX_MS, record.deadline - Date.now()));
    try {
      await after(claimHoldMs(this.env as Record<string, unknown>));
      if (!held.confirmed) await Promise.race([woken, giveUp]);
    } finally {
      for (const t of timers) clearTimeout(t);
      if (this.held.get(key) === held) this.held.delete(key);
    }
    // The same call (its nonce), confirmed by its gateway, still live and before its deadline.
    const now = this.row(key);
    return held.confirmed && now !== undefined && now.nonce === nonce && now.state === "live" && Date.now() < now.deadline;
  }

  /**
   * A client's answer to a question the watching gateway pushed to it (docs/rules.md R-PUSH-2): handed on as one
   * "answer" line when the record is live, its watcher is this call's, the tag is the one this call's nonce gives
   * for that round, and that round has not been answered. Never waits on the watcher.
   */
  async answer(key: string, round: number, tag: string, payload: string): Promise<boolean> {
    this.served++;
    if (typeof payload !== "string" || payload.includes("\n") || !Number.isSafeInteger(round) || round < 1 || round > MAX_QUESTION_ROUNDS) return false;
    const record = this.row(key);
    if (record === undefined || record.state !== "live" || Date.now() >= record.deadline) return false;
    const watcher = this.watchers.get(key);
    if (watcher === undefined || watcher.nonce !== record.nonce) return false;
    if (typeof tag !== "string" || tag !== (await questionTag(record.nonce, round))) return false;
    // The record may have moved on while the tag was computed.
    if (this.watchers.get(key) !== watcher || this.row(key)?.state !== "live") return false;
    watcher.answered ??= new Set();
    if (watcher.answered.has(round)) return false;
    watcher.answered.add(round);
    void watcher.notify.write(encoder.encode(`${ANSWER_WORD} ${round} ${payload}\n`)).catch(() => {});
    return true;
  }

  /** The gateway's word that it probed its caller after the claim was asked and none of the probes failed. */
  async confirm(key: string, nonce: string): Promise<void> {
    this.served++;
    const held = this.held.get(key);
    if (held === undefined || held.nonce !== nonce) return;
    held.confirmed = true;
    held.wake();
  }

  /**
   * Issues a random, single-use token bound to the first call's digests, valid for ttlMs (clamped to
   * TOKEN_TTL_MS). A caller holds at most MAX_LIVE_TOKENS unexpired ones; expired rows are kept RETAIN_MS (so a
   * late second call hears "expired") and dropped a batch at a time by later requests, through the index.
   */
  async mintToken(binding: TokenBinding, ttlMs: number): Promise<MintedToken> {
    this.served++;
    const now = Date.now();
    this.dropOldTokens(now);
    const sql = this.ctx.storage.sql;
    if (sql.exec<{ n: number }>("SELECT count(*) AS n FROM tokens WHERE expires > ?", now).one().n >= MAX_LIVE_TOKENS) return { ok: false, reason: "too_many" };
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const token = btoa(String.fromCharCode(...bytes))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    const ttl = Number.isFinite(ttlMs) ? Math.min(TOKEN_TTL_MS.max, Math.max(TOKEN_TTL_MS.min, Math.floor(ttlMs))) : TOKEN_TTL_MS.fallback;
    const expiresAt = now + ttl;
    sql.exec("INSERT INTO tokens (digest, args, target, expires, used) VALUES (?, ?, ?, ?, 0)", await tokenDigest(token), binding.args, binding.target, expiresAt);
    return { ok: true, token, expiresAt };
  }

  /** Spends a token once, for exactly the binding it was issued for; checked and marked with no await between. */
  async redeemToken(token: string, binding: TokenBinding): Promise<TokenCheck> {
    this.served++;
    if (typeof token !== "string" || !TOKEN_PATTERN.test(token)) return "unknown";
    const digest = await tokenDigest(token);
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    const row = sql.exec<{ args: string; target: string; expires: number; used: number }>("SELECT args, target, expires, used FROM tokens WHERE digest = ?", digest).toArray()[0];
    let check: TokenCheck;
    if (row === undefined) check = "unknown";
    else if (row.used !== 0) check = "used";
    else if (now >= row.expires) check = "expired";
    else if (row.args !== binding.args) check = "arguments_differ";
    else if (row.target !== binding.target) check = "target_changed";
    else {
      sql.exec("UPDATE tokens SET used = 1 WHERE digest = ?", digest);
      check = "ok";
    }
    this.dropOldTokens(now);
    return check;
  }

  /**
   * Spends a client question's seal nonce (docs/rules.md R-SEAL-3): true the first time, false ever after, and false
   * for a seal already past its expiry (nothing then needs keeping). Checked and written with no await between, so
   * two retries racing with one seal cannot both act. A spent nonce is kept until its seal expires (a replay after
   * that fails the seal's own expiry), and expired ones are dropped a batch at a time by later spends.
   */
  async spendSeal(nonce: string, expiresAt: number): Promise<boolean> {
    this.served++;
    if (typeof nonce !== "string" || !SEAL_NONCE_PATTERN.test(nonce) || !Number.isSafeInteger(expiresAt)) return false;
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM seals WHERE nonce IN (SELECT nonce FROM seals WHERE expires <= ? ORDER BY expires LIMIT 64)", now);
    if (now >= expiresAt) return false;
    if (sql.exec<{ n: number }>("SELECT count(*) AS n FROM seals WHERE nonce = ?", nonce).one().n > 0) return false;
    sql.exec("INSERT INTO seals (nonce, expires) VALUES (?, ?)", nonce, expiresAt);
    return true;
  }

  /** How many spent seal nonces are kept (tests hold the pruning to it). */
  async sealCount(): Promise<number> {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM seals").one().n;
  }

  /** Tokens expired more than RETAIN_MS ago, at most a batch per request. */
  private dropOldTokens(now: number): void {
    this.ctx.storage.sql.exec("DELETE FROM tokens WHERE digest IN (SELECT digest FROM tokens WHERE expires <= ? ORDER BY expires LIMIT 64)", now - RETAIN_MS);
  }

  /** Local-development introspection (the gateway exposes it only with STRAD_DEV_ROUTES=1). */
  async stats(): Promise<{ served: number; live: number }> {
    return { served: this.served, live: this.liveCount() };
  }

  // ---- A pad's edit lease (contract/pad-lease.ts, docs/rules.md R-PAD-13), on an object of its own per pad. ----
  // One row at most, checked and written with no await between, so two holders cannot both get it; an expired row
  // is anyone's, so a holder that died frees the pad after its lease. Nothing here touches the calls or tokens.

  private padLeases(): SqlStorage {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS pad_lease (holder TEXT NOT NULL, expires INTEGER NOT NULL)");
    return sql;
  }

  async leasePad(holder: string, ttlMs: number): Promise<boolean> {
    if (typeof holder !== "string" || !PAD_LEASE_HOLDER.test(holder) || !Number.isFinite(ttlMs)) return false;
    const sql = this.padLeases();
    const now = Date.now();
    const held = sql.exec<{ holder: string; expires: number }>("SELECT holder, expires FROM pad_lease").toArray()[0];
    if (held !== undefined && held.holder !== holder && held.expires > now) return false;
    const ttl = Math.min(PAD_LEASE_MS.max, Math.max(PAD_LEASE_MS.min, Math.floor(ttlMs)));
    sql.exec("DELETE FROM pad_lease");
    sql.exec("INSERT INTO pad_lease (holder, expires) VALUES (?, ?)", holder, now + ttl);
    return true;
  }

  async releasePad(holder: string): Promise<void> {
    if (typeof holder !== "string") return;
    this.padLeases().exec("DELETE FROM pad_lease WHERE holder = ?", holder);
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const due = this.ctx.storage.sql.exec<{ key: string; nonce: string; state: State }>("SELECT key, nonce, state FROM calls WHERE due <= ? ORDER BY due LIMIT ?", now, ALARM_BATCH).toArray();
    for (const { key, nonce, state } of due) {
      if (state === "live") {
        this.settle(key, "expired");
        this.signal(this.takeWatcher(key, nonce), "deadline");
      } else {
        this.ctx.storage.sql.exec("DELETE FROM calls WHERE key = ?", key);
      }
    }
    await this.scheduleAlarm();
  }

  /** Tells the watching gateway isolate; never waits on it, so a slow or gone reader cannot stall this object. */
  private signal(watcher: Watcher | undefined, word: Exclude<WatchWord, "live" | "probe">): void {
    if (watcher === undefined) return;
    const writer = watcher.notify;
    void writer
      .write(encoder.encode(`${word}\n`))
      .then(() => writer.close())
      .catch(() => {});
  }

  /** The next record due (a live deadline or a deletion), read from the index. */
  private async scheduleAlarm(): Promise<void> {
    const next = this.ctx.storage.sql.exec<{ at: number | null }>("SELECT min(due) AS at FROM calls").one().at;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else if ((await this.ctx.storage.getAlarm()) !== next) await this.ctx.storage.setAlarm(next);
  }
}

/** What the tokens table keys a token by: its SHA-256, hex. */
async function tokenDigest(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(token));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
