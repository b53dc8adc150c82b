// A session with one pad, for one tool call, over Rustpad's WebSocket at /api/socket/<id>, opened by fetch with
// `Upgrade: websocket` as a Worker opens an outbound WebSocket. Rustpad speaks JSON messages named as serde names the
// variants of its enums: the server says Identity (this connection's user id), History (operations from a revision
// on, each with the id of the user who made it), Language and UserInfo; a client says Edit (an operation against a
// revision, which the server transforms against whatever landed since), SetLanguage and ClientInfo. The server
// broadcasts every applied edit, the sender's own included: that is the acknowledgement.
// A session reads and follows the pad; its one way to change the pad is `edit` / `setLanguage`, which hand the send
// to the kit's send gate (docs/rules.md R-PAD-6): the frame leaves only once the gate has let the write through.
// What an edit removes is measured here against the pad's history (R-PAD-13), and the edits the tools build are below.
import { cleanLine } from "../../contract/text";
import type { GatedWrite, WriteOptions } from "../kit/gate";
import { checkPadId, endpoint, MAX_PAD_CHARS, PAD_TIMEOUT_MS, PAD_WORDS, PadError } from "./pads.client";
import type { PadLease, TakeLease } from "./pads.lease";
import { describeVerdict, HighWater, type LossVerdict, lossVerdict } from "./pads.loss";
import { charLength, OpSeq, PadOpError } from "./pads.ot";

/** What a session needs of a WebSocket: workerd's own, accepted once the session listens to it. */
export interface PadSocket {
  accept(): void;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close" | "error", listener: () => void): void;
}

/** Opens the pad's socket the way a Worker opens an outbound WebSocket: a fetch with `Upgrade: websocket`. */
async function connect(url: string, signal: AbortSignal): Promise<PadSocket> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { Upgrade: "websocket" }, redirect: "manual", signal });
  } catch {
    throw new PadError("Rustpad could not be reached");
  }
  const socket = (response as Response & { webSocket?: PadSocket | null }).webSocket;
  if (socket === null || socket === undefined) {
    await response.body?.cancel().catch(() => {});
    throw new PadError(`Rustpad answered HTTP ${response.status} instead of opening the pad's socket`);
  }
  return socket;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A wait nobody awaits any more (the call ended) must not surface as an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** What Rustpad's acknowledgement says about an edit: the revision it became, and how many others' edits it was merged after. */
export interface EditAck {
  revision: number;
  /** Edits by other clients that landed after this one was sent and before it was applied: the server transformed it over them. */
  merged: number;
}

/** One connection to one pad, for one tool call. */
export class PadSession {
  private chars: string[] = [];
  /** How many operations of the pad's history this session has applied. */
  revision = 0;
  language: string | null = null;
  private me: number | undefined;
  private failure: PadError | undefined;
  private readonly barriers: Deferred<void>[] = [];
  private pendingEdit: { ack: Deferred<EditAck>; at: number } | undefined;
  private pendingLanguage: { language: string; ack: Deferred<void> } | undefined;
  /** The lease the edit being sent holds, if it removes text (R-PAD-13). */
  private lease: PadLease | undefined;
  /** The pad's high-water mark over the history this session has applied (docs/rules.md R-PAD-13). */
  private readonly water = new HighWater();

  private constructor(
    readonly pad: string,
    private readonly socket: PadSocket,
    private readonly name: string,
    signal: AbortSignal,
    private readonly takeLease: TakeLease | undefined,
  ) {
    socket.addEventListener("message", (event) => this.onMessage(event.data));
    socket.addEventListener("close", () => this.fail(new PadError("the connection to Rustpad closed")));
    socket.addEventListener("error", () => this.fail(new PadError("the connection to Rustpad failed")));
    signal.addEventListener("abort", () => this.close(), { once: true });
    // Only now that every listener is in place: nothing the server sends first is missed.
    socket.accept();
  }

  /**
   * Opens the pad (Rustpad creates it, empty, if it holds none) and waits until the session holds its whole history.
   * `lease` takes the pad's edit lease (pads.lease.ts); without it the session sends no edit that removes text.
   */
  static async open(base: URL, pad: string, signal: AbortSignal, name = "strad", lease?: TakeLease): Promise<PadSession> {
    checkPadId(pad);
    if (signal.aborted) throw new PadError("the call was dropped before Rustpad was reached");
    const socket = await connect(endpoint(base, `/api/socket/${pad}`), signal);
    const session = new PadSession(pad, socket, name, signal, lease);
    await session.sync();
    return session;
  }

  get text(): string {
    return this.chars.join("");
  }

  /** The pad's length as Rustpad counts it: code points. */
  get length(): number {
    return this.chars.length;
  }

  /** Whether an edit built against the pad as this session holds it now takes out enough to need a yes (R-PAD-13). */
  verdictFor(op: OpSeq): LossVerdict {
    return lossVerdict({ loss: op.deletedLen, before: this.chars.length, after: op.targetLen }, this.water);
  }

