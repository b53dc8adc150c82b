// Issue 15 #3 in a real browser: the largest legal send_email (every limit of the tool at its maximum: 50
// recipients with 64-character names in 3-byte characters, a 900-character subject, a reply, 10 attachments
// named in 120 4-byte characters) raised through the gateway on gmail-rw-external is shown whole on the real
// approval service's review page, a person approves it by clicking, and the Gmail fake receives that one
// message (docs/rules.md R-LIMIT-3). Before, the approval service refused any prompt over 4 KiB.
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { describe, expect, it } from "vitest";
import { listPrompts, mintSession } from "../../approvals/dev-api.mjs";
import { MAX_PROMPT_BYTES } from "../../contract/elicitation";
import { largestSend, largestSendArgs } from "../bundles/google/largest-send";
import type { OutboxEntry } from "../fakes/gmail/store";
import { CARD_UPDATE_MS, chromiumForFile, gotoTraced, SHOTS } from "./browser";
import { bearer, connectModern, FAKES, TOKENS, textOf } from "./helpers";

const chromium = chromiumForFile();

/** The card's caller values as [label, value] pairs, in order, exactly as the page shows them. */
async function valuePairs(card: Locator): Promise<[string, string][]> {
  const labels = await card.getByTestId("prompt-value-label").allTextContents();
  const values = await card.getByTestId("prompt-value").allTextContents();
  return labels.map((label, i) => [label, values[i] ?? ""]);
}

const outbox = async () => (await (await fetch(`${FAKES}/gmail/_fake/outbox`)).json()) as OutboxEntry[];

/** "Name<address>" as the prompt shows it: the address first, then the name. */
function asShown(entry: string): string {
  const [, name, email] = /^(.*)<(.*)>$/.exec(entry) as RegExpExecArray;
  return `${email} (name: ${name})`;
}

describe("the largest legal send on the review page", () => {
  it("issue 15 #3: the largest legal send_email is shown whole on the review page, approved by a click, and the Gmail fake receives that one message", async () => {
    const session = await mintSession();
    const send = largestSend(undefined, Date.now().toString(36));
    const args = largestSendArgs(send, (i) => `${FAKES}/gmail/_fake/files/largest-${i}.bin?bytes=${send.attachmentBytes}`, "msg-person-2");
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await gotoTraced(page, session.reviewUrl);
    await page.getByTestId("dev-mode-banner").waitFor();

    const client = await connectModern("gmail-rw-external", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client.callTool("send_email", args, { timeout: 110_000 }).finally(() => client.close());
    call.catch(() => {});
    const card = page.getByTestId("prompt").first();
    // A call that ends before its card is shown (a refusal, a tool error) fails here with what it answered, not after
    // the card's wait runs out.
    const shown = card.getByTestId("prompt-values").waitFor({ timeout: 60_000 });
    const endedFirst: string | undefined = await Promise.race([
      shown.then(() => undefined),
      call.then(
        (r) => `its answer: ${textOf(r)}`,
        (error: unknown) => String(error),
      ),
    ]);
    if (endedFirst !== undefined) throw new Error(`send_email ended before its card was shown: ${endedFirst}`);

    // Stored as the bundle built it, and over the old 4 KiB cap.
    const [stored] = await listPrompts(session.sessionId);
    const bytes = new TextEncoder().encode(stored?.message ?? "").byteLength;
    expect(bytes).toBeGreaterThan(4096);
    expect(bytes).toBeLessThanOrEqual(MAX_PROMPT_BYTES);

    // Every value, whole, in its own labelled cell, in order; nothing cut.
    const [first, ...rest] = send.entries as [string, ...string[]];
    expect(await valuePairs(card)).toEqual([
      ["To:", asShown(first)],
      ...rest.map((entry): [string, string] => ["Bcc:", asShown(entry)]),
      ["Subject:", send.subject],
      ["In reply to message:", "msg-person-2"],
      ["Text body:", "23 B"],
      ...send.filenames.map((name): [string, string] => ["Attachment:", `${name} (application/octet-stream, 1024.0 KB)`]),
    ]);
    const message = await card.getByTestId("prompt-message").innerText();
    expect(message).toContain("gmail-rw-external: This will send an email from person@example.com to 50 recipient(s) with 10 attachment(s).");
    expect(message).not.toContain("[cut:");
    // No cell clips its text: every value wraps inside its box.
    const clipped = await card.evaluate((el) => [...el.querySelectorAll('[data-testid="prompt-value"]')].filter((v) => v.scrollWidth > v.clientWidth + 1).length);
    expect(clipped).toBe(0);
    await page.screenshot({ path: join(SHOTS, "review-largest-send.png"), fullPage: true });

    await card.getByTestId("prompt-confirm").check();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(textOf(result)).toMatch(/^Sent from person@example\.com: /);
    await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");

    const [sent, ...more] = (await outbox()).filter((m) => m.subject === send.subject);
    expect(more).toEqual([]);
    if (sent === undefined) throw new Error("the Gmail fake received no message with the approved subject");
    expect(sent.to).toEqual([asShown(first).split(" (name: ")[0]]);
    expect(sent.bcc).toEqual(rest.map((entry) => asShown(entry).split(" (name: ")[0]));
    expect(sent.attachments.map((a) => [a.filename, a.size])).toEqual(send.filenames.map((name) => [name, send.attachmentBytes]));
    expect(sent.via).toBe("upload-multipart");
    await page.close();
  });
});
