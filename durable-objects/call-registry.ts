// Per-call state of confirmed tool calls, one object per caller. A call is registered by the gateway
// isolate that forwards it (watch), can be cancelled from any isolate by the same caller, expires at its
// deadline (alarm), and can be claimed by the bundle's send gate at most once, and only while live.
import { DurableObject } from "cloudflare:workers";
import { type CallRegistryApi, claimHoldMs, WATCH_PATH, type WatchRequest, type WatchWord } from "../contract/call-registry";

type State = "live" | "ended" | "cancelled" | "expired";

interface CallRecord {
  /** The gateway's per-call value: only the call that registered the record can claim or end it. */
  nonce: string;
  deadline: number;
  state: State;
  claimed: boolean;
  notify?: WritableStreamDefaultWriter<Uint8Array>;
}

/** How long a finished call's record is kept: a claim or cancel that arrives late finds it ended rather than unknown. */
const RETAIN_MS = 15 * 60 * 1000;
const encoder = new TextEncoder();

export class CallRegistry extends DurableObject implements CallRegistryApi {
  private readonly calls = new Map<string, CallRecord>();
  /** Requests this object has served (stats() aside): the bench and tests hold the per-call cost to it. */
  private served = 0;
  private loaded: Promise<void> | undefined;

  private async load(): Promise<void> {
    this.loaded ??= (async () => {
      const stored = await this.ctx.storage.list<{ nonce: string; deadline: number; claimed: boolean; state: State }>({ prefix: "call:" });
      for (const [k, v] of stored) {
        // A record that survived an eviction has lost its gateway stream: it can no longer be live.
        this.calls.set(k.slice(5), { nonce: v.nonce, deadline: v.deadline, claimed: v.claimed, state: v.state === "live" ? "ended" : v.state });
      }
    })();
    return this.loaded;
  }

  /** Registers a call and answers with a stream that says "live", then "cancelled" or "deadline" if either happens. */
  override async fetch(request: Request): Promise<Response> {
    this.served++;
    await this.load();
    const url = new URL(request.url);
    if (url.pathname !== WATCH_PATH || request.method !== "POST") return new Response("not found", { status: 404 });
    const { key, nonce, deadline } = (await request.json()) as WatchRequest;
    const existing = this.calls.get(key);
    if (existing !== undefined && existing.state === "live") return new Response("in flight", { status: 409 });
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const notify = writable.getWriter();
    // A finished call's id may be reused by a new call (ids are per client session); that call starts unclaimed.
    const record: CallRecord = { nonce, deadline, state: "live", claimed: false, notify };
    this.calls.set(key, record);
    await this.persist(key, record);
    await this.scheduleAlarm();
    void notify.write(encoder.encode(`${"live" satisfies WatchWord}\n`)).catch(() => {});
    return new Response(readable, { headers: { "content-type": "text/plain" } });
  }

  /** The gateway is done with the call (answered, caller left, timed out). */
  async end(key: string, nonce: string): Promise<void> {
    this.served++;
    await this.load();
    const record = this.calls.get(key);
    if (record === undefined || record.state !== "live" || record.nonce !== nonce) return;
    record.state = "ended";
    this.close(record);
    await this.persist(key, record);
  }

  /** notifications/cancelled from the same caller, on whichever isolate it landed. */
  async cancel(key: string): Promise<boolean> {
    this.served++;
    await this.load();
    const record = this.calls.get(key);
    if (record === undefined || record.state !== "live") return false;
    record.state = "cancelled";
    await this.signal(record, "cancelled");
    await this.persist(key, record);
    return true;
  }

  /**
   * The send gate's single permission: true once per call, and only if the call is still live when the hold
   * ends. The claim is spent when asked, so a second one is refused even while the first is on hold. During
   * the hold the watching gateway probes its caller: a caller that left before the claim was asked is noticed
   * and the call ended (or aborted) before the hold runs out, so a yes that lands after a drop never writes.
   */
  async claim(key: string, nonce: string): Promise<boolean> {
    this.served++;
    await this.load();
    const record = this.calls.get(key);
    if (record === undefined || record.nonce !== nonce || record.state !== "live" || record.claimed || Date.now() >= record.deadline) return false;
    record.claimed = true;
    await this.persist(key, record);
    void record.notify?.write(encoder.encode(`${"probe" satisfies WatchWord}\n`)).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, claimHoldMs(this.env as Record<string, unknown>)));
    return record.state === "live" && Date.now() < record.deadline;
  }

  /** Local-development introspection (the gateway exposes it only with STRAD_DEV_ROUTES=1). */
  async stats(): Promise<{ served: number; live: number }> {
    let live = 0;
    for (const r of this.calls.values()) if (r.state === "live") live++;
    return { served: this.served, live };
  }

  override async alarm(): Promise<void> {
    await this.load();
    const now = Date.now();
    for (const [key, record] of this.calls) {
      if (record.state === "live" && now >= record.deadline) {
        record.state = "expired";
        await this.signal(record, "deadline");
        await this.persist(key, record);
      } else if (record.state !== "live" && now >= record.deadline + RETAIN_MS) {
        this.calls.delete(key);
        await this.ctx.storage.delete(`call:${key}`);
      }
    }
    await this.scheduleAlarm();
  }

  /** Tells the watching gateway isolate; never waits on it, so a slow or gone reader cannot stall this object. */
  private async signal(record: CallRecord, word: Exclude<WatchWord, "live">): Promise<void> {
    const writer = record.notify;
    if (writer === undefined) return;
    record.notify = undefined;
    void writer
      .write(encoder.encode(`${word}\n`))
      .then(() => writer.close())
      .catch(() => {});
  }

  private close(record: CallRecord): void {
    record.notify?.close().catch(() => {});
    record.notify = undefined;
  }

  private async persist(key: string, r: CallRecord): Promise<void> {
    await this.ctx.storage.put(`call:${key}`, { nonce: r.nonce, deadline: r.deadline, claimed: r.claimed, state: r.state });
  }

  private async scheduleAlarm(): Promise<void> {
    let next = Number.POSITIVE_INFINITY;
    for (const r of this.calls.values()) next = Math.min(next, r.state === "live" ? r.deadline : r.deadline + RETAIN_MS);
    if (next === Number.POSITIVE_INFINITY) await this.ctx.storage.deleteAlarm();
    else if ((await this.ctx.storage.getAlarm()) !== next) await this.ctx.storage.setAlarm(next);
  }
}
