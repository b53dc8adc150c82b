// The IMAP client's STARTTLS upgrade and its closing, over scripted sockets that behave as workerd's do: the plain
// stream is given back before the upgrade (workerd's startTls() leaves a socket that never works, nor closes, while
// the old stream is still locked), the password goes only over the upgraded stream, a server that says more before
// the handshake or offers no STARTTLS gets no password, and closing never waits on a socket that does not close.
import { describe, expect, it } from "vitest";
import { ImapClient } from "../../../bundles/mailbox/mailbox.client";
import type { ImapAccount } from "../../../bundles/mailbox/mailbox.config";
import { CLOSE_TIMEOUT_MS, type Connector, type SocketLike } from "../../../bundles/mailbox/mailbox.connection";

const enc = new TextEncoder();
const dec = new TextDecoder();
const PASSWORD = "dev-imap-starttls-0123456789abcdef";

/** A scripted IMAP server on one side of a socket: it answers each complete tagged line with `answer`. */
class ScriptedSocket implements SocketLike {
  readonly written: string[] = [];
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private pending = "";

  constructor(
    greeting: string | undefined,
    private readonly answer: (tag: string, command: string) => string,
    private readonly options: { upgrade?: () => ScriptedSocket; closes?: boolean } = {},
  ) {
    this.readable = new ReadableStream({
      start: (c) => {
        this.controller = c;
        if (greeting !== undefined) c.enqueue(enc.encode(greeting));
      },
    });
    this.writable = new WritableStream({
      write: (chunk) => {
        const text = dec.decode(chunk);
        this.written.push(text);
        this.pending += text;
        let at = this.pending.indexOf("\r\n");
        while (at !== -1) {
          const line = this.pending.slice(0, at);
          this.pending = this.pending.slice(at + 2);
          const m = /^(s\d+) ([A-Z]+)/.exec(line);
          if (m !== null) this.controller?.enqueue(enc.encode(this.answer(m[1] as string, m[2] as string)));
          at = this.pending.indexOf("\r\n");
        }
      },
    });
  }

  close(): Promise<void> {
    return this.options.closes === false ? new Promise(() => {}) : Promise.resolve();
  }

  /** As workerd: the new socket shares the old one's streams, so a stream still locked leaves it unusable. */
  startTls(): SocketLike {
    if (this.readable.locked || this.writable.locked) throw new TypeError("The ReadableStream has been locked to a reader.");
    if (this.options.upgrade === undefined) throw new TypeError("this socket was not opened for STARTTLS");
    return this.options.upgrade();
  }

  text(): string {
    return this.written.join("");
  }
}

const account: ImapAccount = { host: "127.0.0.1", port: 143, user: "alice", password: PASSWORD, security: "starttls" };

/** The server's side after the handshake: capabilities without STARTTLS, then a login. */
function tlsSide(): ScriptedSocket {
  return new ScriptedSocket(undefined, (tag, command) => {
    if (command === "CAPABILITY") return `* CAPABILITY IMAP4rev1 LITERAL+ AUTH=PLAIN\r\n${tag} OK done\r\n`;
    if (command === "LOGIN") return `${tag} OK [CAPABILITY IMAP4rev1 LITERAL+ UIDPLUS MOVE] Logged in\r\n`;
    if (command === "LOGOUT") return `* BYE\r\n${tag} OK bye\r\n`;
    return `${tag} BAD unexpected\r\n`;
  });
}

/** The plain side: a greeting offering STARTTLS (or not), and `afterOk` sent with the STARTTLS answer. */
function plainSide(tls: ScriptedSocket, { offers = true, afterOk = "" } = {}): ScriptedSocket {
  const caps = `IMAP4rev1 LITERAL+${offers ? " STARTTLS" : ""} AUTH=PLAIN`;
  return new ScriptedSocket(
    `* OK [CAPABILITY ${caps}] ready\r\n`,
    (tag, command) => {
      if (command === "STARTTLS") return `${tag} OK Begin TLS negotiation now.\r\n${afterOk}`;
      if (command === "CAPABILITY") return `* CAPABILITY ${caps}\r\n${tag} OK done\r\n`;
      return `${tag} BAD not before STARTTLS\r\n`;
    },
    { upgrade: () => tls },
  );
}

