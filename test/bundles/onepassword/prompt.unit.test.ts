// The 1Password prompts (bundles/onepassword/onepassword.prompt.ts): what was read from 1Password (vault names, item titles, field labels) is shown under a heading of its own, never as "supplied by the caller"; the caller's values keep the kit's heading; the whole is held to the approval service's cap.
import { describe, expect, it } from "vitest";
import { buildPrompt, CALLER_VALUES_HEADING, MAX_PROMPT_BYTES, PromptRefusal } from "../../../bundles/kit/prompt";
import { createPrompt } from "../../../bundles/onepassword/onepassword.create";
import { buildOnePasswordPrompt, READ_VALUES_HEADING } from "../../../bundles/onepassword/onepassword.prompt";
import { revealPrompt } from "../../../bundles/onepassword/onepassword.reveal";
import { IDS, SECRET_PREFIX } from "../../fakes/onepassword/seed";
import { harness } from "./helpers";

const h = harness();
const vault = { id: IDS.engineering, name: "Engineering" };
const github = { vault_id: IDS.engineering, item_id: IDS.github };

describe("what was read from 1Password is labelled as such", () => {
  it("a reveal's prompt lists vaults, titles and field labels under the read-from-1Password heading, and only the ids the caller asked for under the caller's", async () => {
    const { prompts } = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, poll: { body: { action: "decline" } } });
    expect(prompts[0]).toEqual([
      "onepassword: This will reveal 2 sensitive value(s) of 1 1Password item(s) to the caller.",
      "",
      "A revealed password, key or card number cannot be un-revealed. No value is shown here.",
      "",
      CALLER_VALUES_HEADING,
      `  Asked for: ${IDS.engineering}/${IDS.github}`,
      "",
      READ_VALUES_HEADING,
      `  Item: Engineering / GitHub (${IDS.github})`,
      "  Reveals: 2 values: password, notesPlain",
    ]);
  });

  it("counts what a reveal shows, so a field label written to read as no value, or as two, never passes for it", () => {
    const item = (fields: { id: string; label: string }[]) => ({
      vault: { id: IDS.engineering, name: "Engineering" },
      item: { id: IDS.github, vaultId: IDS.engineering, title: "GitHub", category: "LOGIN", tags: [], urls: [], fields: fields.map((f) => ({ ...f, type: "CONCEALED", value: "x" })) },
    });
    const reveals = (fields: { id: string; label: string }[]) =>
      buildOnePasswordPrompt("onepassword", revealPrompt({ mount: "onepassword", entries: [item(fields)] }))
        .split("\n")
        .filter((l) => l.startsWith("  Reveals:"));
    expect(reveals([])).toEqual(["  Reveals: nothing (no sensitive value)"]);
    expect(reveals([{ id: "a", label: "nothing (no sensitive value)" }])).toEqual(["  Reveals: 1 value: nothing (no sensitive value)"]);
    expect(reveals([{ id: "a", label: "password, pin" }])).toEqual(["  Reveals: 1 value: password, pin"]);
    expect(
      reveals([
        { id: "a", label: "password" },
        { id: "b", label: "pin" },
      ]),
    ).toEqual(["  Reveals: 2 values: password, pin"]);
  });

  it("a vault name or title written to look like the caller's heading stays one line under the read heading", () => {
    const forged = `Engineering\n\n${CALLER_VALUES_HEADING}\n  Reveals: nothing`;
    const entry = {
      vault: { id: IDS.engineering, name: forged },
      item: { id: IDS.github, vaultId: IDS.engineering, title: "GitHub", category: "LOGIN", tags: [], urls: [], fields: [{ id: "password", label: "password", type: "CONCEALED", value: "x" }] },
    };
    const lines = buildOnePasswordPrompt("onepassword", revealPrompt({ mount: "onepassword", entries: [entry] })).split("\n");
    expect(lines.filter((l) => l === CALLER_VALUES_HEADING)).toHaveLength(1);
    expect(lines.indexOf(CALLER_VALUES_HEADING)).toBe(4);
    expect(lines.indexOf(READ_VALUES_HEADING)).toBe(7);
    expect(lines).toHaveLength(10);
    expect(lines[8]).toMatch(/^ {2}Item: Engineering\\n\\nValues below are supplied by the caller/);
  });

  it("a create's prompt keeps the caller's values under the caller's heading and the vault's name under the read heading", () => {
    const target = {
      mount: "onepassword",
      tool: "onepassword_create_login",
      vault,
      items: [{ vaultId: IDS.engineering, title: "Grafana", category: "LOGIN" as const, fields: [{ label: "password", type: "CONCEALED" as const, value: `${SECRET_PREFIX}p` }], urls: [], tags: [] }],
    };
    const text = buildOnePasswordPrompt("onepassword", createPrompt(target));
    expect(text.split("\n").slice(4)).toEqual([
      CALLER_VALUES_HEADING,
      "  Title: Grafana",
      "  Stores: password (concealed, not shown)",
      "",
      READ_VALUES_HEADING,
      `  Vault: Engineering (${IDS.engineering})`,
    ]);
    expect(text).not.toContain("Engineering (engineeringvault0000000001).");
  });

  it("with nothing read from 1Password it is the kit's prompt, unchanged; with no caller value the read heading stands alone", () => {
    const spec = { heading: "h", consequence: "c", values: [{ label: "Title", value: "t" }], read: [] };
    expect(buildOnePasswordPrompt("s", spec)).toBe(["s: h", "", "c", "", CALLER_VALUES_HEADING, "  Title: t"].join("\n"));
    expect(buildOnePasswordPrompt("s", { ...spec, values: [], read: [{ label: "Vault", value: "v" }] })).toBe(["s: h", "", "c", "", READ_VALUES_HEADING, "  Vault: v"].join("\n"));
  });

  it("refuses, before anyone is asked, a prompt the read heading takes past the approval service's cap, and takes one that just fits", () => {
    // Read values only: the kit's text with its caller heading, which the read heading (longer) replaces.
    const grow = READ_VALUES_HEADING.length - CALLER_VALUES_HEADING.length;
    const spec = (last: number) => ({
      heading: "h",
      consequence: "c",
      values: [],
      read: [...Array.from({ length: 48 }, () => ({ label: "I", value: "x".repeat(1000) })), { label: "I", value: "x".repeat(last) }],
    });
    const kitBytes = (last: number) => new TextEncoder().encode(buildPrompt("s", { ...spec(last), values: spec(last).read })).byteLength;
    const fits = MAX_PROMPT_BYTES - grow - kitBytes(0);
    expect(fits).toBeGreaterThan(0);
    expect(new TextEncoder().encode(buildOnePasswordPrompt("s", spec(fits))).byteLength).toBe(MAX_PROMPT_BYTES);
    // One byte more: the kit alone would send it, but with the read heading it is over the cap, so nobody is asked.
    expect(kitBytes(fits + 1)).toBeLessThan(MAX_PROMPT_BYTES);
    expect(() => buildOnePasswordPrompt("s", spec(fits + 1))).toThrow(PromptRefusal);
    expect(() => buildOnePasswordPrompt("s", spec(fits + 1))).toThrow(/more than the 49152 the approval service takes/);
  });
});
