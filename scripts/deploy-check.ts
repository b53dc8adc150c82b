// `npm run deploy:check [-- --remote] [--root <dir>]`: what a `wrangler deploy` of this tree would ship, checked
// before anything leaves the machine. Each Worker (the bundles, the approval service, the gateway) is built as
// `wrangler deploy` builds it (`--dry-run`, top level only: never .dev.vars, never the dev roster), and fails,
// naming the Worker and the binding, on
//   - a development switch (DEV_MODE, ACCESS_EMULATION, STRAD_DEV_*, DEV_*), whatever its value;
//   - a value equal to one of any .dev.vars.example in the tree (a dev secret, the fakes' URLs);
//   - a URL on a loopback host, or an http: URL, in a var or in the production roster;
//   - a secret in plain [vars] (a name the tree seeds as a secret, or one that reads like a credential);
//   - a development poll or keepalive interval;
//   - a missing production setting (the approval service's Access team and audience);
//   - a gateway build that holds the dev roster, or does not hold the production one;
//   - a public address off the gateway: a Worker but the gateway without `workers_dev = false` and `preview_urls =
//     false`, a bundle with a route, an approval service with none, or a gateway binding without the props a bundle
//     answers to (docs/rules.md R-DEPLOY-4, R-CHAN-13).
// Placeholders (`<...>`, example.com) pass the check but are listed; `npm run deploy` refuses them.
// Each Worker's size, as the dry run reports it ("Total Upload: … / gzip: …"), is printed against Cloudflare's size
// limits: over the Workers Paid plan's compressed limit or the uncompressed one fails, naming the Worker; over the
// Free plan's compressed limit is a warning naming it (docs/rules.md R-DEPLOY-5).
// It then prints every secret to seed, derived from the roster, as `wrangler secret put NAME -c <config>` lines;
// with --remote it asks Cloudflare which are already seeded (`wrangler secret list`).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { unstable_readConfig } from "wrangler";
import { cameOverGatewayBinding, GATEWAY_PROPS } from "../bundles/kit/gateway-only";
import { isLoopbackHost } from "../contract/url-policy";
import type { Roster } from "../worker/roster";
import { parseRoster } from "../worker/roster-text";
// @ts-expect-error: plain ESM helper without types
import { BUILD_META, dryRun } from "./build-memo.mjs";
import { checkBundles, readBundleTree } from "./check-config";
import { compiledPath } from "./compile-roster";
// @ts-expect-error: plain ESM helper without types
import { renderBundleEnv, slugNamespace } from "./roster-env.mjs";
// @ts-expect-error: plain ESM helper without types
import { DEV_ROSTER, discoverWorkers, ROOT, ROSTER } from "./workers.mjs";

/** One Worker as a deploy sees it: its config, its top-level vars plus the roster's env rendered for it. */
export interface DeployWorker {
  role: "gateway" | "bundle" | "approvals";
  name: string;
  config: string;
  vars: Record<string, string>;
  /** The roster's servers[].env rendered for this Worker (`--var` at deploy); a subset of `vars`. */
  rendered: Record<string, string>;
  /** The wrangler environment chosen for this deployment (`--env`), when not the config's top level (BUILD_CHOICES). */
  env?: string;
}

/**
 * The builds an operator chooses per deployment, one flag each on deploy and deploy:check: the Worker's config, and each
 * choice's wrangler environment (undefined: the config's top level). The 1Password bundle's `connect` drops the
 * official SDK and its WebAssembly (bundles/onepassword/wrangler.toml [env.connect]): 0.2 MiB gzipped instead of 4.2,
 * so it fits the Workers Free plan, and a mount seeded with a service-account token is refused there.
 */
export const BUILD_CHOICES: Record<string, { config: string; choices: Record<string, string | undefined>; unread?: Record<string, { secrets: readonly string[]; note: string }> }> = {
  "--onepassword": {
    config: "bundles/onepassword/wrangler.toml",
    choices: { full: undefined, connect: "connect" },
    unread: {
      connect: {
        secrets: ["OP_SERVICE_ACCOUNT_TOKEN"],
        note: "the Connect-only build: a mount is served from its OP_CONNECT_HOST and OP_CONNECT_TOKEN, and one whose OP_SERVICE_ACCOUNT_TOKEN is set is refused (that token is read first): delete any such secret (`wrangler secret delete <NAME> -c bundles/onepassword/wrangler.toml`). Give --onepassword connect on every deploy: without it the full build goes up",
      },
    },
  },
};

