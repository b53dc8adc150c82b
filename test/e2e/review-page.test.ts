// The whole flow in a real browser: a confirmed tool raised through the gateway appears on the approval
// service's review page; a person accepts (one write), declines (none) or lets it expire (none).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listPrompts, mintSession } from "../../approvals/dev-api.mjs";
import { bearer, connectLegacy, connectModern, FAKES, nothingMore, ROOT, recorder, TOKENS, textOf } from "./helpers";

const SHOTS = join(ROOT, "test-output", "screenshots");
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

afterAll(async () => {
  await browser?.close();
});

async function openReview(reviewUrl: string, width = 1280, height = 900): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(reviewUrl);
  await page.getByTestId("dev-mode-banner").waitFor();
  return page;
}

async function raise(slug: string, note: string, elicitationUrl: string) {
  const client = await connectLegacy(slug, { ...bearer(TOKENS.session), "x-elicitation-url": elicitationUrl });
  const result = client.callTool("demo_write", { note }).finally(() => client.close());
  return result;
}

const writesOf = async (note: string) => (await recorder.events()).filter((e) => e.kind === "demo_write" && e.note === note);

describe("the review page", () => {
  it("shows the prompt a confirmed tool raised; ticking the box and accepting lets exactly one write through", async () => {
    const session = await mintSession();
    const note = `accept-${Date.now()}`;
    const page = await openReview(session.reviewUrl);
    const call = raise("echo-confirmed", note, session.elicitationUrl);
    const card = page.getByTestId("prompt").first();
    await card.waitFor({ timeout: 15_000 });
    // The caller's value is shown as text on its own line, under the slug's heading.
    await expect.poll(async () => await card.getByTestId("prompt-message").innerText()).toContain(note);
    expect(await card.getByTestId("prompt-message").innerText()).toContain("echo-confirmed");
    await page.screenshot({ path: join(SHOTS, "review-pending.png"), fullPage: true });
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
    await card.getByTestId("prompt-confirm").check();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(textOf(result)).toBe("Recorded.");
    expect(await writesOf(note)).toHaveLength(1);
    await expect.poll(async () => card.getAttribute("data-status")).toBe("accept");
    await page.screenshot({ path: join(SHOTS, "review-accepted.png"), fullPage: true });
    // The Access service token travelled on the create and on every poll.
    const [prompt] = await listPrompts(session.sessionId);
    expect(prompt?.createdWithAccess).toBe(true);
    expect(prompt?.polls).toBeGreaterThan(0);
    expect(prompt?.accessPolls).toBe(prompt?.polls);
    await page.close();
  });

  it("declining on the page sends nothing", async () => {
    const session = await mintSession();
    const note = `decline-${Date.now()}`;
    const page = await openReview(session.reviewUrl, 390, 844);
    const call = raise("echo-confirmed", note, session.elicitationUrl);
    const card = page.getByTestId("prompt").first();
    await card.waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(SHOTS, "review-phone.png"), fullPage: true });
    await card.getByTestId("prompt-decline").click();
    const result = await call;
    expect(textOf(result)).toMatch(/declin/i);
    await nothingMore();
    expect(await writesOf(note)).toHaveLength(0);
    await page.close();
  });

  it("a prompt nobody answers expires: the page says so and nothing is written", async () => {
    const session = await mintSession();
    const note = `expire-${Date.now()}`;
    const page = await openReview(session.reviewUrl);
    // echo-brief's window is 6 s less its margin (4.5 s), so the prompt expires while the page watches.
    const call = raise("echo-brief", note, session.elicitationUrl);
    const card = page.getByTestId("prompt").first();
    await card.waitFor({ timeout: 15_000 });
    await expect.poll(async () => card.getAttribute("data-status"), { timeout: 15_000 }).toBe("expired");
    await page.screenshot({ path: join(SHOTS, "review-expired.png"), fullPage: true });
    const outcome = await call.then(
      (r) => textOf(r),
      (e: Error) => e.message,
    );
    expect(outcome).toMatch(/expired|timed out/i);
    await nothingMore();
    expect(await writesOf(note)).toHaveLength(0);
    await page.close();
  });

  it("a person approves a send_email on the page, and the Gmail fake records exactly that one message", async () => {
    const session = await mintSession();
    const subject = `Browser-approved ${Date.now()}`;
    const page = await openReview(session.reviewUrl);
    const client = await connectModern("gmail-rw-external", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client.callTool("send_email", { to: ["ada@example.com"], cc: ["bob@example.com"], subject, text: "Hello from the review page test." }).finally(() => client.close());
    const card = page.getByTestId("prompt").first();
    await card.waitFor({ timeout: 15_000 });
    const message = await card.getByTestId("prompt-message").innerText();
    expect(message).toContain("gmail-rw-external: This will send an email from person@example.com");
    expect(message).toContain("To: ada@example.com");
    expect(message).toContain(`Subject: ${subject}`);
    // The body is the caller's free text and is never shown.
    expect(message).not.toContain("Hello from the review page test.");
    await page.screenshot({ path: join(SHOTS, "review-send-email.png"), fullPage: true });
    await card.getByTestId("prompt-confirm").check();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);
    const outbox = ((await (await fetch(`${FAKES}/gmail/_fake/outbox`)).json()) as { subject: string; to: string[]; cc: string[] }[]).filter((m) => m.subject === subject);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ to: ["ada@example.com"], cc: ["bob@example.com"] });
    await page.close();
  });
});
