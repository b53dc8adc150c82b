// Covers a request id used once per session for good (R-APPR-8): once its prompt is evicted from a full session the id is refused, so its old poll and one-prompt link never answer for another prompt; and the review page rebuilds a card whose request id comes back as another prompt.
import { expect, it } from "vitest";
import { decidePrompt, listPrompts } from "../../approvals/dev-api.mjs";
import { MAX_PENDING, MAX_PROMPTS } from "../../approvals/settings";
import { CARD_UPDATE_MS, chromiumForFile, gotoTraced } from "../e2e/browser";
import { createBody, createPrompt, mint, newPrompt, poll, reviewPage, tenAtATime, useApprovals } from "./helpers";

const svc = useApprovals();

const operator = svc.operator;

// 500 creates and 500 decisions against workerd on a shared 2-core machine, as issue26.unit.test.ts's eviction test.
const CAP_TIMEOUT_MS = 90_000;

it(
  "an evicted prompt's request id is refused when sent again, and its old poll and one-prompt link answer for nothing new",
  async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const body = createBody({ message: "Send 1,000,000 to the supplier?", meta: { "dev.strad/review-url": true } });
    const first = await createPrompt(elicitationUrl, body);
    expect(first.status).toBe(201);
    const requestId = (body._meta as Record<string, string>)["com.pulsemcp/request-id"] as string;
    const link = ((await first.json()) as { _meta: Record<string, string> })._meta["dev.strad/review-url"] as string;
    await decidePrompt(sessionId, requestId, "decline", operator());
    // Fill the session with settled prompts until the first one is the oldest settled and is dropped for a new one.
    let kept = 1;
    while (kept <= MAX_PROMPTS) {
      const n = Math.min(MAX_PENDING - 1, MAX_PROMPTS + 1 - kept);
      const ids = await tenAtATime(n, () => newPrompt(elicitationUrl));
      await tenAtATime(ids.length, (i) => decidePrompt(sessionId, ids[i] as string, "decline", operator()));
      kept += n;
    }
    expect((await poll(elicitationUrl, requestId)).status, "R-APPR-17: the first prompt was evicted").toBe(404);

    const again = await createPrompt(elicitationUrl, createBody({ requestId, message: "Check the weather?" }));
    expect(again.status, "R-APPR-8: a request id is used once per session, for good").toBe(409);
    expect(((await again.json()) as { error: string }).error).toBe("this request id was already used in this session: each prompt needs a new one");
    // Nothing answers for the id: not its poll, not its old link's page, JSON or decision.
    expect((await poll(elicitationUrl, requestId)).status).toBe(404);
    const page = await reviewPage(link);
    expect(page.response.status).toBe(404);
    expect((await fetch(`${link}/list`)).status).toBe(404);
    expect((await listPrompts(sessionId, operator())).map((p) => p.requestId)).not.toContain(requestId);
    // A new id is still taken in the full session.
    expect((await createPrompt(elicitationUrl, createBody())).status).toBe(201);
  },
  CAP_TIMEOUT_MS,
);

const chromium = chromiumForFile();

it("the review page rebuilds a card when the prompt behind its request id is another one, and nothing ticked on the old card carries over", async () => {
  const { elicitationUrl, reviewUrl } = await mint(svc.origin);
  const requestId = await newPrompt(elicitationUrl, { message: "Send the report to ada@example.com?" });
  const context = await chromium.browser.newContext();
  try {
    const page = await context.newPage();
    // The service no longer serves two prompts under one id: the page is shown one anyway, as a service that reused an
    // id would, by rewriting its refresh once the person has ticked the box.
    let swap = false;
    await page.route("**/list", async (route) => {
      const response = await route.fetch();
      const json = (await response.json()) as { prompts: { requestId: string; createdAt: number }[] };
      if (swap) {
        for (const p of json.prompts) if (p.requestId === requestId) p.createdAt += 1;
      }
      await route.fulfill({ response, json });
    });
    // The card's own fetch of the prompt whole: the other prompt's message, under the same id.
    await page.route(`**/prompts/${requestId}`, async (route) => {
      const response = await route.fetch();
      const json = (await response.json()) as { prompt: { createdAt: number; message: string } };
      if (swap) {
        json.prompt.createdAt += 1;
        json.prompt.message = "Send the report to mallory@example.com?";
      }
      await route.fulfill({ response, json });
    });
    await gotoTraced(page, reviewUrl);
    const card = page.locator(`[data-testid="prompt"][data-request-id="${requestId}"]`);
    await card.getByTestId("prompt-message").waitFor({ timeout: 15_000 });
    await card.getByTestId("prompt-confirm").check();
    swap = true;
    await expect.poll(async () => card.getByTestId("prompt-line").allTextContents(), { timeout: CARD_UPDATE_MS }).toEqual(["Send the report to mallory@example.com?"]);
    expect(await page.locator(`[data-testid="prompt"][data-request-id="${requestId}"]`).count()).toBe(1);
    expect(await card.getByTestId("prompt-confirm").isChecked(), "the tick was given to another prompt").toBe(false);
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
  } finally {
    await context.close();
  }
}, 60_000);
