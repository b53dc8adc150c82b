// The IMAP client: one connection per tool call, opened on first use, reused by every command of that call and
// closed when it ends (docs/rules.md R-MAIL-8). It speaks only the commands the tools need, by UID always, over a
// socket a connector opens (cloudflare:sockets in the Worker, mailbox.socket.ts). Implicit TLS or STARTTLS; plain
// TCP only where mailbox.config.ts allowed it (a loopback host). Every read is capped and every command timed out;
// a refusal names the command and the server's response code, never the server's text or a credential. A write whose
// answer never came, or that stopped part way, fails with MailPartly, saying what may have changed.
import type { ImapAccount } from "./mailbox.config";
import { parseSequenceSet, type Range, toSequenceSet } from "./mailbox.uids";
import { decodeMailboxName, encodeMailboxName } from "./mailbox.utf7";
import { type Arg, atomOf, commandChunks, fetchAttributes, ImapWireError, listOf, type RawResponse, ResponseReader, ResponseTooLarge, raw, str, stringOf, type Token, tokenize } from "./mailbox.wire";

export class MailError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MailError";
  }
}

/** The server answered a command NO or BAD: it failed (a UID MOVE may still have moved some messages, RFC 6851 §3.3). */
export class MailRefused extends MailError {}

/** A command went out and its answer never came whole (a timeout, a broken connection, a dropped call): it may have run. */
export class MailUnanswered extends MailError {}

/**
 * A write that may have changed the mailbox although it did not complete: `state` says, in the bundle's words, what
 * may have changed or what state the messages are in, so the answer never says "Nothing was changed".
 */
export class MailPartly extends MailError {
  constructor(
    message: string,
    readonly state: string,
  ) {
    super(message);
  }
}

export interface SocketLike {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
  opened?: Promise<unknown>;
  close(): Promise<void>;
  startTls(): SocketLike;
}
export type Connector = (address: { hostname: string; port: number }, options: { secureTransport: "on" | "off" | "starttls"; allowHalfOpen: boolean }) => SocketLike | Promise<SocketLike>;

/** How long one command may take, and connecting with logging in. */
export const COMMAND_TIMEOUT_MS = 20_000;
export const CONNECT_TIMEOUT_MS = 15_000;
/** How long closing waits for the socket to say so: on workerd a socket left mid-upgrade never does. */
export const CLOSE_TIMEOUT_MS = 1_000;
/** The longest response line without its literals; a LIST or a SEARCH answer of a large mailbox fits. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** What one command's answer may hold in all, literals included, unless the command asks for more (a message body). */
export const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

export interface Selected {
  name: string;
  readOnly: boolean;
  uidValidity: number;
  exists: number;
  uidNext: number | undefined;
}

export interface Answer {
  untagged: Token[][];
  /** The tagged response's code, upper-cased with its arguments ("COPYUID 7 1:2 5:6"), if any. */
  code: string | undefined;
}

const encoder = new TextEncoder();
const words = (args: readonly Arg[]) => (args[0] !== undefined && "raw" in args[0] ? args[0].raw.split(" ").slice(0, 2).join(" ") : "command");

export class ImapClient {
  private tag = 0;
  private reader: ResponseReader;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private closed = false;
  private busy: Promise<unknown> = Promise.resolve();
  capabilities = new Set<string>();
  selected: Selected | undefined;
  /** Commands sent on this connection: the bench's connection-cost line and the reuse test read it. */
  commands = 0;

  private constructor(
    private socket: SocketLike,
    private readonly signal: AbortSignal,
  ) {
    this.reader = new ResponseReader(socket.readable.getReader());
    this.writer = socket.writable.getWriter();
    signal.addEventListener("abort", () => void this.close(), { once: true });
  }

