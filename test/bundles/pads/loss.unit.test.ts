// Covers bundles/pads/pads.loss.ts: which edits need a yes by what they remove, each threshold probed at and one past it, the high-water mark over a pad's history, and (fast-check) that no run of unasked edits takes a pad under half of what it held, nor loses more than half of it by overwriting.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { describeVerdict, HighWater, lossVerdict, MAX_UNASKED_LOSS_CHARS, MAX_UNASKED_LOSS_PERCENT, MIN_KEPT_PERCENT } from "../../../bundles/pads/pads.loss";
import { OpSeq } from "../../../bundles/pads/pads.ot";

describe("the thresholds", () => {
  it("are the documented numbers", () => {
    expect([MAX_UNASKED_LOSS_CHARS, MAX_UNASKED_LOSS_PERCENT, MIN_KEPT_PERCENT]).toEqual([200, 20, 50]);
  });

  it.each([
    // [label, loss, before, after, mark, asks, why]
    ["200 characters lost of 10,000 is unasked", 200, 10_000, 9_800, 10_000, false, undefined],
    ["201 characters lost of 10,000 asks", 201, 10_000, 9_799, 10_000, true, "chars"],
    ["201 characters overwritten by 201 others asks: what is lost counts, not the length", 201, 10_000, 10_000, 10_000, true, "chars"],
    ["100 of 500 (exactly 20%) is unasked", 100, 500, 400, 500, false, undefined],
    ["101 of 500 asks", 101, 500, 399, 500, true, "share"],
    ["101 of 505 (exactly 20%) is unasked", 101, 505, 404, 505, false, undefined],
    ["1 of 4 (25%) asks", 1, 4, 3, 4, true, "share"],
    ["1 of 5 (exactly 20%) is unasked", 1, 5, 4, 5, false, undefined],
    ["leaving exactly half of the mark is unasked", 12, 512, 500, 1_000, false, undefined],
    ["leaving one under half of the mark asks", 1, 500, 499, 1_000, true, "mark"],
    ["an odd mark: 500 of 999 is unasked", 1, 501, 500, 999, false, undefined],
    ["an odd mark: 499 of 999 asks", 2, 501, 499, 999, true, "mark"],
    ["nothing lost never asks, however small the pad is against its mark", 0, 10, 15, 1_000, false, undefined],
    ["a mark below the pad's length counts as the length", 1, 10, 9, 0, false, undefined],
  ] as const)("%s", (_label, loss, before, after, mark, asks, why) => {
    const verdict = lossVerdict({ loss, before, after }, { mark, lost: 0 });
    expect(verdict.asks).toBe(asks);
    if (verdict.asks) expect(verdict.why).toBe(why);
  });

  it.each([
    // [label, loss, lost before it, asks]: a pad of 1,000 at its mark, overwritten in place (its length never drops).
    ["what the run lost reaching exactly half of the mark is unasked", 100, 400, false],
    ["one character past half asks", 101, 400, true],
    ["the first edit of a run is held to it too", 200, 300, false],
    ["an edit that loses nothing never asks, whatever the run lost", 0, 900, false],
  ] as const)("the run's total: %s", (_label, loss, lost, asks) => {
    const verdict = lossVerdict({ loss, before: 1_000, after: 1_000 }, { mark: 1_000, lost });
    expect(verdict.asks).toBe(asks);
    if (verdict.asks) expect(verdict).toEqual({ asks: true, why: "total", lost: lost + loss, mark: 1_000 });
  });

  it("five overwrites of a fifth each, the length never dropping, do not replace a pad unasked: the third asks", () => {
    const water = new HighWater();
    water.observe({ loss: 0, before: 0, after: 1_000 });
    const verdicts = [];
    for (let i = 0; i < 5; i++) {
      const measure = { loss: 200, before: 1_000, after: 1_000 };
      const verdict = lossVerdict(measure, water);
      verdicts.push(verdict.asks ? verdict.why : "unasked");
      if (!verdict.asks) water.observe(measure);
    }
    expect(verdicts).toEqual(["unasked", "unasked", "total", "total", "total"]);
    // A person's yes for a large edit starts the count again.
    water.observe({ loss: 201, before: 1_000, after: 1_000 });
    expect([water.mark, water.lost]).toEqual([1_000, 0]);
    expect(lossVerdict({ loss: 200, before: 1_000, after: 1_000 }, water).asks).toBe(false);
  });

  it("says why in counts, never in the pad's words", () => {
    expect(describeVerdict({ asks: true, why: "total", lost: 600, mark: 1_000 })).toBe(
      "with the edits since the pad's last large edit it would have removed 600 characters, more than 50% of the 1000 the pad held",
    );
    expect(describeVerdict({ asks: true, why: "chars", loss: 201 })).toBe("it removes 201 characters, more than the 200 an edit may remove unasked");
    expect(describeVerdict({ asks: true, why: "share", loss: 101, before: 500 })).toBe("it removes 101 of the pad's 500 characters, more than the 20% an edit may remove unasked");
    expect(describeVerdict({ asks: true, why: "mark", after: 499, mark: 1_000 })).toBe("it would leave 499 characters, under 50% of the 1000 the pad held since its last large edit");
  });
});

