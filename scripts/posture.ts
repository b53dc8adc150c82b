// `npm run posture [roster] [--env <file>] [--json]` (or `-- --remote <gateway-url>`: the roster a gateway serves,
// runtime entries marked, see remotePosture): what each slug of a roster does with its guarded tools
// (ASK a person, act WAIVED, REFUSE) and why, which callers reach it, where its approval requests may go, the
// deadlines the gateway sets, the tool groups its mount serves (a bundle whose bundle.json declares toolGroups,
// e.g. Gmail's GMAIL_ENABLED_TOOLGROUPS) and, for Gmail, the OAuth scopes those groups need
// (bundles/google/google.scopes.ts), and warnings about approval prefixes and edge credentials. Default roster:
// strad.config.yaml (the production one). `--env` names a dotenv file (.dev.vars, or the secrets a deploy
// seeds) so that unseeded `${VAR}`s are named. Values from it are never printed, only variable names.
//
// The verdicts come from the gateway's own code, not a second reading of the rules: worker/channel.ts builds the
// channel a probe call would get (and channelTtlMs its deadline), worker/auth.ts decides who is entitled,
// worker/roster.ts resolves `${VAR}`s and checks seeding, bundles/kit/posture.ts reads the bundle's
// container-wide switches and bundles/kit/tool-groups.ts a mount's tool groups from the env
// scripts/roster-env.mjs renders for it. A bundle that refuses the waiver is quoted in its own words (R-OPS-4).
//
// Warnings (kinds):
//   whole-host                an approval prefix whose path is "/": the edge credential goes to the whole host.
//   prefix-wider-than-route   an approval prefix whose path does not end in "/elicitations/session/", the
//                             fallback-elicitation session route (approvals/protocol.routes.ts): every path
//                             under it gets the slug's confirmationHeaders, so it is wider than an approval
//                             route, or a route this check does not know (the e2e suite's scripted approver).
//   plain-http                an http: prefix or remote-http url whose host is not loopback.
//   headers-to-several-origins  one confirmationHeaders credential may reach more than one approval origin:
//                             one slug's prefixes span origins (the schema refuses this), or slugs asking
//                             different origins resolve one `${VAR}` to the same shared secret.
//   slug-refuses-unseeded     (--env) a slug's `${VAR}` not listed in mayBeUnseeded is unseeded: that slug's calls
//                             refuse, naming the variable, until it is; every other slug answers (R-CONF-8).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { WAIVER_REASON as APPROVAL_FLOW_WAIVER } from "../bundles/approval-flow/approval-flow.watch";
import { gmailScopesFor } from "../bundles/google/google.scopes";
import { elicitationPosture } from "../bundles/kit/posture";
import { elicitationSwitch } from "../bundles/kit/switch";
import { type ToolGroupSpec, toolGroupsFor } from "../bundles/kit/tool-groups";
import { ignoredVariables, WAIVER_REASON as ONEPASSWORD_WAIVER, provisioningPosture } from "../bundles/onepassword/onepassword.confirm";
import type { CallRef } from "../contract/channel";
import { slugNamespace } from "../contract/slug";
import { isLoopbackHost } from "../contract/url-policy";
import { type Caller, CallerTable, isEntitled } from "../worker/auth";
import { buildChannel, channelTtlMs, isGated } from "../worker/channel";
import { checkSeeded, type Roster, type RosterError, refsIn, resolveRefs, type ServerEntry } from "../worker/roster";
import { parseRoster } from "../worker/roster-text";
// @ts-expect-error: plain ESM helper without types
import { gatewayServices } from "./bundle-tree.mjs";
import { readBundleTree } from "./check-config";
import { adminRequest, formatListing, type Listing } from "./roster";
// @ts-expect-error: plain ESM helper without types
import { renderBundleEnv } from "./roster-env.mjs";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "./workers.mjs";

/** TOKEN: a `fallback: token` slug without confirmations: its guarded tools act on the two-call token, asking nobody. */
export type Verdict = "ASK" | "WAIVED" | "REFUSE" | "REFUSE-WHILE-UNSEEDED" | "UNGUARDED" | "TOKEN";
export type WarningKind = "whole-host" | "prefix-wider-than-route" | "plain-http" | "headers-to-several-origins" | "slug-refuses-unseeded";

export interface CallerReach {
  id: string;
  kind: Caller["kind"];
  /** Why it reaches the slug: the roles it shares with the entitlements, or the admin's every role. */
  via: string;
  /** What its guarded calls get on this slug. */
  guarded: string;
  /** --env only: its token secret is unseeded (or too short), so the gateway leaves it out. */
  leftOut?: string;
}

