// Covers the review page in dev mode: its markup, CSP and assets, the JSON it polls, how a prompt's caller values are laid out in Chromium, CSRF-protected decisions, final and late decisions, and the dev-mode loopback guard.
import { mkdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { listPrompts } from "../../approvals/dev-api.mjs";
import { READ_VALUES_HEADING } from "../../bundles/onepassword/onepassword.prompt";
import { CARD_UPDATE_MS, gotoTraced, launchChromium } from "../e2e/browser";
import { createBody, createPrompt, DEV_OPERATOR_TOKEN, decide, mint, newPrompt, poll, requestIdOf, reviewPage, sleep, useApprovals } from "./helpers";

const svc = useApprovals();

describe("the page", () => {
  it("uses no inline script or style and a CSP that forbids them", async () => {
    const { reviewUrl } = await mint(svc.origin);
    const { html, response } = await reviewPage(reviewUrl);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/assets\/review\.js"/);
      expect(body).toBe("");
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).toContain('name="viewport"');
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("shows the dev-mode banner and the elements the browser test drives", async () => {
    const { reviewUrl } = await mint(svc.origin);
    const { html } = await reviewPage(reviewUrl);
    for (const id of ["dev-mode-banner", "prompt-list", "empty-state", "identity", "connection-status"]) expect(html).toContain(`data-testid="${id}"`);
  });

  it("serves its script and stylesheet, and the script never writes caller text as HTML", async () => {
    const js = await fetch(`${svc.origin}/assets/review.js`);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    const source = await js.text();
    expect(source).toContain("textContent");
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    for (const id of ["prompt", "prompt-message", "prompt-time-left", "prompt-confirm", "prompt-accept", "prompt-decline", "prompt-outcome", "prompt-error"]) {
      expect(source).toContain(`"data-testid": "${id}"`);
    }
    const css = await fetch(`${svc.origin}/assets/review.css`);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await css.text()).toContain("@media");
  });

  it("answers 404 for a review key it did not mint", async () => {
    const { reviewUrl } = await mint(svc.origin);
    const response = await fetch(`${reviewUrl.slice(0, -2)}xx`);
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('data-testid="page-error"');
  });

  it("lists the session's prompts without their messages, with the server clock and the expiry; the message verbatim comes from the prompt's own route", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const message = 'Send <b>this</b>?\nTo: "x" <x@example.com>\n\u202Eevil';
    const id = await newPrompt(elicitationUrl, { message, meta: { "com.pulsemcp/session-id": "agent-session-7" } });
    const response = await fetch(`${reviewUrl}/list`);
    const body = (await response.json()) as { now: number; devMode: boolean; prompts: Record<string, unknown>[] };
    expect(body.devMode).toBe(true);
    expect(Math.abs(body.now - Date.now())).toBeLessThan(5000);
    expect(body.prompts).toHaveLength(1);
    expect(body.prompts[0]).not.toHaveProperty("message");
    expect(body.prompts[0]).toMatchObject({
      requestId: id,
      status: "pending",
      toolName: "send_email",
      callerSessionId: "agent-session-7",
    });
    expect(body.prompts[0]?.expiresAt).toBeGreaterThan(body.now);
    // The confirm box's words are the form's: the card fetches them with its fields, from the prompt's own route.
    const form = (await (await fetch(`${reviewUrl}/prompts/${id}`)).json()) as { prompt: Record<string, unknown> };
    expect(form.prompt).toMatchObject({ requestId: id, message, confirm: { title: "Send this email", description: "Tick to send" }, fields: [] });
  });
});

describe("a page loaded before the list stopped carrying messages", () => {
  it("its poll of /prompts is told to reload (410), on the session's page and on a one-prompt page, and lists nothing", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const body = createBody({ meta: { "dev.strad/review-url": true } });
    const created = await createPrompt(elicitationUrl, body);
    expect(created.status).toBe(201);
    const link = ((await created.json()) as { _meta?: Record<string, string> })._meta?.["dev.strad/review-url"] as string;
    for (const base of [reviewUrl, link]) {
      const old = await fetch(`${base}/prompts`);
      expect(old.status).toBe(410);
      const text = await old.text();
      expect(JSON.parse(text)).toEqual({ error: expect.stringMatching(/^This page is out of date: reload it to see the prompts?\.$/) });
      expect(text).not.toContain(requestIdOf(body));
      expect((await fetch(`${base}/list`)).status).toBe(200);
    }
  });
});

