// IMAP's wire format, over any byte stream: reading one response whole (its text lines and the literals between
// them, each `{n}` read as exactly n octets), capped at every step so a server cannot make the Worker hold more
// than it asked for (docs/rules.md R-MAIL-8); tokenizing it; and writing a command's arguments (quoted strings, or
// literals for anything a quoted string cannot carry). No socket here: mailbox.client.ts brings one.

export class ImapWireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImapWireError";
  }
}

/** A response as read: text segments with the literals that followed each `{n}` between them. */
export interface RawResponse {
  /** The text of each line segment, literal markers kept (`... {12}`), CRLF removed. */
  texts: string[];
  /** literals[i] follows texts[i]. */
  literals: Uint8Array[];
}

export interface ReadLimits {
  /** The longest text segment (without literals) accepted. */
  maxLine: number;
  /** The largest single literal accepted. */
  maxLiteral: number;
}

const CR = 13;
const LF = 10;
const utf8 = new TextDecoder("utf-8");
const BACKSLASH = 0x5c;
const QUOTE = 0x22;

/** Reads whole responses from a byte stream. */
export class ResponseReader {
  /**
   * What was read and not yet taken: `buffer` from `pos` on. Lines are taken by moving `pos`, never by cutting the
   * buffer, so a chunk of many lines is neither copied nor re-viewed once per line (a search's answer was a tenth of
   * its call's allocations); a fill keeps only the untaken rest.
   */
  private buffer: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private done = false;

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const { value, done } = await this.reader.read();
    if (done || value === undefined) {
      this.done = true;
      return false;
    }
    const rest = this.buffer.length - this.pos;
    if (rest === 0) {
      this.buffer = value;
    } else {
      const next = new Uint8Array(rest + value.length);
      next.set(this.buffer.subarray(this.pos));
      next.set(value, rest);
      this.buffer = next;
    }
    this.pos = 0;
    return true;
  }

  /**
   * Gives the stream back (before STARTTLS: workerd's startTls() refuses a socket whose stream is still locked).
   * Anything the server sent past its last response would be read as if it had come over TLS, so it is refused.
   */
  release(): void {
    if (this.pos < this.buffer.length) throw new ImapWireError("the IMAP server sent more after its STARTTLS answer, before the TLS handshake; nothing sent in clear text before TLS is trusted");
    this.reader.releaseLock();
  }

  /**
   * The next CRLF-terminated line if the buffer holds all of it, without its CRLF; undefined when more must be read
   * first. Searches from `searched` bytes into the untaken rest (less one: a CR may end what was there before).
   * Refuses a line longer than `max`, before reading more of it.
   */
  private lineInBuffer(max: number, searched: number): string | undefined {
    const buffer = this.buffer;
    const start = this.pos;
    for (let i = start + Math.max(0, searched - 1); i + 1 < buffer.length; i++) {
      if (buffer[i] === CR && buffer[i + 1] === LF) {
        if (i - start > max) throw new ImapWireError(`the IMAP server sent a line longer than ${max} bytes`);
        this.pos = i + 2;
        return utf8.decode(buffer.subarray(start, i));
      }
    }
    if (buffer.length - start > max + 1) throw new ImapWireError(`the IMAP server sent a line longer than ${max} bytes`);
    return undefined;
  }

  /** The next line, read on until it is whole. Most lines are in the buffer already: they cost no await (read()). */
  private async line(max: number): Promise<string> {
    for (;;) {
      const searched = this.buffer.length - this.pos;
      if (!(await this.fill())) throw new ImapWireError("the IMAP server closed the connection");
      const text = this.lineInBuffer(max, searched);
      if (text !== undefined) return text;
    }
  }

  /** `n` bytes: a literal is kept (a message's bytes), so a copy of its own, not a view pinning the chunk it came in. */
  private bytesInBuffer(n: number): Uint8Array | undefined {
    if (this.buffer.length - this.pos < n) return undefined;
    const literal = this.buffer.slice(this.pos, this.pos + n);
    this.pos += n;
    return literal;
  }

  private async bytes(n: number): Promise<Uint8Array> {
    while (this.buffer.length - this.pos < n) if (!(await this.fill())) throw new ImapWireError("the IMAP server closed the connection in the middle of a literal");
    return this.bytesInBuffer(n) as Uint8Array;
  }

  /** One response: a line, and for each `{n}` it ends with, n octets and the rest of the line after them. */
  async read(limits: ReadLimits): Promise<RawResponse> {
    const texts: string[] = [];
    const literals: Uint8Array[] = [];
    for (;;) {
      const text = this.lineInBuffer(limits.maxLine, 0) ?? (await this.line(limits.maxLine));
      texts.push(text);
      const m = /\{(\d{1,10})\}$/.exec(text);
      if (m === null) return { texts, literals };
      const n = Number(m[1]);
      if (n > limits.maxLiteral) throw new ImapWireError(`the IMAP server offered a literal of ${n} bytes, more than the ${limits.maxLiteral} this call reads`);
      literals.push(this.bytesInBuffer(n) ?? (await this.bytes(n)));
    }
  }
}

/** A token of a response: an atom, a string (quoted or literal), a parenthesized list, or NIL. */
export type Token = { atom: string } | { string: string; bytes?: Uint8Array } | { list: Token[] } | { nil: true };

