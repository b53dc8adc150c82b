// Issue 26: a value the approval binds is shown verbatim (bundles/kit/prompt.ts showVerbatim), so two different values never render alike, while display-only text still collapses; the display cap counts what is shown.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type SendTarget, sendPrompt } from "../../../bundles/google/google.send";
import { buildPrompt, MAX_BOUND_VALUE_CHARS, PromptRefusal, type PromptValue, SPACE_MARK, showVerbatim } from "../../../bundles/kit/prompt";
import { type ReplaceTarget, replacePrompt } from "../../../bundles/pads/pads.asks";
import { hasUnsafe } from "../../../contract/text";

const lastLine = (text: string) => text.split("\n").at(-1) as string;
const prompt = (values: PromptValue[]) => buildPrompt("pads", { heading: "h", consequence: "c", values });
const bound = (value: string) => prompt([{ label: "Replace with", value }]);

/** The shown text read back: the inverse of showVerbatim, written from its documented rules, not from its code. */
function readBack(shown: string): string {
  let out = "";
  const chars = [...shown];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === SPACE_MARK) {
      out += " ";
      continue;
    }
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const next = chars[++i];
    if (next === "\\") out += "\\";
    else if (next === "t") out += "\t";
    else if (next === "n") out += "\n";
    else if (next === "r") out += "\r";
    else if (next === "u" && chars[i + 1] === "{") {
      const close = chars.indexOf("}", i);
      out += String.fromCodePoint(Number.parseInt(chars.slice(i + 2, close).join(""), 16));
      i = close;
    } else if (next === "u") {
      out += String.fromCharCode(Number.parseInt(chars.slice(i + 1, i + 5).join(""), 16));
      i += 4;
    } else throw new Error(`a lone backslash at ${i} in ${JSON.stringify(shown)}`);
  }
  return out;
}

/** Nothing in a shown value hides: no control, format, invisible, blank-looking or bidi code point, and no space but a single one between two shown characters. */
function nothingHidden(shown: string): boolean {
  if (hasUnsafe(shown) || /[\p{C}\p{Default_Ignorable_Code_Point}]|[^\P{Z} ]/u.test(shown)) return false;
  return !/^ | $| {2}/.test(shown);
}

describe("issue 26: the review's examples render apart", () => {
  it.each([
    ["p q", "p  q", "  Replace with: p q", `  Replace with: p${SPACE_MARK}${SPACE_MARK}q`],
    ["p\tq", "p\nq", "  Replace with: p\\tq", "  Replace with: p\\nq"],
    ["p q", "p\u00a0q", "  Replace with: p q", "  Replace with: p\\u00a0q"],
    ["p", "p ", "  Replace with: p", `  Replace with: p${SPACE_MARK}`],
    ["p\\tq", "p\tq", "  Replace with: p\\\\tq", "  Replace with: p\\tq"],
    [`p${SPACE_MARK}${SPACE_MARK}q`, "p  q", "  Replace with: p\\u2420\\u2420q", `  Replace with: p${SPACE_MARK}${SPACE_MARK}q`],
    ["\u00e9", "e\u0301", "  Replace with: \u00e9", "  Replace with: e\\u0301"],
    ["\u0301e", "e", "  Replace with: \\u0301e", "  Replace with: e"],
    ["\u00c5", "\u212b", "  Replace with: \u00c5", "  Replace with: \\u212b"],
    ["a;", "a\u037e", "  Replace with: a;", "  Replace with: a\\u037e"],
    ["\uac00", "\u1100\u1161", "  Replace with: \uac00", "  Replace with: \u1100\\u1161"],
    ["a\u202eb", "a\u202db", "  Replace with: a\\u202eb", "  Replace with: a\\u202db"],
  ])("issue 26: %j and %j, once shown alike, are shown as %j and %j", (a, b, shownA, shownB) => {
    expect(a).not.toBe(b);
    expect(lastLine(bound(a))).toBe(shownA);
    expect(lastLine(bound(b))).toBe(shownB);
    expect(bound(a)).not.toBe(bound(b));
  });

  it("issue 26: a yes for `Replace with: p q` is never a yes for `p  q`: the pads prompt shows the text the pad gets, space for space", () => {
    const target = (replace: string) => ({ pad: "notes", search: "x", replace, count: 2, before: 10, after: 12, verdict: { asks: false } }) as unknown as ReplaceTarget;
    const one = buildPrompt("pads", replacePrompt(target("p q")));
    const two = buildPrompt("pads", replacePrompt(target("p  q")));
    expect(one.split("\n")).toContain("  Replace with: p q");
    expect(two.split("\n")).toContain(`  Replace with: p${SPACE_MARK}${SPACE_MARK}q`);
    const tab = buildPrompt("pads", replacePrompt(target("p\tq")));
    const lf = buildPrompt("pads", replacePrompt(target("p\nq")));
    expect(tab.split("\n")).toContain("  Replace with: p\\tq");
    expect(lf.split("\n")).toContain("  Replace with: p\\nq");
    expect(new Set([one, two, tab, lf]).size).toBe(4);
  });

  it("issue 26: a Gmail subject is shown as it goes out, and an empty subject cannot pose as a subject reading (no subject)", () => {
    const send = (subject: string) =>
      buildPrompt(
        "gmail-rw-external",
        sendPrompt({
          kind: "compose",
          from: "person@example.com",
          to: ["bob@example.com"],
          cc: [],
          bcc: [],
          subject,
          subjectFrom: "caller",
          attachments: [],
          inForm: { text: true, html: true },
        } as unknown as SendTarget),
      ).split("\n");
    expect(send("Invoice  due")).toContain(`  Subject: Invoice${SPACE_MARK}${SPACE_MARK}due`);
    expect(send("Invoice\tdue")).toContain("  Subject: Invoice\\tdue");
    expect(send("")).toContain("  Subject (none): ");
    expect(send("(no subject)")).toContain("  Subject: (no subject)");
    expect(send("").join("\n")).not.toBe(send("(no subject)").join("\n"));
  });
});

