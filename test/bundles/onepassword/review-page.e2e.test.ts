// A 1Password reveal approved by a person in a real browser: onepassword_get_item through the gateway raises one prompt on the approval service's review page, naming the slug, the ids the caller asked for, and, as read from 1Password, each item and the fields it would reveal and no value; ticking the box and accepting reveals exactly those values to the caller.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mintSession } from "../../../approvals/dev-api.mjs";
import { READ_VALUES_HEADING } from "../../../bundles/onepassword/onepassword.prompt";
import { CARD_UPDATE_MS, chromiumForFile, gotoTraced, SHOTS } from "../../e2e/browser";
import { bearer, connectModern, FAKES, TOKENS, textOf } from "../../e2e/helpers";
import { IDS, SECRET_PREFIX, SECRETS } from "../../fakes/onepassword/seed";

const chromium = chromiumForFile();

describe("the review page", () => {
  it("a person approves one 1Password reveal on the page, and the caller gets exactly the values the card named", async () => {
    await (await fetch(`${FAKES}/onepassword/_fake/reset`, { method: "POST" })).body?.cancel();
    const session = await mintSession();
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await gotoTraced(page, session.reviewUrl);
    await page.getByTestId("dev-mode-banner").waitFor();
    const client = await connectModern("onepassword", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client.callTool("onepassword_get_item", { items: [{ vault_id: IDS.engineering, item_id: IDS.github }] }).finally(() => client.close());
    const card = page.getByTestId("prompt").first();
    await card.waitFor({ timeout: 15_000 });
    const message = await card.getByTestId("prompt-message").innerText();
    expect(message).toContain("onepassword: This will reveal 2 sensitive value(s) of 1 1Password item(s) to the caller.");
    const labels = await card.getByTestId("prompt-value-label").allTextContents();
    const values = await card.getByTestId("prompt-value").allTextContents();
    // The ids are the caller's; the vault, title and field names were read from 1Password, and the card says so (issue 26).
    expect(labels.map((l, i) => [l, values[i]])).toEqual([
      ["Asked for:", `${IDS.engineering}/${IDS.github}`],
      ["Item:", `Engineering / GitHub (${IDS.github})`],
      ["Reveals:", "2 values: password, notesPlain"],
    ]);
    // The read heading is a line of the card between the two lists, never a boxed value of the caller's.
    expect((await card.getByTestId("prompt-line").allTextContents()).at(-1)).toBe(READ_VALUES_HEADING);
    expect(await card.getByTestId("prompt-values").evaluateAll((dls) => dls.map((dl) => dl.querySelectorAll("dd").length))).toEqual([1, 2]);
    // The card names the field; it never shows a value.
    expect(await card.innerText()).not.toContain(SECRET_PREFIX);
    await page.screenshot({ path: join(SHOTS, "review-onepassword-reveal.png"), fullPage: true });
    expect(await card.getByTestId("prompt-accept").isDisabled()).toBe(true);
    await card.getByTestId("prompt-confirm").check();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError).not.toBe(true);
    const json = JSON.parse(textOf(result)) as { items: { title: string; fields: { label: string; value: string }[] }[]; _credentialsRevealed: boolean };
    expect(json._credentialsRevealed).toBe(true);
    expect(json.items[0]?.fields.find((f) => f.label === "password")?.value).toBe(SECRETS.github);
    await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
    await page.close();
  });
});