/** What a chosen build does not read of its bundle's secrets, and what an operator must know of it; undefined for the top level. */
function unreadBy(w: { config: string; env?: string }): { secrets: readonly string[]; note: string } | undefined {
  if (w.env === undefined) return undefined;
  return Object.values(BUILD_CHOICES).find((c) => c.config === w.config)?.unread?.[w.env];
}

/** Reads `--onepassword connect` and the like into `envs` (config → wrangler environment); an error names the flag and its choices. */
export function chooseBuild(flag: string, value: string | undefined, envs: Record<string, string>): string | undefined {
  const choice = BUILD_CHOICES[flag];
  if (choice === undefined) return `unknown option ${flag}`;
  if (value === undefined || !Object.hasOwn(choice.choices, value)) return `${flag} takes one of: ${Object.keys(choice.choices).join(", ")}`;
  const env = choice.choices[value];
  if (env === undefined) delete envs[choice.config];
  else envs[choice.config] = env;
  return undefined;
}

/** The build flags that give `envs` back (` --onepassword connect`), for a command suggested to run next: a choice is not remembered. */
export function buildFlags(envs: Record<string, string>): string {
  return Object.entries(BUILD_CHOICES)
    .map(([flag, c]) => {
      const name = Object.entries(c.choices).find(([, env]) => env !== undefined && env === envs[c.config])?.[0];
      return name === undefined ? "" : ` ${flag} ${name}`;
    })
    .join("");
}

/** `--env NAME` for a Worker whose deployment chose an environment. */
export function envArgs(w: { env?: string }): string[] {
  return w.env === undefined ? [] : ["--env", w.env];
}

/** How a line names a Worker: its name and config, and the environment when one was chosen. */
export function workerLabel(w: { name: string; config: string; env?: string }): string {
  return `${w.name} (${w.config}${w.env === undefined ? "" : ` --env ${w.env}`})`;
}

export interface Secret {
  name: string;
  config: string;
  worker: string;
  why: string;
  optional?: boolean;
}

export interface Plan {
  workers: DeployWorker[];
  secrets: Secret[];
  errors: string[];
  placeholders: string[];
  /** Each Worker's size as its dry run reported it (only when the check built them). */
  sizes?: { worker: string; config: string; env?: string; size: WorkerSize }[];
  /** What a chosen build changes for the operator (BUILD_CHOICES): printed, never a failure. */
  notes?: string[];
  /** What deploys on one plan only: printed, never a failure. */
  warnings?: string[];
}

/** A build's size in bytes, as `wrangler deploy --dry-run` reports it: everything uploaded, and that gzipped. */
export interface WorkerSize {
  upload: number;
  gzip: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;
/**
 * Cloudflare's Worker size limits, as wrangler 4.86 holds them (3 MiB gzip in its bundle reporter) and the limits page
 * states them: compressed 3 MiB on Workers Free and 10 MiB on Workers Paid, and 64 MiB uncompressed on every plan.
 * (Cloudflare's changelog of 2026-09-04 drops the compressed limits for the 64 MiB one; the check keeps them as the
 * stricter reading until the project's wrangler and docs/deploy.md follow.)
 */
export const SIZE_LIMITS = Object.freeze({ freeGzip: 3 * MIB, paidGzip: 10 * MIB, upload: 64 * MIB });

const UNITS: Record<string, number> = { B: 1, KiB: KIB, MiB: MIB, GiB: 1024 * MIB };
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** The "Total Upload: 1328.77 KiB / gzip: 239.14 KiB" line of a dry run's output, in bytes; undefined without one. */
export function parseTotalUpload(output: string): WorkerSize | undefined {
  const m = /Total Upload:\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB)\s*\/\s*gzip:\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB)\b/.exec(output.replace(ANSI, ""));
  if (m === null) return undefined;
  const bytes = (value: string | undefined, unit: string | undefined) => Math.round(Number(value) * (UNITS[unit ?? ""] ?? Number.NaN));
  return { upload: bytes(m[1], m[2]), gzip: bytes(m[3], m[4]) };
}

