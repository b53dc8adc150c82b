// Covers storage lifetime: a decided or expired prompt is deleted a retention period later (the session's alarm), and an empty session after it; a deleted prompt's request id stays used.
import { afterAll, beforeAll, expect, it } from "vitest";
import { decidePrompt, listPrompts } from "../../approvals/dev-api.mjs";
import { createBody, createPrompt, DEV_OPERATOR_TOKEN, mint, newPrompt, poll, type Running, START_TIMEOUT_MS, sleep, startApprovals } from "./helpers";

const RETENTION_S = 2;
let svc: Running;
beforeAll(async () => {
  svc = await startApprovals({ RETENTION_SECONDS: String(RETENTION_S) });
}, START_TIMEOUT_MS);
afterAll(async () => {
  await svc?.stop();
});

/** Polls the operator API (which never counts as session activity) until `done` holds, bounded. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(250);
    value = await read();
  }
  return value;
}

it("deletes decided and expired prompts after the retention period, then the empty session", async () => {
  const { elicitationUrl, sessionId, reviewUrl } = await mint(svc.origin);
  // While the session lives its review page opens (the page checks only that the session exists).
  expect((await fetch(reviewUrl)).status).toBe(200);
  const options = { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN };
  const decided = await newPrompt(elicitationUrl);
  const expiring = await newPrompt(elicitationUrl, { expiresInMs: 1000 });
  await decidePrompt(sessionId, decided, "accept", options);
  const started = Date.now();

  // Both are still there right after the decision and the expiry: retention starts then.
  await sleep(1100);
  expect((await listPrompts(sessionId, options)).map((p) => [p.requestId, p.status]).sort()).toEqual(
    [
      [decided, "accept"],
      [expiring, "expired"],
    ].sort(),
  );

  const left = await until(
    () => listPrompts(sessionId, options).catch(() => "gone" as const),
    (v) => v === "gone" || v.length === 0,
    20_000,
  );
  expect(left === "gone" || left.length === 0).toBe(true);
  expect(Date.now() - started).toBeGreaterThanOrEqual(RETENTION_S * 1000 - 200);

  const gone = await until(
    () =>
      listPrompts(sessionId, options).then(
        () => 200,
        (e: { status?: number }) => e.status ?? 0,
      ),
    (s) => s === 404,
    20_000,
  );
  expect(gone).toBe(404);
  expect((await poll(elicitationUrl, decided)).status).toBe(404);
  // The review page says so, from whether the session exists alone (no prompt is read for it).
  const page = await fetch(reviewUrl);
  expect(page.status).toBe(404);
  expect(await page.text()).toContain("This session no longer exists.");
}, 60_000);

it("a request id stays used after the retention period deleted its prompt", async () => {
  const { elicitationUrl, sessionId } = await mint(svc.origin);
  const options = { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN };
  // A pending prompt keeps the session alive while the decided one is deleted.
  await newPrompt(elicitationUrl, { expiresInMs: 60_000 });
  const decided = await newPrompt(elicitationUrl);
  await decidePrompt(sessionId, decided, "decline", options);
  const left = await until(
    () => listPrompts(sessionId, options),
    (v) => !v.some((p) => p.requestId === decided),
    20_000,
  );
  expect(left.map((p) => p.requestId)).not.toContain(decided);
  expect((await poll(elicitationUrl, decided)).status).toBe(404);
  // R-APPR-8: the id is spent for good; a create under it is refused, and its poll still answers for nothing.
  const again = await createPrompt(elicitationUrl, createBody({ requestId: decided }));
  expect(again.status).toBe(409);
  expect((await poll(elicitationUrl, decided)).status).toBe(404);
}, 60_000);
