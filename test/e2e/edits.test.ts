// Edits by the person through the whole stack (issue 29): on the review page a person changes a send_email's subject and unticks a recipient, and the Gmail fake receives exactly what the card showed after the edit; a widened recipient list sent straight through the protocol sends nothing; a plain accept sends the original; a pad's new text changed by the person is what Rustpad holds; a 1Password login whose title and tags the person changed is created exactly so by the Connect fake, its password never on the card; the tool's answer and the bundle's audit line name the change, and the line's card digest is the one the approval service's record yields.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { listPrompts, mintSession } from "../../approvals/dev-api.mjs";
import { cardDigest } from "../../bundles/kit/audit";
import { useScriptedApprover } from "../bundles/kit/helpers/hostile-server";
import type { CreatedItem } from "../fakes/onepassword/connect.fake";
import { IDS, SECRET_PREFIX } from "../fakes/onepassword/seed";
import { chromiumForFile, gotoTraced, SHOTS } from "./browser";
import { bearer, connectModern, FAKES, logsCaughtUp, nothingMore, STACK_LOG, TOKENS, textOf } from "./helpers";

const chromium = chromiumForFile();
const scripted = useScriptedApprover();
const RUSTPAD = "http://127.0.0.1:8791";

interface OutboxMessage {
  subject: string;
  to: string[];
  cc: string[];
  bcc: string[];
  text?: string;
}
const outbox = async () => (await (await fetch(`${FAKES}/gmail/_fake/outbox`)).json()) as OutboxMessage[];

async function openReview(reviewUrl: string): Promise<Page> {
  const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await gotoTraced(page, reviewUrl);
  await page.getByTestId("dev-mode-banner").waitFor();
  return page;
}

/** The bundle's audit lines for one approval request, once the stack log holds them. */
async function auditLines(requestId: string): Promise<Record<string, unknown>[]> {
  await logsCaughtUp();
  return readFileSync(STACK_LOG, "utf8")
    .split("\n")
    .filter((l) => l.includes('"event":"audit"') && l.includes(requestId))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>);
}

let unique = 0;
const tag = () => `${Date.now()}-${++unique}`;