  /**
   * Waits until every edit Rustpad applied before now has reached this session: it says who it is (ClientInfo)
   * and waits for its own echo, which the server sends after any history it has not yet sent.
   */
  async sync(ms = PAD_TIMEOUT_MS): Promise<void> {
    const barrier = deferred<void>();
    this.barriers.push(barrier);
    this.send({ ClientInfo: { name: this.name, hue: 210 } });
    await this.wait(barrier.promise, "Rustpad did not answer in time", ms);
  }

  /**
   * Sends one edit, built against the pad as this session holds it now, through the send gate, and waits for
   * Rustpad's acknowledgement. The frame leaves only from the door handed to `write`, which the gate opens once
   * every check has passed, and at most once. It names the revision it was built against, so an edit by someone
   * else that lands while the gate decides is merged by Rustpad, not mistaken for a base the edit never saw.
   * An edit that removes text first takes the pad's lease, then syncs: if anything landed since the edit was
   * measured, nothing is sent. The lease is held until Rustpad acknowledged the edit, so concurrent calls are
   * measured one after another, each on the pad the one before left (docs/rules.md R-PAD-13).
   */
  async edit(op: OpSeq, write: GatedWrite, options: WriteOptions): Promise<EditAck> {
    this.check();
    const at = this.revision;
    if (op.baseLen !== this.chars.length) throw new PadError("the edit was built for another version of the pad");
    if (op.targetLen > MAX_PAD_CHARS) throw new PadError(`the pad would hold ${op.targetLen} characters, more than the ${MAX_PAD_CHARS} Rustpad keeps`);
    // What is lost is guarded here too, whatever tool built the edit: one that takes out enough to need a yes never
    // leaves on a write that does not need one (docs/rules.md R-PAD-13).
    const verdict = this.verdictFor(op);
    if (verdict.asks && options.needsApproval !== true) throw new PadError(`the edit needs a person's yes and was not sent: ${describeVerdict(verdict)}`);
    const lease = op.deletedLen > 0 ? await this.leased(at) : undefined;
    this.lease = lease;
    let ack: EditAck | undefined;
    let failed: PadError | undefined;
    const door = async (): Promise<Response> => {
      try {
        ack = await this.sendEdit(op, at);
        return new Response(null, { status: 204 });
      } catch (error) {
        failed = error instanceof PadError ? error : new PadError("the edit could not be sent");
        return new Response(null, { status: 502 });
      }
    };
    try {
      await write(`rustpad://${this.pad}/edit`, { method: "POST" }, { ...options, words: PAD_WORDS, fetch: door });
    } finally {
      this.lease = undefined;
      // An edit that may have been sent and was not acknowledged may still be applied: its lease runs out, unfreed.
      if (lease !== undefined && (ack !== undefined || failed === undefined || failed instanceof NotSent)) await lease.release();
    }
    if (ack === undefined) throw failed instanceof NotSent ? failed : unconfirmed(failed);
    return ack;
  }

