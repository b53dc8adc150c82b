// Covers the review page's cost per refresh: the list it polls every 2 s carries no prompt's message or form (100
// pending prompts with 48 KiB messages and 64 KiB defaults stay under 64 KiB), each card's message and form come whole
// from a per-prompt route held to the page's own session (or its one prompt), and in Chromium a card's message and
// fields come from that fetch, with Accept disabled until it arrived.
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES, MAX_SCHEMA_BYTES } from "../../approvals/prompt";
import { MAX_PENDING } from "../../approvals/settings";
import { CARD_UPDATE_MS, chromiumForFile, gotoTraced } from "../e2e/browser";
import { createBody, createPrompt, decide, mint, newPrompt, poll, requestIdOf, reviewPage, useApprovals } from "./helpers";

const svc = useApprovals();

/**
 * What one refresh of the list may weigh with every pending prompt's message and form at their caps: 100 messages of
 * 48 KiB are 4.9 MB and 100 forms of 64 KiB 6.4 MB, where a prompt's summary is about 300 bytes.
 */
const LIST_BOUND_BYTES = 64 * 1024;

/** A message at its cap, tagged: what the list must not carry. */
const bigMessage = (tag: string) => `${tag}:${"m".repeat(MAX_MESSAGE_BYTES - tag.length - 1)}`;

/** A form at the schema's byte cap: a subject and a mail body whose default fills the rest. */
function bigForm(tag: string): Record<string, unknown> {
  const schema = {
    type: "object",
    properties: {
      subject: { type: "string", title: "Subject", maxLength: 200, default: `Report ${tag}` },
      text: { type: "string", title: "Body (plain text)", maxLength: 1_000_000, default: "" },
      confirm: { type: "boolean", title: "Send this email", description: "Tick to send" },
    },
    required: ["confirm"],
  };
  schema.properties.text.default = `${tag}:${"x".repeat(MAX_SCHEMA_BYTES - JSON.stringify(schema).length - tag.length - 1)}`;
  expect(JSON.stringify(schema).length).toBe(MAX_SCHEMA_BYTES);
  return schema;
}

async function createWith(elicitationUrl: string, schema: Record<string, unknown>, meta: Record<string, unknown> = {}, message?: string) {
  const body = { ...createBody({ meta, message }), requestedSchema: schema };
  const response = await createPrompt(elicitationUrl, body);
  expect(response.status).toBe(201);
  return { requestId: requestIdOf(body), answer: (await response.json()) as { _meta?: Record<string, string> } };
}

type Form = { prompt: { requestId: string; createdAt: number; message: string; confirm: { title: string | null }; fields: { name: string; default: unknown }[] } };

