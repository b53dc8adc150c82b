// Covers issue 26 on the approval service, on its real Durable Object store (workerd through Miniflare): a full session drops its oldest settled prompt instead of refusing, the pending cap refuses with a status the kit reports alone, the person's action is matched exactly, every settled poll answer says when it became final, and the review page shows every blank code point of the one sanitiser as a code point.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decidePrompt, listPrompts } from "../../approvals/dev-api.mjs";
import { DEV_IDENTITY } from "../../approvals/person";
import { MAX_PENDING, MAX_PROMPTS, MIN_HISTORY } from "../../approvals/settings";
import { describeApprovalError, pollPrompt, requestApproval } from "../../bundles/kit/approval-client";
import { DECIDED_AT_META_KEY } from "../../contract/channel";
import { UNSAFE_CHARS } from "../../contract/text";
import { gotoTraced, launchChromium } from "../e2e/browser";
import { createBody, createPrompt, DEV_ACCESS_HEADERS, mint, newPrompt, poll, reviewPage, sleep, tenAtATime, useApprovals } from "./helpers";

const svc = useApprovals();

const operator = svc.operator;
const many = (n: number, elicitationUrl: string) => tenAtATime(n, () => newPrompt(elicitationUrl));

// The eviction test makes 500 creates and 500 decisions against workerd on a shared 2-core machine: about 10 s idle, so 90 s leaves room for load.
const CAP_TIMEOUT_MS = 90_000;

describe("issue 26: a full session keeps taking prompts; only pending ones are capped", () => {
  it(
    "issue 26: a full session takes a new prompt and drops its oldest settled one, never a pending one",
    async () => {
      expect([MAX_PENDING, MAX_PROMPTS, MIN_HISTORY]).toEqual([100, 500, 400]);
      const { elicitationUrl, sessionId } = await mint(svc.origin);
      // The oldest prompt of all stays pending throughout: age alone never evicts.
      const oldestPending = await newPrompt(elicitationUrl, { expiresInMs: 3_600_000 });
      const firstSettled = await newPrompt(elicitationUrl);
      await decidePrompt(sessionId, firstSettled, "decline", operator());
      await sleep(5);
      const secondSettled = await newPrompt(elicitationUrl);
      await decidePrompt(sessionId, secondSettled, "accept", operator());
      // History: batches decided at once (one pending prompt is held, so 99 at a time fit under the pending cap). Decisions,
      // not expiries, so nothing here races the clock on a busy machine; test/approvals/issue13.unit.test.ts fills with expiries.
      let kept = 3;
      while (kept < MAX_PROMPTS - 2) {
        const n = Math.min(MAX_PENDING - 1, MAX_PROMPTS - 2 - kept);
        const batch = await many(n, elicitationUrl);
        await tenAtATime(batch.length, (i) => decidePrompt(sessionId, batch[i] as string, "decline", operator()));
        kept += n;
      }
      // Just below the cap (498, then 499 kept): a create drops nothing.
      await newPrompt(elicitationUrl);
      await newPrompt(elicitationUrl);
      const atCap = await listPrompts(sessionId, operator());
      expect(atCap, "R-APPR-17: the session is at its cap").toHaveLength(MAX_PROMPTS);
      expect((await poll(elicitationUrl, firstSettled)).body.action, "R-APPR-17: nothing was dropped before the cap").toBe("decline");

      // At the cap: the create is taken (201) and the oldest settled prompt, not the older pending one, makes room.
      const past = await createPrompt(elicitationUrl, createBody());
      expect(past.status, "R-APPR-17: a full session takes a new prompt").toBe(201);
      const afterOne = await listPrompts(sessionId, operator());
      expect(afterOne).toHaveLength(MAX_PROMPTS);
      expect(
        afterOne.map((p) => p.requestId),
        "R-APPR-17: the oldest settled prompt is gone from the history",
      ).not.toContain(firstSettled);
      expect((await poll(elicitationUrl, firstSettled)).status, "R-APPR-17: an evicted prompt's poll answers 404").toBe(404);
      expect((await poll(elicitationUrl, secondSettled)).body.action, "R-APPR-17: only one prompt made room for one").toBe("accept");
      expect((await poll(elicitationUrl, oldestPending)).body.action, "R-APPR-17: a pending prompt is never dropped, however old").toBe("pending");

      // The next create drops the next oldest settled one, and so on; the pending ones stay.
      expect((await createPrompt(elicitationUrl, createBody())).status).toBe(201);
      expect((await poll(elicitationUrl, secondSettled)).status).toBe(404);
      const after = await listPrompts(sessionId, operator());
      expect(after).toHaveLength(MAX_PROMPTS);
      expect(after.filter((p) => p.status === "pending").map((p) => p.requestId)).toContain(oldestPending);
      expect(after.filter((p) => p.status === "pending")).toHaveLength(5);
    },
    CAP_TIMEOUT_MS,
  );

  it(
    "issue 26: at the pending cap a create is refused with a clear 429, nothing pending is dropped, and the kit's client sees only the status",
    async () => {
      const { elicitationUrl, sessionId } = await mint(svc.origin);
      const ids = await many(MAX_PENDING - 1, elicitationUrl);
      // The value just below the cap is taken: the 100th pending prompt.
      const last = await createPrompt(elicitationUrl, createBody());
      expect(last.status, "R-APPR-9: the 100th pending prompt is taken").toBe(201);
      const refused = await createPrompt(elicitationUrl, createBody());
      expect(refused.status, "R-APPR-9: the 101st pending prompt is refused").toBe(429);
      const reason = ((await refused.json()) as { error: string }).error;
      expect(reason).toBe(`this session already holds ${MAX_PENDING} pending prompts, the most it takes at once: wait for a decision or an expiry`);

      // The bundle's client (bundles/kit/approval-client.ts) against the same refusal: a status, never the body.
      const result = await requestApproval({
        url: elicitationUrl,
        headers: { ...DEV_ACCESS_HEADERS },
        message: "demo: This will record a note.",
        toolName: "demo_write",
        deadline: Date.now() + 10_000,
        signal: new AbortController().signal,
        pollIntervalMs: 50,
      });
      expect(result).toEqual({ ok: false, error: { code: "APPROVAL_HTTP", status: 429 } });
      if (!result.ok) expect(describeApprovalError(result.error)).toBe("the approval service answered HTTP 429");
      expect(JSON.stringify(result)).not.toContain("pending prompts");

      const kept = await listPrompts(sessionId, operator());
      expect(
        kept.filter((p) => p.status === "pending"),
        "R-APPR-9: a refusal drops no pending prompt",
      ).toHaveLength(MAX_PENDING);
      expect(kept.map((p) => p.requestId)).toEqual(expect.arrayContaining(ids));
      // One decision frees one place, and only one.
      await decidePrompt(sessionId, ids[0] as string, "decline", operator());
      expect((await createPrompt(elicitationUrl, createBody())).status).toBe(201);
      expect((await createPrompt(elicitationUrl, createBody())).status).toBe(429);
    },
    CAP_TIMEOUT_MS,
  );
});