const showSize = (bytes: number) => (bytes >= MIB ? `${(bytes / MIB).toFixed(2)} MiB` : `${(bytes / KIB).toFixed(2)} KiB`);

/**
 * One Worker's size against SIZE_LIMITS (each limit inclusive): its line, and an error when no plan deploys it or a
 * warning when Workers Free does not (docs/rules.md R-DEPLOY-5).
 */
export function sizeFindings(where: string, size: WorkerSize): { line: string; errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (size.gzip > SIZE_LIMITS.paidGzip) errors.push(`${where}: ${showSize(size.gzip)} compressed is over the Workers Paid plan's 10 MiB limit, so no plan deploys it`);
  else if (size.gzip > SIZE_LIMITS.freeGzip) warnings.push(`${where}: ${showSize(size.gzip)} compressed is over the Workers Free plan's 3 MiB limit: it deploys on Workers Paid only`);
  if (size.upload > SIZE_LIMITS.upload) errors.push(`${where}: ${showSize(size.upload)} uncompressed is over Cloudflare's 64 MiB Worker size limit`);
  const verdict = errors.length > 0 ? "OVER THE LIMIT" : warnings.length > 0 ? "Workers Paid only" : "fits every plan";
  return { line: `  ${where}: upload ${showSize(size.upload)} / gzip ${showSize(size.gzip)}: ${verdict}`, errors, warnings };
}

/** Variables that only ever switch development behaviour on; production sets none of them, to any value. */
const DEV_SWITCH = /^(?:DEV_|STRAD_DEV_)|^ACCESS_EMULATION$/;
/** Names that read like a credential: a value under one belongs in `wrangler secret put`, not in [vars]. */
const CREDENTIAL_NAME = /(?:SECRET|TOKEN|PASSWORD|PRIVATE_KEY|API_KEY|CLIENT_ID)$/;
/** The kit's production intervals are 5 s between polls and 30 s between keepalives; faster is a dev setting. */
const MIN_INTERVAL_MS: Record<string, number> = { STRAD_POLL_INTERVAL_MS: 1000, STRAD_KEEPALIVE_MS: 5000 };
/** What each role needs set before anyone can use it (a var or a secret). */
const REQUIRED_VARS: Record<DeployWorker["role"], { name: string; why: string }[]> = {
  approvals: [
    { name: "ACCESS_TEAM_DOMAIN", why: "people sign in through Cloudflare Access: your team domain" },
    { name: "ACCESS_AUD", why: "the Access application's audience tag, checked on every person's token" },
  ],
  gateway: [],
  bundle: [],
};
const APPROVALS_SECRETS: Omit<Secret, "config" | "worker">[] = [
  { name: "SESSION_SECRET", why: "signs approval sessions and review links (at least 32 characters)" },
  { name: "OPERATOR_TOKEN", why: "lets an operator mint approval sessions (POST /api/v1/sessions; at least 16 characters)" },
];

function placeholderIn(value: string): boolean {
  if (/<[^<>]+>/.test(value)) return true;
  return /(?:^|[/.@])example\.(?:com|net|org)(?:[:/]|$)/i.test(value);
}

/** Every http(s) URL in a value (a var may hold a space- or comma-separated list). */
function urlsIn(value: string): URL[] {
  const urls: URL[] = [];
  for (const token of value.split(/[\s,]+/)) {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(token)) continue;
    try {
      urls.push(new URL(token));
    } catch {}
  }
  return urls;
}

/** Every value of every .dev.vars.example in the tree, mapped to the file that holds it. */
export function devValues(root: string, workers: { config: string }[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const w of workers) {
    const file = join(dirname(w.config), ".dev.vars.example");
    if (!existsSync(join(root, file))) continue;
    for (const line of readFileSync(join(root, file), "utf8").split("\n")) {
      const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"?([^"]*)"?\s*$/.exec(line);
      // Empty values and bare words ("1", "true") say nothing about where a value came from.
      if (m?.[2] !== undefined && m[2].length >= 6 && !/^(?:true|false|\d+)$/.test(m[2])) values.set(m[2], `${file} (${m[1]})`);
    }
  }
  return values;
}

