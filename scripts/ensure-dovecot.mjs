// The mailbox bundle's tests and the dev stack run a real Dovecot (Debian's dovecot-imapd, test/servers/dovecot/).
// On a fresh machine this installs it (as root, with apt) or says exactly what to do; nothing is downloaded outside
// the package manager. `--check` only reports (exit 1 when missing), for the stack to decide whether to start it.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.DOVECOT_PATH ?? "/usr/sbin/dovecot";
const check = process.argv.includes("--check");
if (!existsSync(path)) {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (check || !root) {
    console.error(`The mailbox bundle's tests need Dovecot at ${path}. Install it with: sudo apt-get install -y dovecot-imapd (or set DOVECOT_PATH).`);
    process.exit(1);
  }
  console.log("Installing Debian's dovecot-imapd for the mailbox bundle's IMAP tests…");
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "dovecot-imapd"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}
