// What must never appear in a log line: every dev secret value, every bearer token, any approval-session
// URL token. Returns the names of what leaked (never the values themselves).
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

function devSecrets(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, ".dev.vars.example"), "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)="(.*)"$/.exec(line.trim());
    // A client id names a service token; its secret half is what must never be printed.
    if (m && (m[2] as string).length >= 16 && !(m[1] as string).endsWith("CLIENT_ID")) out[m[1] as string] = m[2] as string;
  }
  const approvals = readFileSync(join(ROOT, "approvals/wrangler.toml"), "utf8");
  for (const m of approvals.matchAll(/^(SESSION_SECRET|OPERATOR_TOKEN|ACCESS_CLIENT_SECRET)\s*=\s*"(.+)"$/gm)) out[`approvals ${m[1]}`] = m[2] as string;
  return out;
}

export function secretsIn(log: string): string[] {
  const leaks = Object.entries(devSecrets())
    .filter(([, value]) => log.includes(value))
    .map(([name]) => name);
  // An approval URL is the caller's credential: strad (the gateway process, which hosts the bundles too)
  // never logs it. The approval service's own access log necessarily sees its own URLs, so it is not scanned.
  const strad = log
    .split("\n")
    .filter((line) => !line.startsWith("[approvals]"))
    .join("\n");
  if (/\/elicitations\/session\/[A-Za-z0-9._~-]{8,}/.test(strad)) leaks.push("an approval-session URL token");
  if (/127\.0\.0\.1:8790\/scripted\/[A-Za-z0-9]/.test(strad)) leaks.push("a scripted approval URL");
  return leaks;
}
