// Mailbox names on the wire are in IMAP's modified UTF-7 (RFC 3501 5.1.3): printable ASCII stands for itself
// except "&", which is "&-"; every other run of characters is "&", the modified base64 (",", not "/", and no
// padding) of its UTF-16BE code units, and "-". Decoding refuses what no conforming encoder writes (a bad shift
// sequence, a non-ASCII byte, an encoded run of printable ASCII), so two different wire names never decode to one
// name (docs/rules.md R-MAIL-7).

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";

export class MailboxNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MailboxNameError";
  }
}

const printable = (unit: number) => unit >= 0x20 && unit <= 0x7e;

function encodeRun(units: number[]): string {
  const bytes: number[] = [];
  for (const u of units) bytes.push(u >> 8, u & 0xff);
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const [a = 0, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | (b << 8) | c;
    const chars = i + 1 >= bytes.length ? 2 : i + 2 >= bytes.length ? 3 : 4;
    for (let k = 0; k < chars; k++) out += B64[(n >> (18 - 6 * k)) & 63];
  }
  return `&${out}-`;
}

/** A mailbox name as IMAP sends it. Refuses a lone surrogate (it has no UTF-16 to encode faithfully). */
export function encodeMailboxName(name: string): string {
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(name)) throw new MailboxNameError("the mailbox name holds a lone surrogate");
  let out = "";
  let run: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (printable(unit)) {
      if (run.length > 0) {
        out += encodeRun(run);
        run = [];
      }
      out += unit === 0x26 ? "&-" : String.fromCharCode(unit);
    } else run.push(unit);
  }
  if (run.length > 0) out += encodeRun(run);
  return out;
}

/** A wire name as text; throws MailboxNameError on anything a conforming encoder would not have written. */
export function decodeMailboxName(wire: string): string {
  let out = "";
  for (let i = 0; i < wire.length; ) {
    const unit = wire.charCodeAt(i);
    if (!printable(unit)) throw new MailboxNameError("the mailbox name holds a character outside printable ASCII");
    if (unit !== 0x26) {
      out += wire[i];
      i++;
      continue;
    }
    const end = wire.indexOf("-", i + 1);
    if (end === -1) throw new MailboxNameError("the mailbox name has an unterminated shift sequence");
    const run = wire.slice(i + 1, end);
    i = end + 1;
    if (run === "") {
      out += "&";
      continue;
    }
    let bits = 0;
    let value = 0;
    const units: number[] = [];
    let bytes: number[] = [];
    for (const ch of run) {
      const v = B64.indexOf(ch);
      if (v === -1) throw new MailboxNameError("the mailbox name has a character outside modified base64 in a shift sequence");
      value = (value << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes.push((value >> bits) & 0xff);
        value &= (1 << bits) - 1;
        if (bytes.length === 2) {
          units.push(((bytes[0] as number) << 8) | (bytes[1] as number));
          bytes = [];
        }
      }
    }
    // Leftover bits must be zero padding of fewer than 6 bits, and no half code unit may remain.
    if (bytes.length !== 0 || bits >= 6 || value !== 0) throw new MailboxNameError("the mailbox name has a malformed shift sequence");
    if (units.some(printable)) throw new MailboxNameError("the mailbox name encodes printable ASCII in a shift sequence");
    const text = String.fromCharCode(...units);
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) throw new MailboxNameError("the mailbox name encodes a lone surrogate");
    out += text;
    // Two shift sequences back to back are one run split in two: a conforming encoder writes one.
    if (wire[i] === "&" && wire[i + 1] !== "-") throw new MailboxNameError("the mailbox name has two adjacent shift sequences");
  }
  return out;
}
