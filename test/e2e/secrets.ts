// What must never appear in a log line: every dev secret value of every Worker (the .dev.vars.example beside each
// wrangler.toml: the gateway's, the approval service's, each bundle's), every bearer token, any approval-session
// URL token. Returns the names of what leaked (never the values themselves).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/** Every Worker's folder, relative to the root ("" for the gateway): each one with a wrangler.toml. */
function workerFolders(): string[] {
  const bundles = readdirSync(join(ROOT, "bundles"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `bundles/${d.name}`);
  return ["", "approvals", "test/fakes", ...bundles].filter((dir) => existsSync(join(ROOT, dir, "wrangler.toml")));
}

/**
 * Whether a dev value is plainly not a secret: shorter than 16 characters (a port, a flag, a user name, a host), a
 * service token's client id (its secret half is the secret), or an http(s) URL with no credentials, query or fragment
 * (an upstream's address, which a log may name). Everything else counts as a secret.
 */
export function plainlyPublic(name: string, value: string): boolean {
  if (value.length < 16 || name.endsWith("CLIENT_ID")) return true;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "" && url.search === "" && url.hash === "" && !/[?#@]/.test(value);
}

/** Each dev secret's value by name: the gateway's as they are named, another Worker's under its folder ("bundles/mailbox MAILBOX__IMAP_PASSWORD"). */
export function devSecrets(): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  const add = (name: string, value: string) => {
    if (seen.has(value)) return;
    seen.add(value);
    out[name] = value;
  };
  for (const dir of workerFolders()) {
    const file = join(ROOT, dir, ".dev.vars.example");
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const m = /^([A-Z0-9_]+)="(.*)"$/.exec(line.trim());
      if (m === null || plainlyPublic(m[1] as string, m[2] as string)) continue;
      add(dir === "" ? (m[1] as string) : `${dir} ${m[1]}`, m[2] as string);
    }
  }
  const approvals = readFileSync(join(ROOT, "approvals/wrangler.toml"), "utf8");
  for (const m of approvals.matchAll(/^(SESSION_SECRET|OPERATOR_TOKEN|ACCESS_CLIENT_SECRET)\s*=\s*"(.+)"$/gm)) add(`approvals ${m[1]}`, m[2] as string);
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
