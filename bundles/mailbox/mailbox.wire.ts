// IMAP's wire format, over any byte stream: reading one response whole (its text lines and the literals between
// them, each `{n}` read as exactly n octets), capped at every step so a server cannot make the Worker hold more
// than it asked for (docs/rules.md R-MAIL-8); tokenizing it; and writing a command's arguments (quoted strings, or
// literals for anything a quoted string cannot carry). No socket here: mailbox.connection.ts brings one.

export class ImapWireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImapWireError";
  }
}

/**
 * A response whose lines and literals together would pass the `maxBytes` it was read under: refused as soon as the
 * next line or literal would pass it, before that is read, so no response holds more than it was allowed.
 */
export class ResponseTooLarge extends ImapWireError {
  constructor(readonly maxBytes: number) {
    super(`the IMAP server's answer is larger than the ${maxBytes} bytes this call reads`);
  }
}

/** A response as read: text segments with the literals that followed each `{n}` between them. */
export interface RawResponse {
  /** The text of each line segment, literal markers kept (`... {12}`), CRLF removed. */
  texts: string[];
  /** literals[i] follows texts[i]. */
  literals: Uint8Array[];
  /** The bytes the response took off the wire: its lines with their CRLFs, and its literals. */
  bytes: number;
}

export interface ReadLimits {
  /** The longest text segment (without literals) accepted. */
  maxLine: number;
  /** What the whole response may hold: its lines with their CRLFs, in bytes, and its literals. */
  maxBytes: number;
}

const CR = 13;
const LF = 10;
const utf8 = new TextDecoder("utf-8");
const BACKSLASH = 0x5c;
const QUOTE = 0x22;
/** A line that ends with a literal's `{n}`: any count of digits (IMAP allows leading zeros), held to the caps as a number. */
const LITERAL_MARK = /\{(\d+)\}$/;

/** Reads whole responses from a byte stream. */
export class ResponseReader {
  /**
   * What was read and not yet taken: `buffer` from `pos` to `end`. Lines are taken by moving `pos`, never by cutting
   * the buffer, so a chunk of many lines is neither copied nor re-viewed once per line (a search's answer was a tenth
   * of its call's allocations). A line that spans chunks is gathered in a buffer of the reader's own (`owned`) with
   * room to double, so a long line in small chunks is copied a few times in all, not once per chunk.
   */
  private buffer: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private end = 0;
  private owned = false;
  private done = false;
  /** The byte length of the line lineInBuffer took last, without its CRLF. */
  private lineBytes = 0;
  /** The limits of the response being read: which refusal a line past its bound earns. */
  private limits: ReadLimits = { maxLine: 0, maxBytes: 0 };

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  private async next(): Promise<Uint8Array | undefined> {
    if (this.done) return undefined;
    const { value, done } = await this.reader.read();
    if (done || value === undefined) {
      this.done = true;
      return undefined;
    }
    return value;
  }

  private async fill(): Promise<boolean> {
    const value = await this.next();
    if (value === undefined) return false;
    const rest = this.end - this.pos;
    if (rest === 0) {
      this.buffer = value;
      this.owned = false;
      this.pos = 0;
      this.end = value.length;
    } else if (this.owned && this.end + value.length <= this.buffer.length) {
      this.buffer.set(value, this.end);
      this.end += value.length;
    } else {
      const next = new Uint8Array(2 * (rest + value.length));
      next.set(this.buffer.subarray(this.pos, this.end));
      next.set(value, rest);
      this.buffer = next;
      this.owned = true;
      this.pos = 0;
      this.end = rest + value.length;
    }
    return true;
  }

  /**
   * Gives the stream back (before STARTTLS: workerd's startTls() refuses a socket whose stream is still locked).
   * Anything the server sent past its last response would be read as if it had come over TLS, so it is refused.
   */
  release(): void {
    if (this.pos < this.end) throw new ImapWireError("the IMAP server sent more after its STARTTLS answer, before the TLS handshake; nothing sent in clear text before TLS is trusted");
    this.reader.releaseLock();
  }

  /** A line past `max` bytes: past the line cap, or past what is left of the response's budget. */
  private overflow(max: number): ImapWireError {
    return max < this.limits.maxLine ? new ResponseTooLarge(this.limits.maxBytes) : new ImapWireError(`the IMAP server sent a line longer than ${max} bytes`);
  }

