// The text a person approves. The heading and consequence are the tool's own words; every value the caller
// chose sits on its own labelled line under a heading saying so. Never upstream free text (mail bodies, pad
// content, secret values): whoever wrote that could forge the question (docs/rules.md R-PROMPT-1, R-PROMPT-2).
// A value that binds the approval is shown whole or not at all: the call fails before anyone is asked
// (docs/rules.md R-PROMPT-9).
import { MAX_PROMPT_BYTES } from "../../contract/elicitation";
import { charCount, cleanLine as cleanText } from "../../contract/text";

export { REPLACEMENT } from "../../contract/text";
export { MAX_PROMPT_BYTES };

export const CALLER_VALUES_HEADING = "Values below are supplied by the caller, not by this server:";
/** Where a value that does not bind the approval (free text) is cut, with a marker. */
export const MAX_VALUE_CHARS = 200;
/**
 * The longest value that binds the approval: shown whole, never cut. A Gmail subject may be 900 characters,
 * and a longer line is no longer something a person reads whole on a card.
 */
export const MAX_BOUND_VALUE_CHARS = 1000;
// MAX_PROMPT_BYTES (contract/elicitation.ts): the approval service refuses a longer message; the kit fails the call
// first. It is sized to the largest prompt any confirmed tool can legally build (docs/rules.md R-LIMIT-1).

export interface PromptValue {
  label: string;
  value: string | number | boolean;
  /**
   * Whether the approval is bound to this value (a recipient, a subject, a file name, an id): such a value
   * is shown whole or the call fails. Only free text that does not decide what happens may be cut. Default true.
   */
  binds?: boolean;
}

export interface PromptSpec {
  /** What will happen, e.g. "This will move 12 message(s) between mailboxes." */
  heading: string;
  /** What cannot be undone, in the tool's own words. */
  consequence: string;
  /** Caller-chosen values only: ids, counts, names, the note to write. */
  values: readonly PromptValue[];
}

/** Why a prompt cannot be shown as it must be; the guard answers the call with it before anyone is asked. */
export class PromptRefusal extends Error {
  constructor(
    message: string,
    /** For the audit trail: a value that binds is too long to show whole, or the whole prompt is over the service's cap. */
    readonly code: "value_too_long" | "too_large",
  ) {
    super(message);
    this.name = "PromptRefusal";
  }
}

/** One line of text, safe to show: the shared sanitiser, cut at `max` characters (MAX_VALUE_CHARS by default). */
export function cleanLine(text: string, max: number = MAX_VALUE_CHARS): string {
  return cleanText(text, max);
}

/** A caller value as shown: the shared sanitiser with runs of whitespace collapsed, so no value pads itself out to a new line. */
function shownValue(label: string, value: PromptValue["value"], binds: boolean): string {
  const text = String(value);
  if (!binds) return cleanText(text, MAX_VALUE_CHARS, { collapse: true });
  const whole = cleanText(text, Number.POSITIVE_INFINITY, { collapse: true });
  const chars = charCount(whole);
  if (chars > MAX_BOUND_VALUE_CHARS) {
    throw new PromptRefusal(`the ${cleanLine(label, 60)} value is ${chars} characters long, more than the ${MAX_BOUND_VALUE_CHARS} a prompt shows whole, and it is never shown cut`, "value_too_long");
  }
  return whole;
}

/** The prompt's text. Throws PromptRefusal when a value that binds cannot be shown whole, or the whole is over the approval service's cap. */
export function buildPrompt(slug: string, spec: PromptSpec): string {
  const lines = [`${cleanLine(slug, 100)}: ${cleanLine(spec.heading, 400)}`, ""];
  for (const line of spec.consequence.split("\n")) lines.push(cleanLine(line, 400));
  if (spec.values.length > 0) {
    lines.push("", CALLER_VALUES_HEADING);
    for (const { label, value, binds = true } of spec.values) lines.push(`  ${cleanLine(label, 60)}: ${shownValue(label, value, binds)}`);
  }
  const text = lines.join("\n");
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_PROMPT_BYTES) {
    throw new PromptRefusal(`the prompt would be ${bytes} bytes, more than the ${MAX_PROMPT_BYTES} the approval service takes, and it is never shown cut`, "too_large");
  }
  return text;
}