  /** Takes the pad's lease and syncs under it; frees it and refuses when anything landed since revision `at`. */
  private async leased(at: number): Promise<PadLease> {
    if (this.takeLease === undefined) throw new PadError("this session cannot lease the pad, so an edit that removes text is not sent");
    const lease = await this.takeLease(this.pad);
    try {
      await this.sync(Math.max(0, Math.min(PAD_TIMEOUT_MS, lease.until - Date.now())));
      if (this.revision !== at) throw new PadError("the pad changed while the edit was being built, so nothing was sent; call again");
      return lease;
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  /** Sets the pad's language through the send gate; Rustpad's broadcast of it is the acknowledgement. */
  async setLanguage(language: string, write: GatedWrite, options: WriteOptions): Promise<void> {
    this.check();
    let done = false;
    let failed: PadError | undefined;
    const door = async (): Promise<Response> => {
      try {
        await this.sendLanguage(language);
        done = true;
        return new Response(null, { status: 204 });
      } catch (error) {
        failed = error instanceof PadError ? error : new PadError("the language could not be sent");
        return new Response(null, { status: 502 });
      }
    };
    await write(`rustpad://${this.pad}/language`, { method: "POST" }, { ...options, words: PAD_WORDS, fetch: door });
    if (!done) throw unconfirmed(failed);
  }

  close(): void {
    this.fail(new PadError("the session was closed"));
    try {
      this.socket.close(1000, "done");
    } catch {}
  }

  private async sendEdit(op: OpSeq, at: number): Promise<EditAck> {
    this.check();
    if (this.pendingEdit !== undefined) throw new PadError("an edit is already in flight");
    const lease = this.lease;
    // The gate's claim took time: past the lease another edit may already be measured, so this one is not sent.
    if (lease !== undefined && Date.now() >= lease.until) throw new NotSent("the pad's edit lease ran out before the edit could be sent; call again");
    const ack = deferred<EditAck>();
    this.pendingEdit = { ack, at };
    this.send({ Edit: { revision: at, operation: op.toJSON() } });
    try {
      // Under a lease, the acknowledgement is awaited only as long as the lease lasts (R-PAD-13).
      const ms = lease === undefined ? PAD_TIMEOUT_MS : Math.max(0, Math.min(PAD_TIMEOUT_MS, lease.until - Date.now()));
      return await this.wait(ack.promise, "Rustpad did not acknowledge the edit in time", ms);
    } finally {
      this.pendingEdit = undefined;
    }
  }

  private async sendLanguage(language: string): Promise<void> {
    this.check();
    const ack = deferred<void>();
    this.pendingLanguage = { language, ack };
    this.send({ SetLanguage: language });
    try {
      await this.wait(ack.promise, "Rustpad did not acknowledge the language in time");
    } finally {
      this.pendingLanguage = undefined;
    }
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private send(message: unknown): void {
    this.check();
    try {
      this.socket.send(JSON.stringify(message));
    } catch {
      this.fail(new PadError("the connection to Rustpad failed"));
      this.check();
    }
  }

  private wait<T>(promise: Promise<T>, late: string, ms = PAD_TIMEOUT_MS): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new PadError(late);
        this.fail(error);
        reject(error);
      }, ms);
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** Ends the session: every wait fails with `error`; the first failure is the one kept. */
  private fail(error: PadError): void {
    this.failure ??= error;
    const failure = this.failure;
    for (const barrier of this.barriers.splice(0)) barrier.reject(failure);
    this.pendingEdit?.ack.reject(failure);
    this.pendingLanguage?.ack.reject(failure);
    if (failure !== error) return;
    try {
      this.socket.close(1000, "done");
    } catch {}
  }

  private onMessage(data: unknown): void {
    if (this.failure !== undefined || typeof data !== "string") return;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      this.fail(new PadError("Rustpad sent a message that is not JSON"));
      return;
    }
    if (typeof message !== "object" || message === null) return;
    const m = message as Record<string, unknown>;
    try {
      if (typeof m.Identity === "number") this.me = m.Identity;
      else if (m.History !== undefined) this.onHistory(m.History);
      else if (typeof m.Language === "string") {
        this.language = m.Language;
        if (this.pendingLanguage?.language === m.Language) this.pendingLanguage.ack.resolve();
      } else if (m.UserInfo !== undefined) {
        const { id, info } = m.UserInfo as { id?: unknown; info?: unknown };
        if (id === this.me && this.me !== undefined && info !== null) this.barriers.shift()?.resolve();
      }
    } catch (error) {
      this.fail(error instanceof PadOpError ? new PadError(`Rustpad's history does not apply: ${cleanLine(error.message, 200)}`) : new PadError("Rustpad sent a message of an unknown shape"));
    }
  }

  private onHistory(history: unknown): void {
    const { start, operations } = history as { start?: unknown; operations?: unknown };
    if (typeof start !== "number" || !Array.isArray(operations)) throw new Error("history");
    if (start > this.revision) throw new PadOpError("Rustpad's history skips revisions");
    for (let i = this.revision - start; i < operations.length; i++) {
      const { id, operation } = (operations[i] ?? {}) as { id?: unknown; operation?: unknown };
      const op = OpSeq.fromJSON(operation);
      const before = this.chars.length;
      this.chars = op.apply(this.chars);
      this.water.observe({ loss: op.deletedLen, before, after: this.chars.length });
      this.revision++;
      const pending = this.pendingEdit;
      // Rustpad transformed the edit over every operation between the revision it named and its own place.
      if (pending !== undefined && id === this.me) pending.ack.resolve({ revision: this.revision, merged: this.revision - 1 - pending.at });
    }
  }
}

/** An edit refused before its frame left: nothing was sent, so the answer says so plainly. */
class NotSent extends PadError {}

function unconfirmed(failed: PadError | undefined): PadError {
  return new PadError(`${failed === undefined ? "Rustpad did not confirm the change" : failed.message}: it may or may not have been applied; read the pad (get_document) to see where it stands`);
}

/** Where each occurrence of `search` starts (UTF-16 offsets), left to right and not overlapping. */
export function occurrences(text: string, search: string): number[] {
  const found: number[] = [];
  if (search === "") return found;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) found.push(at);
  return found;
}

/** The edit that replaces the occurrences at `starts` (UTF-16 offsets into `text`) of `search` with `replace`. */
export function replaceOp(text: string, starts: readonly number[], search: string, replace: string): OpSeq {
  const op = new OpSeq();
  let at = 0;
  const searchChars = charLength(search);
  for (const start of starts) {
    op.retain(charLength(text.slice(at, start)));
    op.delete(searchChars);
    op.insert(replace);
    at = start + search.length;
  }
  op.retain(charLength(text.slice(at)));
  return op;
}

/** The edit that makes a pad of `length` characters hold `content` instead. */
export function setOp(length: number, content: string): OpSeq {
  return new OpSeq().delete(length).insert(content);
}

/** The edit that adds `text` at the end of a pad of `length` characters. */
export function appendOp(length: number, text: string): OpSeq {
  return new OpSeq().retain(length).insert(text);
}
