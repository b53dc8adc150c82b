// The one line sanitiser. Whatever a person or a log reader is shown as one line (a prompt value, a file
// name, an upstream's error message) goes through here, so every surface refuses the same characters.

/**
 * C0 and C1 controls, DEL, soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul and Khmer
 * fillers, Mongolian separators and variation selectors, zero-width characters, bidi marks, embeddings,
 * overrides and isolates, line and paragraph separators, invisible operators, the Hangul filler U+3164,
 * variation selectors, BOM and interlinear annotation marks: each could forge a line, hide a character or
 * disguise what a value says.
 */
export const UNSAFE_CHARS =
  "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\ufff9-\\ufffb";
const UNSAFE = new RegExp(`[${UNSAFE_CHARS}]`, "gu");
const UNSAFE_ONE = new RegExp(`[${UNSAFE_CHARS}]`, "u");
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** A line break or a control character: what a single-line header value may never hold. */
const LINE_BREAK_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

export const REPLACEMENT = "\ufffd";

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

/** One line of text, safe to show: unsafe characters replaced, cut at `max` characters with a marker. */
export function cleanLine(text: string, max: number, replacement: string = REPLACEMENT): string {
  const clean = replaceUnsafe(text, replacement);
  if (clean.length <= max) return clean;
  const chars = [...clean];
  if (chars.length <= max) return clean;
  return `${chars.slice(0, max).join("")}… [cut: ${chars.length} characters in all]`;
}
