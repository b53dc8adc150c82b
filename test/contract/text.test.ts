// Covers contract/text.ts, the one sanitiser: every blank-looking or invisible code point is replaced (issue 26), ordinary text is kept.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { charCount, cleanLine, hasUnsafe, REPLACEMENT, replaceUnsafe } from "../../contract/text";

/**
 * The classes the sanitiser must leave nothing of, written apart from its own list (from Unicode's properties, as
 * Node's ICU knows them): controls, format characters, line and paragraph separators, default-ignorable code points,
 * every space but the two of ordinary width, and the letters and symbols that draw nothing.
 */
const BLANK_OR_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u115f\u1160\u2800\u3164\uffa0\u{16fe4}\u{1d159}]|(?![\u0020\u00a0])\p{Zs}/u;

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;

describe("issue 26: replaces every blank-looking code point", () => {
  // The ones the issue names, each with the name a reviewer knows it by.
  const named: [number, string][] = [
    [0x2800, "braille pattern blank"],
    [0x3164, "Hangul filler"],
    [0x115f, "Hangul choseong filler"],
    [0x1160, "Hangul jungseong filler"],
    [0xffa0, "halfwidth Hangul filler"],
    ...Array.from({ length: 11 }, (_, i): [number, string] => [0x2000 + i, "a space of fixed width"]),
    [0x202f, "narrow no-break space"],
    [0x205f, "medium mathematical space"],
    [0x3000, "ideographic space"],
    [0x1680, "Ogham space mark"],
    [0x180e, "Mongolian vowel separator"],
    [0xfeff, "byte order mark"],
    [0x00ad, "soft hyphen"],
    [0x034f, "combining grapheme joiner"],
    [0x17b4, "Khmer vowel inherent aq"],
    [0x17b5, "Khmer vowel inherent aa"],
    [0x2060, "word joiner"],
    [0x2061, "function application"],
    [0x2062, "invisible times"],
    [0x2063, "invisible separator"],
    [0x2064, "invisible plus"],
    [0xe0000, "the first tag block code point"],
    [0xe0001, "language tag"],
    [0xe0020, "tag space"],
    [0xe0041, "tag Latin capital A"],
    [0xe007f, "cancel tag"],
    [0xfe00, "variation selector-1"],
    [0xfe0f, "variation selector-16"],
    [0xe0100, "variation selector-17"],
    [0xe01ef, "variation selector-256"],
    [0x180b, "Mongolian free variation selector one"],
    [0x200b, "zero width space"],
    [0x200d, "zero width joiner"],
    [0x2028, "line separator"],
    [0x0600, "Arabic number sign"],
    [0x06dd, "Arabic end of ayah"],
    [0x110bd, "Kaithi number sign"],
    [0x13430, "Egyptian hieroglyph vertical joiner"],
    [0x16fe4, "Khitan small script filler"],
    [0x1d159, "musical symbol null notehead"],
    [0x1d173, "musical symbol begin beam"],
    [0x1d17a, "musical symbol end phrase"],
  ];

  it.each(named.map(([cp, name]) => [hex(cp), name, cp]))("replaces %s (%s) wherever text is cleaned", (_hex, _name, cp) => {
    const ch = String.fromCodePoint(cp as number);
    const value = `a${ch}b${ch}${ch}`;
    expect(hasUnsafe(value)).toBe(true);
    expect(replaceUnsafe(value)).toBe(`a${REPLACEMENT}b${REPLACEMENT}${REPLACEMENT}`);
    expect(cleanLine(value, 100)).toBe(`a${REPLACEMENT}b${REPLACEMENT}${REPLACEMENT}`);
    expect(cleanLine(value, 100, { collapse: true })).toBe(`a${REPLACEMENT}b${REPLACEMENT}${REPLACEMENT}`);
    // A value made only of it never looks empty.
    expect(cleanLine(ch, 100, { collapse: true }).trim()).toBe(REPLACEMENT);
  });

  it.each([
    ["U+2801 (braille dots-1), beside the blank", "\u2801"],
    ["U+3165 (Hangul letter ssangnieun), beside the filler", "\u3165"],
    ["U+16FE3 (old Chinese iteration mark), beside the Khitan filler", "\u{16fe3}"],
    ["U+1D158 (musical symbol notehead black), beside the null notehead", "\u{1d158}"],
    ["U+1D17B (a combining accent), just past the beam controls", "a\u{1d17b}"],
    ["U+0020 and U+00A0, the spaces of ordinary width", "a b\u00a0c"],
    ["letters of other scripts, accents and an emoji", "Zoë Ñandú Токен 東京 한국 🙂"],
    ["U+0606 (Arabic-Indic cube root), just past the number signs", "\u0606"],
  ])("keeps %s", (_label, text) => {
    expect(hasUnsafe(text)).toBe(false);
    expect(cleanLine(text, 100)).toBe(text);
  });

  it("replaces every code point of the blank and invisible classes, checked over all of Unicode", () => {
    const missed: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (BLANK_OR_INVISIBLE.test(ch) && !hasUnsafe(ch)) missed.push(hex(cp));
    }
    expect(missed).toEqual([]);
  });

  // Strings mixing any code point (lone surrogates included) with a heavy share of the classes' members.
  const members = [
    0x09, 0x0a, 0x7f, 0x85, 0xad, 0x0600, 0x115f, 0x1680, 0x180e, 0x2000, 0x200b, 0x2028, 0x202e, 0x2066, 0x2800, 0x3000, 0x3164, 0xfe0f, 0xfeff, 0xffa0, 0x1d159, 0x1d173, 0xe0041, 0xe0100,
  ];
  const risky = fc.constantFrom(...members.map((cp) => String.fromCodePoint(cp)));
  const anyChar = fc.oneof(fc.string({ unit: "binary", maxLength: 1, minLength: 1 }), fc.string({ unit: "grapheme", maxLength: 1, minLength: 1 }), risky, risky);
  const text = fc.array(anyChar, { maxLength: 40 }).map((parts) => parts.join(""));

  it("issue 26: no output of the cleaner holds a blank or invisible code point, or a lone surrogate (property)", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 60 }), fc.boolean(), (input, max, collapse) => {
        for (const out of [replaceUnsafe(input), cleanLine(input, max, { collapse })]) {
          for (const ch of out) {
            if (BLANK_OR_INVISIBLE.test(ch)) return false;
            if (/^[\ud800-\udfff]$/u.test(ch)) return false;
          }
        }
        // Nothing is dropped silently: each unsafe code point becomes one replacement.
        return charCount(replaceUnsafe(input)) === charCount(input);
      }),
      { numRuns: 2000 },
    );
  });
});