const isAtom = (t: Token | undefined): t is { atom: string } => t !== undefined && "atom" in t;

/** The tokens of a response's text and literals, the tag or "*" first. Bracketed sections stay in their atom ("BODY[]"). */
export function tokenize(response: RawResponse): Token[] {
  const root: Token[] = [];
  const stack: Token[][] = [root];
  const top = () => stack[stack.length - 1] as Token[];
  for (let index = 0; index < response.texts.length; index++) {
    const text = response.texts[index] as string;
    let i = 0;
    const literalAt = index < response.literals.length ? text.lastIndexOf("{") : -1;
    const end = literalAt === -1 ? text.length : literalAt;
    while (i < end) {
      const c = text[i] as string;
      if (c === " ") {
        i++;
      } else if (c === "(") {
        const list: Token[] = [];
        top().push({ list });
        stack.push(list);
        i++;
      } else if (c === ")") {
        if (stack.length === 1) throw new ImapWireError("the IMAP server sent an unbalanced list");
        stack.pop();
        i++;
      } else if (c === '"') {
        // Taken in runs between escapes, not a character at a time.
        let value = "";
        i++;
        let run = i;
        for (;;) {
          if (i >= end) throw new ImapWireError("the IMAP server sent an unterminated quoted string");
          const d = text.charCodeAt(i);
          if (d === BACKSLASH) {
            value += text.slice(run, i) + (text[i + 1] ?? "");
            i += 2;
            run = i;
          } else if (d === QUOTE) {
            value += text.slice(run, i);
            i++;
            break;
          } else {
            i++;
          }
        }
        top().push({ string: value });
      } else {
        let j = i;
        let depth = 0;
        while (j < end) {
          const d = text[j] as string;
          if (d === "[") depth++;
          else if (d === "]") depth = Math.max(0, depth - 1);
          else if (depth === 0 && (d === " " || d === "(" || d === ")")) break;
          j++;
        }
        const atom = text.slice(i, j);
        top().push(atom.length === 3 && atom.toUpperCase() === "NIL" ? { nil: true } : { atom });
        i = j;
      }
    }
    if (literalAt !== -1) {
      const bytes = response.literals[index] as Uint8Array;
      top().push({ string: utf8.decode(bytes), bytes });
    }
  }
  if (stack.length !== 1) throw new ImapWireError("the IMAP server sent an unbalanced list");
  return root;
}

export const atomOf = (t: Token | undefined): string | undefined => (isAtom(t) ? t.atom : undefined);
export const stringOf = (t: Token | undefined): string | undefined => (t !== undefined && "string" in t ? t.string : isAtom(t) ? t.atom : undefined);
export const listOf = (t: Token | undefined): Token[] | undefined => (t !== undefined && "list" in t ? t.list : undefined);
export const bytesOf = (t: Token | undefined): Uint8Array | undefined => (t !== undefined && "string" in t ? (t.bytes ?? new TextEncoder().encode(t.string)) : undefined);

/** A FETCH response's attribute list as a map from upper-cased name ("UID", "BODY[]") to its value. */
export function fetchAttributes(list: Token[]): Map<string, Token> {
  const out = new Map<string, Token>();
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = atomOf(list[i]);
    if (name !== undefined) out.set(name.toUpperCase(), list[i + 1] as Token);
  }
  return out;
}

/** One argument of a command: text sent as is (an atom the client built), a string to quote, or bytes to send as a literal. */
export type Arg = { raw: string } | { quote: string } | { literal: Uint8Array };

/** A quoted string can carry this text: 7-bit, no CR, LF or NUL, and short. Anything else goes as a literal. */
export function quotable(text: string): boolean {
  return text.length <= 1000 && /^[\x01-\x09\x0b\x0c\x0e-\x7f]*$/.test(text);
}

/** A string argument: quoted when a quoted string can carry it, a literal otherwise. */
export function str(text: string): Arg {
  return quotable(text) ? { quote: text } : { literal: new TextEncoder().encode(text) };
}

export const raw = (text: string): Arg => ({ raw: text });

/**
 * The command's wire form as chunks: each chunk but the last ends with a literal's `{n}` + CRLF, after which the
 * client waits for the server's continuation (or not, with LITERAL+: `{n+}`) before the literal's bytes.
 */
export function commandChunks(tag: string, args: readonly Arg[], literalPlus: boolean): { head: string; literal?: Uint8Array }[] {
  const chunks: { head: string; literal?: Uint8Array }[] = [];
  let head = tag;
  for (const arg of args) {
    if ("raw" in arg) {
      if (/[\r\n]/.test(arg.raw)) throw new ImapWireError("a command atom holds a line break");
      head += ` ${arg.raw}`;
    } else if ("quote" in arg) {
      if (!quotable(arg.quote)) throw new ImapWireError("a quoted string cannot carry this text");
      head += ` "${arg.quote.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
    } else {
      head += ` {${arg.literal.length}${literalPlus ? "+" : ""}}\r\n`;
      chunks.push({ head, literal: arg.literal });
      head = "";
    }
  }
  chunks.push({ head: `${head}\r\n` });
  return chunks;
}
