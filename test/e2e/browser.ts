// Debian's Chromium, as every browser test drives it (scripts/ensure-chromium.mjs installs it; CHROMIUM_PATH
// overrides where it is): headless, no sandbox (CI runs as root), and nothing that reaches the network by itself.
import { type Browser, chromium } from "playwright-core";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
