// The text a person approves. The heading and consequence are the tool's own words; every value the caller
// chose sits on its own labelled line under a heading saying so. Never upstream free text (mail bodies, pad
// content, secret values): whoever wrote that could forge the question (docs/rules.md R-PROMPT-1, R-PROMPT-2).
import { cleanLine as cleanText } from "../../contract/text";

export { REPLACEMENT } from "../../contract/text";

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

/** One line of text, safe to show: the shared sanitiser, cut at `max` characters (MAX_VALUE_CHARS by default). */
export function cleanLine(text: string, max: number = MAX_VALUE_CHARS): string {
  return cleanText(text, max);
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
