// Rustpad's operations as its wire carries them (the `operational-transform` crate's JSON encoding): a list whose
// positive numbers retain that many characters, negative numbers delete that many, and strings insert. Lengths
// count Unicode code points, as Rust's chars do, never UTF-16 units. The bundle builds its edits here and applies
// the server's history to follow the pad; the server transforms concurrent edits itself, so a client that waits
// for the acknowledgement of its one edit needs no transform of its own.

export type Op = number | string;

export class PadOpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PadOpError";
  }
}

/** A text's length as Rustpad counts it: code points. */
export function charLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** A sequence of operations, normalised as the crate builds one: adjacent ops merged, an insert before a delete. */
export class OpSeq {
  readonly ops: Op[] = [];
  baseLen = 0;
  targetLen = 0;
  /** Characters it deletes: what the edit takes out of the pad (bundles/pads/pads.loss.ts). */
  deletedLen = 0;

  retain(n: number): this {
    if (n === 0) return this;
    this.baseLen += n;
    this.targetLen += n;
    const last = this.ops.length - 1;
    if (last >= 0 && typeof this.ops[last] === "number" && (this.ops[last] as number) > 0) this.ops[last] = (this.ops[last] as number) + n;
    else this.ops.push(n);
    return this;
  }

  delete(n: number): this {
    if (n === 0) return this;
    this.baseLen += n;
    this.deletedLen += n;
    const last = this.ops.length - 1;
    if (last >= 0 && typeof this.ops[last] === "number" && (this.ops[last] as number) < 0) this.ops[last] = (this.ops[last] as number) - n;
    else this.ops.push(-n);
    return this;
  }

  insert(text: string): this {
    if (text === "") return this;
    this.targetLen += charLength(text);
    const last = this.ops.length - 1;
    const isDelete = (op: Op | undefined) => typeof op === "number" && op < 0;
    if (last >= 0 && typeof this.ops[last] === "string") this.ops[last] = (this.ops[last] as string) + text;
    else if (last >= 0 && isDelete(this.ops[last])) {
      // An insert goes before the delete it follows, merged into an insert already there.
      if (last >= 1 && typeof this.ops[last - 1] === "string") this.ops[last - 1] = (this.ops[last - 1] as string) + text;
      else this.ops.splice(last, 0, text);
    } else this.ops.push(text);
    return this;
  }

  /** Whether applying it changes nothing. */
  isNoop(): boolean {
    return this.ops.every((op) => typeof op === "number" && op > 0);
  }

  toJSON(): Op[] {
    return [...this.ops];
  }

  /** An operation from the wire; throws PadOpError on anything that is not one. */
  static fromJSON(value: unknown): OpSeq {
    if (!Array.isArray(value)) throw new PadOpError("an operation is not a list");
    const seq = new OpSeq();
    for (const op of value) {
      if (typeof op === "string") seq.insert(op);
      else if (typeof op === "number" && Number.isSafeInteger(op)) {
        if (op >= 0) seq.retain(op);
        else seq.delete(-op);
      } else throw new PadOpError("an operation holds something that is neither a count nor a text");
    }
    return seq;
  }

  /** The text after this operation, given the text before it as code points. */
  apply(chars: readonly string[]): string[] {
    if (chars.length !== this.baseLen) throw new PadOpError(`an operation for ${this.baseLen} characters met a text of ${chars.length}`);
    const out: string[] = [];
    let at = 0;
    for (const op of this.ops) {
      if (typeof op === "string") for (const c of op) out.push(c);
      else if (op > 0) {
        for (let i = 0; i < op; i++) out.push(chars[at + i] as string);
        at += op;
      } else at -= op;
    }
    return out;
  }
}
