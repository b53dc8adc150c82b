// Debian's Chromium, as every browser test drives it (scripts/ensure-chromium.mjs installs it; CHROMIUM_PATH
// overrides where it is): headless, no sandbox (CI runs as root), and nothing that reaches the network by itself.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page, type Request, type Response } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { ROOT } from "./helpers";

/**
 * How long a test waits for a card to show what the page just learnt (a decision's answer, or its next 2 s poll):
 * expect.poll's 1 s default was once outlasted in a clean-clone run under load, on a decision the service had taken.
 */
export const CARD_UPDATE_MS = 10_000;

/** Where the browser tests put their screenshots (test-output/ is not checked in). */
export const SHOTS = join(ROOT, "test-output", "screenshots");

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** One Chromium for the test file that calls this: launched before its tests (the screenshots folder made), closed after them. */
export function chromiumForFile(): { readonly browser: Browser } {
  const held = {} as { browser: Browser };
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    held.browser = await launchChromium();
  });
  afterAll(async () => {
    await held.browser?.close();
  });
  return held;
}

/**
 * `page.goto(url)` waiting for `load`, as Playwright's own; when it fails, the error carries what the page asked for and
 * got, each with its time since the navigation began, so a stalled navigation says which request stalled (the
 * document, its CSS or its script) instead of only that 30 s ran out. Paths are left out: a review URL holds a token.
 */
/** What a request was for: its path, or "/review/…" for a review URL's (whose second segment is a token). */
function pathHead(url: string): string {
  try {
    const path = new URL(url).pathname;
    return path.startsWith("/review/") ? "/review/…" : path;
  } catch {
    return "?";
  }
}

export async function gotoTraced(page: Page, url: string): Promise<void> {
  const started = Date.now();
  const events: string[] = [];
  const note = (what: string, target?: string) => {
    const where = target === undefined ? "" : ` ${pathHead(target)}`;
    events.push(`${Date.now() - started} ms ${what}${where}`);
  };
  const onRequest = (r: Request) => note("request", r.url());
  const onResponse = (r: Response) => note(`response ${r.status()}`, r.url());
  const onFinished = (r: Request) => note("finished", r.url());
  const onFailed = (r: Request) => note(`failed (${r.failure()?.errorText ?? "?"})`, r.url());
  const onDom = () => note("DOMContentLoaded");
  const onCrash = () => note("renderer crashed");
  page.on("request", onRequest).on("response", onResponse).on("requestfinished", onFinished).on("requestfailed", onFailed).on("domcontentloaded", onDom).on("crash", onCrash);
  try {
    await page.goto(url);
  } catch (error) {
    throw new Error(`${(error as Error).message.split("\n")[0]}\nwhat the page did:\n  ${events.join("\n  ") || "(no request at all)"}`, { cause: error });
  } finally {
    page.off("request", onRequest).off("response", onResponse).off("requestfinished", onFinished).off("requestfailed", onFailed).off("domcontentloaded", onDom).off("crash", onCrash);
  }
}
