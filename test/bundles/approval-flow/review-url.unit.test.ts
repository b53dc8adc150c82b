// The reference approval service's side of Approval Flow's reviewUrl: a create that asks for it (META_REVIEW_URL: true
// in its _meta) is answered with the prompt's own review page under the same key; that page shows and decides that
// prompt alone, needs the page's CSRF token like the session's page, and refuses a late decision.
import { describe, expect, it } from "vitest";
import { META_REVIEW_URL } from "../../../contract/elicitation";
import { createBody, createPrompt, decide, mint, newPrompt, poll, requestIdOf, reviewPage, sleep, useApprovals } from "../../approvals/helpers";

const svc = useApprovals();

async function withReviewUrl(elicitationUrl: string, expiresInMs?: number): Promise<{ id: string; reviewUrl: string }> {
  const body = createBody({ meta: { [META_REVIEW_URL]: true }, expiresInMs });
  const response = await createPrompt(elicitationUrl, body);
  expect(response.status).toBe(201);
  const answer = (await response.json()) as { requestId: string; _meta: Record<string, string> };
  expect(answer.requestId).toBe(requestIdOf(body));
  return { id: answer.requestId, reviewUrl: answer._meta[META_REVIEW_URL] as string };
}

describe("a prompt's own review URL", () => {
  it("answers a create that asks for it with the prompt's own page under _meta, and one that does not with { requestId } alone", async () => {
    const { elicitationUrl, reviewUrl: sessionPage } = await mint(svc.origin);
    const { id, reviewUrl } = await withReviewUrl(elicitationUrl);
    expect(reviewUrl).toMatch(new RegExp(`^${svc.origin}/prompt/${id}/[0-9a-f]{32}\\.[A-Za-z0-9_-]{43}$`));
    // It shares nothing with the session's review key.
    expect(reviewUrl).not.toContain(sessionPage.split("/review/")[1] as string);
    const plain = createBody();
    expect(await (await createPrompt(elicitationUrl, plain)).json()).toEqual({ requestId: requestIdOf(plain) });
  });

  it("shows that prompt alone and decides it with the page's CSRF token; its key opens no other prompt", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const other = await newPrompt(elicitationUrl);
    const { id, reviewUrl } = await withReviewUrl(elicitationUrl);
    const page = await reviewPage(reviewUrl);
    expect(page.response.status).toBe(200);
    expect(page.base).toBe(new URL(reviewUrl).pathname);
    const listed = (await (await fetch(`${reviewUrl}/list`)).json()) as { prompts: { requestId: string }[] };
    expect(listed.prompts.map((p) => p.requestId)).toEqual([id]);
    // Another prompt of the same session, through this page: refused, and left pending.
    expect((await decide(reviewUrl, other, "accept", { csrf: page.csrf })).status).toBe(404);
    // This key names another request id: no page.
    expect((await fetch(reviewUrl.replace(`/prompt/${id}/`, `/prompt/${other}/`))).status).toBe(404);
    expect((await decide(reviewUrl, id, "accept", { csrf: "" })).status).toBe(403);
    expect((await decide(reviewUrl, id, "accept", { csrf: page.csrf })).status).toBe(200);
    expect((await poll(elicitationUrl, id)).body.action).toBe("accept");
    expect((await poll(elicitationUrl, other)).body.action).toBe("pending");
  });

  it("refuses a late decision on the prompt's own page: 409, too late, and the prompt stays expired", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const { id, reviewUrl } = await withReviewUrl(elicitationUrl, 1500);
    const { csrf } = await reviewPage(reviewUrl);
    await sleep(2000);
    const late = await decide(reviewUrl, id, "accept", { csrf });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatch(/Too late: this prompt expired .* can no longer be decided/);
    const listed = (await (await fetch(`${reviewUrl}/list`)).json()) as { prompts: { status: string }[] };
    expect(listed.prompts.map((p) => p.status)).toEqual(["expired"]);
    expect((await poll(elicitationUrl, id)).body.action).toBe("expired");
  }, 20_000);
});
