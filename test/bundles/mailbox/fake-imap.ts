// A scripted IMAP server in memory, behind the bundle's connector: the commands the mailbox tools send, over mailboxes
// a test sets up and reads back, with faults on cue (a NO, an answer that never comes, a connection that drops, each
// after the command ran or before), and every connection counted while it is open. Deterministic: no socket, no clock.
import type { Connector, SocketLike } from "../../../bundles/mailbox/mailbox.connection";

export interface FakeMessage {
  uid: number;
  flags: string[];
  raw: string;
}
export interface FakeMailbox {
  uidValidity: number;
  uidNext: number;
  /** LIST flags (\Noselect …). */
  listFlags: string[];
  messages: FakeMessage[];
}

/** What the server does with the next command `when` matches (its whole line, without any literal). */
export interface Fault {
  when: RegExp;
  /** no: a tagged NO (with free text no answer may echo); hang: no answer ever; drop: the connection closes unanswered. */
  answer: "no" | "hang" | "drop";
  /** Whether the command ran first: for hang and drop, before its answer was lost (default yes); for no, before the NO (default no). */
  ran?: boolean;
}

/** Free text in every NO: an answer that shows it echoed the server. */
export const SERVER_TEXT = "internal error 0xdeadbeef at /var/mail/secret";
export const FAKE_PASSWORD = "fake-imap-password-0123456789";

/** The variables giving `mount` an account at a fake server (any host: the connector is the fake's). */
export function fakeAccountEnv(mount: string): Record<string, string> {
  const ns = `${mount.toUpperCase().replace(/-/g, "_")}__`;
  return { [`${ns}IMAP_HOST`]: "127.0.0.1", [`${ns}IMAP_PORT`]: "1143", [`${ns}IMAP_USER`]: "carol", [`${ns}IMAP_PASSWORD`]: FAKE_PASSWORD, [`${ns}IMAP_SECURITY`]: "plain" };
}

const CAPABILITIES = "IMAP4rev1 LITERAL+ UIDPLUS MOVE";
const enc = new TextEncoder();

type Token = string | { list: string };

/** A command line's arguments: atoms, quoted strings (unescaped) and parenthesised lists kept as their text. */
function tokens(line: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === " ") {
      i++;
    } else if (c === '"') {
      let s = "";
      i++;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === "\\") i++;
        s += line[i];
        i++;
      }
      i++;
      out.push(s);
    } else if (c === "(") {
      const end = line.indexOf(")", i);
      out.push({ list: line.slice(i + 1, end) });
      i = end + 1;
    } else {
      let end = line.indexOf(" ", i);
      if (end === -1) end = line.length;
      out.push(line.slice(i, end));
      i = end;
    }
  }
  return out;
}

const text = (t: Token | undefined) => (typeof t === "string" ? t : "");
const quote = (s: string) => `"${s.replace(/["\\]/g, (m) => `\\${m}`)}"`;

/** A UID set ("1:3,7") as a test against a UID. */
function inSet(set: string): (uid: number) => boolean {
  const parts = set.split(",").map((p) => {
    const [a, b = a] = p.split(":");
    return [Number(a), b === "*" ? Number.POSITIVE_INFINITY : Number(b)] as const;
  });
  return (uid) => parts.some(([a, b]) => uid >= Math.min(a, b) && uid <= Math.max(a, b));
}

export class FakeImap {
  readonly mailboxes = new Map<string, FakeMailbox>();
  /** Every command line the server read, in order, tagged by connection (the password left out). */
  readonly log: string[] = [];
  private readonly faults: Fault[] = [];
  private nextValidity = 1000;
  /** Connections opened, and those still open (the client has not closed them, and the server has not dropped them). */
  connections = 0;
  open = 0;
  /** Called once a command hangs: a test moves its clock past the client's command timeout here. */
  onHang: () => void = () => {};
  /** Called with every command line before it runs: a test changes the mailbox under the client here. */
  beforeCommand: (line: string) => void = () => {};

  /** A mailbox holding `count` messages (UIDs 1..count) with these flags each. */
  add(name: string, options: { count?: number; uidValidity?: number; flags?: (uid: number) => string[]; listFlags?: string[]; raw?: string } = {}): this {
    const count = options.count ?? 0;
    this.mailboxes.set(name, {
      uidValidity: options.uidValidity ?? ++this.nextValidity,
      uidNext: count + 1,
      listFlags: options.listFlags ?? [],
      messages: Array.from({ length: count }, (_, i) => ({ uid: i + 1, flags: options.flags?.(i + 1) ?? [], raw: options.raw ?? `Subject: message ${i + 1}\r\n\r\nBody ${i + 1}.\r\n` })),
    });
    return this;
  }

  fault(fault: Fault): this {
    this.faults.push(fault);
    return this;
  }

  /** A mailbox's UIDs and flags, as a test asserts the server's state. */
  state(name: string): Record<number, string[]> | undefined {
    const box = this.mailboxes.get(name);
    return box === undefined ? undefined : Object.fromEntries(box.messages.map((m) => [m.uid, [...m.flags].sort()]));
  }