describe("issue 26: two different bound values never render to the same prompt", () => {
  // Whitespace of every kind, controls, invisible and blank-looking code points, bidi controls, combining marks, lone
  // surrogates, the escape character and the space mark themselves, and plain letters the escapes are spelt with.
  const tricky = [
    ..." \t\n\r\v\f\u0085\u00a0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000",
    ..."\u0000\u0001\u001b\u007f\u009b\u00ad\u034f\u061c\u115f\u1160\u3164\uffa0\u2800\u200b\u200c\u200d\u2060\ufeff\ufe0f",
    ..."\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    ..."\u0301\u0308\u20dd\u0489",
    "\ud800",
    "\udc00",
    "\u{e0041}",
    "\u{1d159}",
    "\u{1f44d}",
    "\ue000",
    ..."\\\u2420utnr{}0a9fé e\ufffd:",
  ];
  const unit = fc.constantFrom(...tricky);
  const run = fc.tuple(fc.constantFrom(" ", "\t", "\u00a0", "\u3000", "\u200b", "\u2420", "\\"), fc.integer({ min: 2, max: 300 })).map(([ch, n]) => ch.repeat(n));
  const value = fc
    .array(fc.oneof({ weight: 8, arbitrary: unit }, { weight: 1, arbitrary: run }, { weight: 2, arbitrary: fc.string({ maxLength: 4 }) }), { maxLength: 40 })
    .map((parts) => parts.join(""));
  // A near neighbour: one unit inserted, removed or swapped, which is where a look-alike would hide.
  const neighbour = (v: string) =>
    fc.tuple(fc.nat(), unit, fc.constantFrom("insert", "remove", "swap")).map(([at, ch, op]) => {
      const chars = [...v];
      const i = chars.length === 0 ? 0 : at % (chars.length + (op === "insert" ? 1 : 0));
      if (op === "insert") chars.splice(i, 0, ch);
      else if (op === "remove") chars.splice(i, 1);
      else chars.splice(i, 1, ch);
      return chars.join("");
    });
  const render = (v: string): string | undefined => {
    try {
      return bound(v);
    } catch (error) {
      // Refused unasked: nobody is shown it, so it cannot be confused with anything.
      if (error instanceof PromptRefusal && error.code === "value_too_long") return undefined;
      throw error;
    }
  };

  it("issue 26: random bound values and their near neighbours render to different prompts, each reading back as exactly its value with nothing hidden", () => {
    fc.assert(
      fc.property(
        value.chain((a) => fc.tuple(fc.constant(a), fc.oneof(neighbour(a), value))),
        ([a, b]) => {
          fc.pre(a !== b);
          const [ra, rb] = [render(a), render(b)];
          if (ra !== undefined && rb !== undefined) expect(ra).not.toBe(rb);
          for (const [v, r] of [
            [a, ra],
            [b, rb],
          ] as const) {
            if (r === undefined) continue;
            const shown = lastLine(r).slice("  Replace with: ".length);
            expect(readBack(shown)).toBe(v);
            expect(nothingHidden(shown), JSON.stringify(shown)).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("issue 26: every code point the one sanitiser refuses is written as an escape in a bound value, never shown as itself", () => {
    const refused: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      const ch = String.fromCodePoint(code);
      if (hasUnsafe(ch)) refused.push(ch);
    }
    // contract/text.ts's list, whatever it holds today: controls, bidi, invisible and blank-looking code points.
    expect(refused.length).toBeGreaterThan(4000);
    for (const ch of refused) {
      const shown = showVerbatim(`a${ch}b`);
      expect(shown.slice(1, -1)).toMatch(/^\\(?:[tnr]|u[0-9a-f]{4}|u\{[0-9a-f]{5,6}\})$/);
      expect(readBack(shown)).toBe(`a${ch}b`);
    }
  });
});

describe("issue 26: the display cap counts what is shown", () => {
  const over = (v: string) => () => bound(v);

  it("issue 26: a bound value of exactly the cap as shown is shown whole; one character more is refused unasked, naming its label", () => {
    expect(lastLine(bound("x".repeat(MAX_BOUND_VALUE_CHARS)))).toBe(`  Replace with: ${"x".repeat(MAX_BOUND_VALUE_CHARS)}`);
    expect(over("x".repeat(MAX_BOUND_VALUE_CHARS + 1))).toThrow(/^the Replace with value is 1001 characters long, more than the 1000 a prompt shows whole, and it is never shown cut$/);
  });

  it("issue 26: escapes count: a value of 1,000 characters with one tab shows as 1,001 and is refused, saying how long it is as written; 999 with the tab is shown", () => {
    const fits = `${"x".repeat(MAX_BOUND_VALUE_CHARS - 2)}\t`;
    expect([...showVerbatim(fits)]).toHaveLength(MAX_BOUND_VALUE_CHARS);
    expect(lastLine(bound(fits))).toBe(`  Replace with: ${"x".repeat(MAX_BOUND_VALUE_CHARS - 2)}\\t`);
    const past = `${"x".repeat(MAX_BOUND_VALUE_CHARS - 1)}\t`;
    let refusal: unknown;
    try {
      bound(past);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(PromptRefusal);
    expect((refusal as PromptRefusal).code).toBe("value_too_long");
    expect((refusal as PromptRefusal).message).toBe(
      "the Replace with value is 1001 characters long as shown (1000 as written, with its whitespace and invisible characters spelt out), more than the 1000 a prompt shows whole, and it is never shown cut",
    );
    // Past U+FFFF an escape is \u{…}: nine characters for one.
    expect(showVerbatim("\u{e0041}")).toBe("\\u{e0041}");
    expect(over(`${"x".repeat(MAX_BOUND_VALUE_CHARS - 9)}\u{e0041}`)).not.toThrow();
    expect(over(`${"x".repeat(MAX_BOUND_VALUE_CHARS - 8)}\u{e0041}`)).toThrow(PromptRefusal);
  });

  it("issue 26: display-only text still collapses, and a long run never refuses it", () => {
    const line = lastLine(prompt([{ label: "Note", value: `a  b\tc\nd${" ".repeat(5000)}`, binds: false }]));
    // Display-only text is the shared sanitiser's: a tab or line feed is the replacement mark, every run one space.
    expect(line).toBe("  Note: a b\ufffdc\ufffdd ");
  });
});