  /**
   * The next CRLF-terminated line if the buffer holds all of it, without its CRLF; undefined when more must be read
   * first. Searches from `searched` bytes into the untaken rest (less one: a CR may end what was there before).
   * Refuses a line longer than `max`, before reading more of it.
   */
  private lineInBuffer(max: number, searched: number): string | undefined {
    const buffer = this.buffer;
    const start = this.pos;
    const end = this.end;
    for (let i = start + Math.max(0, searched - 1); i + 1 < end; i++) {
      if (buffer[i] === CR && buffer[i + 1] === LF) {
        if (i - start > max) throw this.overflow(max);
        this.pos = i + 2;
        this.lineBytes = i - start;
        return utf8.decode(buffer.subarray(start, i));
      }
    }
    if (end - start > max + 1) throw this.overflow(max);
    return undefined;
  }

  /** The next line, read on until it is whole. Most lines are in the buffer already: they cost no await (read()). */
  private async line(max: number): Promise<string> {
    for (;;) {
      const searched = this.end - this.pos;
      if (!(await this.fill())) throw new ImapWireError("the IMAP server closed the connection");
      const text = this.lineInBuffer(max, searched);
      if (text !== undefined) return text;
    }
  }

  /** `n` bytes: a literal is kept (a message's bytes), so a copy of its own, not a view pinning the chunk it came in. */
  private bytesInBuffer(n: number): Uint8Array | undefined {
    if (this.end - this.pos < n) return undefined;
    const literal = this.buffer.slice(this.pos, this.pos + n);
    this.pos += n;
    return literal;
  }

  /** A literal longer than what is buffered: made at its full size once and filled chunk by chunk as they come. */
  private async bytes(n: number): Promise<Uint8Array> {
    const literal = new Uint8Array(n);
    let have = this.end - this.pos;
    literal.set(this.buffer.subarray(this.pos, this.end));
    this.pos = this.end;
    while (have < n) {
      const chunk = await this.next();
      if (chunk === undefined) throw new ImapWireError("the IMAP server closed the connection in the middle of a literal");
      const take = Math.min(n - have, chunk.length);
      literal.set(take === chunk.length ? chunk : chunk.subarray(0, take), have);
      have += take;
      this.buffer = chunk;
      this.owned = false;
      this.pos = take;
      this.end = chunk.length;
    }
    return literal;
  }

  /**
   * One response: a line, and for each `{n}` it ends with, n octets and the rest of the line after them. Held to
   * `limits.maxBytes` as it is read: a line or literal that would pass it is refused before it is read (R-MAIL-8).
   */
  async read(limits: ReadLimits): Promise<RawResponse> {
    this.limits = limits;
    const texts: string[] = [];
    const literals: Uint8Array[] = [];
    let bytes = 0;
    for (;;) {
      // What is left of the budget bounds the line too, its CRLF counted.
      const max = Math.min(limits.maxLine, limits.maxBytes - bytes - 2);
      if (max < 0) throw new ResponseTooLarge(limits.maxBytes);
      const text = this.lineInBuffer(max, 0) ?? (await this.line(max));
      bytes += this.lineBytes + 2;
      texts.push(text);
      const m = LITERAL_MARK.exec(text);
      if (m === null) return { texts, literals, bytes };
      const n = Number(m[1]);
      // A line follows every literal, its CRLF at least: a literal that leaves no room for it is refused now.
      if (n > limits.maxBytes - bytes - 2) throw new ResponseTooLarge(limits.maxBytes);
      literals.push(this.bytesInBuffer(n) ?? (await this.bytes(n)));
      bytes += n;
    }
  }
}

/** A token of a response: an atom, a string (quoted or literal), a parenthesized list, or NIL. */
export type Token = { atom: string } | { string: string; bytes?: Uint8Array } | { list: Token[] } | { nil: true };

const isAtom = (t: Token | undefined): t is { atom: string } => t !== undefined && "atom" in t;

/** The tokens of a response's text and literals, the tag or "*" first. Bracketed sections stay in their atom ("BODY[]"). */
export function tokenize(response: Pick<RawResponse, "texts" | "literals">): Token[] {
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
