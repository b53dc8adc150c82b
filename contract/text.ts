// The one line sanitiser. Whatever a person or a log reader is shown as one line (a prompt value, a file
// name, an upstream's error message) goes through here, so every surface refuses the same characters.

/**
 * C0 and C1 controls, DEL, soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul and Khmer
 * fillers (U+115F, U+1160, U+3164, U+FFA0), Mongolian separators and variation selectors, zero-width
 * characters, bidi marks, embeddings, overrides and isolates, line and paragraph separators, invisible
 * operators, variation selectors, BOM, interlinear annotation marks and the rest of Unicode's
 * default-ignorable code points (U+FFF0-U+FFF8, shorthand format controls, musical beam and slur controls
 * U+1D173-U+1D17A, tags and variation selectors U+E0000-U+E0FFF): each could forge a line, hide a character
 * or disguise what a value says. The rest of the format characters (Cf: the prepended number marks U+0600-U+0605,
 * U+06DD, U+070F, U+0890-U+0891, U+08E2, U+110BD, U+110CD, and the Egyptian hieroglyph format controls
 * U+13430-U+1343F) change how the characters beside them render. The characters that are letters or symbols
 * but draw nothing (U+2800 braille blank, U+16FE4 Khitan filler, U+1D159 musical null notehead) make a value
 * look empty or shorter than it is. The space-like characters of a fixed or unusual width (U+1680,
 * U+2000-U+200A, U+202F, U+205F, U+3000) too: a run of them pads a value out to where a new line seems to
 * start (docs/rules.md R-PROMPT-3, R-PROMPT-8). Only U+0020 and U+00A0, ordinary-width spaces, stay.
 */
export const UNSAFE_CHARS =
  "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u115f\\u1160\\u1680\\u17b4\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb\\u{110bd}\\u{110cd}\\u{13430}-\\u{1343f}\\u{16fe4}\\u{1bca0}-\\u{1bca3}\\u{1d159}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}";
const UNSAFE = new RegExp(`[${UNSAFE_CHARS}]`, "gu");
const UNSAFE_ONE = new RegExp(`[${UNSAFE_CHARS}]`, "u");
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** A line break or a control character: what a single-line header value may never hold. */
const LINE_BREAK_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

export const REPLACEMENT = "\ufffd";
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Every unsafe character and lone surrogate replaced by `replacement`; nothing dropped silently. */
export function replaceUnsafe(text: string, replacement: string = REPLACEMENT): string {
  return text.replace(LONE_SURROGATE, replacement).replace(UNSAFE, replacement);
}

export function hasUnsafe(text: string): boolean {
  return UNSAFE_ONE.test(text) || text.replace(LONE_SURROGATE, "") !== text;
}

export function hasLineBreakOrControl(text: string): boolean {
  return LINE_BREAK_OR_CONTROL.test(text);
}

/** Every run of whitespace (spaces, no-break spaces, what survived replacement) as one space. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, " ");
}

export interface CleanOptions {
  replacement?: string;
  /** Runs of whitespace become one space, so no value can pad itself out to look like a new line. */
  collapse?: boolean;
}

/** One line of text, safe to show: unsafe characters replaced (runs of whitespace collapsed on request), cut at `max` characters with a marker. */
export function cleanLine(text: string, max: number, options: string | CleanOptions = REPLACEMENT): string {
  // Printable ASCII holds nothing unsafe and no surrogate: the everyday name (a method, a tool) is its own clean line.
  if (text.length <= max && typeof options === "string" && PRINTABLE_ASCII.test(text)) return text;
  const { replacement = REPLACEMENT, collapse = false } = typeof options === "string" ? { replacement: options } : options;
  const replaced = replaceUnsafe(text, replacement);
  const clean = collapse ? collapseWhitespace(replaced) : replaced;
  if (clean.length <= max) return clean;
  const chars = [...clean];
  if (chars.length <= max) return clean;
  return `${chars.slice(0, max).join("")}… [cut: ${chars.length} characters in all]`;
}

/** How many characters (code points) `cleanLine` counts in a text. */
export function charCount(text: string): number {
  return [...text].length;
}

/**
 * Code points, as zod counts a string's length: a surrogate pair once, a lone surrogate as itself (the same count as
 * charCount, without the array it makes).
 */
export function codePointLength(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}
