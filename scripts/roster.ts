// `npm run roster -- <gateway-url> list|add <file>|set <slug> <file>|replace <slug> <file>|remove <slug>|diff|history`:
// runtime roster writes through the gateway's /admin/roster (docs/rules.md R-RT-1..R-RT-5). The admin token is read
// from STRAD_ADMIN_TOKEN (or, without one, an operator's Cloudflare Access token from STRAD_ACCESS_TOKEN), never from
// the command line, so it does not land in shell history; the gateway is reached
// over https, or plain http on a loopback host only (the token must not cross a network in the clear).
// <file> holds one server entry (or, for set, the keys to change) as YAML or JSON; "-" reads standard input.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { isSecureOrLoopback } from "../contract/url-policy";
import { OVERLAY_TTL_MS } from "../worker/overlay";

export const TOKEN_VARIABLE = "STRAD_ADMIN_TOKEN";
/**
 * A person's Cloudflare Access application token (e.g. `cloudflared access token -app=https://<gateway>/admin/roster`),
 * sent as Cf-Access-Jwt-Assertion when STRAD_ADMIN_TOKEN is unset; the gateway takes it only from an email its
 * roster's gateway.operatorAccess lists.
 */
export const ACCESS_TOKEN_VARIABLE = "STRAD_ACCESS_TOKEN";
const USAGE = `usage: ${TOKEN_VARIABLE}=<admin token> (or ${ACCESS_TOKEN_VARIABLE}=<an operator's Access token>) npm run roster -- <gateway-url> list | add <file> | set <slug> <file> | replace <slug> <file> | remove <slug> | diff | history\n`;

export interface Listed {
  slug: string;
  kind: string;
  source: string;
  url?: string;
  bundle?: string;
  path?: string;
  entitlements: string[];
  timeoutMs: number;
  maxRequestBytes: number;
  [key: string]: unknown;
}
export interface Listing {
  version: number;
  overlayError: string | null;
  servers: Listed[];
  overlay: { add: Record<string, unknown>[]; change: Record<string, unknown>[] } | null;
}

export type AdminResult = { ok: true; status: number; body: unknown } | { ok: false; message: string };

/** One /admin/roster request; refuses, before anything is sent, a URL a token must not travel to, or a missing token. */
export async function adminRequest(gateway: string, path: string, env: Record<string, string | undefined>, init: { method?: string; body?: unknown } = {}): Promise<AdminResult> {
  let base: URL;
  try {
    base = new URL(gateway);
  } catch {
    return { ok: false, message: `${gateway}: not a URL` };
  }
  if (!isSecureOrLoopback(base)) return { ok: false, message: `${base.origin}: the admin token goes over https only (plain http on a loopback host)` };
  const token = env[TOKEN_VARIABLE];
  const assertion = env[ACCESS_TOKEN_VARIABLE];
  const bearer = token !== undefined && token !== "";
  if (!bearer && (assertion === undefined || assertion === "")) {
    return {
      ok: false,
      message: `set ${TOKEN_VARIABLE} to an admin caller's token, or ${ACCESS_TOKEN_VARIABLE} to an operator's Cloudflare Access token (neither is ever read from the command line)`,
    };
  }
  const credential: Record<string, string> = bearer ? { authorization: `Bearer ${token}` } : { "cf-access-jwt-assertion": assertion as string };
  const url = new URL(`/admin/roster${path}`, base);
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? "GET",
      headers: { ...credential, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      redirect: "manual",
    });
  } catch {
    return { ok: false, message: `${url.origin}: the gateway could not be reached` };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return { ok: false, message: `${url.origin}: HTTP ${response.status}, and the answer is not JSON` };
  }
  if (!response.ok) {
    const error = (body as { error?: unknown; code?: unknown }) ?? {};
    return { ok: false, message: `HTTP ${response.status} ${String(error.code ?? "")}: ${String(error.error ?? "refused")}` };
  }
  return { ok: true, status: response.status, body };
}

