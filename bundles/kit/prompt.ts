// The text a person approves. The heading and consequence are the tool's own words; every value the caller
// chose sits on its own labelled line under a heading saying so. Never upstream free text (mail bodies, pad
// content, secret values): whoever wrote that could forge the question (seeds 001 and 004, "What the dialog
// contains").

export const CALLER_VALUES_HEADING = "Values below are supplied by the caller, not by this server:";
export const MAX_VALUE_CHARS = 200;

export interface PromptValue {
  label: string;
  value: string | number | boolean;
}

export interface PromptSpec {
  /** What will happen, e.g. "This will move 12 message(s) between mailboxes." */
  heading: string;
  /** What cannot be undone, in the tool's own words. */
  consequence: string;
  /** Caller-chosen values only: ids, counts, names, the note to write. */
  values: readonly PromptValue[];
}

// C0 and C1 controls, DEL, line and paragraph separators, bidi marks/embeddings/overrides/isolates and
// zero-width characters: each could forge a line or disguise what a value says.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
export const REPLACEMENT = "\ufffd";

/** One line of text, safe to show: unsafe characters replaced, cut at `max` characters with a marker. */
export function cleanLine(text: string, max: number = MAX_VALUE_CHARS): string {
  const clean = text.replace(LONE_SURROGATE, REPLACEMENT).replace(UNSAFE, REPLACEMENT);
  const chars = [...clean];
  if (chars.length <= max) return clean;
  return `${chars.slice(0, max).join("")}… [cut: ${chars.length} characters in all]`;
}

export function buildPrompt(slug: string, spec: PromptSpec): string {
  const lines = [`${cleanLine(slug, 100)}: ${cleanLine(spec.heading, 400)}`, ""];
  for (const line of spec.consequence.split("\n")) lines.push(cleanLine(line, 400));
  if (spec.values.length > 0) {
    lines.push("", CALLER_VALUES_HEADING);
    for (const { label, value } of spec.values) lines.push(`  ${cleanLine(label, 60)}: ${cleanLine(String(value))}`);
  }
  return lines.join("\n");
}