  connector(): Connector {
    return () => this.connect();
  }

  private connect(): SocketLike {
    const id = ++this.connections;
    this.open++;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let closed = false;
    const end = () => {
      if (closed) return;
      closed = true;
      this.open--;
      try {
        controller.close();
      } catch {}
    };
    const send = (lines: string[] | string) => {
      if (closed) return;
      controller.enqueue(enc.encode((typeof lines === "string" ? [lines] : lines).map((l) => `${l}\r\n`).join("")));
    };
    const readable = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
        c.enqueue(enc.encode(`* OK [CAPABILITY ${CAPABILITIES}] fake ready\r\n`));
      },
    });
    let selected: string | undefined;
    let buffer = new Uint8Array(0);
    let line = "";
    let literal: number | undefined;
    let pendingLiterals: Uint8Array[] = [];

    const handle = (command: string, literals: Uint8Array[]) => {
      const m = /^(\S+) (.*)$/s.exec(command);
      if (m === null) return;
      const tag = m[1] as string;
      const rest = m[2] as string;
      this.log.push(`#${id} ${/^LOGIN /i.test(rest) ? "LOGIN <credentials>" : rest}`);
      this.beforeCommand(rest);
      const fault = this.faults.findIndex((f) => f.when.test(rest));
      const picked = fault === -1 ? undefined : this.faults.splice(fault, 1)[0];
      const answer = () => this.run(tag, rest, literals, { get: () => selected, set: (s) => (selected = s) });
      if (picked?.answer === "no") {
        if (picked.ran === true) answer();
        send(`${tag} NO [SERVERBUG] ${SERVER_TEXT}`);
        return;
      }
      if (picked !== undefined) {
        // The command runs (or not) and its answer is lost: the connection drops, or nothing more is ever said.
        if (picked.ran !== false) answer();
        if (picked.answer === "drop") end();
        else this.onHang();
        return;
      }
      send(answer());
      if (/^LOGOUT/i.test(rest)) end();
    };

    const writable = new WritableStream<Uint8Array>({
      write: (chunk) => {
        const joined = new Uint8Array(buffer.length + chunk.length);
        joined.set(buffer);
        joined.set(chunk, buffer.length);
        buffer = joined;
        for (;;) {
          if (literal !== undefined) {
            if (buffer.length < literal) return;
            pendingLiterals.push(buffer.slice(0, literal));
            buffer = buffer.slice(literal);
            literal = undefined;
            continue;
          }
          const at = buffer.findIndex((b, i) => b === 13 && buffer[i + 1] === 10);
          if (at === -1) return;
          const piece = new TextDecoder().decode(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
          const lit = /\{(\d+)(\+?)\}$/.exec(piece);
          if (lit !== null) {
            // The literal stands in the line as one placeholder token; its bytes go beside the line.
            line += `${piece.slice(0, lit.index)}\u0000`;
            literal = Number(lit[1]);
            if (lit[2] !== "+") send("+ go ahead");
            continue;
          }
          line += piece;
          const literals = pendingLiterals;
          const whole = line;
          line = "";
          pendingLiterals = [];
          handle(whole, literals);
        }
      },
    });
    return {
      readable,
      writable,
      close: async () => end(),
      startTls: () => {
        throw new Error("the fake IMAP server speaks plain text only");
      },
    };
  }

  /** One command against the state: its answer's lines. */
  private run(tag: string, rest: string, literals: Uint8Array[], selection: { get: () => string | undefined; set: (s: string | undefined) => void }): string[] {
    const t = tokens(rest);
    const word = text(t[0]).toUpperCase();
    const uidCommand = word === "UID" ? text(t[1]).toUpperCase() : undefined;
    const ok = (extra: string[] = [], code = "") => [...extra, `${tag} OK ${code}done`];
    const no = (why = "no such mailbox") => [`${tag} NO ${why}`];
    const box = (name: string) => this.mailboxes.get(name);
    const current = () => {
      const name = selection.get();
      return name === undefined ? undefined : box(name);
    };
    switch (uidCommand ?? word) {
      case "LOGIN":
        return ok([], `[CAPABILITY ${CAPABILITIES}] `);
      case "CAPABILITY":
        return ok([`* CAPABILITY ${CAPABILITIES}`]);
      case "LOGOUT":
        return ["* BYE fake logging out", `${tag} OK done`];
      case "SELECT":
      case "EXAMINE": {
        const name = text(t[1]);
        const b = box(name);
        if (b === undefined || b.listFlags.includes("\\Noselect")) {
          selection.set(undefined);
          return no();
        }
        selection.set(name);
        return ok([`* ${b.messages.length} EXISTS`, `* OK [UIDVALIDITY ${b.uidValidity}] v`, `* OK [UIDNEXT ${b.uidNext}] n`], word === "EXAMINE" ? "[READ-ONLY] " : "[READ-WRITE] ");
      }
      case "UNSELECT":
        selection.set(undefined);
        return ok();
      case "STATUS": {
        const name = text(t[1]);
        const b = box(name);
        if (b === undefined || b.listFlags.includes("\\Noselect")) return no();
        return ok([`* STATUS ${quote(name)} (MESSAGES ${b.messages.length} UIDVALIDITY ${b.uidValidity})`]);
      }
      case "LIST": {
        const pattern = text(t[2]);
        if (pattern === "") return ok(['* LIST (\\Noselect) "/" ""']);
        const prefix = pattern.endsWith("*") ? pattern.slice(0, -1) : undefined;
        const names = [...this.mailboxes.keys()].filter((n) => (prefix === undefined ? n === pattern : n.startsWith(prefix)));
        return ok(names.map((n) => `* LIST (${(box(n) as FakeMailbox).listFlags.join(" ")}) "/" ${quote(n)}`));
      }
      case "CREATE": {
        const name = text(t[1]);
        if (box(name) !== undefined) return no("already exists");
        this.add(name);
        return ok();
      }
      case "DELETE": {
        const name = text(t[1]);
        if (!this.mailboxes.delete(name)) return no();
        return ok();
      }
      case "RENAME": {
        const from = text(t[1]);
        const to = text(t[2]);
        const b = box(from);
        if (b === undefined || box(to) !== undefined) return no();
        this.mailboxes.delete(from);
        this.mailboxes.set(to, b);
        return ok();
      }
      case "APPEND": {
        const name = text(t[1]);
        const b = box(name);
        if (b === undefined) return no("[TRYCREATE] no such mailbox");
        const flags = typeof t[2] === "object" ? t[2].list.split(" ").filter(Boolean) : [];
        const uid = b.uidNext++;
        b.messages.push({ uid, flags, raw: new TextDecoder().decode(literals[0] ?? new Uint8Array()) });
        return ok([], `[APPENDUID ${b.uidValidity} ${uid}] `);
      }
      case "SEARCH": {
        const b = current();
        if (b === undefined) return [`${tag} BAD no mailbox selected`];
        const set = text(t[3]);
        const hits = b.messages.filter((m) => inSet(set)(m.uid)).map((m) => m.uid);
        return ok([`* SEARCH${hits.map((u) => ` ${u}`).join("")}`]);
      }
      case "FETCH": {
        const b = current();
        if (b === undefined) return [`${tag} BAD no mailbox selected`];
        const has = inSet(text(t[2]));
        const items = rest.slice(rest.indexOf("(")).toUpperCase();
        const out: string[] = [];
        b.messages.forEach((m, i) => {
          if (!has(m.uid)) return;
          if (items.includes("BODY.PEEK[]")) out.push(`* ${i + 1} FETCH (UID ${m.uid} BODY[] {${enc.encode(m.raw).length}}\r\n${m.raw})`);
          else if (items.includes("RFC822.SIZE")) out.push(`* ${i + 1} FETCH (UID ${m.uid} RFC822.SIZE ${enc.encode(m.raw).length})`);
          else out.push(`* ${i + 1} FETCH (UID ${m.uid} FLAGS (${m.flags.join(" ")}))`);
        });
        return ok(out);
      }
      case "STORE": {
        const b = current();
        if (b === undefined) return [`${tag} BAD no mailbox selected`];
        const has = inSet(text(t[2]));
        const op = text(t[3]).toUpperCase();
        const flags = typeof t[4] === "object" ? t[4].list.split(" ").filter(Boolean) : [];
        for (const m of b.messages) {
          if (!has(m.uid)) continue;
          const lower = (f: string) => f.toLowerCase();
          if (op.startsWith("+")) for (const f of flags) if (!m.flags.map(lower).includes(lower(f))) m.flags.push(f);
          if (op.startsWith("-")) m.flags = m.flags.filter((f) => !flags.map(lower).includes(lower(f)));
        }
        return ok();
      }
      case "EXPUNGE": {
        const b = current();
        if (b === undefined) return [`${tag} BAD no mailbox selected`];
        const has = inSet(text(t[2]));
        const out: string[] = [];
        for (let i = b.messages.length - 1; i >= 0; i--) {
          const m = b.messages[i] as FakeMessage;
          if (has(m.uid) && m.flags.some((f) => f.toLowerCase() === "\\deleted")) {
            b.messages.splice(i, 1);
            out.push(`* ${i + 1} EXPUNGE`);
          }
        }
        return ok(out);
      }
      case "MOVE":
      case "COPY": {
        const b = current();
        const dest = box(text(t[3]));
        if (b === undefined) return [`${tag} BAD no mailbox selected`];
        if (dest === undefined) return no("[TRYCREATE] no such mailbox");
        const has = inSet(text(t[2]));
        const moving = b.messages.filter((m) => has(m.uid));
        const to = moving.map((m) => {
          const uid = dest.uidNext++;
          dest.messages.push({ uid, flags: [...m.flags], raw: m.raw });
          return uid;
        });
        if (uidCommand === "MOVE") b.messages = b.messages.filter((m) => !has(m.uid));
        const code = moving.length === 0 ? "" : `[COPYUID ${dest.uidValidity} ${moving.map((m) => m.uid).join(",")} ${to.join(",")}] `;
        return ok([], code);
      }
      default:
        return [`${tag} BAD unknown command`];
    }
  }
}
