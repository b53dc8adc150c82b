// Issue 15 #3: the approval service takes the largest prompt a confirmed tool can legally build, as the kit's
// own client sends it, serves it whole to the review page, and a person's accept there reaches the kit
// (docs/rules.md R-LIMIT-1, R-LIMIT-3). Before, it refused any message over 4 KiB with 400.
import { describe, expect, it } from "vitest";
import { waitForPendingPrompt } from "../../approvals/dev-api.mjs";
import { sendPrompt } from "../../bundles/google/google.send";
import { requestApproval } from "../../bundles/kit/approval-client";
import { buildPrompt } from "../../bundles/kit/prompt";
import { largestComposeTarget, largestDraftTarget } from "../bundles/google/largest-send";
import { DEV_ACCESS_HEADERS, DEV_OPERATOR_TOKEN, decide, mint, reviewPage, useApprovals } from "./helpers";

const svc = useApprovals();

const largest = [
  ["send_email", () => largestComposeTarget()],
  ["draft send", () => largestDraftTarget()],
] as const;

describe("issue 15 #3: the largest legal prompt on the approval service", () => {
  it.each(largest)("takes the largest legal %s prompt from the kit's client, shows it whole on the review page, and a person's accept reaches the kit", async (_what, target) => {
    const t = target();
    const message = buildPrompt(t.mount, sendPrompt(t));
    expect(new TextEncoder().encode(message).byteLength).toBeGreaterThan(4096);
    const session = await mint(svc.origin);
    const asked = requestApproval({
      url: session.elicitationUrl,
      headers: { ...DEV_ACCESS_HEADERS },
      message,
      toolName: "send_email",
      deadline: Date.now() + 60_000,
      signal: new AbortController().signal,
      pollIntervalMs: 50,
    });
    const pending = await waitForPendingPrompt(session.sessionId, { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN, timeoutMs: 30_000 });
    // What the page's script renders: the message as the kit built it, byte for byte, nothing cut.
    const shown = (await (await fetch(`${session.reviewUrl}/prompts/${pending.requestId}`)).json()) as { prompt: { requestId: string; message: string } };
    expect(shown.prompt.message).toBe(message);
    const { csrf } = await reviewPage(session.reviewUrl);
    const decided = await decide(session.reviewUrl, pending.requestId, "accept", { csrf });
    expect(decided.status).toBe(200);
    expect(await asked).toMatchObject({ ok: true, answer: "accept", content: { confirm: true } });
  });
});
