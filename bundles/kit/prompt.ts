// The text a person approves. The heading and consequence are the tool's own words; every value the caller
// chose sits on its own labelled line under a heading saying so. Never upstream free text (mail bodies, pad
// content, secret values): whoever wrote that could forge the question (docs/rules.md R-PROMPT-1, R-PROMPT-2).
// A value that binds the approval is shown whole or not at all: the call fails before anyone is asked
// (docs/rules.md R-PROMPT-9). Two display kinds: a value that binds is shown verbatim, so two different values never
// look alike (R-PROMPT-13); free text that does not bind is display-only, collapsed and cut (R-PROMPT-8).
import { MAX_PROMPT_BYTES } from "../../contract/elicitation";
import { charCount, cleanLine as cleanText, UNSAFE_CHARS } from "../../contract/text";

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
   * Whether the approval is bound to this value (a recipient, a subject, a file name, an id, text that is written):
   * such a value is shown verbatim (showVerbatim) and whole, or the call fails. `false` makes it display-only text,
   * which is collapsed and may be cut: only for free text that does not decide what happens. Default true.
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

/** How a space that is not a single space between two other characters is shown in a verbatim value. */
export const SPACE_MARK = "\u2420";

const UNSAFE_ONE = new RegExp(`[${UNSAFE_CHARS}]`, "u");
/** Controls, format characters, surrogates, private-use and unassigned code points, every space but U+0020, and Unicode's default-ignorables. */
const NOT_SHOWN_AS_ITSELF = /[\p{C}\p{Z}\p{Default_Ignorable_Code_Point}]/u;
const COMBINING = /\p{M}/u;
/** Whatever showVerbatim might write otherwise than as itself (the spaces of Zs but U+0020 spelt out); text with none of it, no space at an end and no run is shown as it is. */
const NEEDS_CARE = new RegExp(`[\\\\\\t\\n\\r\\u2420${UNSAFE_CHARS}\\p{C}\\p{Zl}\\p{Zp}\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000\\p{Default_Ignorable_Code_Point}\\p{M}]|^ | $| {2}`, "u");
const NAMED_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

function escaped(ch: string): string {
  const code = ch.codePointAt(0) as number;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * A value exactly as it will be written, on one line, with nothing in it hidden (docs/rules.md R-PROMPT-13). The
 * text stays as it is except: a backslash is `\\`; a tab, line feed and carriage return are `\t`, `\n`, `\r`; every
 * other control, format, invisible, blank-looking, bidi, private-use or unassigned code point, every space but
 * U+0020 (U+00A0 included), a lone surrogate, a combining mark with nothing to sit on, and the mark itself are
 * `\uXXXX` (`\u{XXXXX}` past U+FFFF); so is a code point that Unicode holds to be the same text as another spelling
 * (canonically equivalent: `e` + U+0301 beside `é`, U+212B beside `Å`, U+037E beside `;`), which would otherwise
 * look exactly like it. A space is itself only between two characters that are not spaces, and is SPACE_MARK at
 * either end of the value or in a run. So two different values are never shown alike: the shown text reads back as
 * exactly one value.
 */
export function showVerbatim(text: string): string {
  // Text already in NFC holds no spelling that composes or has a canonical twin (lookAlike below).
  const composed = text.normalize("NFC") === text;
  if (composed && !NEEDS_CARE.test(text)) return text;
  const chars = [...text];
  let shown = "";
  // The last character shown as itself, if the last thing shown was one: a combining mark may sit only on such a
  // character (after a space or an escape it would join the character before it, or the ": " of the label).
  let prev: string | undefined;
  chars.forEach((ch, i) => {
    if (ch === " ") {
      const single = i > 0 && i < chars.length - 1 && chars[i - 1] !== " " && chars[i + 1] !== " ";
      shown += single ? " " : SPACE_MARK;
      prev = undefined;
      return;
    }
    // Printable ASCII but the backslash is itself: nothing composes with it or hides in it.
    if (ch > " " && ch < "\u007f" && ch !== "\\") {
      shown += ch;
      prev = ch;
      return;
    }
    const named = NAMED_ESCAPES[ch];
    const lookAlike = !composed && (ch.normalize("NFC") !== ch || (prev !== undefined && (prev + ch).normalize("NFC") !== prev + ch));
    if (named !== undefined) {
      shown += named;
      prev = undefined;
    } else if (ch === SPACE_MARK || UNSAFE_ONE.test(ch) || NOT_SHOWN_AS_ITSELF.test(ch) || (COMBINING.test(ch) && prev === undefined) || lookAlike) {
      shown += escaped(ch);
      prev = undefined;
    } else {
      shown += ch;
      prev = ch;
    }
  });
  return shown;
}

/**
 * A caller value as shown. One that binds is verbatim and whole, or the call fails: the cap counts the characters
 * shown, escapes included (docs/rules.md R-PROMPT-9, R-PROMPT-13). Display-only text goes through the shared
 * sanitiser with runs of whitespace collapsed, so it cannot pad itself out to a new line, and is cut (R-PROMPT-8).
 */
function shownValue(label: string, value: PromptValue["value"], binds: boolean): string {
  const text = String(value);
  if (!binds) return cleanText(text, MAX_VALUE_CHARS, { collapse: true });
  const whole = showVerbatim(text);
  const chars = charCount(whole);
  if (chars > MAX_BOUND_VALUE_CHARS) {
    const written = charCount(text);
    const spelt = written === chars ? "" : ` as shown (${written} as written, with its whitespace and invisible characters spelt out)`;
    throw new PromptRefusal(
      `the ${cleanLine(label, 60)} value is ${chars} characters long${spelt}, more than the ${MAX_BOUND_VALUE_CHARS} a prompt shows whole, and it is never shown cut`,
      "value_too_long",
    );
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