/** A decision as the page's script sends it, with any action and confirm value. */
async function rawDecision(reviewUrl: string, requestId: string, csrf: string, body: unknown) {
  const response = await fetch(`${reviewUrl}/prompts/${requestId}/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { error?: string; prompt?: { status: string; decidedAt: number | null } } };
}

describe("issue 26: the person's action is matched exactly", () => {
  const variants: [string, unknown][] = [
    ["ACCEPT", "ACCEPT"],
    ["Accept", "Accept"],
    ["a leading space", " accept"],
    ["a trailing space", "accept "],
    ["a trailing line feed", "accept\n"],
    ["a zero-width space", "accept\u200b"],
    ["fullwidth letters", "\uff41\uff43\uff43\uff45\uff50\uff54"],
    ["a Cyrillic a", "\u0430ccept"],
    ["a list", ["accept"]],
    ["DECLINE", "DECLINE"],
    ["Dismiss", "Dismiss"],
  ];

  it.each(variants)("refuses a decision whose action is %s, and the prompt stays pending", async (_label, action) => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    const refused = await rawDecision(reviewUrl, id, csrf, { action, confirm: true });
    expect(refused.status, "R-APPR-7: only the exact action is taken").toBe(400);
    expect(refused.body.error).toBe('action must be "accept", "decline" or "dismiss"');
    expect((await poll(elicitationUrl, id)).body).toMatchObject({ action: "pending", content: null });
    // The exact word still decides it.
    expect((await rawDecision(reviewUrl, id, csrf, { action: "accept", confirm: true })).status).toBe(200);
    expect((await poll(elicitationUrl, id)).body).toMatchObject({ action: "accept", content: { confirm: true } });
  });

  it('refuses an accept whose confirm is "true", 1 or absent rather than true, and the prompt stays pending', async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    for (const confirm of ["true", 1, undefined]) {
      expect((await rawDecision(reviewUrl, id, csrf, { action: "accept", confirm })).status).toBe(400);
    }
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });

  it("refuses the operator API's dev decision unless its action is exactly accept or decline", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    for (const action of ["ACCEPT", "Accept", " accept", "decline "]) {
      await expect(decidePrompt(sessionId, id, action as "accept", operator())).rejects.toMatchObject({ status: 400 });
    }
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });
});

describe("issue 26: a settled poll answer says when it became final", () => {
  const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

  it.each([
    ["accept", { action: "accept", confirm: true }],
    ["decline", { action: "decline" }],
    ["cancel", { action: "dismiss" }],
  ])("answers %s with _meta dev.strad/decided-at, the store's time of the decision, and the kit reads it", async (expected, decision) => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const pending = await poll(elicitationUrl, id);
    expect(pending.body._meta?.[DECIDED_AT_META_KEY], "R-APPR-19: a pending prompt has no decided-at").toBeUndefined();
    const { csrf } = await reviewPage(reviewUrl);
    const before = Date.now();
    const decided = await rawDecision(reviewUrl, id, csrf, decision);
    const after = Date.now();
    expect(decided.status).toBe(200);
    const decidedAt = decided.body.prompt?.decidedAt as number;
    const answer = await poll(elicitationUrl, id);
    expect(answer.body.action).toBe(expected);
    const stamp = answer.body._meta?.[DECIDED_AT_META_KEY] as string;
    expect(stamp, "R-APPR-19: ISO-8601 in UTC").toMatch(ISO_UTC);
    expect(stamp, "R-APPR-19: the store's time of the decision").toBe(new Date(decidedAt).toISOString());
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(stamp)).toBeLessThanOrEqual(after + 1000);
    // A later poll says the same: the time is the decision's, not the poll's.
    await sleep(20);
    expect((await poll(elicitationUrl, id)).body._meta?.[DECIDED_AT_META_KEY]).toBe(stamp);
    // The kit's one-poll reader (Approval Flow's) hands it on as decidedAt.
    const read = await pollPrompt({ url: elicitationUrl, headers: { ...DEV_ACCESS_HEADERS }, requestId: id, waitS: 0, deadline: Date.now() + 10_000, signal: new AbortController().signal });
    expect(read).toMatchObject({ ok: true, answer: expected === "accept" ? "accept" : expected, approver: DEV_IDENTITY, decidedAt: decidedAt });
  });

  it("answers expired with decided-at at the expiry itself, alarm or not", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl, { expiresInMs: 600 });
    await sleep(800);
    const answer = await poll(elicitationUrl, id);
    expect(answer.body.action).toBe("expired");
    expect(answer.body._meta?.[DECIDED_AT_META_KEY], "R-APPR-19: an expiry became final at the expiry").toBe(answer.body._meta?.["com.pulsemcp/expires-at"]);
    expect(answer.body._meta?.["dev.strad/approver"], "an expiry names nobody").toBeUndefined();
  });
});

describe("issue 26: the review page shows the one sanitiser's characters as code points", () => {
  it("serves its script with contract/text.ts's class written in, and no placeholder left", async () => {
    // approvals/review.routes.ts imports the script as text through wrangler; read here as a file, as it is bundled.
    const file = readFileSync(new URL("../../approvals/page/review.client.js", import.meta.url), "utf8");
    const placeholder = '"__STRAD_UNSAFE_CHARS__"';
    expect(file, "the file holds the placeholder and no list of its own").toContain(`var INVISIBLE_CHARS = ${placeholder};`);
    const source = await (await fetch(`${svc.origin}/assets/review.js`)).text();
    expect(source).not.toContain(placeholder);
    expect(source).toBe(file.replace(placeholder, () => JSON.stringify(UNSAFE_CHARS)));
  });

  // Chromium plus one page load on a busy machine: launching takes 1-5 s, the page's first refresh is immediate.
  it("shows U+2800 and every other blank-looking code point as a code point, in Chromium", async () => {
    const points = [
      0x2800, 0x3164, 0x115f, 0x1160, 0xffa0, 0x2000, 0x200a, 0x205f, 0x3000, 0x180e, 0xfeff, 0x00ad, 0x034f, 0x17b4, 0x17b5, 0x2060, 0x2064, 0xe0041, 0xe007f, 0xfe0f, 0x16fe4, 0x1d159, 0x1d173,
      0x0600, 0x0009,
    ];
    const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
    const message = points.map((cp) => `${hex(cp)}: a${String.fromCodePoint(cp)}b`).join("\n");
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    await newPrompt(elicitationUrl, { message });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await gotoTraced(page, reviewUrl);
      const card = page.getByTestId("prompt").first();
      await card.getByTestId("prompt-message").waitFor({ timeout: 15_000 });
      const lines = await card.getByTestId("prompt-line").allTextContents();
      expect(lines).toEqual(points.map((cp) => `${hex(cp)}: a\u27e6${hex(cp)}\u27e7b`));
    } finally {
      await browser.close();
    }
  }, 60_000);
});