export interface SlugPosture {
  slug: string;
  kind: ServerEntry["kind"];
  target: string;
  verdict: Verdict;
  reasons: string[];
  callers: CallerReach[];
  /** Where approval requests may go: only for a slug with confirmations. */
  approval: { from: "approvalUrlPrefixes" | "gateway.elicitation.allowedUrlPrefixes"; origins: string[]; prefixes: string[] } | null;
  timeoutMs: number;
  /** What the gateway hands the bundle on the channel; null when it forwards none. */
  ttlMs: number | null;
  /** The tool groups its mount serves, read as the bundle reads them; null for a server whose bundle declares none. */
  toolGroups: SlugToolGroups | null;
  /** Gmail only: the OAuth scopes the mount's refresh token needs for the tools it serves (bundles/google/google.scopes.ts). */
  oauthScopes: string[] | null;
}

export type SlugToolGroups =
  /** `declared`: the mount's variable is set; otherwise its bundle's default. `tools`: what the mount lists. */
  | { variable: string; declared: boolean; groups: string[]; tools: string[] }
  /** The setting names no group: the mount serves no tool and refuses every request. */
  | { variable: string; refused: string };

export interface PostureWarning {
  kind: WarningKind;
  slugs: string[];
  message: string;
}

export interface PostureReport {
  allowedUrlPrefixes: string[];
  /** Whether an env file was read, so that unseeded secrets are known rather than assumed seeded. */
  envChecked: boolean;
  slugs: SlugPosture[];
  warnings: PostureWarning[];
}

export interface PostureOptions {
  /** The variables a dotenv file seeds (--env); absent: every `${VAR}` is taken as seeded, mayBeUnseeded ones as maybe not. */
  env?: Record<string, string>;
  /** A roster binding's service name (from wrangler.toml), so that two bindings of one Worker share one env. */
  serviceOf?: (binding: string) => string | undefined;
  /** The tool groups the bundle behind a binding declares (its bundle.json), if any. */
  toolGroupsOf?: (binding: string) => ToolGroupSpec | undefined;
}

export type PostureResult = { ok: true; report: PostureReport } | { ok: false; errors: RosterError[] };

/** The fallback-elicitation session route's tail: a prefix as narrow as an approval route ends in it. */
export const APPROVAL_ROUTE_TAIL = "/elicitations/session/";

const PROBE_CALL: CallRef = { scope: "posture", key: "posture", nonce: "posture-probe-nonce" };
const PROBE_CALLER: Caller = { id: "posture-probe", kind: "session", roles: [], tokenSecret: "POSTURE_PROBE", isAdmin: false };
const NO_CHANNEL = "no confirmations: true: the gateway forwards no approval channel, so its guarded tools refuse (there is no one to ask); its other tools work";
const REMOTE =
  "remote-http: its tools are not the gateway's to guard. The gateway forwards no approval channel, no X-Elicitation-Url and none of the caller's _meta to it (only bundle slugs with confirmations or skipConfirmations get a channel); whatever its tools do, they do without strad asking anyone";

export function postureFromText(yamlText: string, options: PostureOptions = {}): PostureResult {
  const parsed = parseRoster(yamlText);
  return parsed.ok ? { ok: true, report: postureOf(parsed.roster, options) } : { ok: false, errors: parsed.errors };
}

/** Every `${VAR}` a server's headers and confirmationHeaders name, with where. */
function refsOf(s: ServerEntry): { field: "headers" | "confirmationHeaders"; header: string; name: string }[] {
  return (["headers", "confirmationHeaders"] as const).flatMap((field) => Object.entries(s[field]).flatMap(([header, raw]) => refsIn(raw).map((name) => ({ field, header, name }))));
}

/** Without an env file, every reference counts as seeded (as a shared variable), so only the caller and the URL decide. */
function assumedEnv(roster: Roster): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of roster.servers) for (const ref of refsOf(s)) env[ref.name] = "seeded";
  return env;
}

/** The prefixes a slug's approval URL is held to: its own, else every allowed one (worker/channel.ts). */
function approvalPrefixes(s: ServerEntry, roster: Roster): { from: "approvalUrlPrefixes" | "gateway.elicitation.allowedUrlPrefixes"; prefixes: string[] } {
  return s.approvalUrlPrefixes === undefined
    ? { from: "gateway.elicitation.allowedUrlPrefixes", prefixes: roster.gateway.elicitation.allowedUrlPrefixes }
    : { from: "approvalUrlPrefixes", prefixes: s.approvalUrlPrefixes };
}

const originOf = (url: string): string => new URL(url).origin;

/** Where a slug with confirmations may send approval requests: its prefixes and their origins. */
function approvalOf(s: ServerEntry, roster: Roster): NonNullable<SlugPosture["approval"]> {
  const { from, prefixes } = approvalPrefixes(s, roster);
  return { from, origins: [...new Set(prefixes.map(originOf))], prefixes };
}
const unique = <T>(items: T[]): T[] => [...new Set(items)];

