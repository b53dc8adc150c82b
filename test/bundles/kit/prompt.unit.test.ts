// Covers bundles/kit/prompt.ts: the approval prompt's layout, that caller values cannot forge lines or hide what they say, and that a value binding the approval is shown whole or the call fails.
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../../approvals/prompt";
import { buildPrompt, CALLER_VALUES_HEADING, cleanLine, MAX_BOUND_VALUE_CHARS, MAX_PROMPT_BYTES, MAX_VALUE_CHARS, PromptRefusal, REPLACEMENT } from "../../../bundles/kit/prompt";

describe("the prompt", () => {
  it("names the slug and what will happen, then the consequence, then each caller value on its own labelled line", () => {
    const text = buildPrompt("echo-confirmed", {
      heading: "This will move 12 message(s) between mailboxes.",
      consequence: "The messages keep their content but get new UIDs,\nso the current ones stop working.",
      values: [
        { label: "From", value: "INBOX" },
        { label: "To", value: "Archive" },
        { label: "Count", value: 12 },
      ],
    });
    expect(text).toBe(
      [
        "echo-confirmed: This will move 12 message(s) between mailboxes.",
        "",
        "The messages keep their content but get new UIDs,",
        "so the current ones stop working.",
        "",
        "Values below are supplied by the caller, not by this server:",
        "  From: INBOX",
        "  To: Archive",
        "  Count: 12",
      ].join("\n"),
    );
    expect(CALLER_VALUES_HEADING).toBe("Values below are supplied by the caller, not by this server:");
  });

  it("keeps a caller value on one line, whatever line breaks it carries", () => {
    const text = buildPrompt("echo", {
      heading: "This will record a note.",
      consequence: "It cannot be taken back.",
      values: [{ label: "Note", value: "ok\nValues below are supplied by this server:\r\n  Approved: yes\u2028\u2029\u0085end" }],
    });
    const lines = text.split("\n");
    expect(lines.length).toBe(6);
    // A value that binds is shown verbatim: every line break spelt out, so the note is on one line and reads back whole (R-PROMPT-13).
    expect(lines[5]).toBe("  Note: ok\\nValues below are supplied by this server:\\r\\n\u2420\u2420Approved: yes\\u2028\\u2029\\u0085end");
  });

  it("cleans the slug, so it cannot forge a line or hide characters in the first line", () => {
    const text = buildPrompt("gmail-rw\nApproved by: admin\u202E", { heading: "This will send 1 message.", consequence: "c", values: [] });
    expect(text.split("\n")).toEqual(["gmail-rw\ufffdApproved by: admin\ufffd: This will send 1 message.", "", "c"]);
    expect(buildPrompt("s".repeat(150), { heading: "h", consequence: "c", values: [] }).split("\n")[0]).toBe(`${"s".repeat(100)}… [cut: 150 characters in all]: h`);
  });

  it("cleans the heading, so it cannot forge a line or hide characters", () => {
    const text = buildPrompt("echo", { heading: "This will record a note.\nValues below are supplied by this server:\u200B", consequence: "c", values: [] });
    expect(text.split("\n")).toEqual(["echo: This will record a note.\ufffdValues below are supplied by this server:\ufffd", "", "c"]);
  });

  it("keeps each consequence line apart but cleans it, so no line can hide characters or run on", () => {
    const text = buildPrompt("echo", { heading: "h", consequence: `It cannot be undone.\rApproved: yes\nSee \u202Eexe.pdf\n${"z".repeat(450)}`, values: [] });
    expect(text.split("\n")).toEqual(["echo: h", "", "It cannot be undone.\ufffdApproved: yes", "See \ufffdexe.pdf", `${"z".repeat(400)}… [cut: 450 characters in all]`]);
  });

  it("leaves out the caller heading when there are no caller values", () => {
    expect(buildPrompt("s", { heading: "h", consequence: "c", values: [] })).toBe("s: h\n\nc");
  });
});

describe("a value", () => {
  it.each([
    ["C0 controls", "a\u0000b\u0007c\u001bd\te"],
    ["DEL and C1 controls", "a\u007fb\u0085c\u009bd"],
    ["line and paragraph separators", "a\u2028b\u2029c"],
    ["bidi overrides, embeddings, isolates and marks", "invoice\u202Efdp.exe\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u200E\u200F\u061C"],
    ["zero-width characters", "pay\u200Bpal\u200C\u200D\u2060\uFEFF"],
    ["Mongolian vowel separator", "pay\u180Epal"],
    ["a lone surrogate", "a\ud800b\udc00c"],
  ])("has its %s replaced", (_label, value) => {
    const clean = cleanLine(value);
    expect(clean).toMatch(/\ufffd/);
    expect(clean).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\u061c\u180e\u2060\ufeff]/);
    expect(clean).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it("keeps ordinary text, accents and emoji as they are", () => {
    expect(cleanLine("Zoë’s café 🎉 — 12 × 3")).toBe("Zoë’s café 🎉 — 12 × 3");
  });

  it(`is cut at ${MAX_VALUE_CHARS} characters with a marker that says how long it was`, () => {
    const long = "x".repeat(450);
    const clean = cleanLine(long);
    expect(clean.startsWith("x".repeat(MAX_VALUE_CHARS))).toBe(true);
    expect(clean.slice(MAX_VALUE_CHARS)).toBe("… [cut: 450 characters in all]");
    expect(cleanLine("y".repeat(MAX_VALUE_CHARS))).toBe("y".repeat(MAX_VALUE_CHARS));
  });

  it("is cut by characters, never through an emoji", () => {
    const clean = cleanLine("🎉".repeat(201));
    expect([...(clean.split("…")[0] as string)]).toEqual(Array(200).fill("🎉"));
  });

  it("cannot forge the caller heading from inside a prompt built with it", () => {
    const text = buildPrompt("echo", { heading: "h", consequence: "c", values: [{ label: "Note", value: `x\n${CALLER_VALUES_HEADING}` }] });
    expect(text.split("\n").filter((l) => l === CALLER_VALUES_HEADING)).toHaveLength(1);
    expect(REPLACEMENT).toBe("\ufffd");
  });
});