describe("the list and the per-prompt form", () => {
  it("the 2-second list stays under 64 KiB with 100 pending prompts whose messages are 48 KiB and forms carry 64 KiB defaults, and carries neither", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    for (let from = 0; from < MAX_PENDING; from += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => createWith(elicitationUrl, bigForm(`p${from + i}`), {}, bigMessage(`p${from + i}`))));
    }
    const response = await fetch(`${reviewUrl}/list`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.length, `R-APPR-17: the list weighs ${text.length} bytes`).toBeLessThan(LIST_BOUND_BYTES);
    expect(text).not.toContain("m".repeat(64));
    const body = JSON.parse(text) as { prompts: Record<string, unknown>[] };
    expect(body.prompts.filter((p) => p.status === "pending")).toHaveLength(MAX_PENDING);
    for (const p of body.prompts) {
      expect(p).not.toHaveProperty("fields");
      expect(p).not.toHaveProperty("requestedSchema");
      expect(p).not.toHaveProperty("message");
      expect(p).toMatchObject({ requestId: expect.any(String), createdAt: expect.any(Number), edited: [] });
    }
  }, 120_000);

  it("a prompt's message and form come whole, with its defaults, from its own route for its session only, and reading it decides nothing", async () => {
    const a = await mint(svc.origin);
    const b = await mint(svc.origin);
    const schema = bigForm("a");
    const { requestId, answer } = await createWith(a.elicitationUrl, schema, { "dev.strad/review-url": true }, bigMessage("a"));
    const other = await newPrompt(a.elicitationUrl);
    const mine = await fetch(`${a.reviewUrl}/prompts/${requestId}`);
    expect(mine.status).toBe(200);
    expect(mine.headers.get("cache-control")).toBe("no-store");
    const text = await mine.text();
    const form = JSON.parse(text) as Form;
    const properties = schema.properties as Record<string, { default?: string }>;
    expect(form.prompt.requestId).toBe(requestId);
    expect(form.prompt.message).toBe(bigMessage("a"));
    expect(form.prompt.confirm.title).toBe("Send this email");
    expect(form.prompt.fields.map((f) => [f.name, f.default])).toEqual([
      ["subject", properties.subject?.default],
      ["text", properties.text?.default],
    ]);
    // Nothing secret in it: not the review key, the session token or the page's CSRF token.
    const key = new URL(a.reviewUrl).pathname.split("/")[2] as string;
    const token = a.elicitationUrl.split("/").at(-2) as string;
    const { csrf } = await reviewPage(a.reviewUrl);
    for (const secret of [key, token, csrf]) expect(text).not.toContain(secret);
    // Another session's page, an unknown key and an unknown id get nothing.
    expect((await fetch(`${b.reviewUrl}/prompts/${requestId}`)).status).toBe(404);
    expect((await fetch(`${a.reviewUrl.replace(key, `${key.slice(0, -2)}xx`)}/prompts/${requestId}`)).status).toBe(404);
    expect((await fetch(`${a.reviewUrl}/prompts/${crypto.randomUUID()}`)).status).toBe(404);
    // The one-prompt page reads its own prompt's form and no other.
    const link = answer._meta?.["dev.strad/review-url"] as string;
    const viaLink = ((await (await fetch(`${link}/prompts/${requestId}`)).json()) as Form).prompt;
    expect(viaLink.fields).toHaveLength(2);
    expect(viaLink.message).toBe(bigMessage("a"));
    expect((await fetch(`${link}/prompts/${other}`)).status).toBe(404);
    // A read decides nothing, and no other method on the route does either.
    expect(
      (await fetch(`${a.reviewUrl}/prompts/${requestId}`, { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: '{"action":"accept","confirm":true}' }))
        .status,
    ).toBe(404);
    expect((await poll(a.elicitationUrl, requestId)).body.action).toBe("pending");
  });
});

const chromium = chromiumForFile();