/** An X-Elicitation-Url a session could send for this slug: strictly under its first prefix. */
function probeUrl(s: ServerEntry, roster: Roster): string {
  const first = approvalPrefixes(s, roster).prefixes[0];
  return first === undefined ? "https://approvals.invalid/posture" : `${first}posture`;
}

export function postureOf(roster: Roster, options: PostureOptions = {}): PostureReport {
  const envChecked = options.env !== undefined;
  const env: Record<string, string> = options.env ?? assumedEnv(roster);
  const serviceOf = (binding: string) => options.serviceOf?.(binding) ?? binding;
  // The env each bundle Worker is deployed with from the roster, as `npm run deploy` and the dev stack render it.
  const rendered = renderBundleEnv(roster.servers, serviceOf) as { vars: Map<string, Record<string, string>> };
  const callers: Caller[] = roster.callers.map((c) => ({ ...c, isAdmin: c.kind === "admin" }));
  const leftOut = new Set<string>(envChecked ? CallerTable.build(roster, env).unseeded : []);
  // A reference the roster does not let go unseeded makes its own slug refuse, and only it (docs/rules.md R-CONF-8).
  const fatal = envChecked ? checkSeeded(roster, env).filter((e) => e.path.startsWith("servers")) : [];

  const slugs = roster.servers.map((s, index): SlugPosture => {
    const channelFor = (caller: Caller) => buildChannel({ server: s, caller, headerValue: probeUrl(s, roster), roster, env, call: PROBE_CALL });
    // The same caller with no approval URL, its client declaring form elicitation (either revision): whether it is asked at its client.
    const clientChannelFor = (caller: Caller) => buildChannel({ server: s, caller, headerValue: null, roster, env, call: PROBE_CALL, clientForm: true });
    const reasons: string[] = [];
    let verdict: Verdict;
    let toolGroups: SlugToolGroups | null = null;
    let oauthScopes: string[] | null = null;
    if (s.kind === "remote-http") {
      verdict = "UNGUARDED";
      reasons.push(REMOTE);
    } else {
      const channel = channelFor(PROBE_CALLER);
      if (channel === undefined) {
        verdict = "REFUSE";
        reasons.push(NO_CHANNEL);
      } else if ("skip" in channel) {
        const refuses = waiverRefusal(s.bundle as string, serviceOf);
        if (refuses === undefined) {
          verdict = "WAIVED";
          reasons.push(`skipConfirmations: true: guarded tools act without asking anyone, whoever calls and whatever they send; ${WAIVED_SAYS_SO}`);
        } else {
          // The bundle's own refusal, word for word: the gateway forwards the waiver, the bundle will not act on it.
          verdict = "REFUSE";
          reasons.push(`skipConfirmations: true, so the gateway forwards the waiver, but bundle ${s.bundle} refuses it: ${refuses}`);
        }
      } else if ("refused" in channel) {
        verdict = "REFUSE";
        reasons.push(`confirmations: true, but the gateway refuses the channel even to a session with a good X-Elicitation-Url: ${channel.refused}`);
      } else if ("reason" in channel) {
        verdict = "TOKEN";
        reasons.push("fallback: token without confirmations: nobody is ever asked; a guarded call acts on the two-call token alone");
      } else {
        verdict = "ASK";
        const without =
          "url" in channel && channel.fallback === "token" && takesToken(s.bundle as string, serviceOf) ? "a call without one gets the two-call token (below)" : "a call without one is refused";
        reasons.push(`confirmations: true: a guarded call asks the person at the caller's X-Elicitation-Url (held to the approval prefixes below); ${without}`);
        if (s.clientQuestions) reasons.push(CLIENT_QUESTIONS);
      }
      const bundleEnv = rendered.vars.get(serviceOf(s.bundle as string)) ?? {};
      const posture = elicitationPosture(bundleEnv);
      if (!posture.ok) {
        // The channel still goes out; the bundle refuses it, so the channel's own sentence would mislead.
        if (verdict === "ASK" || verdict === "WAIVED") reasons[0] = `${s.confirmations ? "confirmations" : "skipConfirmations"}: true, so the gateway forwards a channel, but the bundle refuses it`;
        verdict = "REFUSE";
        reasons.push(`${posture.reason} (servers[].env of bundle ${s.bundle}): every guarded tool of the bundle refuses, waiver included`);
      }
      const spec = options.toolGroupsOf?.(s.bundle as string);
      if (spec !== undefined) {
        const read = toolGroupsFor(spec, (s.path as string).slice(1), bundleEnv);
        toolGroups = read.ok ? { variable: read.variable, declared: read.declared, groups: [...read.groups], tools: [...read.tools] } : { variable: read.variable, refused: read.reason };
        if (!read.ok) {
          verdict = "REFUSE";
          reasons.push(`its mount serves no tool and refuses every request: ${read.reason}`);
        } else if (isGmail(s, serviceOf)) oauthScopes = gmailScopesFor(read.tools);
      }
      if (isOnePassword(s, serviceOf)) reasons.push(...onePasswordReasons(s, verdict, bundleEnv));
      const token = tokenFallback(s, verdict, serviceOf, bundleEnv);
      verdict = token.verdict;
      reasons.push(...token.reasons);
    }

    for (const ref of refsOf(s)) {
      const where = `${ref.field}.${ref.header} needs \${${ref.name}}`;
      const effect = ref.field === "headers" ? "every call to this slug, tools/list too, fails" : "its guarded tools refuse";
      const maybe = s.mayBeUnseeded.includes(ref.name);
      if (!envChecked) {
        if (!maybe) continue;
        reasons.push(`${where}, listed in mayBeUnseeded: may be unseeded: refuses while unseeded (${effect} until it is seeded)`);
        if (verdict === "ASK" || verdict === "WAIVED") verdict = "REFUSE-WHILE-UNSEEDED";
        continue;
      }
      if (resolveRefs(`\${${ref.name}}`, s.slug, env).ok) continue;
      // The channel's own refusal above already names an unseeded confirmationHeaders secret, as the gateway will.
      if (maybe && ref.field === "confirmationHeaders") continue;
      if (!maybe) {
        reasons.push(`${where}, which is unseeded and not in mayBeUnseeded`);
        verdict = "REFUSE";
        continue;
      }
      reasons.push(`${where}, which is unseeded (neither ${slugVar(s.slug, ref.name)} nor ${ref.name} is set): ${effect}`);
      if (s.kind === "bundle") verdict = "REFUSE";
    }

    const reach = callers
      .filter((c) => isEntitled(c, s.entitlements))
      .map((c): CallerReach => {
        const roles = c.roles.filter((r) => s.entitlements.includes(r));
        const via = c.isAdmin ? "holds every role" : `${roles.length > 1 ? "roles" : "role"} ${roles.join(", ")}`;
        const reachEntry: CallerReach = {
          id: c.id,
          kind: c.kind,
          via,
          guarded: guardedFor(s, verdict, c, channelFor, s.kind === "bundle" && takesToken(s.bundle as string, serviceOf), clientChannelFor),
        };
        if (leftOut.has(c.tokenSecret)) reachEntry.leftOut = `its token secret ${c.tokenSecret} is unseeded or shorter than 16 characters: the gateway leaves it out`;
        return reachEntry;
      });

    const approval = s.kind === "bundle" && s.confirmations ? approvalOf(s, roster) : null;

    const own = fatal.filter((e) => e.path.startsWith(`servers[${index}]`));
    if (own.length > 0) {
      verdict = "REFUSE";
      reasons.push(`its calls refuse, naming the variable, until the secrets named under warnings [slug-refuses-unseeded] are seeded`);
    }
    return {
      slug: s.slug,
      kind: s.kind,
      target: s.kind === "bundle" ? `bundle ${s.bundle} ${s.path}` : `remote-http ${s.url}`,
      verdict,
      reasons,
      callers: reach,
      approval,
      timeoutMs: s.timeoutMs,
      ttlMs: isGated(s) ? channelTtlMs(s.timeoutMs) : null,
      toolGroups,
      oauthScopes,
    };
  });

  return { allowedUrlPrefixes: roster.gateway.elicitation.allowedUrlPrefixes, envChecked, slugs, warnings: warningsOf(roster, slugs, env, envChecked, fatal) };
}

