// Debian's Chromium, as every browser test drives it (scripts/ensure-chromium.mjs installs it; CHROMIUM_PATH
// overrides where it is): headless, no sandbox (CI runs as root), and nothing that reaches the network by itself.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { ROOT } from "./helpers";

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