it("a card's message and fields come from the prompt's own fetch, and Accept is not enabled before it arrived", async () => {
  const { elicitationUrl, reviewUrl } = await mint(svc.origin);
  const schema = bigForm("card");
  const { requestId } = await createWith(elicitationUrl, schema, {}, "Send the card?\nTo: card@example.com");
  const context = await chromium.browser.newContext();
  try {
    const page = await context.newPage();
    let release: () => void = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    let asked = 0;
    const listed: string[] = [];
    await page.route(`**/prompts/${requestId}`, async (route) => {
      asked += 1;
      await released;
      await route.continue();
    });
    page.on("response", (r) => {
      if (new URL(r.url()).pathname.endsWith("/list")) void r.text().then((t) => listed.push(t));
    });
    await gotoTraced(page, reviewUrl);
    const card = page.locator(`[data-testid="prompt"][data-request-id="${requestId}"]`);
    await card.getByTestId("prompt-message-loading").waitFor({ timeout: 15_000 });
    await expect.poll(() => asked, { timeout: CARD_UPDATE_MS }).toBeGreaterThan(0);
    // The prompt is held back: the card says it is loading, shows no message, and nothing can be ticked or accepted.
    expect(await card.getByTestId("prompt-message").count()).toBe(0);
    expect(await card.getByTestId("prompt-edit").count()).toBe(0);
    expect(await card.getByTestId("prompt-confirm").isDisabled()).toBe(true);
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
    await expect.poll(() => listed.length, { timeout: CARD_UPDATE_MS }).toBeGreaterThan(0);
    expect(
      listed.every((t) => !t.includes("card:xxx") && !t.includes("card@example.com")),
      "the list carries no default and no message",
    ).toBe(true);
    release();
    await card.getByTestId("prompt-message").waitFor({ timeout: CARD_UPDATE_MS });
    expect(await card.getByTestId("prompt-message").innerText()).toContain("To: card@example.com");
    expect(await card.getByTestId("prompt-message-loading").count()).toBe(0);
    const properties = schema.properties as Record<string, { default?: string }>;
    const text = card.locator('[data-testid="prompt-edit"][data-field="text"]');
    await text.waitFor({ timeout: CARD_UPDATE_MS });
    expect(await text.inputValue()).toBe(properties.text?.default);
    expect(await card.locator('[data-testid="prompt-edit"][data-field="subject"]').inputValue()).toBe("Report card");
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
    await card.getByTestId("prompt-confirm").check();
    expect(await card.getByTestId("prompt-accept").isEnabled()).toBe(true);
    await card.getByTestId("prompt-accept").click();
    await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
    expect((await poll(elicitationUrl, requestId)).body.content).toEqual({ confirm: true });
  } finally {
    await context.close();
  }
}, 60_000);

it("a card whose prompt cannot be fetched says so, shows no message and cannot be accepted; the next refresh fetches it, and a settled prompt's card shows its message too", async () => {
  const { elicitationUrl, reviewUrl } = await mint(svc.origin);
  const settled = await newPrompt(elicitationUrl, { message: "Settled before the page opened?\nTo: old@example.com" });
  const { csrf } = await reviewPage(reviewUrl);
  expect((await decide(reviewUrl, settled, "decline", { csrf })).status).toBe(200);
  const pending = await newPrompt(elicitationUrl, { message: "Send the report?\nTo: new@example.com" });
  const context = await chromium.browser.newContext();
  try {
    const page = await context.newPage();
    // The pending prompt's own fetch fails until it is let through: as a dropped connection or a 500 would.
    let failing = true;
    let failed = 0;
    await page.route(`**/prompts/${pending}`, async (route) => {
      if (!failing) return route.continue();
      failed += 1;
      return route.fulfill({ status: 500, contentType: "application/json", body: '{"error":"down"}' });
    });
    await gotoTraced(page, reviewUrl);
    const old = page.locator(`[data-testid="prompt"][data-request-id="${settled}"]`);
    await old.getByTestId("prompt-message").waitFor({ timeout: 15_000 });
    expect(await old.getByTestId("prompt-message").innerText()).toContain("To: old@example.com");
    expect(await old.getAttribute("data-status")).toBe("decline");
    const card = page.locator(`[data-testid="prompt"][data-request-id="${pending}"]`);
    await expect.poll(() => failed, { timeout: CARD_UPDATE_MS }).toBeGreaterThan(0);
    await expect.poll(async () => card.getByTestId("prompt-message-loading").innerText(), { timeout: CARD_UPDATE_MS }).toBe("The request could not be loaded; retrying.");
    expect(await card.getByTestId("prompt-message").count()).toBe(0);
    expect(await card.getByTestId("prompt-confirm").isDisabled()).toBe(true);
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
    failing = false;
    await card.getByTestId("prompt-message").waitFor({ timeout: CARD_UPDATE_MS });
    expect(await card.getByTestId("prompt-message").innerText()).toContain("To: new@example.com");
    await card.getByTestId("prompt-confirm").check();
    expect(await card.getByTestId("prompt-accept").isEnabled()).toBe(true);
  } finally {
    await context.close();
  }
}, 60_000);