describe("the high-water mark", () => {
  it("rises with the pad, is not lowered by edits an edit may make unasked, and restarts after one that removes more than 200 characters or 20%", () => {
    const water = new HighWater();
    water.observe({ loss: 0, before: 0, after: 1_000 });
    expect(water.mark).toBe(1_000);
    water.observe({ loss: 200, before: 1_000, after: 800 });
    expect([water.mark, water.lost]).toEqual([1_000, 200]);
    water.observe({ loss: 160, before: 800, after: 640 });
    expect([water.mark, water.lost]).toEqual([1_000, 360]);
    water.observe({ loss: 201, before: 3_000, after: 2_799 });
    expect([water.mark, water.lost]).toEqual([2_799, 0]);
    water.observe({ loss: 0, before: 2_799, after: 2_900 });
    expect(water.mark).toBe(2_900);
    // 20% of the pad exactly may go unasked and counts; one character more was a person's, and starts the count again.
    water.observe({ loss: 20, before: 100, after: 80 });
    expect([water.mark, water.lost]).toEqual([2_900, 20]);
    water.observe({ loss: 17, before: 80, after: 63 });
    expect([water.mark, water.lost]).toEqual([63, 0]);
  });
});

/** One edit at a place in the pad: keep `at`, remove `del`, insert `ins` characters. */
const edit = fc.record({ at: fc.nat(), del: fc.nat({ max: 400 }), ins: fc.nat({ max: 120 }) });

describe("runs of unasked edits (property)", () => {
  it("never take a pad under half of any length it had since the run began, nor lose more than half of the most it held, whatever the edits", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3_000 }), fc.array(edit, { maxLength: 120 }), (start, edits) => {
        const water = new HighWater();
        let length = start;
        water.observe({ loss: 0, before: 0, after: start });
        const lengths = [start];
        const losses: number[] = [];
        for (const e of edits) {
          const at = Math.min(e.at, length);
          const del = Math.min(e.del, length - at);
          // Built as the bundle builds its edits, so the loss is the operation's own count of deletes.
          const op = new OpSeq()
            .retain(at)
            .delete(del)
            .insert("x".repeat(e.ins))
            .retain(length - at - del);
          const measure = { loss: op.deletedLen, before: length, after: op.targetLen };
          // Without a yes, an edit that asks is not sent.
          if (lossVerdict(measure, water).asks) continue;
          water.observe(measure);
          length = op.targetLen;
          lengths.push(length);
          losses.push(measure.loss);
        }
        // Every later length is at least half of every earlier one: N never becomes under N/2.
        let highest = 0;
        for (const l of lengths) {
          highest = Math.max(highest, l);
          expect(l * 2).toBeGreaterThanOrEqual(highest);
        }
        // And what the run lost together, overwrites included, is at most half of the most the pad held.
        expect(losses.reduce((a, b) => a + b, 0) * 2).toBeLessThanOrEqual(highest);
      }),
      { numRuns: 300 },
    );
  });

  it("do walk a pad down to half when each takes as much as it may, and the next one asks", () => {
    // The tightest run: each edit removes the most it may unasked; the pad stops at half its mark.
    const water = new HighWater();
    water.observe({ loss: 0, before: 0, after: 1_000 });
    let length = 1_000;
    for (;;) {
      const loss = Math.min(MAX_UNASKED_LOSS_CHARS, Math.floor((length * MAX_UNASKED_LOSS_PERCENT) / 100), length - Math.ceil(water.mark / 2));
      if (loss <= 0) break;
      const measure = { loss, before: length, after: length - loss };
      expect(lossVerdict(measure, water).asks).toBe(false);
      water.observe(measure);
      length -= loss;
    }
    expect(length).toBe(500);
    expect(lossVerdict({ loss: 1, before: 500, after: 499 }, water)).toEqual({ asks: true, why: "mark", after: 499, mark: 1_000 });
  });
});
