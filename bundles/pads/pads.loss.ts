// What an edit takes out of a pad, and whether that needs a person's yes: the harm is the text lost, whatever tool
// makes the edit (docs/rules.md R-PAD-13). Lost means deleted or overwritten, counted in code points on the edit as
// sent: replacing 1,000 characters with 1,000 others loses 1,000. Per edit, more than MAX_UNASKED_LOSS_CHARS or more
// than MAX_UNASKED_LOSS_PERCENT of the pad asks. Across edits, the pad's high-water mark (the longest it has been in
// Rustpad's history since the last edit that removed more than an edit may unasked, which strad never sends
// unasked) bounds what small edits can do together: an edit that loses anything and would leave the pad under
// MIN_KEPT_PERCENT of that mark asks, and so does one that would bring what the edits since then lost, together, past
// the other half of it (overwrites keep the length: five overwrites of a fifth each would otherwise replace it all).
// So no run of unasked edits, one after another, takes a pad from N characters to under N/2, nor loses more than N/2
// of what it held. Edits sent at the same moment take the pad's lease (pads.lease.ts), so each is measured on the
// pad the one before left.
// Pure: the session and the tools share it.

/** An edit that loses more characters than this asks. */
export const MAX_UNASKED_LOSS_CHARS = 200;
/** An edit that loses more than this share of the pad (percent of its length before the edit) asks. */
export const MAX_UNASKED_LOSS_PERCENT = 20;
/** An edit that loses anything and would leave the pad under this share (percent) of its high-water mark asks. */
export const MIN_KEPT_PERCENT = 50;

/** Why an edit asks: the first limit it passes, in the order they are checked. */
export type LossVerdict =
  | { asks: false }
  | { asks: true; why: "chars"; loss: number }
  | { asks: true; why: "share"; loss: number; before: number }
  | { asks: true; why: "mark"; after: number; mark: number }
  | { asks: true; why: "total"; lost: number; mark: number };

export interface EditMeasure {
  /** Characters the edit deletes (its deletes, summed). */
  loss: number;
  /** The pad's length before the edit. */
  before: number;
  /** The pad's length after it. */
  after: number;
}

/** Whether an edit needs a yes, given the pad's history before it (HighWater: its mark, and what the edits since lost). */
export function lossVerdict(edit: EditMeasure, water: Pick<HighWater, "mark" | "lost">): LossVerdict {
  const { loss, before, after } = edit;
  if (loss <= 0) return { asks: false };
  if (loss > MAX_UNASKED_LOSS_CHARS) return { asks: true, why: "chars", loss };
  // Integers only, so the threshold itself is exact: loss / before > 20 % without a rounding error.
  if (loss * 100 > before * MAX_UNASKED_LOSS_PERCENT) return { asks: true, why: "share", loss, before };
  const peak = Math.max(water.mark, before);
  if (after * 100 < peak * MIN_KEPT_PERCENT) return { asks: true, why: "mark", after, mark: peak };
  const lost = water.lost + loss;
  if (lost * 100 > peak * (100 - MIN_KEPT_PERCENT)) return { asks: true, why: "total", lost, mark: peak };
  return { asks: false };
}

/** The verdict in words for a prompt or a refusal; counts only, never the pad's text. */
export function describeVerdict(verdict: Exclude<LossVerdict, { asks: false }>): string {
  switch (verdict.why) {
    case "chars":
      return `it removes ${verdict.loss} characters, more than the ${MAX_UNASKED_LOSS_CHARS} an edit may remove unasked`;
    case "share":
      return `it removes ${verdict.loss} of the pad's ${verdict.before} characters, more than the ${MAX_UNASKED_LOSS_PERCENT}% an edit may remove unasked`;
    case "mark":
      return `it would leave ${verdict.after} characters, under ${MIN_KEPT_PERCENT}% of the ${verdict.mark} the pad held since its last large edit`;
    case "total":
      return `with the edits since the pad's last large edit it would have removed ${verdict.lost} characters, more than ${100 - MIN_KEPT_PERCENT}% of the ${verdict.mark} the pad held`;
  }
}

/**
 * The pad's high-water mark, followed over its history: the longest it has been since the last edit that removed
 * more than an edit may unasked, and what the edits since then lost together. Strad never sends such an edit unasked, and Rustpad's transform only ever shrinks
 * what an edit deletes, so only a person's yes (or a person's own hand in Rustpad) resets the mark; unasked edits
 * never lower it, and cannot together walk the pad down past MIN_KEPT_PERCENT of it.
 */
export class HighWater {
  mark = 0;
  /** What the edits since the last large one lost, together (deleted or overwritten, in code points). */
  lost = 0;

  /**
   * Takes one applied edit of the history into account. An edit that removed more than an edit may unasked (past
   * MAX_UNASKED_LOSS_CHARS, or past MAX_UNASKED_LOSS_PERCENT of the pad) was a person's: approved, or typed in Rustpad;
   * strad never sends one unasked. What the pad holds after it is where the count starts again.
   */
  observe(edit: EditMeasure): void {
    if (edit.loss > MAX_UNASKED_LOSS_CHARS || edit.loss * 100 > edit.before * MAX_UNASKED_LOSS_PERCENT) {
      this.mark = edit.after;
      this.lost = 0;
      return;
    }
    this.mark = Math.max(this.mark, edit.before, edit.after);
    this.lost += edit.loss;
  }
}
