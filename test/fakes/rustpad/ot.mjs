// Operational transform as Rustpad's server does it (the `operational-transform` crate's rules), written for the
// fake on its own rather than shared with the bundle, so one checks the other. An operation is a list: a positive
// number retains that many characters, a negative one deletes that many, a string inserts. Lengths count code
// points, as Rust's chars do. `transform(a, b)` gives (a', b') with apply(apply(s, a), b') = apply(apply(s, b), a');
// on a tie the insert of `a` (the edit being applied) goes first, as the crate's does.

/** @param {string} text */
export function chars(text) {
  return [...text];
}

export class Seq {
  constructor() {
    /** @type {(number|string)[]} */
    this.ops = [];
    this.baseLen = 0;
    this.targetLen = 0;
  }

  /** @param {number} n */
  retain(n) {
    if (n === 0) return this;
    this.baseLen += n;
    this.targetLen += n;
    const last = this.ops.at(-1);
    if (typeof last === "number" && last > 0) this.ops[this.ops.length - 1] = last + n;
    else this.ops.push(n);
    return this;
  }

  /** @param {number} n */
  delete(n) {
    if (n === 0) return this;
    this.baseLen += n;
    const last = this.ops.at(-1);
    if (typeof last === "number" && last < 0) this.ops[this.ops.length - 1] = last - n;
    else this.ops.push(-n);
    return this;
  }

  /** @param {string} s */
  insert(s) {
    if (s === "") return this;
    this.targetLen += chars(s).length;
    const n = this.ops.length;
    const last = this.ops[n - 1];
    if (typeof last === "string") this.ops[n - 1] = last + s;
    else if (typeof last === "number" && last < 0) {
      const before = this.ops[n - 2];
      if (typeof before === "string") this.ops[n - 2] = before + s;
      else this.ops.splice(n - 1, 0, s);
    } else this.ops.push(s);
    return this;
  }

  /** @param {unknown} value */
  static from(value) {
    if (!Array.isArray(value)) throw new Error("an operation is a list");
    const seq = new Seq();
    for (const op of value) {
      if (typeof op === "string") seq.insert(op);
      else if (Number.isSafeInteger(op)) op >= 0 ? seq.retain(op) : seq.delete(-op);
      else throw new Error("an operation holds something that is neither a count nor a text");
    }
    return seq;
  }

  toJSON() {
    return [...this.ops];
  }

  /** @param {string} text */
  apply(text) {
    const cs = chars(text);
    if (cs.length !== this.baseLen) throw new Error(`the operation's base length ${this.baseLen} is not the text's ${cs.length}`);
    let out = "";
    let at = 0;
    for (const op of this.ops) {
      if (typeof op === "string") out += op;
      else if (op > 0) {
        out += cs.slice(at, at + op).join("");
        at += op;
      } else at -= op;
    }
    return out;
  }

  /**
   * (a', b') for this = a and other = b, both against the same text.
   * @param {Seq} other
   * @returns {[Seq, Seq]}
   */
  transform(other) {
    if (this.baseLen !== other.baseLen) throw new Error("both operations must start from the same text");
    const a = new Seq();
    const b = new Seq();
    const ops1 = [...this.ops];
    const ops2 = [...other.ops];
    let i = 0;
    let j = 0;
    let op1 = ops1[i++];
    let op2 = ops2[j++];
    for (;;) {
      if (op1 === undefined && op2 === undefined) break;
      if (typeof op1 === "string") {
        a.insert(op1);
        b.retain(chars(op1).length);
        op1 = ops1[i++];
        continue;
      }
      if (typeof op2 === "string") {
        a.retain(chars(op2).length);
        b.insert(op2);
        op2 = ops2[j++];
        continue;
      }
      if (op1 === undefined || op2 === undefined) throw new Error("the operations are not compatible");
      const n1 = Math.abs(op1);
      const n2 = Math.abs(op2);
      const n = Math.min(n1, n2);
      if (op1 > 0 && op2 > 0) {
        a.retain(n);
        b.retain(n);
      } else if (op1 < 0 && op2 > 0) a.delete(n);
      else if (op1 > 0 && op2 < 0) b.delete(n);
      // Both delete the same characters: neither needs to again.
      op1 = n1 === n ? ops1[i++] : Math.sign(op1) * (n1 - n);
      op2 = n2 === n ? ops2[j++] : Math.sign(op2) * (n2 - n);
    }
    return [a, b];
  }
}