describe("deciding", () => {
  it("refuses a decision without the page's CSRF token, or from another site", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    const other = await mint(svc.origin);
    const { csrf: otherCsrf } = await reviewPage(other.reviewUrl);
    expect((await decide(reviewUrl, id, "accept", { csrf: "" })).status).toBe(403);
    expect((await decide(reviewUrl, id, "accept", { csrf: otherCsrf })).status).toBe(403);
    expect((await decide(reviewUrl, id, "accept", { csrf, headers: { "sec-fetch-site": "cross-site" } })).status).toBe(403);
    expect((await decide(reviewUrl, id, "accept", { csrf, headers: { origin: "https://evil.example.com" } })).status).toBe(403);
    const form = await fetch(`${reviewUrl}/prompts/${id}/decision`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-csrf-token": csrf },
      body: "action=accept&confirm=true",
    });
    expect(form.status).toBe(415);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });

  it("accepts only with the confirm box ticked, and the poll then answers accept with confirm: true", async () => {
    const { elicitationUrl, reviewUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    const unticked = await decide(reviewUrl, id, "accept", { csrf, confirm: false });
    expect(unticked.status).toBe(400);
    expect(unticked.body.error).toMatch(/confirm/);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
    const ok = await decide(reviewUrl, id, "accept", { csrf, confirm: true, headers: { origin: svc.origin, "sec-fetch-site": "same-origin" } });
    expect(ok.status).toBe(200);
    expect(ok.body.prompt?.status).toBe("accept");
    expect((await poll(elicitationUrl, id)).body).toMatchObject({ action: "accept", content: { confirm: true } });
    const [stored] = await listPrompts(sessionId, { origin: svc.origin, operatorToken: DEV_OPERATOR_TOKEN });
    expect(stored?.decidedBy).toBe("dev mode (nobody signed in)");
  });

  it("declines, and the poll answers decline with no content", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    expect((await decide(reviewUrl, id, "decline", { csrf })).status).toBe(200);
    expect((await poll(elicitationUrl, id)).body).toMatchObject({ action: "decline", content: null });
  });

  it("refuses a second decision with a clear message and keeps the first", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const { csrf } = await reviewPage(reviewUrl);
    expect((await decide(reviewUrl, id, "decline", { csrf })).status).toBe(200);
    const again = await decide(reviewUrl, id, "accept", { csrf });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already declined.*cannot be decided again/);
    expect((await poll(elicitationUrl, id)).body.action).toBe("decline");
  });

  it("refuses a late decision on an expired prompt with a clear message", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl, { expiresInMs: 1500 });
    const { csrf } = await reviewPage(reviewUrl);
    await sleep(2000);
    const late = await decide(reviewUrl, id, "accept", { csrf });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatch(/Too late: this prompt expired .* can no longer be decided/);
    expect(late.body.prompt?.status).toBe("expired");
    expect((await poll(elicitationUrl, id)).body.action).toBe("expired");
  }, 20_000);

  it("names who decided in the poll answer's _meta for the bundle's audit trail: the dev identity, on accept, decline and dismiss", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    const { csrf } = await reviewPage(reviewUrl);
    const pending = await newPrompt(elicitationUrl);
    expect((await poll(elicitationUrl, pending)).body._meta, "R-AUDIT-4: a pending prompt names nobody").not.toHaveProperty(["dev.strad/approver"]);
    const accepted = await newPrompt(elicitationUrl);
    expect((await decide(reviewUrl, accepted, "accept", { csrf })).status).toBe(200);
    const declined = await newPrompt(elicitationUrl);
    expect((await decide(reviewUrl, declined, "decline", { csrf })).status).toBe(200);
    const dismissed = await newPrompt(elicitationUrl);
    const dismiss = await fetch(`${reviewUrl}/prompts/${dismissed}/decision`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ action: "dismiss" }),
    });
    expect(dismiss.status).toBe(200);
    for (const [id, action] of [
      [accepted, "accept"],
      [declined, "decline"],
      [dismissed, "cancel"],
    ] as const) {
      const { body } = await poll(elicitationUrl, id);
      expect(body.action).toBe(action);
      expect(body._meta, `R-AUDIT-4: the ${action} answer names the dev identity`).toEqual({
        "com.pulsemcp/request-id": id,
        "com.pulsemcp/expires-at": expect.any(String),
        "dev.strad/approver": "dev mode (nobody signed in)",
        // Issue 26 (R-APPR-19): every settled answer also says when it became final.
        "dev.strad/decided-at": expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
    }
  });

  it("answers 404 for a prompt of another session", async () => {
    const a = await mint(svc.origin);
    const b = await mint(svc.origin);
    const id = await newPrompt(a.elicitationUrl);
    const { csrf } = await reviewPage(b.reviewUrl);
    expect((await decide(b.reviewUrl, id, "accept", { csrf })).status).toBe(404);
    expect((await poll(a.elicitationUrl, id)).body.action).toBe("pending");
  });
});