/** What is wrong with one var of one Worker; `where` names the Worker and binding. */
export function varProblems(name: string, value: string, where: string, dev: Map<string, string>, secretNames: Set<string>): string[] {
  const problems: string[] = [];
  if (DEV_SWITCH.test(name)) problems.push(`${where}: ${name} is a development switch; production sets it nowhere (remove it)`);
  const devFile = dev.get(value);
  if (devFile !== undefined) problems.push(`${where}: ${name} holds the development value of ${devFile}`);
  if (secretNames.has(name) || CREDENTIAL_NAME.test(name)) problems.push(`${where}: ${name} is a secret in plain [vars]; seed it with \`wrangler secret put ${name}\` instead`);
  const floor = MIN_INTERVAL_MS[name];
  if (floor !== undefined && (!/^\d+$/.test(value) || Number(value) < floor)) problems.push(`${where}: ${name}=${value} is a development interval (production: unset, or at least ${floor} ms)`);
  // IMAP in clear text, or to this machine: production reaches mail over TLS or STARTTLS only (docs/rules.md R-MAIL-1).
  if (/(?:^|__)IMAP_SECURITY$/.test(name) && value.trim().toLowerCase() === "plain")
    problems.push(`${where}: ${name}="plain" sends IMAP passwords and mail in clear text; production uses "tls" or "starttls"`);
  if (/(?:^|__)IMAP_HOST$/.test(name) && isLoopbackHost(value.trim())) problems.push(`${where}: ${name} is a loopback host, which is this machine only`);
  for (const url of urlsIn(value)) {
    if (isLoopbackHost(url.hostname)) problems.push(`${where}: ${name} points at a loopback host (${url.origin}), which is this machine only`);
    else if (url.protocol === "http:") problems.push(`${where}: ${name} is an http: URL (${url.origin}); production uses https:`);
  }
  return problems;
}

/** The production roster's own problems: a loopback or http: approval prefix or remote URL, a literal dev value. */
export function rosterProblems(roster: Roster, dev: Map<string, string>): string[] {
  const problems: string[] = [];
  const where = `${ROSTER}`;
  const url = (path: string, value: string) => {
    for (const u of urlsIn(value)) {
      if (isLoopbackHost(u.hostname)) problems.push(`${where} ${path}: ${value} is on a loopback host, which is this machine only`);
      else if (u.protocol === "http:") problems.push(`${where} ${path}: ${value} is an http: URL; production uses https:`);
    }
  };
  for (const [i, p] of roster.gateway.elicitation.allowedUrlPrefixes.entries()) url(`gateway.elicitation.allowedUrlPrefixes[${i}]`, p);
  roster.servers.forEach((s, i) => {
    for (const [j, p] of (s.approvalUrlPrefixes ?? []).entries()) url(`servers[${i}].approvalUrlPrefixes[${j}]`, p);
    if (s.url !== undefined) url(`servers[${i}].url`, s.url);
    for (const [kind, map] of [
      ["headers", s.headers],
      ["confirmationHeaders", s.confirmationHeaders],
    ] as const) {
      for (const [header, value] of Object.entries(map)) {
        const file = dev.get(value);
        if (file !== undefined) problems.push(`${where} servers[${i}].${kind}.${header}: holds the development value of ${file}`);
      }
    }
  });
  return problems;
}

/** `${VAR}` names in a header value. */
const refs = (value: string): string[] => [...value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);