/** The effective roster, one line per server, runtime entries marked (also what `npm run posture -- --remote` prints). */
export function formatListing(listing: Listing): string[] {
  const lines = [`overlay version ${listing.version}${listing.overlayError === null ? "" : `: UNREADABLE, the gateway serves the base roster (${listing.overlayError})`}`];
  for (const s of listing.servers) {
    const mark = s.source === "base" ? "      " : s.source === "runtime:added" ? "[RT+] " : "[RT~] ";
    const target = s.kind === "remote-http" ? String(s.url) : `${String(s.bundle)}${String(s.path)}`;
    lines.push(`${mark}${s.slug} (${s.kind} ${target}) entitlements: ${s.entitlements.join(", ")}; timeoutMs: ${s.timeoutMs}; ${s.source}`);
  }
  lines.push("[RT+] added at runtime, [RT~] a checked-in entry changed at runtime; unmarked: the checked-in roster");
  return lines;
}

/** The runtime entries against the base: what each adds or changes. */
export function formatDiff(listing: Listing): string[] {
  if (listing.overlay === null) return [`the overlay is unreadable: ${listing.overlayError ?? ""}`];
  const lines: string[] = [];
  for (const a of listing.overlay.add) lines.push(`+ ${String(a.slug)}: ${JSON.stringify(a)}`);
  for (const c of listing.overlay.change) {
    const { slug, ...keys } = c;
    lines.push(`~ ${String(slug)}: ${JSON.stringify(keys)}`);
  }
  return lines.length === 0 ? ["no runtime entries: the gateway serves the checked-in roster"] : lines;
}

function readEntry(file: string, stdin: () => string): { ok: true; entry: unknown } | { ok: false; message: string } {
  let text: string;
  try {
    text = file === "-" ? stdin() : readFileSync(file, "utf8");
  } catch {
    return { ok: false, message: `${file}: cannot read the file` };
  }
  try {
    return { ok: true, entry: parseYaml(text) };
  } catch {
    return { ok: false, message: `${file}: not YAML or JSON` };
  }
}

export async function run(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  out: (line: string) => void,
  err: (line: string) => void,
  stdin: () => string = () => readFileSync(0, "utf8"),
): Promise<number> {
  const [gateway, command, ...rest] = argv;
  const want = { list: 0, diff: 0, history: 0, add: 1, remove: 1, set: 2, replace: 2 } as const;
  if (gateway === undefined || command === undefined || !(command in want) || rest.length !== want[command as keyof typeof want]) {
    err(USAGE);
    return 1;
  }
  const done = (r: AdminResult, show: (body: unknown) => string[]): number => {
    if (!r.ok) {
      err(r.message);
      return 1;
    }
    for (const line of show(r.body)) out(line);
    return 0;
  };
  const wrote = (body: unknown) => {
    const b = body as { op: string; slug: string; version: number; source: string };
    return [`${b.op} ${b.slug}: written, overlay version ${b.version} (${b.source}); every gateway isolate serves it within ${OVERLAY_TTL_MS / 1000} s`];
  };
  switch (command) {
    case "list":
      return done(await adminRequest(gateway, "", env), (b) => formatListing(b as Listing));
    case "diff":
      return done(await adminRequest(gateway, "", env), (b) => formatDiff(b as Listing));
    case "history":
      return done(await adminRequest(gateway, "/history", env), (b) =>
        (b as { history: Record<string, unknown>[] }).history.map((h) => `${h.at} ${h.who} ${h.op} ${h.slug} v${h.version} ${String(h.before).slice(0, 12)} -> ${String(h.after).slice(0, 12)}`),
      );
    case "remove":
      return done(await adminRequest(gateway, `/servers/${encodeURIComponent(rest[0] as string)}`, env, { method: "DELETE" }), wrote);
    case "add": {
      const entry = readEntry(rest[0] as string, stdin);
      if (!entry.ok) return done({ ok: false, message: entry.message }, () => []);
      return done(await adminRequest(gateway, "/servers", env, { method: "POST", body: entry.entry }), wrote);
    }
    default: {
      const entry = readEntry(rest[1] as string, stdin);
      if (!entry.ok) return done({ ok: false, message: entry.message }, () => []);
      const method = command === "set" ? "PATCH" : "PUT";
      return done(await adminRequest(gateway, `/servers/${encodeURIComponent(rest[0] as string)}`, env, { method, body: entry.entry }), wrote);
    }
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  run(
    process.argv.slice(2),
    process.env,
    (l) => process.stdout.write(`${l}\n`),
    (l) => process.stderr.write(`${l}\n`),
  ).then((code) => {
    process.exitCode = code;
  });
}
