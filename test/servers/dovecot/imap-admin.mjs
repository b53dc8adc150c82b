// A small IMAP client in Node for setting up the test Dovecot: log in, create, delete, append and read a
// mailbox's status. It is the test harness's own (plain node:net, LITERAL+ appends), deliberately separate from the
// bundle's client, so the bundle is checked against mail put there by other code. Mailbox names are given as text
// and sent in modified UTF-7 (RFC 3501 5.1.3) by its own small encoder.
import { connect } from "node:net";

/** RFC 3501's modified UTF-7: printable ASCII as is ("&" as "&-"), every other run as "&" + base64(UTF-16BE) + "-", "/" for "," in the base64. */
export function encodeMailboxName(name) {
  let out = "";
  let run = [];
  const flush = () => {
    if (run.length === 0) return;
    const bytes = Buffer.alloc(run.length * 2);
    for (const [i, unit] of run.entries()) bytes.writeUInt16BE(unit, i * 2);
    out += `&${bytes.toString("base64").replace(/=+$/, "").replace(/\//g, ",")}-`;
    run = [];
  };
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (unit >= 0x20 && unit <= 0x7e) {
      flush();
      out += unit === 0x26 ? "&-" : name[i];
    } else run.push(unit);
  }
  flush();
  return out;
}

const quoted = (text) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

export class ImapAdmin {
  static async login({ host = "127.0.0.1", port, user, password }) {
    const admin = new ImapAdmin(connect({ host, port }));
    await admin.greeting;
    await admin.command(`LOGIN ${quoted(user)} ${quoted(password)}`);
    return admin;
  }

  constructor(socket) {
    this.socket = socket;
    this.buffer = "";
    this.tag = 0;
    this.waiting = undefined;
    this.greeting = new Promise((resolve, reject) => {
      this.waiting = { tag: "*", lines: [], resolve, reject };
    });
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => this.onData(chunk));
    socket.on("error", (error) => this.waiting?.reject(error));
  }

  onData(chunk) {
    this.buffer += chunk;
    let at = this.buffer.indexOf("\r\n");
    while (at !== -1) {
      const line = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 2);
      const w = this.waiting;
      if (w !== undefined) {
        w.lines.push(line);
        if (w.tag === "*" ? line.startsWith("* ") : line.startsWith(`${w.tag} `)) {
          this.waiting = undefined;
          if (w.tag !== "*" && !line.startsWith(`${w.tag} OK`)) w.reject(new Error(`IMAP: ${line}`));
          else w.resolve(w.lines);
        }
      }
      at = this.buffer.indexOf("\r\n");
    }
  }

  /** One command; `literal` (a Buffer) is sent as a LITERAL+ at its end. Resolves with the response lines. */
  command(text, literal) {
    const tag = `a${++this.tag}`;
    return new Promise((resolve, reject) => {
      this.waiting = { tag, lines: [], resolve, reject };
      if (literal === undefined) this.socket.write(`${tag} ${text}\r\n`);
      else this.socket.write(Buffer.concat([Buffer.from(`${tag} ${text} {${literal.length}+}\r\n`, "latin1"), literal, Buffer.from("\r\n")]));
    });
  }

  create(name) {
    return this.command(`CREATE ${quoted(encodeMailboxName(name))}`);
  }

  async deleteIfExists(name) {
    await this.command(`DELETE ${quoted(encodeMailboxName(name))}`).catch(() => {});
  }

  /** Appends a raw RFC 5322 message (CRLF line ends); resolves with the UID Dovecot gave it (UIDPLUS). */
  async append(name, raw, flags = []) {
    const lines = await this.command(`APPEND ${quoted(encodeMailboxName(name))} (${flags.join(" ")})`, Buffer.from(raw, "utf8"));
    const uid = /\[APPENDUID \d+ (\d+)\]/.exec(lines.at(-1) ?? "")?.[1];
    return Number(uid);
  }

  async status(name) {
    const lines = await this.command(`STATUS ${quoted(encodeMailboxName(name))} (MESSAGES UIDVALIDITY UIDNEXT)`);
    const status = lines.find((l) => l.startsWith("* STATUS")) ?? "";
    const num = (key) => Number(new RegExp(`${key} (\\d+)`).exec(status)?.[1]);
    return { messages: num("MESSAGES"), uidValidity: num("UIDVALIDITY"), uidNext: num("UIDNEXT") };
  }

  /** The UIDs in a mailbox, ascending, and each one's flags. */
  async messages(name) {
    await this.command(`EXAMINE ${quoted(encodeMailboxName(name))}`);
    const lines = await this.command("UID FETCH 1:* (UID FLAGS)");
    return lines
      .filter((l) => /^\* \d+ FETCH/.test(l))
      .map((l) => ({ uid: Number(/UID (\d+)/.exec(l)?.[1]), flags: (/FLAGS \(([^)]*)\)/.exec(l)?.[1] ?? "").split(" ").filter(Boolean) }))
      .sort((a, b) => a.uid - b.uid);
  }

  async mailboxes() {
    const lines = await this.command('LIST "" "*"');
    return lines
      .filter((l) => l.startsWith("* LIST"))
      .map((l) =>
        /"([^"]*)"$|(\S+)$/
          .exec(l)
          ?.slice(1)
          .find((x) => x !== undefined),
      );
  }

  async close() {
    await this.command("LOGOUT").catch(() => {});
    this.socket.destroy();
  }
}

/** A message in RFC 5322 form with CRLF line ends; `attachments`: [{ name, type, content (Buffer|string) }]. */
export function message({ from = "Ann Example <ann@example.com>", to = "dev@example.com", subject, text, attachments = [], date = "Mon, 1 Dec 2025 09:00:00 +0000", messageId }) {
  const id = messageId ?? `<${Math.random().toString(36).slice(2)}@example.com>`;
  const head = [`From: ${from}`, `To: ${to}`, `Subject: ${subject}`, `Date: ${date}`, `Message-ID: ${id}`, "MIME-Version: 1.0"];
  if (attachments.length === 0) return [...head, "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", "", text, ""].join("\r\n");
  const boundary = `b-${Math.random().toString(36).slice(2)}`;
  const parts = [`--${boundary}`, "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", "", text];
  for (const a of attachments) {
    const b64 = Buffer.from(a.content).toString("base64").replace(/.{76}/g, "$&\r\n");
    // RFC 2231 for a non-ASCII file name, as mail clients send it.
    const ascii = /^[\x20-\x7e]*$/.test(a.name);
    const param = ascii ? `filename="${a.name}"` : `filename*=utf-8''${encodeURIComponent(a.name)}`;
    parts.push(`--${boundary}`, `Content-Type: ${a.type}`, "Content-Transfer-Encoding: base64", `Content-Disposition: attachment; ${param}`, "", b64);
  }
  parts.push(`--${boundary}--`, "");
  return [...head, `Content-Type: multipart/mixed; boundary="${boundary}"`, "", ...parts].join("\r\n");
}
