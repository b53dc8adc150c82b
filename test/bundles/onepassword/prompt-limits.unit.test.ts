// The largest legal 1Password create is a prompt the approval service takes, shown whole (docs/rules.md R-LIMIT-1):
// every limit of the create tools' schemas at its maximum, each character at its worst UTF-8 size, built through
// the real prompt builder. Raising a limit past what the cap carries fails here, before it makes a create nobody
// can approve. (The issue 16 review found 2,000-character URLs and 20 tags of 64 refused outright.)
import { describe, expect, it } from "vitest";
import { buildPrompt, MAX_PROMPT_BYTES } from "../../../bundles/kit/prompt";
import type { NewItem } from "../../../bundles/onepassword/onepassword.client";
import { CREATE_LIMITS, createPrompt, MAX_CREATE_BATCH } from "../../../bundles/onepassword/onepassword.create";

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;
/** A BMP character of three UTF-8 bytes that the prompt's cleaner keeps as it is. */
const wide = (units: number) => "\u4e2d".repeat(units);
/** The longest URL the schema takes, each path character three bytes once percent-free (the schema counts UTF-16 units). */
const longUrl = () => `https://e.x/${wide(CREATE_LIMITS.url - "https://e.x/".length)}`;
const tags = () => Array.from({ length: CREATE_LIMITS.tags }, () => wide(CREATE_LIMITS.tagChars));

function item(category: NewItem["category"]): NewItem {
  const fields: NewItem["fields"] =
    category === "API_CREDENTIAL"
      ? [
          { label: "username", type: "STRING", value: wide(CREATE_LIMITS.username) },
          { label: "credential", type: "CONCEALED", value: "x" },
          { label: "type", type: "STRING", value: wide(CREATE_LIMITS.keyType) },
        ]
      : [
          { label: "username", type: "STRING", purpose: "USERNAME", value: wide(CREATE_LIMITS.username) },
          { label: "password", type: "CONCEALED", purpose: "PASSWORD", value: "x" },
        ];
  return { vaultId: "v".repeat(26), title: wide(CREATE_LIMITS.title), category, fields, urls: [longUrl()], tags: tags() };
}

describe("issue 16 review: the largest legal 1Password create can be put to a person", () => {
  it.each(["LOGIN", "API_CREDENTIAL"] as const)("a batch of %s items at every limit builds a prompt within the approval service's cap", (category) => {
    const target = {
      mount: "onepassword-provisioning",
      tool: "onepassword_create_login",
      vault: { id: "v".repeat(26), name: wide(100) },
      items: Array.from({ length: MAX_CREATE_BATCH }, () => item(category)),
    };
    const prompt = buildPrompt("a".repeat(63), createPrompt(target));
    expect(bytes(prompt)).toBeLessThanOrEqual(MAX_PROMPT_BYTES);
    // Shown whole: every value of the largest item is in the prompt as it was given.
    for (const value of [target.items[0]?.title, target.items[0]?.urls[0], ...(target.items[0]?.tags ?? [])]) expect(prompt).toContain(value);
  });

  it("one more item, or one limit doubled, is what the cap would refuse: the limits are sized to the cap, not far below it", () => {
    const over = { mount: "m", tool: "t", vault: { id: "v".repeat(26), name: wide(100) }, items: Array.from({ length: MAX_CREATE_BATCH * 2 }, () => item("API_CREDENTIAL")) };
    expect(() => buildPrompt("a".repeat(63), createPrompt(over))).toThrow(/bytes, more than/);
  });
});
