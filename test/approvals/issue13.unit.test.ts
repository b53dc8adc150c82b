// Covers issue 13 #17 and #14 on the approval service: a decision without the CSRF header, a decision racing the expiry alarm (held back with DEV_ALARM_DELAY_MS), the per-session prompt caps (as issue 26 changed them), the review list's paging, and dismissing an abandoned prompt.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decidePrompt, listPrompts } from "../../approvals/dev-api.mjs";
import { MAX_PENDING, MAX_PROMPTS, REVIEW_RECENT, readSettings } from "../../approvals/settings";
import { createBody, createPrompt, DEV_OPERATOR_TOKEN, decide, mint, newPrompt, poll, type Running, reviewPage, START_TIMEOUT_MS, sleep, startApprovals } from "./helpers";

let svc: Running;
beforeAll(async () => {
  // The expiry alarm runs a minute late: only a check at decision time can find a prompt expired.
  svc = await startApprovals({ DEV_ALARM_DELAY_MS: "60000" });
}, START_TIMEOUT_MS);
afterAll(async () => {
  await svc?.stop();
});

const operator = () => ({ origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN });

/** A POST carrying exactly the headers given (node:http adds no Origin, Sec-Fetch-Site or CSRF header of its own). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: Number(target.port), path: target.pathname, method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function dismiss(reviewUrl: string, requestId: string, csrf: string) {
  const response = await fetch(`${reviewUrl}/prompts/${requestId}/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify({ action: "dismiss" }),
  });
  return { status: response.status, body: (await response.json()) as { error?: string; prompt?: { status: string; decidedBy: string | null } } };
}

describe("issue 13 #17", () => {
  it("issue 13 #17a: refuses a decision that carries no x-csrf-token header at all, and no Origin or Sec-Fetch-Site", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const bare = await rawPost(`${reviewUrl}/prompts/${id}/decision`, { "content-type": "application/json" }, JSON.stringify({ action: "accept", confirm: true }));
    expect(bare.status, "R-APPR-6: a decision without the page's CSRF header is refused").toBe(403);
    expect(bare.body).toMatch(/form token is missing or stale/);
    expect((await poll(elicitationUrl, id)).body.action, "R-APPR-6: a refused decision leaves the prompt pending").toBe("pending");
  });

  it("issue 13 #17b: refuses as expired a decision that lands after the expiry but before the expiry alarm ran", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl, { expiresInMs: 1200 });
    // The page (and its token) is read while the prompt is pending; nothing reads the prompt between its expiry and the decision.
    const { csrf } = await reviewPage(reviewUrl);
    await sleep(1700);
    const late = await decide(reviewUrl, id, "accept", { csrf });
    expect(late.status, "R-APPR-16: a decision after the expiry is refused even while the expiry alarm has not run").toBe(409);
    expect(late.body.prompt?.status).toBe("expired");
    expect(late.body.error).toMatch(/Too late: this prompt expired .* can no longer be decided/);
    expect((await poll(elicitationUrl, id)).body.action, "R-APPR-16: the poll after a late decision says expired").toBe("expired");
  }, 20_000);

  it("issue 13 #17b: takes DEV_ALARM_DELAY_MS only in dev mode, within bounds, naming the variable", () => {
    const base = { SESSION_SECRET: "a-test-secret-that-is-long-enough-0123456789" };
    expect(readSettings({ ...base, DEV_MODE: "true", DEV_ALARM_DELAY_MS: "60000" })).toMatchObject({ ok: true, settings: { devAlarmDelayMs: 60_000 } });
    expect(readSettings(base)).toMatchObject({ ok: true, settings: { devAlarmDelayMs: 0 } });
    expect(readSettings({ ...base, DEV_ALARM_DELAY_MS: "60000" })).toMatchObject({ ok: false, problems: [expect.stringMatching(/DEV_ALARM_DELAY_MS .*needs DEV_MODE/)] });
    expect(readSettings({ ...base, DEV_MODE: "true", DEV_ALARM_DELAY_MS: "-1" })).toMatchObject({ ok: false, problems: [expect.stringMatching(/^DEV_ALARM_DELAY_MS/)] });
  });
});

describe("issue 13 #14", () => {
  // Issue 26 changed the second half on purpose: a full session now drops its oldest settled prompt instead of refusing.
  it("issue 13 #14: caps a session at 100 pending prompts, naming the cap, and keeps taking prompts past 500 kept", async () => {
    expect([MAX_PENDING, MAX_PROMPTS]).toEqual([100, 500]);
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const batch = (expiresInMs?: number) => Promise.all(Array.from({ length: MAX_PENDING }, () => newPrompt(elicitationUrl, expiresInMs === undefined ? {} : { expiresInMs })));
    const first = await batch();
    const overPending = await createPrompt(elicitationUrl, createBody());
    expect(overPending.status, "R-APPR-9: a create past 100 pending prompts is refused").toBe(429);
    expect(((await overPending.json()) as { error: string }).error).toContain(`${MAX_PENDING} pending prompts`);
    await Promise.all(first.map((id) => decidePrompt(sessionId, id, "decline", operator())));
    // Three batches that expire on their own: settled rows still count toward the total.
    // Each prompt expires 2.5 s after its create landed, and every create of a batch landed before the batch answered:
    // the next batch starts once 2.5 s have passed since then. (Counted from before the batch, a slow landing under
    // load left the batch's last prompts pending when the next began, and a create was refused for them.)
    for (let i = 0; i < 3; i++) {
      await batch(2500);
      await sleep(2500 + 100);
    }
    const last = await batch();
    await decidePrompt(sessionId, last[0] as string, "decline", operator());
    const overTotal = await createPrompt(elicitationUrl, createBody());
    expect(overTotal.status, `R-APPR-17: a create past ${MAX_PROMPTS} kept prompts is taken while fewer than 100 are pending`).toBe(201);
    expect(await listPrompts(sessionId, operator()), `R-APPR-17: the session still keeps ${MAX_PROMPTS}`).toHaveLength(MAX_PROMPTS);
  }, 90_000);

  it("issue 13 #14: gives the review page every pending prompt and only the 20 most recent settled ones, counting the rest", async () => {
    expect(REVIEW_RECENT).toBe(20);
    const { elicitationUrl, reviewUrl, sessionId } = await mint(svc.origin);
    const ids: string[] = [];
    for (let i = 0; i < REVIEW_RECENT + 5; i++) ids.push(await newPrompt(elicitationUrl));
    const settled = ids.slice(0, REVIEW_RECENT + 3);
    for (const id of settled) {
      await decidePrompt(sessionId, id, "decline", operator());
      await sleep(2);
    }
    const body = (await (await fetch(`${reviewUrl}/list`)).json()) as { prompts: { requestId: string; status: string }[]; olderSettled: number };
    const shown = body.prompts.map((p) => p.requestId);
    expect(
      body.prompts
        .filter((p) => p.status === "pending")
        .map((p) => p.requestId)
        .sort(),
      "R-APPR-17: every pending prompt is on the page",
    ).toEqual(ids.slice(REVIEW_RECENT + 3).sort());
    expect(
      body.prompts.filter((p) => p.status !== "pending"),
      `R-APPR-17: at most ${REVIEW_RECENT} settled prompts are on the page`,
    ).toHaveLength(REVIEW_RECENT);
    expect(shown, "R-APPR-17: the settled prompts shown are the most recent").not.toContain(settled[0]);
    expect(shown).toContain(settled.at(-1));
    expect(body.olderSettled).toBe(3);
  }, 30_000);

  it("issue 13 #14: lets a person dismiss an abandoned pending prompt with the page's CSRF token; a poll then answers cancel", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    expect((await dismiss(reviewUrl, id, "")).status, "R-APPR-6: a dismiss needs the CSRF token like a decision").toBe(403);
    const bare = await rawPost(`${reviewUrl}/prompts/${id}/decision`, { "content-type": "application/json" }, JSON.stringify({ action: "dismiss" }));
    expect(bare.status, "R-APPR-6: a dismiss without the CSRF header is refused").toBe(403);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
    const ok = await dismiss(reviewUrl, id, csrf);
    expect(ok.status).toBe(200);
    expect(ok.body.prompt?.status).toBe("cancel");
    expect((await poll(elicitationUrl, id)).body, "R-APPR-18: a dismissed prompt answers the protocol's cancel, which never acts").toMatchObject({ action: "cancel", content: null });
    const after = await decide(reviewUrl, id, "accept", { csrf });
    expect(after.status, "R-APPR-7: a dismissed prompt is final").toBe(409);
    expect(after.body.error).toMatch(/already dismissed/);
    const decided = await newPrompt(elicitationUrl);
    expect((await decide(reviewUrl, decided, "accept", { csrf })).status).toBe(200);
    expect((await dismiss(reviewUrl, decided, csrf)).status, "R-APPR-7: a decided prompt cannot be dismissed").toBe(409);
    expect((await poll(elicitationUrl, decided)).body.action).toBe("accept");
  });
});
