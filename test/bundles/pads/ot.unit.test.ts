// Rustpad's operations, written twice on purpose: the bundle's (bundles/pads/pads.ot.ts: build, encode, apply) and
// the fake's (test/fakes/rustpad/ot.mjs: the same, and the server's transform). Each is checked against the other on
// random texts and edits, against the crate's documented encoding and normal form, and the fake's transform for
// convergence; lengths count code points, as Rust does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { charLength, OpSeq, PadOpError } from "../../../bundles/pads/pads.ot";
import { appendOp, occurrences, replaceOp, setOp } from "../../../bundles/pads/pads.session";
// @ts-expect-error: plain ESM helper without types
import { Seq } from "../../fakes/rustpad/ot.mjs";

type Step = { kind: "retain" | "delete"; n: number } | { kind: "insert"; text: string };

/** A random edit of `text`, as a list of steps that covers it exactly. */
const editOf = (text: string) =>
  fc
    .array(
      fc.oneof(
        fc.record({ kind: fc.constant("retain" as const), n: fc.integer({ min: 0, max: 4 }) }),
        fc.record({ kind: fc.constant("delete" as const), n: fc.integer({ min: 0, max: 4 }) }),
        fc.record({ kind: fc.constant("insert" as const), text: fc.string({ unit: "grapheme-composite", maxLength: 3 }) }),
      ),
      { maxLength: 8 },
    )
    .map((steps) => {
      const length = charLength(text);
      const out: Step[] = [];
      let used = 0;
      for (const step of steps) {
        if (step.kind === "insert") out.push(step);
        else {
          const n = Math.min(step.n, length - used);
          used += n;
          out.push({ kind: step.kind, n });
        }
      }
      out.push({ kind: "retain", n: length - used });
      return out;
    });

function build<T extends { retain(n: number): T; delete(n: number): T; insert(s: string): T }>(seq: T, steps: Step[]): T {
  for (const step of steps) {
    if (step.kind === "insert") seq.insert(step.text);
    else if (step.kind === "retain") seq.retain(step.n);
    else seq.delete(step.n);
  }
  return seq;
}

const texts = fc.string({ unit: "grapheme-composite", maxLength: 12 });

describe("the bundle's operations and the fake's agree", () => {
  it("build the same normal form, encode it the same way, and apply it to the same text", () => {
    fc.assert(
      fc.property(
        texts.chain((text) => fc.tuple(fc.constant(text), editOf(text))),
        ([text, steps]) => {
          const ours = build(new OpSeq(), steps);
          const theirs = build(new Seq(), steps);
          expect(ours.toJSON()).toEqual(theirs.toJSON());
          expect([ours.baseLen, ours.targetLen]).toEqual([theirs.baseLen, theirs.targetLen]);
          expect(OpSeq.fromJSON(JSON.parse(JSON.stringify(ours))).toJSON()).toEqual(ours.toJSON());
          expect(ours.apply([...text]).join("")).toBe(theirs.apply(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the fake's transform converges: both orders of two concurrent edits end in the same text, the first one's insert first on a tie", () => {
    fc.assert(
      fc.property(
        texts.chain((text) => fc.tuple(fc.constant(text), editOf(text), editOf(text))),
        ([text, stepsA, stepsB]) => {
          const a = build(new Seq(), stepsA);
          const b = build(new Seq(), stepsB);
          const [a2, b2] = a.transform(b);
          expect(b2.apply(a.apply(text))).toBe(a2.apply(b.apply(text)));
        },
      ),
      { numRuns: 500 },
    );
    const [a2] = Seq.from(["x", 2]).transform(Seq.from(["y", 2]));
    expect(a2.apply(Seq.from(["y", 2]).apply("ab"))).toBe("xyab");
  });
});

describe("the wire encoding", () => {
  it("is the crate's: retain a positive count, delete a negative one, insert a string; an insert goes before a delete it follows", () => {
    expect(new OpSeq().retain(2).delete(3).insert("xy").retain(1).toJSON()).toEqual([2, "xy", -3, 1]);
    expect(new OpSeq().retain(1).retain(1).insert("a").insert("b").delete(1).delete(2).toJSON()).toEqual([2, "ab", -3]);
    expect(setOp(4, "new").toJSON()).toEqual(["new", -4]);
    expect(appendOp(3, "!").toJSON()).toEqual([3, "!"]);
    expect(OpSeq.fromJSON([0, 3, -0, ""]).toJSON()).toEqual([3]);
  });

  it("counts code points, as Rust's chars do", () => {
    expect(charLength("a🌍é")).toBe(3);
    expect(
      appendOp(charLength("🌍🌍"), "x")
        .apply([..."🌍🌍"])
        .join(""),
    ).toBe("🌍🌍x");
    const text = "🌍a🌍a";
    expect(replaceOp(text, occurrences(text, "a"), "a", "b").toJSON()).toEqual([1, "b", -1, 1, "b", -1]);
  });

  it("refuses what is not an operation, and an operation for another length", () => {
    for (const bad of [{}, [1.5], [null], ["a", true]]) expect(() => OpSeq.fromJSON(bad)).toThrow(PadOpError);
    expect(() => OpSeq.fromJSON([3]).apply([..."ab"])).toThrow(/an operation for 3 characters met a text of 2/);
  });

  it("finds occurrences left to right, never overlapping", () => {
    expect(occurrences("aaaa", "aa")).toEqual([0, 2]);
    expect(occurrences("banana", "ana")).toEqual([1]);
    expect(occurrences("abc", "")).toEqual([]);
  });
});