const slugVar = (slug: string, name: string): string => `${slugNamespace(slug)}${name}`;

// ---- The waiver (skipConfirmations): announced where a bundle acts on it, refused where a bundle will not ----
// A bundle whose guarded tools always need a person refuses a waived call with its own WAIVER_REASON; posture
// quotes that same constant, so the report says what the bundle answers (docs/rules.md R-OPS-4).

/** What a waived call's answer says on a bundle that acts on the waiver (bundles/kit/confirm.ts waivedLine). */
export const WAIVED_SAYS_SO = "each such answer carries a line saying nobody was asked";

/** The bundles that refuse the waiver, by service name and by the binding the checked-in rosters give them. */
const WAIVER_REFUSED: ReadonlyMap<string, string> = new Map([
  ["strad-bundle-approval-flow", APPROVAL_FLOW_WAIVER],
  ["APPROVAL_FLOW", APPROVAL_FLOW_WAIVER],
  ["strad-bundle-onepassword", ONEPASSWORD_WAIVER],
  ["ONEPASSWORD", ONEPASSWORD_WAIVER],
]);

/** The bundle's own refusal of a waived call, or undefined when it acts on the waiver. */
export function waiverRefusal(binding: string, serviceOf: (binding: string) => string): string | undefined {
  return WAIVER_REFUSED.get(serviceOf(binding)) ?? WAIVER_REFUSED.get(binding);
}