/** Every secret the roster and the tree need, each on the Worker that reads it. */
export function secretsFor(roster: Roster, workers: DeployWorker[], manifests: Map<string, string[]>, services: Map<string, string>): Secret[] {
  const secrets: Secret[] = [];
  const seen = new Set<string>();
  const add = (worker: DeployWorker | undefined, s: Omit<Secret, "config" | "worker">) => {
    if (worker === undefined || seen.has(`${worker.config}\u0000${s.name}`)) return;
    seen.add(`${worker.config}\u0000${s.name}`);
    secrets.push({ ...s, config: worker.config, worker: worker.name });
  };
  const gateway = workers.find((w) => w.role === "gateway");
  roster.callers.forEach((c) => {
    add(gateway, { name: c.tokenSecret, why: `caller "${c.id}"'s bearer token` });
  });
  roster.servers.forEach((s) => {
    for (const [kind, map] of [
      ["headers", s.headers],
      ["confirmationHeaders", s.confirmationHeaders],
    ] as const) {
      for (const [header, value] of Object.entries(map)) {
        for (const ref of refs(value)) {
          add(gateway, {
            name: `${slugNamespace(s.slug)}${ref}`,
            why: `slug "${s.slug}" ${kind}.${header} (\${${ref}}; the shared ${ref} is read only when this is unset)`,
            optional: s.mayBeUnseeded.includes(ref),
          });
        }
      }
    }
    if (s.kind !== "bundle" || s.bundle === undefined || s.path === undefined) return;
    const service = services.get(s.bundle);
    const bundle = workers.find((w) => w.role === "bundle" && w.name === service);
    const mount = s.path.replace(/^\//, "");
    for (const name of manifests.get(service ?? "") ?? []) add(bundle, { name: `${slugNamespace(mount)}${name}`, why: `mount ${s.path}'s ${name} (slug "${s.slug}")` });
    // A slug that asks at the client needs its bundle's seal key, one per bundle Worker (docs/rules.md R-SEAL-1).
    if (s.clientQuestions)
      add(bundle, {
        name: "STRAD_SEAL_KEY",
        why: `seals the questions slug "${s.slug}" asks at a client (at least 32 random characters; to rotate, move the old value to STRAD_SEAL_KEY_PREVIOUS first)`,
      });
  });
  const approvals = workers.find((w) => w.role === "approvals");
  for (const s of APPROVALS_SECRETS) add(approvals, s);
  return secrets;
}

/** What a Worker's config says about its public addresses and bindings (wrangler's own reading of it). */
export interface Exposure {
  workers_dev?: boolean;
  preview_urls?: boolean;
  route?: unknown;
  routes?: readonly unknown[];
  services?: readonly { binding: string; props?: unknown }[];
}

const flagState = (value: boolean | undefined) => (value === undefined ? "is not set" : `= ${value}`);

/**
 * How a Worker could be reached other than as intended (docs/rules.md R-DEPLOY-4): only the gateway has a public
 * address. Any other Worker turns off workers.dev and Preview URLs, both in so many words (wrangler leaves an unset
 * preview_urls at the account's default); a bundle has no route, and the approval service has the one Access covers.
 * The gateway gives every bundle binding the props the kit answers to (R-CHAN-13).
 */
export function exposureProblems(role: DeployWorker["role"], where: string, config: Exposure): string[] {
  const problems: string[] = [];
  const routes = [...(config.routes ?? []), ...(config.route === undefined ? [] : [config.route])];
  if (role === "gateway") {
    for (const s of config.services ?? []) {
      if (!cameOverGatewayBinding(s.props))
        problems.push(`${where} [[services]] ${s.binding}: the binding does not carry props = { from = "${GATEWAY_PROPS.from}" }, so the bundle refuses every call`);
    }
    return problems;
  }
  const off = "only the gateway has a public address";
  if (config.workers_dev !== false) problems.push(`${where} workers_dev ${flagState(config.workers_dev)}: ${off}; set \`workers_dev = false\``);
  if (config.preview_urls !== false) problems.push(`${where} preview_urls ${flagState(config.preview_urls)}: ${off}, and a Preview URL is public; set \`preview_urls = false\``);
  if (role === "bundle" && routes.length > 0) problems.push(`${where} routes: a bundle has no route; only the gateway's binding reaches it`);
  if (role === "approvals" && routes.length === 0) problems.push(`${where} routes: the approval service has no route; give it the hostname your Access application covers (docs/deploy.md §3)`);
  return problems;
}

/** Each route's hostname or pattern, for the placeholder list. */
function routePatterns(config: Exposure): string[] {
  return [...(config.routes ?? []), ...(config.route === undefined ? [] : [config.route])].map((r) => (typeof r === "string" ? r : String((r as { pattern?: unknown }).pattern)));
}

/** Reads the tree as a deploy would: no wrangler build, no network. */
export function planDeploy(root: string = ROOT, envs: Record<string, string> = {}): Plan {
  const errors: string[] = [];
  const placeholders: string[] = [];
  const found = discoverWorkers(root);
  const listed: { role: DeployWorker["role"]; name: string; config: string; dir?: string }[] = [
    ...found.bundles.map((b: { name: string; config: string; dir: string }) => ({ role: "bundle" as const, ...b })),
    { role: "approvals", ...found.approvals },
    { role: "gateway", ...found.gateway },
  ];
  const dev = devValues(root, [found.gateway, ...found.bundles, found.approvals]);

  const rosterText = readFileSync(join(root, ROSTER), "utf8");
  const parsed = parseRoster(rosterText);
  if (!parsed.ok) return { workers: [], secrets: [], errors: parsed.errors.map((e) => `${ROSTER} ${e.path}: ${e.message}`), placeholders };
  const roster = parsed.roster;
  const tree = readBundleTree(root);
  errors.push(...checkBundles(roster, tree).map((e) => `${ROSTER} ${e.path}: ${e.message}`));
  errors.push(...rosterProblems(roster, dev));
  const services = new Map<string, string>(tree.services.filter((s) => s.binding !== undefined && s.service !== undefined).map((s) => [s.binding as string, s.service as string]));
  const rendered = renderBundleEnv(roster.servers, (binding: string) => services.get(binding));
  errors.push(...(rendered.errors as string[]).map((e) => `${ROSTER} ${e}`));

  const manifests = new Map<string, string[]>();
  for (const b of tree.bundles) manifests.set(b.name, b.manifest.ok ? [...b.manifest.secrets] : []);

  const workers: DeployWorker[] = listed.map((w) => {
    const env = envs[w.config];
    const config = unstable_readConfig({ config: join(root, w.config), ...(env === undefined ? {} : { env }) }, { hideWarnings: true });
    if (env !== undefined && config.name !== w.name) errors.push(`${workerLabel({ ...w, env })}: the environment deploys as "${config.name}", not as the ${w.name} the gateway binds`);
    errors.push(...exposureProblems(w.role, workerLabel({ ...w, env }), config));
    for (const [i, pattern] of routePatterns(config).entries()) if (placeholderIn(pattern)) placeholders.push(`${w.name} (${w.config}) routes[${i}] = ${pattern}`);
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(config.vars ?? {})) vars[k] = typeof v === "string" ? v : JSON.stringify(v);
    const fromRoster = (rendered.vars.get(w.name) ?? {}) as Record<string, string>;
    for (const [k, v] of Object.entries(fromRoster)) {
      if (k in vars) errors.push(`${w.name} (${w.config}) ${k}: the roster's servers[].env renders ${k}, which the config's [vars] already sets`);
      vars[k] = v;
    }
    return { role: w.role, name: w.name, config: w.config, vars, rendered: fromRoster, ...(env === undefined ? {} : { env }) };
  });

  // A chosen build that reads fewer of its bundle's secrets lists only those it reads (the 1Password Connect-only build).
  const notes: string[] = [];
  for (const w of workers) {
    const unread = unreadBy(w);
    if (unread === undefined) continue;
    manifests.set(
      w.name,
      (manifests.get(w.name) ?? []).filter((name) => !unread.secrets.includes(name)),
    );
    notes.push(`${workerLabel(w)}: ${unread.note}`);
  }
  const secrets = secretsFor(roster, workers, manifests, services);
  for (const w of workers) {
    const secretNames = new Set(secrets.filter((s) => s.config === w.config).map((s) => s.name));
    for (const [name, value] of Object.entries(w.vars)) {
      const where = `${w.name} (${w.config}) [vars] ${name}`;
      errors.push(...varProblems(name, value, where, dev, secretNames));
      if (placeholderIn(value)) placeholders.push(`${where} = ${value}`);
    }
    for (const need of REQUIRED_VARS[w.role]) {
      if (w.vars[need.name] === undefined || w.vars[need.name]?.trim() === "") errors.push(`${w.name} (${w.config}) [vars] ${need.name}: missing production setting (${need.why})`);
    }
  }
  const rosterPlaceholders = (label: string, value: string) => {
    if (placeholderIn(value)) placeholders.push(`${ROSTER} ${label} = ${value}`);
  };
  for (const [i, p] of roster.gateway.elicitation.allowedUrlPrefixes.entries()) rosterPlaceholders(`gateway.elicitation.allowedUrlPrefixes[${i}]`, p);
  roster.servers.forEach((s, i) => {
    for (const [j, p] of (s.approvalUrlPrefixes ?? []).entries()) rosterPlaceholders(`servers[${i}].approvalUrlPrefixes[${j}]`, p);
    if (s.url !== undefined) rosterPlaceholders(`servers[${i}].url`, s.url);
  });
  return { workers, secrets, errors, placeholders, ...(notes.length > 0 ? { notes } : {}) };
}