  /** Connects, upgrades (STARTTLS) when asked to, logs in. Throws MailError naming what failed, never the password. */
  static async open(account: ImapAccount, connect: Connector, signal: AbortSignal): Promise<ImapClient> {
    if (signal.aborted) throw new MailError("the call was dropped before the IMAP server was reached");
    const secureTransport = account.security === "tls" ? "on" : account.security === "starttls" ? "starttls" : "off";
    let socket: SocketLike;
    try {
      socket = await connect({ hostname: account.host, port: account.port }, { secureTransport, allowHalfOpen: false });
    } catch {
      throw new MailError("the IMAP server could not be reached");
    }
    const client = new ImapClient(socket, signal);
    try {
      await client.within(CONNECT_TIMEOUT_MS, "connecting to the IMAP server", async () => {
        const greeting = tokenize(await client.readOne());
        const status = atomOf(greeting[1])?.toUpperCase();
        if (status === "BYE") throw new MailError("the IMAP server refused the connection");
        client.readCapabilities(greeting);
        if (account.security === "starttls") await client.startTls();
        if (status !== "PREAUTH") {
          const login = await client.runUnlocked([raw("LOGIN"), str(account.user), { literal: encoder.encode(account.password) }], { what: "LOGIN" });
          client.capabilities.clear();
          if (login.code?.startsWith("CAPABILITY ")) for (const c of login.code.split(" ").slice(1)) client.capabilities.add(c.toUpperCase());
        }
        if (client.capabilities.size === 0 || !client.capabilities.has("IMAP4REV1")) await client.refreshCapabilities();
      });
    } catch (error) {
      await client.close();
      if (error instanceof MailError && /refused LOGIN/.test(error.message)) throw new MailError("the IMAP server refused the login (check this mount's IMAP_USER and IMAP_PASSWORD)");
      throw error;
    }
    return client;
  }

  private async startTls(): Promise<void> {
    if (!this.capabilities.has("STARTTLS")) await this.refreshCapabilities();
    if (!this.capabilities.has("STARTTLS")) throw new MailError("the IMAP server does not offer STARTTLS, and this mount does not send its password in clear text");
    await this.runUnlocked([raw("STARTTLS")], { what: "STARTTLS" });
    // Nothing read before the handshake is trusted after it: readers, writers and capabilities start again.
    this.reader.release();
    this.writer.releaseLock();
    this.socket = this.socket.startTls();
    this.reader = new ResponseReader(this.socket.readable.getReader());
    this.writer = this.socket.writable.getWriter();
    this.capabilities.clear();
    await this.refreshCapabilities();
  }

  private readCapabilities(tokens: Token[]): void {
    const code = atomOf(tokens[2]);
    if (code?.toUpperCase().startsWith("[CAPABILITY ")) for (const c of code.slice(1, -1).split(" ").slice(1)) this.capabilities.add(c.toUpperCase());
  }

  private async refreshCapabilities(): Promise<void> {
    const answer = await this.runUnlocked([raw("CAPABILITY")], { what: "CAPABILITY" });
    this.capabilities.clear();
    for (const line of answer.untagged) if (atomOf(line[1])?.toUpperCase() === "CAPABILITY") for (const t of line.slice(2)) this.capabilities.add((atomOf(t) ?? "").toUpperCase());
  }

  has(capability: string): boolean {
    return this.capabilities.has(capability);
  }