function isGmail(s: ServerEntry, serviceOf: (binding: string) => string): boolean {
  return s.kind === "bundle" && s.bundle !== undefined && (serviceOf(s.bundle) === "strad-bundle-google" || s.bundle === "GOOGLE");
}

// ---- 1Password (bundles/onepassword): what a slug's reveals, creates and shares do beyond the channel ----
// The bundle's own functions decide (bundles/onepassword/onepassword.confirm.ts): a create goes unasked only under
// the mount's own OP_ELICITATION_WRITE="false"; a reveal and a share always ask; the upstream's bare switches are ignored.

const ONEPASSWORD_SERVICE = "strad-bundle-onepassword";
const CREATES = "onepassword_create_login, onepassword_create_secure_note and onepassword_create_api_credential";

function isOnePassword(s: ServerEntry, serviceOf: (binding: string) => string): boolean {
  return s.kind === "bundle" && s.bundle !== undefined && (serviceOf(s.bundle) === ONEPASSWORD_SERVICE || s.bundle === "ONEPASSWORD");
}

export function onePasswordReasons(s: ServerEntry, verdict: Verdict, bundleEnv: Record<string, string>): string[] {
  const mount = (s.path as string).slice(1);
  const provisioning = provisioningPosture(mount, bundleEnv);
  const reasons: string[] = [];
  if (verdict === "REFUSE") {
    if (provisioning) reasons.push(`1Password provisioning posture (${slugNamespace(mount)}OP_ELICITATION_WRITE is "false"): ${CREATES} act unasked even here; every other guarded tool refuses`);
  } else if (provisioning) {
    reasons.push(
      `1Password provisioning posture (${slugNamespace(mount)}OP_ELICITATION_WRITE is "false"): ${CREATES} act unasked, with or without a channel; onepassword_get_item (a reveal) and onepassword_share_item still ask`,
    );
  } else {
    const waived = s.skipConfirmations ? "; skipConfirmations waives none of them, so they refuse on this slug" : "";
    reasons.push(`1Password: a reveal (onepassword_get_item), every create (${CREATES}) and a share (onepassword_share_item) ask a person${waived}`);
  }
  const ignored = ignoredVariables(mount, bundleEnv);
  if (ignored.length > 0)
    reasons.push(`1Password ignores ${ignored.join(", ")} (the bundle warns of each on every call): no variable but the mount's own OP_ELICITATION_WRITE decides whether it asks`);
  return reasons;
}

function guardedFor(
  s: ServerEntry,
  verdict: Verdict,
  caller: Caller,
  channelFor: (caller: Caller) => ReturnType<typeof buildChannel>,
  takesToken: boolean,
  clientChannelFor: (caller: Caller) => ReturnType<typeof buildChannel> = () => undefined,
): string {
  if (s.kind === "remote-http") return "no channel: not the gateway's to guard";
  if (verdict === "REFUSE") return "refused";
  const channel = channelFor(caller);
  if (channel === undefined) return "refused (no channel)";
  if ("skip" in channel) return "acts unasked";
  if ("refused" in channel) return `refused: ${channel.refused}`;
  if ("reason" in channel) return takesToken ? "the two-call token: nobody is asked" : "refused: nobody can be asked, and its bundle does not take the two-call token";
  const asks =
    "url" in channel && channel.fallback === "token" && takesToken
      ? "asked when it sends an X-Elicitation-Url under the approval prefixes, the two-call token without one"
      : "asked when it sends an X-Elicitation-Url under the approval prefixes, refused without one";
  // The client question (docs/rules.md R-CHAN-15), from the gateway's own buildChannel: the caller names no approval
  // URL, on 2026-07-28 with form elicitation declared.
  const client = clientChannelFor(caller);
  const path = client !== undefined && "ask" in client ? `${asks.replace(/, refused without one$/, "")}; ${CLIENT_PATH}` : asks;
  return caller.isAdmin ? `${path} (an admin is no exception)` : path;
}

/** The reason line of a slug with clientQuestions: true. */
const CLIENT_QUESTIONS =
  "clientQuestions: true: a caller the roster declares asks: client is asked at its own MCP client instead when its call names no X-Elicitation-Url and its client declares form elicitation: over 2026-07-28 as input_required with a requestState the bundle seals with its STRAD_SEAL_KEY, the client's retry carrying the answer; over 2025-11-25 as elicitation/create pushed on the call's stream, the gateway retrying inside the call (the write happens on the retry); every other caller is as above";
/** What a human-backed caller's guarded call without an approval URL gets on such a slug. */
const CLIENT_PATH = "without one, its client declaring form elicitation (2026-07-28, or 2025-11-25 at initialize), asked at its own client (client question, sealed state); otherwise refused";