describe("a person edits the call on the review page", () => {
  it("changes the subject and unticks a recipient: the Gmail fake receives exactly the edited message, and the answer and audit line name the change", async () => {
    const session = await mintSession();
    const subject = `Draft subject ${tag()}`;
    const page = await openReview(session.reviewUrl);
    const client = await connectModern("gmail-rw-external", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client.callTool("send_email", { to: ["ada@example.com", "bob@example.com"], cc: ["carol@example.com"], subject, text: "Numbers attached." }).finally(() => client.close());
    const card = page.getByTestId("prompt").first();
    await card.getByTestId("prompt-edits").waitFor({ timeout: 15_000 });

    const subjectBox = card.locator('[data-testid="prompt-edit"][data-field="subject"]');
    expect(await subjectBox.inputValue()).toBe(subject);
    const edited = `Final — ${subject}`;
    await subjectBox.fill(edited);
    await card.locator('[data-testid="prompt-edit-option"][data-field="to"][data-value="bob@example.com"]').uncheck();
    await card.getByTestId("prompt-confirm").check();
    // What the card shows after the edit, read off the page: the subject box, the recipients still ticked, the diff.
    const shownSubject = await subjectBox.inputValue();
    const shownTo = await card
      .locator('[data-testid="prompt-edit-option"][data-field="to"]')
      .evaluateAll((boxes) => boxes.filter((b) => (b as unknown as { checked: boolean }).checked).map((b) => b.getAttribute("data-value")));
    const shownCc = await card
      .locator('[data-testid="prompt-edit-option"][data-field="cc"]')
      .evaluateAll((boxes) => boxes.filter((b) => (b as unknown as { checked: boolean }).checked).map((b) => b.getAttribute("data-value")));
    expect(await card.getByTestId("prompt-diff-after").allTextContents()).toEqual([shownSubject]);
    expect(await card.getByTestId("prompt-diff-removed").allTextContents()).toEqual(["bob@example.com"]);
    await page.screenshot({ path: join(SHOTS, "edits-send-email.png"), fullPage: true });
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);

    const sent = (await outbox()).filter((m) => m.subject === edited || m.subject === subject);
    expect(sent).toHaveLength(1);
    // Byte for byte what the card showed after the edit.
    expect(Buffer.from(sent[0]?.subject ?? "")).toEqual(Buffer.from(shownSubject));
    expect(sent[0]?.to).toEqual(shownTo);
    expect(sent[0]?.cc).toEqual(shownCc);
    expect(sent[0]?.bcc).toEqual([]);
    expect(textOf(result)).toContain(
      `The person edited this call before approving it, and what ran is their version, not the one proposed: to lost "bob@example.com" and is now ["ada@example.com"]; subject is now ${JSON.stringify(edited)}.`,
    );

    const [prompt] = await listPrompts(session.sessionId);
    const lines = await auditLines(String(prompt?.requestId));
    expect(lines.map((l) => l.outcome)).toEqual(["asked", "approved", "claimed", "written"]);
    const approved = lines[1] ?? {};
    expect(approved).toMatchObject({ approver: "dev mode (nobody signed in)", edited: ["subject", "to"] });
    expect(approved.proposed).toMatch(/^[0-9a-f]{64}$/);
    expect(approved.fingerprint).not.toBe(approved.proposed);
    // The card digest an auditor recomputes from the approval service's own record of the prompt.
    const card0 = await cardDigest(prompt?.message ?? "", prompt?.requestedSchema ?? {});
    for (const line of lines) expect(line.card).toBe(card0);
    expect(lines.map((l) => JSON.stringify(l)).join("\n")).not.toContain(edited);
    await page.close();
  });

  it("a pad's new text changed by the person is what Rustpad holds", async () => {
    const pad = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[b % 62]).join("");
    const seeded = await fetch(`${RUSTPAD}/_fake/pads/${pad}`, { method: "PUT", body: JSON.stringify({ text: "the old text" }) });
    expect(seeded.status).toBe(200);
    await seeded.body?.cancel();
    const session = await mintSession();
    const page = await openReview(session.reviewUrl);
    const client = await connectModern("pads", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client.callTool("set_document", { pad_id: pad, content: "the model's text" }).finally(() => client.close());
    const card = page.getByTestId("prompt").first();
    const box = card.locator('[data-testid="prompt-edit"][data-field="content"]');
    await box.waitFor({ timeout: 15_000 });
    expect(await box.inputValue()).toBe("the model's text");
    await box.fill("the person's text\nwith a second line");
    await card.getByTestId("prompt-confirm").check();
    const shown = await box.inputValue();
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(await (await fetch(`${RUSTPAD}/api/text/${pad}`)).text()).toBe(shown);
    expect(textOf(result)).toContain(`content is now ${JSON.stringify(shown)}`);
    const [prompt] = await listPrompts(session.sessionId);
    expect((await auditLines(String(prompt?.requestId))).find((l) => l.outcome === "approved")).toMatchObject({ edited: ["content"] });
    await page.close();
  });
});

