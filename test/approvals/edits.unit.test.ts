// Covers the approval service's side of edits by the person: a create whose form offers text, a list to narrow and a pick-one choice, the review JSON's fields, a decision's edits held to the prompt's own form and returned as the poll answer's content, the decision's byte cap under the bundle's answer cap, the schema's own byte cap, and the page in Chromium: text boxes and tick boxes (never a box to add an entry), a text box's hidden characters shown again as code points, a diff of what changed, the confirm box unticked by every edit, and Accept sending exactly the diff; a pick-one field is a select of its choices alone.
import { join } from "node:path";
import type { BrowserContextOptions, Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { MAX_DECISION_BYTES, MAX_DEFAULT_CHARS, MAX_LIST_OPTIONS, MAX_OPTION_CHARS, MAX_SCHEMA_BYTES } from "../../approvals/prompt";
import { MAX_ANSWER_BYTES } from "../../bundles/kit/approval-client";
import { MAX_LIST_OPTIONS as KIT_LIST_OPTIONS, MAX_OPTION_CHARS as KIT_OPTION_CHARS, MAX_FORM_BYTES } from "../../bundles/kit/edits";
import { MAX_LIST_OPTIONS as CONTRACT_LIST_OPTIONS, MAX_OPTION_CHARS as CONTRACT_OPTION_CHARS, CREATE_ENVELOPE_BYTES } from "../../contract/elicitation";
import { CARD_UPDATE_MS, chromiumForFile, gotoTraced, SHOTS } from "../e2e/browser";
import { createBody, createPrompt, mint, poll, requestIdOf, reviewPage, useApprovals } from "./helpers";

const svc = useApprovals();

const TO = ["ada@example.com (name: Ada)", "bob@example.com"];
/** The form a bundle's kit sends for a send_email (bundles/kit/edits.ts): recipients to untick, a subject and a body to rewrite. */
const FORM = {
  type: "object",
  properties: {
    to: { type: "array", title: "To", description: "Untick an entry to leave it out.", maxItems: 2, items: { type: "string", enum: TO }, default: TO },
    subject: { type: "string", title: "Subject", description: "You may correct this.", maxLength: 20, default: "Quarterly report" },
    text: { type: "string", title: "Body (plain text)", maxLength: 1_000_000, default: "Hello,\nsee the numbers." },
    confirm: { type: "boolean", title: "Approve", description: "Tick to let the call go ahead." },
  },
  required: ["confirm"],
};

const FOLDERS = ["Archive", "Trash", "Entwürfe/Größe & Maß"];
/** The form the kit sends for a move: the destination as a pick-one of the mailbox's folders (R-EDIT-2). */
const PICK_FORM = {
  type: "object",
  properties: {
    destination: { type: "string", title: "Into mailbox", description: "You may pick another of these choices.", enum: FOLDERS, default: "Archive" },
    confirm: FORM.properties.confirm,
  },
  required: ["confirm"],
};

async function promptWith(schema: Record<string, unknown>) {
  const session = await mint(svc.origin);
  const body = { ...createBody(), requestedSchema: schema };
  const created = await createPrompt(session.elicitationUrl, body);
  return { session, created, requestId: requestIdOf(body) };
}

/** One prompt's form as the page fetches it for its card: the review JSON's per-prompt route. */
async function formOf(reviewUrl: string, requestId: string): Promise<{ fields: Record<string, unknown>[] }> {
  const response = await fetch(`${reviewUrl}/prompts/${requestId}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { prompt: { fields: Record<string, unknown>[] } }).prompt;
}

async function decideWith(reviewUrl: string, requestId: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const { csrf } = await reviewPage(reviewUrl);
  const response = await fetch(`${reviewUrl}/prompts/${requestId}/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the form a create carries", () => {
  it("takes text fields with long defaults and a list to narrow, and lists them as fields on the review JSON", async () => {
    // As long as the kit's whole form may be: the schema's own cap bounds the rest.
    const { session, created, requestId } = await promptWith({ ...FORM, properties: { ...FORM.properties, text: { ...FORM.properties.text, default: "x".repeat(MAX_FORM_BYTES) } } });
    expect(created.status).toBe(201);
    const { fields } = await formOf(session.reviewUrl, requestId);
    expect(fields.map((f) => [f.name, f.kind, f.multiline])).toEqual([
      ["to", "list", false],
      ["subject", "text", false],
      ["text", "text", true],
    ]);
    expect(fields[0]).toMatchObject({ options: TO, default: TO });
  });

  it.each([
    ["a list default holding an entry it does not offer", { to: { ...FORM.properties.to, default: [...TO, "mallory@example.com"] } }],
    ["a list of something other than strings", { to: { type: "array", items: { type: "number", enum: [1] } } }],
    ["a list with more entries than the service shows", { to: { type: "array", items: { type: "string", enum: Array.from({ length: MAX_LIST_OPTIONS + 1 }, (_, i) => `${i}@example.com`) } } }],
    ["a list entry one past its cap", { to: { type: "array", items: { type: "string", enum: ["x".repeat(MAX_OPTION_CHARS + 1)] } } }],
    ["a nested schema in a list", { to: { type: "array", items: { type: "string", enum: ["a"], properties: { b: 1 } } } }],
    ["a text default one past its cap", { subject: { type: "string", default: "x".repeat(MAX_DEFAULT_CHARS + 1) } }],
  ])("refuses %s", async (_label, properties) => {
    const { created } = await promptWith({ ...FORM, properties: { ...FORM.properties, ...properties } });
    expect(created.status).toBe(400);
  });

  it("holds the requested schema to its 64 KiB cap: one byte under and at it are taken, one byte over is refused naming the cap", async () => {
    expect(MAX_SCHEMA_BYTES).toBe(CREATE_ENVELOPE_BYTES);
    const sized = (bytes: number) => {
      const schema = { ...FORM, properties: { ...FORM.properties, text: { ...FORM.properties.text, default: "" } } };
      schema.properties.text.default = "x".repeat(bytes - JSON.stringify(schema).length);
      expect(JSON.stringify(schema).length).toBe(bytes);
      return schema;
    };
    expect((await promptWith(sized(MAX_SCHEMA_BYTES - 1))).created.status).toBe(201);
    const at = await promptWith(sized(MAX_SCHEMA_BYTES));
    expect(at.created.status).toBe(201);
    const over = await promptWith(sized(MAX_SCHEMA_BYTES + 1));
    expect(over.created.status).toBe(400);
    expect(((await over.created.json()) as { error: string }).error).toBe(
      `requestedSchema: must be at most ${MAX_SCHEMA_BYTES} bytes as JSON (the create's envelope); this one is ${MAX_SCHEMA_BYTES + 1}`,
    );
    // In bytes of UTF-8, not characters: one 2-byte character in place of one ASCII at the cap is over it.
    const wide = sized(MAX_SCHEMA_BYTES);
    wide.properties.text.default = `é${wide.properties.text.default.slice(1)}`;
    expect((await promptWith(wide)).created.status).toBe(400);
    // The card's own fetch carries the prompt at the cap whole (the list the page polls carries no form).
    const { fields } = await formOf(at.session.reviewUrl, at.requestId);
    expect(fields.find((f) => f.name === "text")?.default).toBe(sized(MAX_SCHEMA_BYTES).properties.text.default);
  });

  it("takes a pick-one field, and lists it as a choice on the review JSON", async () => {
    const { session, created, requestId } = await promptWith(PICK_FORM);
    expect(created.status).toBe(201);
    expect((await formOf(session.reviewUrl, requestId)).fields).toEqual([
      { name: "destination", kind: "choice", title: "Into mailbox", description: "You may pick another of these choices.", maxLength: null, multiline: false, default: "Archive", options: FOLDERS },
    ]);
  });

  it.each([
    ["a pick-one default that is not one of its choices", { ...PICK_FORM.properties.destination, default: "Elsewhere" }],
    ["a pick-one field with one choice more than the service shows", { ...PICK_FORM.properties.destination, enum: Array.from({ length: MAX_LIST_OPTIONS + 1 }, (_, i) => `F${i}`), default: "F0" }],
  ])("refuses %s", async (_label, destination) => {
    const { created } = await promptWith({ ...PICK_FORM, properties: { ...PICK_FORM.properties, destination } });
    expect(created.status).toBe(400);
  });

  it("takes a list at its caps", async () => {
    // As many entries as the list takes, one as long as an entry may be: all at the longest would pass the schema's own cap.
    const options = Array.from({ length: MAX_LIST_OPTIONS }, (_, i) => (i === 0 ? "x".repeat(MAX_OPTION_CHARS) : `${i}@example.com`));
    const { created } = await promptWith({ ...FORM, properties: { to: { type: "array", items: { type: "string", enum: options }, default: options }, confirm: FORM.properties.confirm } });
    expect(created.status).toBe(201);
  });

  it("holds the same list caps as the kit, and a decision's answer fits the kit's answer cap", () => {
    // One pair of numbers, in contract/elicitation.ts, that both sides import.
    expect([KIT_LIST_OPTIONS, KIT_OPTION_CHARS]).toEqual([CONTRACT_LIST_OPTIONS, CONTRACT_OPTION_CHARS]);
    expect([MAX_LIST_OPTIONS, MAX_OPTION_CHARS]).toEqual([CONTRACT_LIST_OPTIONS, CONTRACT_OPTION_CHARS]);
    expect(MAX_FORM_BYTES).toBeLessThanOrEqual(MAX_DEFAULT_CHARS);
    // The poll answer repeats the edits beside at most about 1 KiB of _meta.
    expect(MAX_DECISION_BYTES + 2 * 1024).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });
});

describe("a decision with edits", () => {
  it("stores the edits held to the form, and the poll answers them as content beside confirm", async () => {
    const { session, requestId } = await promptWith(FORM);
    const decided = await decideWith(session.reviewUrl, requestId, { action: "accept", confirm: true, edits: { to: ["bob@example.com"], subject: "x".repeat(20) } });
    expect(decided.status).toBe(200);
    expect((decided.body.prompt as { edited: string[] }).edited).toEqual(["to", "subject"]);
    expect((await poll(session.elicitationUrl, requestId)).body).toMatchObject({ action: "accept", content: { confirm: true, to: ["bob@example.com"], subject: "x".repeat(20) } });
  });

  it.each([
    ["a field the form does not have", { bcc: ["mallory@example.com"] }, /no field "bcc"/],
    ["the confirm box as an edit", { confirm: false }, /no field "confirm"/],
    ["a list entry the form does not offer", { to: ["mallory@example.com"] }, /only the entries the form lists/],
    ["more entries than the list allows", { to: [...TO, TO[0]] }, /more entries/],
    ["text one past its maxLength", { subject: "x".repeat(21) }, /longer than the 20 characters/],
    ["text that is not text", { subject: 5 }, /must be text/],
    ["edits that are not an object", ["subject"], /must be an object/],
  ])("refuses %s with 400 and leaves the prompt pending", async (_label, edits, why) => {
    const { session, requestId } = await promptWith(FORM);
    const decided = await decideWith(session.reviewUrl, requestId, { action: "accept", confirm: true, edits });
    expect(decided.status).toBe(400);
    expect(String(decided.body.error)).toMatch(why);
    expect((await poll(session.elicitationUrl, requestId)).body.action).toBe("pending");
  });

  it("takes a pick among the choices, and refuses one that is not, or is one character off, leaving the prompt pending", async () => {
    for (const wrong of ["Elsewhere", "Archive ", "archive", 5]) {
      const { session, requestId } = await promptWith(PICK_FORM);
      const decided = await decideWith(session.reviewUrl, requestId, { action: "accept", confirm: true, edits: { destination: wrong } });
      expect(decided.status, String(wrong)).toBe(400);
      expect((await poll(session.elicitationUrl, requestId)).body.action).toBe("pending");
    }
    const { session, requestId } = await promptWith(PICK_FORM);
    const decided = await decideWith(session.reviewUrl, requestId, { action: "accept", confirm: true, edits: { destination: "Entwürfe/Größe & Maß" } });
    expect(decided.status).toBe(200);
    expect((await poll(session.elicitationUrl, requestId)).body).toMatchObject({ action: "accept", content: { confirm: true, destination: "Entwürfe/Größe & Maß" } });
  });

  it("reads a decision of up to 48 KiB, and refuses one byte more with 413", async () => {
    const { session, requestId } = await promptWith(FORM);
    const frame = JSON.stringify({ action: "accept", confirm: true, edits: { text: "" } });
    const at = JSON.stringify({ action: "accept", confirm: true, edits: { text: "y".repeat(MAX_DECISION_BYTES - frame.length) } });
    expect(at.length).toBe(MAX_DECISION_BYTES);
    const over = JSON.stringify({ action: "accept", confirm: true, edits: { text: "y".repeat(MAX_DECISION_BYTES - frame.length + 1) } });
    expect((await decideWith(session.reviewUrl, requestId, over)).status).toBe(413);
    expect((await decideWith(session.reviewUrl, requestId, at)).status).toBe(200);
    const answered = await poll(session.elicitationUrl, requestId);
    expect(JSON.stringify(answered.body).length).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });
});

// Each page test drives a card through the Worker on workerd in a context of its own, on one Chromium for the file: 60 s,
// as review.unit.test.ts's browser test, several times the 5-10 s one takes on this 2-core machine under load.
const BROWSER_TEST_MS = 60_000;
const chromium = chromiumForFile();

type Card = { page: Page; card: Locator; session: Awaited<ReturnType<typeof mint>>; requestId: string };

/** A prompt of `schema` in a fresh session, its review page open in a browser context of its own (closed after `run`). */
async function onCard(schema: Record<string, unknown>, ...args: [(card: Card) => Promise<void>] | [BrowserContextOptions, (card: Card) => Promise<void>]): Promise<void> {
  const [options, run] = args.length === 1 ? [undefined, args[0]] : args;
  const { session, requestId } = await promptWith(schema);
  const context = await chromium.browser.newContext(options);
  try {
    const page = await context.newPage();
    await gotoTraced(page, session.reviewUrl);
    await run({ page, card: page.getByTestId("prompt").first(), session, requestId });
  } finally {
    await context.close();
  }
}

describe("the page", () => {
  it(
    "offers text boxes and tick boxes, shows a diff of what changed, unticks the confirm box on every edit, and Accept sends exactly the diff",
    async () => {
      await onCard(FORM, { viewport: { width: 390, height: 844 } }, async ({ page, card, session, requestId }) => {
        await card.getByTestId("prompt-edits").waitFor({ timeout: 15_000 });
        // The model's values as the form's defaults; a list is tick boxes only: no text box to add an entry.
        expect(await card.locator('[data-testid="prompt-edit"][data-field="subject"]').inputValue()).toBe("Quarterly report");
        expect(await card.locator('[data-testid="prompt-edit"][data-field="text"]').evaluate((e) => e.tagName)).toBe("TEXTAREA");
        expect(await card.locator('[data-testid="prompt-edit"][data-field="to"]').count()).toBe(0);
        const options = card.getByTestId("prompt-edit-option");
        expect(await options.evaluateAll((els) => els.map((e) => [e.getAttribute("data-value"), (e as unknown as { checked: boolean }).checked]))).toEqual(TO.map((v) => [v, true]));
        expect(await card.getByTestId("prompt-diff").isHidden()).toBe(true);

        await card.getByTestId("prompt-confirm").check();
        await card.locator('[data-testid="prompt-edit"][data-field="subject"]').fill("Q3 report");
        // The edit unticked the box: the tick comes after the last change.
        expect(await card.getByTestId("prompt-confirm").isChecked()).toBe(false);
        await card.locator('[data-testid="prompt-edit-option"][data-value="ada@example.com (name: Ada)"]').uncheck();
        expect(await card.getByTestId("prompt-diff-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-field")))).toEqual(["to", "subject"]);
        expect(await card.getByTestId("prompt-diff-removed").allTextContents()).toEqual(["ada@example.com (name: Ada)"]);
        expect(await card.getByTestId("prompt-diff-before").allTextContents()).toEqual(["Quarterly report"]);
        expect(await card.getByTestId("prompt-diff-after").allTextContents()).toEqual(["Q3 report"]);
        expect(await card.getByTestId("prompt-accept").textContent()).toBe("Accept with these changes");
        expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
        await page.screenshot({ path: join(SHOTS, "review-edit-diff.png"), fullPage: true });
        await card.getByTestId("prompt-confirm").check();
        await card.getByTestId("prompt-accept").click();
        await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
        expect((await poll(session.elicitationUrl, requestId)).body.content).toEqual({ confirm: true, to: ["bob@example.com"], subject: "Q3 report" });
        expect(await card.getByTestId("prompt-outcome").textContent()).toMatch(/^Accepted with changes to to, subject by /);
      });
    },
    BROWSER_TEST_MS,
  );

  it(
    "a pick-one field is a select of exactly its choices; a pick shows in the diff, and Accept sends it",
    async () => {
      await onCard(PICK_FORM, async ({ card, session, requestId }) => {
        await card.getByTestId("prompt-edits").waitFor({ timeout: 15_000 });
        const select = card.locator('[data-testid="prompt-edit"][data-field="destination"]');
        expect(await select.evaluate((e) => e.tagName)).toBe("SELECT");
        expect(await select.inputValue()).toBe("Archive");
        expect(await select.locator("option").evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value))).toEqual(FOLDERS);
        await card.getByTestId("prompt-confirm").check();
        await select.selectOption("Entwürfe/Größe & Maß");
        expect(await card.getByTestId("prompt-confirm").isChecked()).toBe(false);
        expect(await card.getByTestId("prompt-diff-before").allTextContents()).toEqual(["Archive"]);
        expect(await card.getByTestId("prompt-diff-after").allTextContents()).toEqual(["Entwürfe/Größe & Maß"]);
        await card.getByTestId("prompt-confirm").check();
        await card.getByTestId("prompt-accept").click();
        await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
        expect((await poll(session.elicitationUrl, requestId)).body.content).toEqual({ confirm: true, destination: "Entwürfe/Größe & Maß" });
      });
    },
    BROWSER_TEST_MS,
  );

  it(
    "a text box whose value holds characters the box would hide shows it again beside the box, marked as the card marks them, while it holds any",
    async () => {
      // A bidi override, a tag character, a braille blank, a zero-width space: the box draws none of them as itself.
      const hidden = "Hi Ada,\nPay \u202E0001$\u202C now\u{E0041}\u2800\u200B.";
      const form = { ...FORM, properties: { ...FORM.properties, text: { ...FORM.properties.text, default: hidden } } };
      await onCard(form, async ({ page, card, session, requestId }) => {
        await card.getByTestId("prompt-edits").waitFor({ timeout: 15_000 });
        const text = card.locator('[data-testid="prompt-edit"][data-field="text"]');
        const shown = card.locator('[data-testid="prompt-edit-visible"][data-field="text"]');
        // The box keeps the value as it will be sent; beside it, the same value with each hidden character as a code point.
        expect(await text.inputValue()).toBe(hidden);
        expect(await shown.isVisible()).toBe(true);
        expect(await shown.locator(".diff-value").innerText()).toBe("Hi Ada,\nPay \u27E6U+202E\u27E70001$\u27E6U+202C\u27E7 now\u27E6U+E0041\u27E7\u27E6U+2800\u27E7\u27E6U+200B\u27E7.");
        // A field with nothing hidden shows no second view.
        expect(await card.locator('[data-testid="prompt-edit-visible"][data-field="subject"]').isHidden()).toBe(true);
        await page.screenshot({ path: join(SHOTS, "review-edit-hidden-chars.png"), fullPage: true });
        // It follows the edit: a clean value hides it, a hidden character typed back shows it again; editing still works.
        await text.fill("Hi Ada,\nplease pay now.");
        expect(await shown.isHidden()).toBe(true);
        await text.fill("Hi Ada\u2060.");
        expect(await shown.locator(".diff-value").innerText()).toBe("Hi Ada\u27E6U+2060\u27E7.");
        await text.fill("Hi Ada, please pay now.");
        expect(await shown.isHidden()).toBe(true);
        await card.getByTestId("prompt-confirm").check();
        await card.getByTestId("prompt-accept").click();
        await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
        expect((await poll(session.elicitationUrl, requestId)).body.content).toEqual({ confirm: true, text: "Hi Ada, please pay now." });
      });
    },
    BROWSER_TEST_MS,
  );

  it(
    "an edit undone leaves no diff, and Accept sends the confirm box alone",
    async () => {
      await onCard(FORM, async ({ card, session, requestId }) => {
        await card.getByTestId("prompt-edits").waitFor({ timeout: 15_000 });
        const subject = card.locator('[data-testid="prompt-edit"][data-field="subject"]');
        await subject.fill("Something else");
        expect(await card.getByTestId("prompt-diff").isHidden()).toBe(false);
        await subject.fill("Quarterly report");
        expect(await card.getByTestId("prompt-diff").isHidden()).toBe(true);
        expect(await card.getByTestId("prompt-accept").textContent()).toBe("Accept");
        await card.getByTestId("prompt-confirm").check();
        await card.getByTestId("prompt-accept").click();
        await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
        expect((await poll(session.elicitationUrl, requestId)).body.content).toEqual({ confirm: true });
      });
    },
    BROWSER_TEST_MS,
  );
});