// ---- The two-call token (bundles/kit/token.ts): a slug's `fallback: token` and the bundle's ELICITATION ----
// Only a bundle that opts in takes the token (pads); it reads ELICITATION with the kit's own function. Gmail and
// 1Password never take it: on them, a call with nobody to ask is refused whatever the slug says.

const TOKEN_BUNDLES = new Set(["strad-bundle-pads"]);
const TOKEN_PROVES = "which proves only that the call was made twice with the same arguments";

function takesToken(binding: string, serviceOf: (binding: string) => string): boolean {
  return TOKEN_BUNDLES.has(serviceOf(binding)) || binding === "PADS";
}

export function tokenFallback(s: ServerEntry, verdict: Verdict, serviceOf: (binding: string) => string, bundleEnv: Record<string, string>): { verdict: Verdict; reasons: string[] } {
  const binding = s.bundle as string;
  const reasons: string[] = [];
  if (!takesToken(binding, serviceOf)) {
    if (s.fallback === "token") reasons.push(`fallback: token, but bundle ${binding} does not take the two-call token: a call with nobody to ask is refused`);
    return { verdict, reasons };
  }
  const sw = elicitationSwitch(bundleEnv);
  if (!sw.ok) return { verdict: "REFUSE", reasons: [`bundle ${binding} has an ELICITATION that is neither true nor false: every request to it fails until it is`] };
  if (s.fallback === "token" && verdict === "ASK") reasons.push(`fallback: token: a guarded call that brings no X-Elicitation-Url gets the two-call token instead of a refusal, ${TOKEN_PROVES}`);
  if (!sw.asks && (verdict === "ASK" || verdict === "TOKEN")) {
    if (s.fallback === "token")
      return { verdict: "TOKEN", reasons: [...reasons, `bundle ${binding} runs with ELICITATION=false: nobody is asked; every guarded call takes the two-call token, ${TOKEN_PROVES}`] };
    return { verdict: "REFUSE", reasons: [...reasons, `bundle ${binding} runs with ELICITATION=false and this slug has no fallback: token: its guarded tools refuse`] };
  }
  return { verdict, reasons };
}