const connectorTo =
  (socket: ScriptedSocket, seen: string[] = []): Connector =>
  (_address, options) => {
    seen.push(options.secureTransport);
    return socket;
  };

describe("STARTTLS", () => {
  it("gives the plain stream back before the upgrade, and sends the password only over the upgraded stream", async () => {
    const tls = tlsSide();
    const plain = plainSide(tls);
    const seen: string[] = [];
    const client = await ImapClient.open(account, connectorTo(plain, seen), new AbortController().signal);
    expect(seen).toEqual(["starttls"]);
    expect(plain.text()).toBe("s1 STARTTLS\r\n");
    expect(tls.text()).toContain(PASSWORD);
    expect(tls.text()).toMatch(/^s2 CAPABILITY\r\ns3 LOGIN "alice" \{\d+\+\}\r\n/);
    // What the server said before the handshake is forgotten: the capabilities are the upgraded stream's.
    expect(client.has("STARTTLS")).toBe(false);
    expect(client.has("UIDPLUS")).toBe(true);
    await client.close();
  });

  it("refuses a server that sends more after its STARTTLS answer, before the handshake, and sends no password", async () => {
    const tls = tlsSide();
    const plain = plainSide(tls, { afterOk: "* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n" });
    await expect(ImapClient.open(account, connectorTo(plain), new AbortController().signal)).rejects.toThrow(
      "the IMAP server sent more after its STARTTLS answer, before the TLS handshake; nothing sent in clear text before TLS is trusted",
    );
    expect(plain.text()).not.toContain(PASSWORD);
    expect(tls.text()).toBe("");
  });

  it("refuses a server that does not offer STARTTLS, and sends no password", async () => {
    const tls = tlsSide();
    const plain = plainSide(tls, { offers: false });
    await expect(ImapClient.open(account, connectorTo(plain), new AbortController().signal)).rejects.toThrow(
      "the IMAP server does not offer STARTTLS, and this mount does not send its password in clear text",
    );
    expect(plain.text()).not.toContain("LOGIN");
    expect(plain.text()).not.toContain(PASSWORD);
    expect(tls.text()).toBe("");
  });
});

describe("closing", () => {
  it("ends within its one-second bound when the socket never says it closed", async () => {
    const stuck = new ScriptedSocket(
      "* OK [CAPABILITY IMAP4rev1 LITERAL+ AUTH=PLAIN] ready\r\n",
      (tag, command) => (command === "LOGIN" ? `${tag} OK [CAPABILITY IMAP4rev1 LITERAL+] Logged in\r\n` : `${tag} OK done\r\n`),
      { closes: false },
    );
    const client = await ImapClient.open({ ...account, security: "plain" }, connectorTo(stuck), new AbortController().signal);
    const started = Date.now();
    await client.close();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(CLOSE_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(CLOSE_TIMEOUT_MS + 1_500);
  });

  it("fails a STARTTLS upgrade that cannot start promptly, even when the socket never closes", async () => {
    // The upgrade throws as workerd's does on a socket whose stream is still locked; this socket also never closes.
    const stuck = new ScriptedSocket("* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n", (tag) => `${tag} OK Begin TLS negotiation now.\r\n`, { closes: false });
    const started = Date.now();
    await expect(ImapClient.open(account, connectorTo(stuck), new AbortController().signal)).rejects.toThrow("the IMAP connection failed (connecting to the IMAP server)");
    expect(Date.now() - started).toBeLessThan(CLOSE_TIMEOUT_MS + 1_500);
    expect(stuck.text()).not.toContain(PASSWORD);
  });
});