/**
 * Builds each Worker exactly as `wrangler deploy` would (`--dry-run`, the rendered roster env as `--var`), and
 * checks the gateway's build holds the production roster and nothing of the dev one.
 */
export function buildProblems(root: string, workers: DeployWorker[]): string[] {
  return buildWorkers(root, workers).problems;
}

/** buildProblems, with each Worker's size as its dry run reported it (its problems include a size over a limit). */
export function buildWorkers(root: string, workers: DeployWorker[]): { problems: string[]; sizes: NonNullable<Plan["sizes"]>; warnings: string[] } {
  const problems: string[] = [];
  const sizes: NonNullable<Plan["sizes"]> = [];
  const warnings: string[] = [];
  const out = mkdtempSync(join(tmpdir(), "strad-deploy-check-"));
  try {
    for (const w of workers) {
      const outdir = join(out, w.name);
      try {
        const output: string = dryRun({
          root,
          config: w.config,
          environment: w.env,
          extra: varArgs(w.rendered),
          outdir,
          processEnv: { ...process.env, XDG_CONFIG_HOME: join(root, ".xdg"), WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" },
        });
        const size = parseTotalUpload(output);
        // No size line means no size checked: a failure, never a silent pass (a wrangler that words it otherwise).
        if (size === undefined) problems.push(`${workerLabel(w)}: wrangler's dry run printed no "Total Upload: … / gzip: …" line, so its size is unchecked`);
        else {
          sizes.push({ worker: w.name, config: w.config, ...(w.env === undefined ? {} : { env: w.env }), size });
          const found = sizeFindings(workerLabel(w), size);
          problems.push(...found.errors);
          warnings.push(...found.warnings);
        }
      } catch (error) {
        const output = error instanceof Error && "stderr" in error ? String(error.stderr) : "";
        const line = output.split("\n").find((l) => /ERROR|✘/.test(l)) ?? "wrangler deploy --dry-run failed";
        problems.push(`${workerLabel(w)}: does not build: ${line.replace(/\s+/g, " ").trim()}`);
        continue;
      }
      if (w.role !== "gateway") continue;
      // The entry imports its roster compiled at build time (scripts/compile-roster.ts): esbuild's record of the build
      // names the compiled file each roster became.
      const inputs = Object.keys((JSON.parse(readFileSync(join(outdir, BUILD_META), "utf8")) as { inputs: Record<string, unknown> }).inputs);
      const holds = (roster: string) => inputs.some((f) => f.split("\\").join("/") === compiledPath(".", roster).replace(/^\.\//, ""));
      if (holds(DEV_ROSTER)) problems.push(`${w.name} (${w.config}): the build holds the dev roster ${DEV_ROSTER}; main must be worker/index.ts`);
      if (!holds(ROSTER)) problems.push(`${w.name} (${w.config}): the build does not hold the production roster ${ROSTER}`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return { problems, sizes, warnings };
}

/** `--var NAME:VALUE` for each rendered variable (wrangler splits at the first colon). */
export function varArgs(vars: Record<string, string>): string[] {
  return Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
}

/** Which of a Worker's secrets Cloudflare already holds (`wrangler secret list`); undefined when it cannot tell. */
function seededRemotely(root: string, config: string): Set<string> | undefined {
  try {
    const out = execFileSync(join(ROOT, "node_modules/.bin/wrangler"), ["secret", "list", "--format", "json", "-c", config], { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
    return new Set((JSON.parse(out) as { name: string }[]).map((s) => s.name));
  } catch {
    return undefined;
  }
}

export function report(plan: Plan, options: { remote?: (config: string) => Set<string> | undefined } = {}): string[] {
  const lines: string[] = [];
  if (plan.errors.length > 0) {
    lines.push(`deploy:check FAILED: ${plan.errors.length} problem(s) a deploy would ship:`);
    for (const e of plan.errors) lines.push(`  ✗ ${e}`);
  } else {
    lines.push(`deploy:check ok: ${plan.workers.map((w) => w.name).join(", ")} build as deployed with no dev value, no loopback or http: URL and no secret in [vars]`);
  }
  if (plan.sizes !== undefined && plan.sizes.length > 0) {
    lines.push("", "Sizes as wrangler's dry run reports them (limits: 3 MiB compressed on Workers Free, 10 MiB on Workers Paid, 64 MiB uncompressed):");
    for (const s of plan.sizes) lines.push(sizeFindings(workerLabel({ name: s.worker, config: s.config, ...(s.env === undefined ? {} : { env: s.env }) }), s.size).line);
    for (const w of plan.warnings ?? []) lines.push(`  ! ${w}`);
  }
  for (const note of plan.notes ?? []) lines.push("", `Build chosen: ${note}`);
  if (plan.placeholders.length > 0) {
    lines.push("", "Placeholders to replace before `npm run deploy` (it refuses while any is left):");
    for (const p of plan.placeholders) lines.push(`  - ${p}`);
  }
  if (plan.secrets.length > 0) {
    lines.push("", "Secrets to seed (each asks for its value; nothing is stored in the tree):");
    const byConfig = new Map<string, Set<string> | undefined>();
    for (const s of plan.secrets) {
      if (options.remote !== undefined && !byConfig.has(s.config)) byConfig.set(s.config, options.remote(s.config));
      const seeded = byConfig.get(s.config);
      const state = options.remote === undefined ? "" : seeded === undefined ? "  [could not list]" : seeded.has(s.name) ? "  [seeded]" : "  [MISSING]";
      lines.push(`  wrangler secret put ${s.name} -c ${s.config}${state}    # ${s.why}${s.optional ? " (optional)" : ""}`);
    }
  }
  return lines;
}

const USAGE = "usage: npm run deploy:check [-- --remote] [--root <dir>] [--no-build] [--onepassword full|connect]\n";

function main(argv: readonly string[]): number {
  let root: string = ROOT;
  let remote = false;
  let build = true;
  const envs: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--root" && argv[i + 1] !== undefined) root = argv[++i] as string;
    else if (arg === "--remote") remote = true;
    else if (arg === "--no-build") build = false;
    else if (Object.hasOwn(BUILD_CHOICES, arg)) {
      const wrong = chooseBuild(arg, argv[++i], envs);
      if (wrong !== undefined) {
        process.stderr.write(`deploy:check: ${wrong}\n${USAGE}`);
        return 1;
      }
    } else {
      process.stderr.write(USAGE);
      return 1;
    }
  }
  const plan = planDeploy(root, envs);
  if (build && plan.workers.length > 0) {
    const built = buildWorkers(root, plan.workers);
    plan.errors.push(...built.problems);
    plan.sizes = built.sizes;
    plan.warnings = built.warnings;
  }
  const lines = report(plan, remote ? { remote: (config) => seededRemotely(root, config) } : {});
  (plan.errors.length > 0 ? process.stderr : process.stdout).write(`${lines.join("\n")}\n`);
  return plan.errors.length > 0 ? 1 : 0;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = main(process.argv.slice(2));