function warningsOf(roster: Roster, slugs: SlugPosture[], env: Record<string, string>, envChecked: boolean, fatal: RosterError[]): PostureWarning[] {
  const warnings: PostureWarning[] = [];
  // One warning per prefix and kind, naming every slug whose approval requests may go there.
  const byPrefix = new Map<string, string[]>();
  for (const p of slugs) for (const prefix of p.approval?.prefixes ?? []) byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), p.slug]);
  for (const [prefix, names] of byPrefix) {
    const url = new URL(prefix);
    const who = `${names.length > 1 ? "slugs" : "slug"} ${names.join(", ")}`;
    const their = names.length > 1 ? "their" : "its";
    if (url.pathname === "/") {
      warnings.push({
        kind: "whole-host",
        slugs: names,
        message: `${prefix} is a whole host: ${who} may be aimed at any path of ${url.origin}, and ${their} confirmationHeaders go with them. List the approval route instead (…${APPROVAL_ROUTE_TAIL}).`,
      });
    } else if (!url.pathname.endsWith(APPROVAL_ROUTE_TAIL)) {
      warnings.push({
        kind: "prefix-wider-than-route",
        slugs: names,
        message: `${prefix} does not end in the approval route (…${APPROVAL_ROUTE_TAIL}): ${who} may be aimed at any path under it, and ${their} confirmationHeaders go with them. Narrow it to the route.`,
      });
    }
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname))
      warnings.push({ kind: "plain-http", slugs: names, message: `${prefix} is plain http on a host that is not loopback: approval requests and their headers would cross the network in clear.` });
  }
  for (const s of roster.servers) {
    if (s.kind !== "remote-http" || s.url === undefined) continue;
    const url = new URL(s.url);
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      warnings.push({ kind: "plain-http", slugs: [s.slug], message: `slug ${s.slug} reaches ${url.origin} over plain http: its calls, answers and headers cross the network in clear.` });
    }
  }

  // One slug's edge credential reaching two approval services (the schema refuses it; kept as a backstop).
  for (const p of slugs) {
    const server = roster.servers.find((s) => s.slug === p.slug);
    if (server === undefined || Object.keys(server.confirmationHeaders).length === 0 || p.approval === null || p.approval.origins.length < 2) continue;
    warnings.push({
      kind: "headers-to-several-origins",
      slugs: [p.slug],
      message: `the confirmationHeaders of ${p.slug} may go to ${p.approval.origins.length} origins (${p.approval.origins.join(", ")}) through its prefixes.`,
    });
  }
  // Slugs asking different approval services that read one shared secret send that credential to each of them.
  const shared = new Map<string, { slugs: string[]; origins: string[] }>();
  for (const p of slugs) {
    const server = roster.servers.find((s) => s.slug === p.slug);
    if (server === undefined || p.approval === null) continue;
    for (const raw of Object.values(server.confirmationHeaders)) {
      for (const name of refsIn(raw)) {
        // Its own <SLUG>__NAME, when seeded, is the slug's alone; without --env it is taken as unseeded (the shared one is used).
        if (envChecked && typeof env[slugVar(server.slug, name)] === "string") continue;
        if (envChecked && typeof env[name] !== "string") continue;
        const entry = shared.get(name) ?? { slugs: [], origins: [] };
        entry.slugs = unique([...entry.slugs, p.slug]);
        entry.origins = unique([...entry.origins, ...p.approval.origins]);
        shared.set(name, entry);
      }
    }
  }
  const grouped = new Map<string, { names: string[]; slugs: string[]; origins: string[] }>();
  for (const [name, entry] of shared) {
    // One slug spanning origins is the backstop above; here it takes two slugs sharing the secret.
    if (entry.origins.length < 2 || entry.slugs.length < 2) continue;
    const key = `${entry.slugs.join(",")}|${entry.origins.join(",")}`;
    const group = grouped.get(key) ?? { names: [], slugs: entry.slugs, origins: entry.origins };
    group.names.push(name);
    grouped.set(key, group);
  }
  for (const { names, slugs: who, origins } of grouped.values()) {
    const unless = envChecked ? "" : ` unless each slug seeds its own <SLUG>__${names[0]}`;
    warnings.push({
      kind: "headers-to-several-origins",
      slugs: who,
      message: `the shared secret${names.length > 1 ? "s" : ""} ${names.join(", ")} in confirmationHeaders reach${names.length > 1 ? "" : "es"} ${origins.length} approval origins (${origins.join(", ")}) through slugs ${who.join(", ")}${unless}: one approval service's edge credential is sent to another.`,
    });
  }

  if (fatal.length > 0) {
    warnings.push({
      kind: "slug-refuses-unseeded",
      slugs: unique(fatal.map((e) => roster.servers[Number(/^servers\[(\d+)\]/.exec(e.path)?.[1])]?.slug ?? e.path)),
      message: `these slugs' calls refuse until their secrets are seeded (every other slug answers): ${fatal.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
    });
  }
  return warnings;
}

/** The report as text lines: one block per slug, then the warnings. */
export function formatPosture(report: PostureReport, header: { roster: string; env?: string }): string[] {
  const lines = [`roster: ${header.roster}`];
  lines.push(header.env === undefined ? "env: not checked (pass --env <file> to name unseeded ${VAR}s)" : `env: ${header.env}`);
  lines.push(`gateway.elicitation.allowedUrlPrefixes: ${report.allowedUrlPrefixes.length === 0 ? "none (every confirmed tool refuses)" : report.allowedUrlPrefixes.join(", ")}`);
  for (const p of report.slugs) {
    lines.push("", `${p.slug}: ${p.verdict}  (${p.target})`);
    for (const reason of p.reasons) lines.push(`  why: ${reason}`);
    if (p.callers.length === 0) lines.push("  callers: none (no caller holds one of its entitlements)");
    else {
      // Callers whose guarded calls fare alike share a line.
      const groups = new Map<string, string[]>();
      for (const c of p.callers) {
        const fate = c.leftOut === undefined ? c.guarded : `left out: ${c.leftOut}`;
        groups.set(fate, [...(groups.get(fate) ?? []), `${c.id} (${c.kind}, ${c.via})`]);
      }
      lines.push("  callers:");
      for (const [fate, who] of groups) lines.push(`    ${who.join(", ")}: ${fate}`);
    }
    if (p.approval === null) lines.push(`  approval: none (${p.kind === "bundle" && p.verdict === "WAIVED" ? "the waiver asks nobody" : "no approval request is sent"})`);
    else {
      const via = p.approval.from === "approvalUrlPrefixes" ? "its approvalUrlPrefixes" : "every gateway.elicitation.allowedUrlPrefixes entry: it lists no approvalUrlPrefixes";
      lines.push(`  approval origins: ${p.approval.origins.join(", ") || "none"}`, `  approval prefixes (${via}): ${p.approval.prefixes.join(", ") || "none"}`);
    }
    lines.push(`  timeoutMs: ${p.timeoutMs}; ttlMs handed to the bundle: ${p.ttlMs === null ? "none (no channel)" : p.ttlMs}`);
    if (p.toolGroups !== null) lines.push(`  tool groups: ${formatToolGroups(p.toolGroups)}`);
    if (p.oauthScopes !== null) lines.push(`  oauth scopes its refresh token needs: ${p.oauthScopes.join(" ") || "none"}`);
  }
  lines.push("", report.warnings.length === 0 ? "warnings: none" : "warnings:");
  for (const w of report.warnings) lines.push(`  [${w.kind}] ${w.message}`);
  return lines;
}

/** One line: the groups, where they come from, and the tools the mount lists; or why it serves none. */
export function formatToolGroups(t: SlugToolGroups): string {
  if ("refused" in t) return `none, every request refused: ${t.refused}`;
  const from = t.declared ? t.variable : `the default: ${t.variable} is not set`;
  return `${t.groups.join(", ")} (${from}): ${t.tools.join(", ")}`;
}

/** A dotenv file's names and values (NAME=value, optionally quoted or after `export`); comments and blanks skipped. */
export function parseDotenv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(raw);
    if (m === null) continue;
    const value = m[2] as string;
    const quoted = /^(["'])(.*)\1$/.exec(value);
    env[m[1] as string] = quoted === null ? value.replace(/\s+#.*$/, "") : (quoted[2] as string);
  }
  return env;
}

const USAGE = "usage: npm run posture [roster] [--env <dotenv file>] [--json] | --remote <gateway-url> [--json]\n";

function read(file: string): { ok: true; text: string } | { ok: false } {
  try {
    return { ok: true, text: readFileSync(file, "utf8") };
  } catch (error) {
    const code = error instanceof Error && "code" in error ? String(error.code) : "unreadable";
    process.stderr.write(`${file}: cannot read the file (${code})\n`);
    return { ok: false };
  }
}

function main(argv: readonly string[]): number {
  const files: string[] = [];
  let envFile: string | undefined;
  let json = false;
  let bad = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--json") json = true;
    else if (arg === "--env" && argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith("-")) envFile = argv[++i] as string;
    else if (arg === "--help" || arg === "-h") {
      process.stdout.write(USAGE);
      return 0;
    } else if (arg.startsWith("-")) bad = true;
    else files.push(arg);
  }
  if (bad || files.length > 1) {
    process.stderr.write(USAGE);
    return 1;
  }
  const rosterFile = files[0] ?? join(ROOT, "strad.config.yaml");
  const roster = read(rosterFile);
  if (!roster.ok) return 1;
  let env: Record<string, string> | undefined;
  if (envFile !== undefined) {
    const envText = read(envFile);
    if (!envText.ok) return 1;
    env = parseDotenv(envText.text);
  }
  const services = new Map<string, string | undefined>((gatewayServices(ROOT) as { binding?: string; service?: string }[]).map((s) => [s.binding ?? "", s.service]));
  const manifests = new Map(readBundleTree(ROOT).bundles.map((b) => [b.name, b.manifest]));
  const toolGroupsOf = (binding: string) => {
    const manifest = manifests.get(services.get(binding) ?? "");
    return manifest?.ok ? manifest.toolGroups : undefined;
  };
  const result = postureFromText(roster.text, { env, serviceOf: (binding) => services.get(binding), toolGroupsOf });
  if (!result.ok) {
    process.stderr.write(`${result.errors.map((e) => `${e.path}: ${e.message}`).join("\n")}\n`);
    return 1;
  }
  const shown = files[0] ?? "strad.config.yaml";
  if (json) process.stdout.write(`${JSON.stringify({ roster: shown, env: envFile ?? null, ...result.report }, null, 2)}\n`);
  else process.stdout.write(`${formatPosture(result.report, { roster: shown, env: envFile }).join("\n")}\n`);
  return 0;
}

/**
 * `npm run posture -- --remote <gateway-url> [--json]`: the roster a running gateway serves, read from its
 * /admin/roster with STRAD_ADMIN_TOKEN from the environment, runtime entries marked (docs/rules.md R-RT-5).
 */
export async function remotePosture(argv: readonly string[], env: Record<string, string | undefined>, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  const at = argv.indexOf("--remote");
  const gateway = argv[at + 1];
  const json = argv.includes("--json");
  if (gateway === undefined || gateway.startsWith("-") || argv.length !== (json ? 3 : 2)) {
    err("usage: STRAD_ADMIN_TOKEN=<admin token> npm run posture -- --remote <gateway-url> [--json]\n");
    return 1;
  }
  const r = await adminRequest(gateway, "", env);
  if (!r.ok) {
    err(`${r.message}\n`);
    return 1;
  }
  const listing = r.body as Listing;
  out(json ? `${JSON.stringify({ gateway, ...listing }, null, 2)}\n` : `${[`gateway: ${gateway}`, ...formatListing(listing)].join("\n")}\n`);
  return 0;
}

// Run only as a script, so a test can import postureFromText without side effects.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  const args = process.argv.slice(2);
  if (args.includes("--remote")) {
    remotePosture(
      args,
      process.env,
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    ).then((code) => {
      process.exitCode = code;
    });
  } else process.exitCode = main(args);
}