describe("issue 13 #1: a value that binds the approval is never cut", () => {
  const spec = (value: string, binds?: boolean) => ({ heading: "h", consequence: "c", values: [{ label: "To", value, ...(binds === undefined ? {} : { binds }) }] });

  it("issue 13 #1: shows a binding value longer than the old 200-character cut whole", () => {
    const address = `${"a".repeat(60)}@${"b".repeat(180)}.example`;
    const text = buildPrompt("gmail", spec(address));
    expect(text.split("\n").at(-1)).toBe(`  To: ${address}`);
    expect(text).not.toContain("[cut:");
  });

  it("issue 13 #1: refuses a binding value too long to show whole, naming its label, instead of cutting it", () => {
    expect(() => buildPrompt("gmail", spec("x".repeat(MAX_BOUND_VALUE_CHARS + 1)))).toThrow(PromptRefusal);
    expect(() => buildPrompt("gmail", spec("x".repeat(MAX_BOUND_VALUE_CHARS + 1)))).toThrow(/the To value is 1001 characters long, more than the 1000 a prompt shows whole/);
    expect(
      buildPrompt("gmail", spec("x".repeat(MAX_BOUND_VALUE_CHARS)))
        .split("\n")
        .at(-1),
    ).toBe(`  To: ${"x".repeat(MAX_BOUND_VALUE_CHARS)}`);
  });

  it("issue 13 #1: a value binds unless it says it does not; only free text that does not bind is cut, with the marker", () => {
    const long = "y".repeat(450);
    expect(() => buildPrompt("s", spec(long, true))).not.toThrow();
    expect(buildPrompt("s", spec(long, true)).split("\n").at(-1)).toBe(`  To: ${long}`);
    expect(buildPrompt("s", spec(long, false)).split("\n").at(-1)).toBe(`  To: ${"y".repeat(MAX_VALUE_CHARS)}… [cut: 450 characters in all]`);
  });

  it("issue 13 #1: refuses a prompt over the approval service's cap before anyone is asked", () => {
    expect(MAX_PROMPT_BYTES).toBe(MAX_MESSAGE_BYTES);
    // Every value within its own limit; together over the cap (contract/elicitation.ts MAX_PROMPT_BYTES).
    const count = Math.ceil(MAX_PROMPT_BYTES / 800) + 1;
    const values = Array.from({ length: count }, (_, i) => ({ label: `To ${i}`, value: "z".repeat(800) }));
    expect(() => buildPrompt("gmail", { heading: "h", consequence: "c", values })).toThrow(new RegExp(`the prompt would be \\d+ bytes, more than the ${MAX_PROMPT_BYTES} the approval service takes`));
    // Multi-byte text counts in bytes, as the approval service counts it: as many characters in 3 bytes each are over it.
    expect(() =>
      buildPrompt("gmail", {
        heading: "h",
        consequence: "c",
        values: Array.from({ length: Math.ceil(count / 3) + 1 }, (_, i) => ({ label: `To ${i}`, value: "東".repeat(800) })),
      }),
    ).toThrow(PromptRefusal);
    expect(() =>
      buildPrompt("gmail", { heading: "h", consequence: "c", values: Array.from({ length: Math.ceil(count / 3) + 1 }, (_, i) => ({ label: `To ${i}`, value: "z".repeat(800) })) }),
    ).not.toThrow();
  });
});

describe("issue 13 #2: no forged lines", () => {
  it("issue 13 #2: collapses every run of whitespace in display-only text, so it cannot pad itself out to where a new line seems to start", () => {
    const text = buildPrompt("gmail", { heading: "h", consequence: "c", values: [{ label: "Note", value: `Invoice${" ".repeat(150)}Bcc: eve@attacker.example\u00a0\u00a0\u00a0x`, binds: false }] });
    expect(text.split("\n").at(-1)).toBe("  Note: Invoice Bcc: eve@attacker.example x");
  });

  it.each([
    ["U+3164 Hangul filler", "\u3164"],
    ["U+115F Hangul choseong filler", "\u115f"],
    ["U+FFA0 halfwidth Hangul filler", "\uffa0"],
    ["U+2000-U+200A spaces", "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"],
    ["U+202F narrow no-break space", "\u202f"],
    ["U+205F medium mathematical space", "\u205f"],
    ["U+3000 ideographic space", "\u3000"],
    ["U+1680 Ogham space mark", "\u1680"],
    ["tag characters U+E0000-U+E0FFF", "\u{e0001}\u{e0041}\u{e007f}\u{e0100}\u{e0fff}"],
    ["U+1BCA0-U+1BCA3 shorthand format controls", "\u{1bca0}\u{1bca3}"],
  ])("issue 13 #2: replaces the %s in display-only text shown in the prompt", (_label, chars) => {
    const line = buildPrompt("gmail", { heading: "h", consequence: "c", values: [{ label: "To", value: `jane${chars}doe`, binds: false }] })
      .split("\n")
      .at(-1) as string;
    expect(line).toMatch(/^ {2}To: jane\ufffd+doe$/u);
    expect([...line].every((ch) => !chars.includes(ch))).toBe(true);
  });
});
