// `npm test` runs a browser test of the review page in Debian's Chromium. On a fresh machine this installs
// it (as root, with apt) or says exactly what to do; nothing is downloaded outside the package manager.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(path)) {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (!root) {
    console.error(`The review-page test needs Chromium at ${path}. Install it with: sudo apt-get install -y chromium (or set CHROMIUM_PATH).`);
    process.exit(1);
  }
  console.log("Installing Debian's chromium for the review-page browser test…");
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}
