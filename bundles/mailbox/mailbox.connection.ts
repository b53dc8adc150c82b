// One IMAP connection: one per tool call, opened on first use, reused by every command of that call and closed when
// it ends (docs/rules.md R-MAIL-8), over a socket a connector opens (cloudflare:sockets in the Worker,
// mailbox.socket.ts). Implicit TLS or STARTTLS; plain TCP only where mailbox.config.ts allowed it (a loopback host).
// Every read is capped and every command timed out; a refusal names the command and the server's response code, never
// the server's text or a credential. It runs one command at a time and knows none of them: mailbox.client.ts does.
import type { ImapAccount } from "./mailbox.config";
import { MailError, MailRefused, MailUnanswered } from "./mailbox.errors";
import { type Arg, atomOf, commandChunks, ImapWireError, type RawResponse, ResponseReader, ResponseTooLarge, raw, str, type Token, tokenize } from "./mailbox.wire";

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

export interface Answer {
  untagged: Token[][];
  /** The tagged response's code, upper-cased with its arguments ("COPYUID 7 1:2 5:6"), if any. */
  code: string | undefined;
}

const encoder = new TextEncoder();
const words = (args: readonly Arg[]) => (args[0] !== undefined && "raw" in args[0] ? args[0].raw.split(" ").slice(0, 2).join(" ") : "command");

/** The connection under the commands: connecting and logging in, capabilities, one command at a time, closing. */
export class ImapConnection {
  private tag = 0;
  private reader: ResponseReader;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private closed = false;
  private busy: Promise<unknown> = Promise.resolve();
  capabilities = new Set<string>();
  /** Commands sent on this connection: the bench's connection-cost line and the reuse test read it. */
  commands = 0;

  protected constructor(
    private socket: SocketLike,
    private readonly signal: AbortSignal,
  ) {
    this.reader = new ResponseReader(socket.readable.getReader());
    this.writer = socket.writable.getWriter();
    signal.addEventListener("abort", () => void this.close(), { once: true });
  }

  /**
   * Connects, upgrades (STARTTLS) when asked to, logs in, on the connection `make` builds around the socket. Throws
   * MailError naming what failed, never the password.
   */
  protected static async establish<T extends ImapConnection>(make: (socket: SocketLike, signal: AbortSignal) => T, account: ImapAccount, connect: Connector, signal: AbortSignal): Promise<T> {
    if (signal.aborted) throw new MailError("the call was dropped before the IMAP server was reached");
    const secureTransport = account.security === "tls" ? "on" : account.security === "starttls" ? "starttls" : "off";
    let socket: SocketLike;
    try {
      socket = await connect({ hostname: account.host, port: account.port }, { secureTransport, allowHalfOpen: false });
    } catch {
      throw new MailError("the IMAP server could not be reached");
    }
    const client = make(socket, signal);
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
}