  private async within<T>(ms: number, what: string, run: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void this.close();
        reject(new MailError(`the IMAP server did not answer in time (${what})`));
      }, ms);
    });
    try {
      return await Promise.race([run(), timeout]);
    } catch (error) {
      if (this.signal.aborted) throw new MailError("the call was dropped, so the IMAP connection was closed");
      if (error instanceof ImapWireError) throw new MailError(error.message);
      if (error instanceof MailError) throw error;
      throw new MailError(`the IMAP connection failed (${what})`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One response, held to `maxBytes` in all as it is read (mailbox.wire.ts). */
  private readOne(maxBytes = MAX_RESPONSE_BYTES): Promise<RawResponse> {
    return this.reader.read({ maxLine: MAX_LINE_BYTES, maxBytes });
  }

  /** One command, answered whole. `maxBytes`: what its answer may hold in all (a body fetch asks for its cap). */
  run(args: readonly Arg[], options: { what?: string; maxBytes?: number } = {}): Promise<Answer> {
    const sent = { out: false };
    const next = this.busy.then(() => this.within(COMMAND_TIMEOUT_MS, options.what ?? words(args), () => this.runUnlocked(args, options, sent)));
    this.busy = next.catch(() => {});
    // Once the command is out, only the server's tagged answer says whether it ran.
    return next.catch((error: unknown) => {
      throw sent.out && error instanceof MailError && !(error instanceof MailRefused) ? new MailUnanswered(error.message) : error;
    });
  }

  private async runUnlocked(args: readonly Arg[], { what = words(args), maxBytes = MAX_RESPONSE_BYTES }: { what?: string; maxBytes?: number }, sent = { out: false }): Promise<Answer> {
    if (this.closed) throw new MailError("the IMAP connection is closed");
    const tag = `s${++this.tag}`;
    this.commands++;
    const chunks = commandChunks(tag, args, this.capabilities.has("LITERAL+"));
    const untagged: Token[][] = [];
    let budget = maxBytes;
    // Each response is read under what is left of the command's budget, so the command's answer never holds more.
    const readCounted = async () => {
      let r: RawResponse;
      try {
        r = await this.readOne(budget);
      } catch (error) {
        if (error instanceof ResponseTooLarge) throw new MailError(`the IMAP server's answer to ${what} is larger than the ${maxBytes} bytes this call reads`);
        throw error;
      }
      budget -= r.bytes;
      return r;
    };
    for (const chunk of chunks) {
      sent.out = true;
      await this.writer.write(encoder.encode(chunk.head));
      if (chunk.literal === undefined) continue;
      if (!this.capabilities.has("LITERAL+")) {
        // A synchronizing literal: the server says "+" before it takes the bytes.
        for (;;) {
          const r = await readCounted();
          if ((r.texts[0] ?? "").startsWith("+")) break;
          const tokens = tokenize(r);
          if (atomOf(tokens[0]) === tag) throw this.refusal(what, tokens);
          untagged.push(tokens);
        }
      }
      await this.writer.write(chunk.literal);
    }
    for (;;) {
      const tokens = tokenize(await readCounted());
      const first = atomOf(tokens[0]);
      if (first === "*") {
        if (atomOf(tokens[1])?.toUpperCase() === "BYE") this.closed = true;
        untagged.push(tokens);
        continue;
      }
      if (first !== tag) continue;
      const status = atomOf(tokens[1])?.toUpperCase();
      if (status !== "OK") throw this.refusal(what, tokens);
      const code = atomOf(tokens[2]);
      return { untagged, code: code?.startsWith("[") ? code.slice(1, -1).toUpperCase() : undefined };
    }
  }

  /** A NO or BAD: the command and the response code (an atom such as TRYCREATE), never the server's free text. */
  private refusal(what: string, tokens: Token[]): MailRefused {
    const code = atomOf(tokens[2]);
    const name = code?.startsWith("[") ? /^\[([A-Z-]{1,40})/i.exec(code)?.[1]?.toUpperCase() : undefined;
    return new MailRefused(`the IMAP server refused ${what}${name === undefined ? "" : ` [${name}]`}`);
  }

  async close(): Promise<void> {
    if (this.closed && this.socketClosed) return;
    const wasOpen = !this.closed;
    this.closed = true;
    this.socketClosed = true;
    if (wasOpen && !this.signal.aborted) {
      // A polite LOGOUT, not waited on for long: the socket closes either way.
      try {
        await Promise.race([this.writer.write(encoder.encode(`s${++this.tag} LOGOUT\r\n`)), new Promise((r) => setTimeout(r, 200))]);
      } catch {}
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([this.socket.close(), new Promise((r) => (timer = setTimeout(r, CLOSE_TIMEOUT_MS)))]);
    } catch {
    } finally {
      clearTimeout(timer);
    }
  }
  private socketClosed = false;

  // ---- mailboxes ----

  /** Every mailbox: decoded name, flags (\Noselect, special-use) and, with LIST-STATUS, its message count. */
  async listMailboxes(): Promise<{ name: string; flags: string[]; messages?: number; unseen?: number }[]> {
    const status = this.has("LIST-STATUS");
    const answer = await this.run([raw('LIST "" "*"'), ...(status ? [raw("RETURN (SPECIAL-USE STATUS (MESSAGES UNSEEN))")] : [])], { what: "LIST" });
    const out = new Map<string, { name: string; flags: string[]; messages?: number; unseen?: number }>();
    for (const line of answer.untagged) {
      const kind = atomOf(line[1])?.toUpperCase();
      if (kind === "LIST") {
        const wire = stringOf(line[4]);
        if (wire === undefined) continue;
        const name = decodeMailboxNameSafe(wire);
        if (name === undefined) continue;
        out.set(wire, { name, flags: (listOf(line[2]) ?? []).map((t) => atomOf(t) ?? "").filter(Boolean) });
      } else if (kind === "STATUS") {
        const wire = stringOf(line[2]);
        const entry = wire === undefined ? undefined : out.get(wire);
        const items = listOf(line[3]) ?? [];
        if (entry === undefined) continue;
        for (let i = 0; i + 1 < items.length; i += 2) {
          const key = atomOf(items[i])?.toUpperCase();
          const value = Number(atomOf(items[i + 1]));
          if (key === "MESSAGES") entry.messages = value;
          if (key === "UNSEEN") entry.unseen = value;
        }
      }
    }
    return [...out.values()];
  }

  /** The hierarchy delimiter (LIST "" ""), or undefined on a flat server (NIL). */
  async delimiter(): Promise<string | undefined> {
    const answer = await this.run([raw('LIST "" ""')], { what: "LIST" });
    const line = answer.untagged.find((l) => atomOf(l[1])?.toUpperCase() === "LIST");
    const d = line === undefined || atomOf(line[3])?.toUpperCase() === "NIL" ? undefined : stringOf(line[3]);
    return d === "" ? undefined : d;
  }

  /**
   * Every mailbox under `name` (LIST "" "name<delimiter>*"), each with its message count (STATUS; 0 for a \Noselect
   * one): what a RENAME of `name` carries along (R-MAIL-11). A name holding a wildcard lists more, so the answer is
   * kept to the names that truly sit under `name`.
   */
  async children(name: string, delimiter: string): Promise<{ name: string; messages: number }[]> {
    const names = await this.childNames(name, delimiter);
    const out: { name: string; messages: number }[] = [];
    for (const child of names) out.push({ name: child.name, messages: child.selectable ? (await this.status(child.name)).messages : 0 });
    return out;
  }

  /** The names under `name` (LIST "" "name<delimiter>*"), kept to those that truly sit under it, without their counts. */
  async childNames(name: string, delimiter: string): Promise<{ name: string; selectable: boolean }[]> {
    const prefix = `${name}${delimiter}`;
    const answer = await this.run([raw('LIST ""'), str(`${encodeMailboxName(prefix)}*`)], { what: "LIST" });
    const names: { name: string; selectable: boolean }[] = [];
    for (const line of answer.untagged) {
      if (atomOf(line[1])?.toUpperCase() !== "LIST") continue;
      const wire = stringOf(line[4]);
      const decoded = wire === undefined ? undefined : decodeMailboxNameSafe(wire);
      if (decoded === undefined || !decoded.startsWith(prefix)) continue;
      const flags = (listOf(line[2]) ?? []).map((t) => atomOf(t)?.toLowerCase());
      names.push({ name: decoded, selectable: !flags.includes("\\noselect") && !flags.includes("\\nonexistent") });
    }
    return names;
  }

  /** Opens a mailbox (EXAMINE: read-only, or SELECT), unless it is open already in that mode; returns its UIDVALIDITY and size. */
  async open(name: string, readOnly: boolean): Promise<Selected> {
    if (this.selected?.name === name && (readOnly || !this.selected.readOnly)) return this.selected;
    this.selected = undefined;
    const answer = await this.run([raw(readOnly ? "EXAMINE" : "SELECT"), str(encodeMailboxName(name))], { what: readOnly ? "EXAMINE" : "SELECT" });
    let exists = 0;
    let uidValidity: number | undefined;
    let uidNext: number | undefined;
    for (const line of answer.untagged) {
      if (atomOf(line[2])?.toUpperCase() === "EXISTS") exists = Number(atomOf(line[1]));
      const code = atomOf(line[2]);
      const m = code === undefined ? null : /^\[(UIDVALIDITY|UIDNEXT) (\d+)\]$/i.exec(code);
      if (m?.[1]?.toUpperCase() === "UIDVALIDITY") uidValidity = Number(m[2]);
      if (m?.[1]?.toUpperCase() === "UIDNEXT") uidNext = Number(m[2]);
    }
    if (uidValidity === undefined) throw new MailError("the IMAP server did not say the mailbox's UIDVALIDITY, so no UID in it can be trusted");
    this.selected = { name, readOnly: answer.code === "READ-ONLY" || readOnly, uidValidity, exists, uidNext };
    return this.selected;
  }

  async status(name: string): Promise<{ messages: number; uidValidity: number }> {
    const answer = await this.run([raw("STATUS"), str(encodeMailboxName(name)), raw("(MESSAGES UIDVALIDITY)")], { what: "STATUS" });
    const line = answer.untagged.find((l) => atomOf(l[1])?.toUpperCase() === "STATUS");
    const items = listOf(line?.[3]) ?? [];
    const value = (key: string) => {
      for (let i = 0; i + 1 < items.length; i += 2) if (atomOf(items[i])?.toUpperCase() === key) return Number(atomOf(items[i + 1]));
      return undefined;
    };
    const messages = value("MESSAGES");
    const uidValidity = value("UIDVALIDITY");
    if (messages === undefined || uidValidity === undefined) throw new MailError("the IMAP server's STATUS answer lacked MESSAGES or UIDVALIDITY");
    return { messages, uidValidity };
  }

  // ---- messages (all by UID) ----

  /** UID SEARCH in the open mailbox: the matching UIDs as ranges (ESEARCH keeps the answer small). */
  async search(criteria: readonly Arg[]): Promise<Range[]> {
    const esearch = this.has("ESEARCH");
    const utf8 = criteria.some((a) => "literal" in a);
    const args = [raw("UID SEARCH"), ...(esearch ? [raw("RETURN (ALL)")] : []), ...(utf8 ? [raw("CHARSET UTF-8")] : []), ...(criteria.length === 0 ? [raw("ALL")] : criteria)];
    const answer = await this.run(args, { what: "UID SEARCH" });
    for (const line of answer.untagged) {
      const kind = atomOf(line[1])?.toUpperCase();
      if (kind === "ESEARCH") {
        for (let i = 2; i + 1 < line.length; i++) if (atomOf(line[i])?.toUpperCase() === "ALL") return parseSequenceSet(atomOf(line[i + 1]) ?? "");
        return [];
      }
      if (kind === "SEARCH") {
        const uids = line
          .slice(2)
          .map((t) => Number(atomOf(t)))
          .filter((n) => Number.isInteger(n) && n > 0);
        return uids.length === 0 ? [] : parseSequenceSet(uids.join(","));
      }
    }
    return [];
  }

  /** UID FETCH of `items` for a sorted UID list: each answer's attribute map, by UID. */
  async fetch(uids: readonly number[], items: string, maxBytes?: number): Promise<Map<number, Map<string, Token>>> {
    const out = new Map<number, Map<string, Token>>();
    if (uids.length === 0) return out;
    const answer = await this.run([raw("UID FETCH"), raw(toSequenceSet(uids)), raw(items)], { what: "UID FETCH", maxBytes });
    for (const line of answer.untagged) {
      if (atomOf(line[2])?.toUpperCase() !== "FETCH") continue;
      const attrs = fetchAttributes(listOf(line[3]) ?? []);
      const uid = Number(atomOf(attrs.get("UID")));
      if (Number.isInteger(uid) && uid > 0) out.set(uid, new Map([...(out.get(uid) ?? []), ...attrs]));
    }
    return out;
  }

  /** FETCH by sequence number (a page of the newest messages without searching the mailbox whole). */
  async fetchSequence(from: number, to: number, items: string): Promise<Map<number, Map<string, Token>>> {
    const out = new Map<number, Map<string, Token>>();
    if (to < from || from < 1) return out;
    const answer = await this.run([raw("FETCH"), raw(`${from}:${to}`), raw(items)], { what: "FETCH" });
    for (const line of answer.untagged) {
      if (atomOf(line[2])?.toUpperCase() !== "FETCH") continue;
      const attrs = fetchAttributes(listOf(line[3]) ?? []);
      const uid = Number(atomOf(attrs.get("UID")));
      if (Number.isInteger(uid) && uid > 0) out.set(uid, attrs);
    }
    return out;
  }

  /** Which of these UIDs the open mailbox holds. */
  async existing(uids: readonly number[]): Promise<number[]> {
    if (uids.length === 0) return [];
    const ranges = await this.search([raw("UID"), raw(toSequenceSet(uids))]);
    return uids.filter((uid) => ranges.some(([a, b]) => uid >= a && uid <= b));
  }

  /** Which of these UIDs carry `flag` (UID FETCH FLAGS, which sets no flag of its own). */
  async flagged(uids: readonly number[], flag: string): Promise<number[]> {
    const fetched = await this.fetch(uids, "(UID FLAGS)");
    return uids.filter((uid) => (listOf(fetched.get(uid)?.get("FLAGS")) ?? []).some((t) => atomOf(t)?.toLowerCase() === flag.toLowerCase()));
  }

  // ---- writes: each says what it may have changed when it did not complete (never "nothing" after a command went out) ----

  /** The messages in the open mailbox, as an answer names them: `UIDs 1, 2 in "INBOX"`. */
  private where(uids: readonly number[]): string {
    return `UID${uids.length === 1 ? "" : "s"} ${uids.join(", ")} in "${this.selected?.name ?? "the open mailbox"}"`;
  }

  /** One write command: when its answer never came, the failure says what it may have changed (`maybe`). */
  private async write(args: readonly Arg[], what: string, maybe: string): Promise<Answer> {
    try {
      return await this.run(args, { what });
    } catch (error) {
      if (error instanceof MailUnanswered) throw new MailPartly(error.message, mayHave(maybe));
      throw error;
    }
  }

  /** Adds, then removes, flags; a removal that fails after the addition says the addition stands. */
  async store(uids: readonly number[], add: readonly string[], remove: readonly string[]): Promise<void> {
    const set = toSequenceSet(uids);
    const on = this.where(uids);
    const removing = [raw("UID STORE"), raw(set), raw(`-FLAGS.SILENT (${remove.join(" ")})`)];
    if (add.length > 0) await this.write([raw("UID STORE"), raw(set), raw(`+FLAGS.SILENT (${add.join(" ")})`)], "UID STORE", `${add.join(" ")} may have been added to ${on}, and nothing was removed`);
    if (remove.length === 0) return;
    if (add.length === 0) {
      await this.write(removing, "UID STORE", `${remove.join(" ")} may have been removed from ${on}`);
      return;
    }
    try {
      await this.run(removing, { what: "UID STORE" });
    } catch (error) {
      if (!(error instanceof MailError)) throw error;
      const added = `The mailbox was changed: ${add.join(" ")} ${add.length === 1 ? "was" : "were"} added to ${on}`;
      const removed = error instanceof MailUnanswered ? "may or may not have been removed" : `${remove.length === 1 ? "was" : "were"} not removed`;
      throw new MailPartly(error.message, `${added}; ${remove.join(" ")} ${removed}.`);
    }
  }

  /** UID MOVE or UID COPY; the new UIDs from COPYUID (UIDPLUS) when the server sends them. */
  async transfer(mode: "move" | "copy", uids: readonly number[], destination: string): Promise<{ uidValidity: number; source: Range[]; destination: Range[] } | undefined> {
    if (mode === "move" && !this.has("MOVE")) throw new MailError("the IMAP server does not support MOVE, so nothing was moved");
    const what = mode === "move" ? "UID MOVE" : "UID COPY";
    let answer: Answer;
    try {
      answer = await this.write(
        [raw(what), raw(toSequenceSet(uids)), str(encodeMailboxName(destination))],
        what,
        `${this.where(uids)} may have been ${mode === "move" ? "moved" : "copied"} into "${destination}"`,
      );
    } catch (error) {
      // A UID MOVE answered NO may still have moved some of its messages: each is moved or untouched (RFC 6851 §3.3).
      // A UID COPY answered NO leaves the destination as it was (RFC 3501 §6.4.7).
      if (mode === "move" && error instanceof MailRefused)
        throw new MailPartly(error.message, mayHave(`some of ${this.where(uids)} may have been moved into "${destination}" before the server refused`));
      throw error;
    }
    const codes = [
      answer.code,
      ...answer.untagged.map((l) =>
        atomOf(l[2])
          ?.replace(/^\[|\]$/g, "")
          .toUpperCase(),
      ),
    ];
    const copyuid = codes.find((c) => c?.startsWith("COPYUID "));
    if (copyuid === undefined) return undefined;
    const [, validity, source, dest] = copyuid.split(" ");
    try {
      return { uidValidity: Number(validity), source: parseSequenceSet(source ?? ""), destination: parseSequenceSet(dest ?? "") };
    } catch {
      return undefined;
    }
  }

  /**
   * Marks exactly these UIDs \Deleted and expunges exactly them (UID EXPUNGE: UIDPLUS), never another message. When
   * the expunge is refused, the mark this call set comes off again, from exactly the UIDs it set it on (one another
   * client had marked keeps its mark), and the failure says what is left; when no answer came, it says what may be.
   */
  async expunge(uids: readonly number[]): Promise<void> {
    if (!this.has("UIDPLUS")) throw new MailError("the IMAP server does not support UIDPLUS, so it cannot expunge only the named messages; nothing was deleted");
    const set = toSequenceSet(uids);
    const already = await this.flagged(uids, "\\Deleted");
    const marking = uids.filter((uid) => !already.includes(uid));
    if (marking.length > 0) {
      await this.write(
        [raw("UID STORE"), raw(toSequenceSet(marking)), raw("+FLAGS.SILENT (\\Deleted)")],
        "UID STORE",
        `${this.where(marking)} may now be marked \\Deleted, and another client's expunge would delete them`,
      );
    }
    try {
      await this.run([raw("UID EXPUNGE"), raw(set)], { what: "UID EXPUNGE" });
    } catch (error) {
      if (!(error instanceof MailError)) throw error;
      if (!(error instanceof MailRefused)) {
        throw new MailPartly(
          error.message,
          mayHave(
            `${this.where(uids)} ${uids.length === 1 ? "was" : "were"} marked \\Deleted and may have been expunged; any still there keep the mark, and another client's expunge would delete them`,
          ),
        );
      }
      if (marking.length > 0) {
        try {
          await this.run([raw("UID STORE"), raw(toSequenceSet(marking)), raw("-FLAGS.SILENT (\\Deleted)")], { what: "UID STORE" });
        } catch (undo) {
          const still = undo instanceof MailRefused ? (marking.length === 1 ? "is still" : "are still") : "may still be";
          const why = undo instanceof MailError ? undo.message : "the connection failed";
          throw new MailPartly(
            error.message,
            `The mailbox was changed: ${this.where(marking)} ${still} marked \\Deleted (taking the mark off failed too: ${why}), and another client's expunge would delete them.`,
          );
        }
      }
      const undone = marking.length > 0 ? "; the \\Deleted mark set for it was taken off again" : "";
      const left = await this.existing(uids).catch(() => undefined);
      if (left === undefined) throw new MailPartly(`${error.message}${undone}`, mayHave(`whether the server expunged any of ${this.where(uids)} before it refused could not be checked`));
      const gone = uids.filter((uid) => !left.includes(uid));
      if (gone.length > 0) throw new MailPartly(`${error.message}${undone}`, `The mailbox was changed: ${this.where(gone)} ${gone.length === 1 ? "was" : "were"} expunged before the server refused.`);
      throw new MailRefused(`${error.message}${undone}`);
    }
  }

  async createMailbox(name: string): Promise<void> {
    await this.write([raw("CREATE"), str(encodeMailboxName(name))], "CREATE", `mailbox "${name}" may have been created`);
  }

  async deleteMailbox(name: string): Promise<void> {
    if (this.selected?.name === name) {
      await this.run([raw("UNSELECT")], { what: "UNSELECT" }).catch(() => this.run([raw("CLOSE")], { what: "CLOSE" }));
      this.selected = undefined;
    }
    await this.write([raw("DELETE"), str(encodeMailboxName(name))], "DELETE", `mailbox "${name}" and the messages in it may have been deleted`);
  }

  async renameMailbox(from: string, to: string): Promise<void> {
    if (this.selected?.name === from) {
      await this.run([raw("UNSELECT")], { what: "UNSELECT" }).catch(() => undefined);
      this.selected = undefined;
    }
    await this.write([raw("RENAME"), str(encodeMailboxName(from)), str(encodeMailboxName(to))], "RENAME", `mailbox "${from}" (and every mailbox under it) may have been renamed to "${to}"`);
  }

  /** APPEND with flags; the new UID from APPENDUID (UIDPLUS), if sent. */
  async append(name: string, message: Uint8Array, flags: readonly string[]): Promise<number | undefined> {
    const answer = await this.write([raw("APPEND"), str(encodeMailboxName(name)), raw(`(${flags.join(" ")})`), { literal: message }], "APPEND", `the message may have been saved in "${name}"`);
    const m = /^APPENDUID \d+ (\d+)$/.exec(answer.code ?? "");
    return m === null ? undefined : Number(m[1]);
  }
}

/** What a write that did not complete may have changed, as the answer says it. */
const mayHave = (what: string) => `The mailbox may have been changed: ${what}.`;

function decodeMailboxNameSafe(wire: string): string | undefined {
  try {
    return decodeMailboxName(wire);
  } catch {
    return undefined;
  }
}