describe("a person edits a 1Password create on the review page", () => {
  it("changes a login's title and tags: the Connect fake creates exactly the edited item, the password never on the card, and the answer and audit line name the fields", async () => {
    const title = `Grafana ${tag()}`;
    const password = `${SECRET_PREFIX}e2e-${tag()}`;
    const session = await mintSession();
    const page = await openReview(session.reviewUrl);
    const client = await connectModern("onepassword", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client
      .callTool("onepassword_create_login", { vault_id: IDS.engineering, items: [{ title, username: "ops", password, url: "https://grafana.example.com", tags: ["ops"] }] })
      .finally(() => client.close());
    const card = page.getByTestId("prompt").first();
    await card.getByTestId("prompt-edits").waitFor({ timeout: 15_000 });
    // The public fields are offered with the model's values; the password is neither a field nor anywhere on the card.
    expect(await card.getByTestId("prompt-edit").evaluateAll((els) => els.map((e) => e.getAttribute("data-field")))).toEqual(["items.0.title", "items.0.username", "items.0.url", "items.0.tags"]);
    expect(await card.innerText()).not.toContain(SECRET_PREFIX);
    const titleBox = card.locator('[data-testid="prompt-edit"][data-field="items.0.title"]');
    expect(await titleBox.inputValue()).toBe(title);
    const edited = `${title} (prod)`;
    await titleBox.fill(edited);
    const tagsBox = card.locator('[data-testid="prompt-edit"][data-field="items.0.tags"]');
    expect(await tagsBox.evaluate((e) => e.tagName)).toBe("TEXTAREA");
    await tagsBox.fill("ops\nprod");
    await card.getByTestId("prompt-confirm").check();
    const shownTitle = await titleBox.inputValue();
    const shownTags = (await tagsBox.inputValue()).split("\n");
    // The diff writes each line of a value on a line of its own (a <br> between them).
    expect(await card.getByTestId("prompt-diff-after").evaluateAll((els) => els.map((e) => [...e.childNodes].map((n) => (n.nodeName === "BR" ? "\n" : n.textContent)).join("")))).toEqual([
      shownTitle,
      "ops\nprod",
    ]);
    await page.screenshot({ path: join(SHOTS, "edits-onepassword-create.png"), fullPage: true });
    await card.getByTestId("prompt-accept").click();
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);

    const created = ((await (await fetch(`${FAKES}/onepassword/_fake/created`)).json()) as CreatedItem[]).filter((c) => c.title === edited || c.title === title);
    expect(created.map((c) => [c.title, c.tags, c.urls, c.fields.map((f) => [f.label, f.value])])).toEqual([
      [
        shownTitle,
        shownTags,
        ["https://grafana.example.com"],
        [
          ["username", "ops"],
          ["password", password],
        ],
      ],
    ]);
    expect(textOf(result)).toContain(`items.0.title is now ${JSON.stringify(edited)}; items.0.tags is now ["ops", "prod"].`);
    expect(textOf(result)).not.toContain(password);

    const [prompt] = await listPrompts(session.sessionId);
    const lines = await auditLines(String(prompt?.requestId));
    expect(lines.find((l) => l.outcome === "approved")).toMatchObject({ edited: ["items.0.tags", "items.0.title"] });
    const card0 = await cardDigest(prompt?.message ?? "", prompt?.requestedSchema ?? {});
    for (const line of lines) expect(line.card).toBe(card0);
    expect(lines.map((l) => JSON.stringify(l)).join("\n")).not.toContain(SECRET_PREFIX);
    await page.close();
  });
});

describe("an approval service answering through the protocol", () => {
  const call = async (name: string, content: Record<string, unknown>, subject: string) => {
    const url = scripted.route(name, { poll: () => ({ body: { action: "accept", content: { confirm: true, ...content } } }) });
    const client = await connectModern("gmail-scripted", { ...bearer(TOKENS.session), "x-elicitation-url": url });
    return client.callTool("send_email", { to: ["ada@example.com"], subject, text: "Hello." }).finally(() => client.close());
  };

  it("an answer adding a recipient to the narrow-only To is refused before anything is sent", async () => {
    const subject = `Widened ${tag()}`;
    const result = await call(`widen-${tag()}`, { to: ["ada@example.com", "mallory@attacker.example"] }, subject);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Not done: the person's answer was refused before anything ran: "to" may only lose entries/);
    await nothingMore();
    expect((await outbox()).filter((m) => m.subject === subject || m.to.includes("mallory@attacker.example"))).toEqual([]);
  });

  it("a plain accept, the confirm box alone, sends the original", async () => {
    const subject = `Plain ${tag()}`;
    const name = `plain-${tag()}`;
    const result = await call(name, {}, subject);
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(textOf(result)).not.toContain("edited");
    const sent = (await outbox()).filter((m) => m.subject === subject);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: ["ada@example.com"], text: "Hello." });
    // The question carried the form all the same, with the model's values.
    const asked = JSON.parse(scripted.requestsTo(name).find((r) => r.method === "POST")?.body ?? "{}") as { requestedSchema: { properties: Record<string, { default?: unknown }> } };
    expect(asked.requestedSchema.properties.subject?.default).toBe(subject);
    expect(asked.requestedSchema.properties.to?.default).toEqual(["ada@example.com"]);
  });
});