describe("dev mode", () => {
  it("is refused on a host that is not loopback", async () => {
    const { reviewUrl } = await mint(svc.origin);
    const url = new URL(reviewUrl);
    // fetch() would not send a Host of our choosing; node:http does, as a misdeployed dev config would see.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: Number(url.port), path: url.pathname, headers: { host: "approvals.example.com" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(503);
  });
});

describe("issue 26: the review page shows what a bundle read from its upstream under its own heading, never as the caller's", () => {
  it("issue 26: renders the read-from-1Password heading as a line of the card and its values as boxed pairs after it", async () => {
    const message = [
      "onepassword: Reveal 1 sensitive value(s) of 1 item(s)?",
      "",
      "Values below are supplied by the caller, not by this server:",
      "  Asked for: item-1",
      "",
      READ_VALUES_HEADING,
      "  Vault: Private",
      "  Field: API-Schlüssel",
    ].join("\n");
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    await newPrompt(elicitationUrl, { message });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await gotoTraced(page, reviewUrl);
      const card = page.getByTestId("prompt").first();
      await card.getByTestId("prompt-values").first().waitFor({ timeout: 15_000 });
      expect(await card.getByTestId("prompt-line").allTextContents()).toEqual([
        "onepassword: Reveal 1 sensitive value(s) of 1 item(s)?",
        "\u00a0",
        "Values below are supplied by the caller, not by this server:",
        READ_VALUES_HEADING,
      ]);
      expect(await card.getByTestId("prompt-value-label").allTextContents()).toEqual(["Asked for:", "Vault:", "Field:"]);
      expect(await card.getByTestId("prompt-value").allTextContents()).toEqual(["item-1", "Private", "API-Schlüssel"]);
      // Two lists: the caller's, then what was read; the read values sit after the read heading, not under the caller's.
      const blocks = await card.getByTestId("prompt-values").evaluateAll((dls) => dls.map((dl) => dl.querySelectorAll("dd").length));
      expect(blocks).toEqual([1, 2]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe("issue 13 #2: the review page lays out each caller value so a wrap never looks like a new line", () => {
  const SHOTS = fileURLToPath(new URL("../../test-output/screenshots", import.meta.url));
  const long = `Quarterly report ${"and more words ".repeat(14)}Bcc: eve@attacker.example`;
  const message = [
    "gmail-rw-external: This will send an email from person@example.com to 2 recipient(s).",
    "",
    "A sent email cannot be recalled.",
    "",
    "Values below are supplied by the caller, not by this server:",
    "  To: ada@example.com (name: Ada Lovelace)",
    "  Cc: bob@example.com",
    `  Subject (from the original mail): ${long}`,
    "  Attachment: notes\u3164.txt (11 B)",
    "not a value line",
  ].join("\n");

  it("issue 13 #2: renders the caller values as label and boxed value pairs, the whole message still there as text", async () => {
    mkdirSync(SHOTS, { recursive: true });
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    await newPrompt(elicitationUrl, { message });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await gotoTraced(page, reviewUrl);
      const card = page.getByTestId("prompt").first();
      await card.getByTestId("prompt-values").waitFor({ timeout: 15_000 });
      await page.screenshot({ path: join(SHOTS, "review-values-phone.png"), fullPage: true });

      // Every line of the message is on the card, as text: the lines before the values, then one label/value pair per line.
      const lines = await card.getByTestId("prompt-line").allTextContents();
      const labels = await card.getByTestId("prompt-value-label").allTextContents();
      const values = await card.getByTestId("prompt-value").allTextContents();
      expect(lines).toEqual([
        "gmail-rw-external: This will send an email from person@example.com to 2 recipient(s).",
        "\u00a0",
        "A sent email cannot be recalled.",
        "\u00a0",
        "Values below are supplied by the caller, not by this server:",
      ]);
      expect(labels).toEqual(["To:", "Cc:", "Subject (from the original mail):", "Attachment:", ""]);
      expect(values).toEqual(["ada@example.com (name: Ada Lovelace)", "bob@example.com", long, "notes\u27e6U+3164\u27e7.txt (11 B)", "not a value line"]);

      // Each value sits in a box of its own, in a column right of the labels; the long one wraps inside its box.
      const boxes = await card.getByTestId("prompt-value").evaluateAll((dds) =>
        dds.map((dd) => {
          const r = dd.getBoundingClientRect();
          const style = (globalThis as unknown as { getComputedStyle: (e: Element) => { borderTopWidth: string } }).getComputedStyle(dd);
          return { left: r.left, top: r.top, bottom: r.bottom, height: r.height, border: style.borderTopWidth, tag: dd.tagName };
        }),
      );
      const labelBoxes = await card.getByTestId("prompt-value-label").evaluateAll((dts) => dts.map((dt) => dt.getBoundingClientRect().right));
      const lineHeight = Math.min(...boxes.map((b) => b.height));
      const subject = boxes[2];
      expect(subject?.height).toBeGreaterThan(lineHeight * 2);
      for (const box of boxes) {
        expect(box.tag).toBe("DD");
        expect(box.border).not.toBe("0px");
        expect(box.left).toBeGreaterThanOrEqual(Math.max(...labelBoxes));
      }
      for (let i = 1; i < boxes.length; i++) expect(boxes[i]?.top).toBeGreaterThanOrEqual(boxes[i - 1]?.bottom ?? 0);
      // The "Bcc:" inside the wrapped subject is inside the subject's box, never a label of its own.
      expect(labels.some((l) => l.startsWith("Bcc"))).toBe(false);
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe("a poll answered before a decision and read after it", () => {
  it("never shows a decided card as pending again", async () => {
    const { elicitationUrl, reviewUrl } = await mint(svc.origin);
    await newPrompt(elicitationUrl);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      // The page's polls (GET <base>/prompts, every 2 s), once armed: the first is fetched from the service at once and
      // its answer held back until released; every later one is held unanswered, so nothing fresher arrives meanwhile.
      let armed = false;
      let fetchedStale: () => void = () => {};
      const staleFetched = new Promise<void>((r) => {
        fetchedStale = r;
      });
      let release: () => void = () => {};
      const released = new Promise<void>((r) => {
        release = r;
      });
      let later = 0;
      await page.route("**/list", async (route) => {
        if (!armed) return route.continue();
        if (later++ > 0) return; // held: never answered while the test looks
        const stale = await route.fetch();
        fetchedStale();
        await released;
        await route.fulfill({ response: stale });
      });
      await gotoTraced(page, reviewUrl);
      const card = page.getByTestId("prompt").first();
      await card.getByTestId("prompt-confirm").waitFor({ timeout: 15_000 });
      armed = true;
      // The poll's answer is read from the service while the prompt is still pending.
      await staleFetched;
      await card.getByTestId("prompt-confirm").check();
      await card.getByTestId("prompt-accept").click();
      await expect.poll(async () => card.getAttribute("data-status"), { timeout: CARD_UPDATE_MS }).toBe("accept");
      release();
      // The page asks again only once it has read the stale answer: then the card must still say what was decided.
      await expect.poll(() => later, { timeout: 15_000 }).toBeGreaterThan(1);
      expect(await card.getAttribute("data-status")).toBe("accept");
    } finally {
      await browser.close();
    }
  }, 60_000);
});
