// The roster (strad.config.yaml): one zod schema, with every cross-field rule (docs/rules.md R-CONF-1).
// The JSON Schema for editors and the config reference are generated from this file.
import * as z from "zod";
import { DEFAULT_MAX_REQUEST_BYTES, MAX_REQUEST_BYTES_CEILING, MIN_MAX_REQUEST_BYTES } from "../contract/body";
import { isReservedChannelHeader, RESERVED_CHANNEL_HEADERS } from "../contract/elicitation";
import { MAX_SLUG_CHARS, slugNamespace } from "../contract/slug";
import { checkPrefix, isSecureOrLoopback } from "../contract/url-policy";
import { type RosterResult, refsIn } from "./roster-use";

// A roster's text is parsed by worker/roster-text.ts. What the gateway does with a roster at every call lives in
// worker/roster-use.ts, which needs no zod: the gateway's entries carry the roster compiled at build time
// (scripts/compile-roster.ts) and load this module only for a runtime roster write (docs/bench.md, cold starts).
export { checkSeeded, describeUnselected, type Resolved, type ResolvedHeaders, type RosterError, type RosterResult, refsIn, resolveHeaderMap, resolveRefs, toolAllowed } from "./roster-use";

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** An HTTP field value (RFC 9110 §5.5): visible ASCII, obs-text, spaces and tabs. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * Header names the bundle sets itself on approval requests (content-type, accept, prefer) and the framing ones
 * (content-length, transfer-encoding, connection, host), so a slug cannot configure them (docs/rules.md R-CONF-4):
 * the kit's own list, from contract/.
 */
export const BUNDLE_OWNED_HEADERS = RESERVED_CHANNEL_HEADERS;

const headerMap = z.record(z.string().regex(HEADER_NAME, "must be an HTTP header name"), z.string()).describe('Header name to value; values may reference secrets as "${VAR}".');

const prefix = z.string().superRefine((value, ctx) => {
  const problem = checkPrefix(value);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: `prefix ${problem}` });
});

export const CallerSchema = z
  .strictObject({
    id: z.string().regex(SLUG, "must be lower-case letters, digits and single hyphens").describe("Stable name of the caller, used in logs and for per-call state."),
    kind: z.enum(["session", "admin", "console", "grant"]).describe("session: an agent session; admin: holds every role; console and grant: have no session to ask, so confirmed tools refuse them."),
    roles: z.array(z.string().min(1)).default([]).describe("Roles matched against a server's entitlements."),
    tokenSecret: z.string().regex(ENV_NAME, "must be a Worker secret name").describe("Name of the Worker secret whose value is this caller's bearer token."),
    asks: z
      .enum(["service", "client"])
      .default("service")
      .describe(
        'Who a guarded call of this caller asks: "service" (the default) its approval service, over X-Elicitation-Url; "client": a person sits at this caller\'s MCP client, so on a slug with clientQuestions: true a 2026-07-28 call that declares form elicitation and names no approval URL is asked at the client (input_required with a sealed state). Declare it only for a client a person answers: a headless client answers questions by itself.',
      ),
  })
  .describe("One caller of /mcp, identified by its bearer token.");

export const ServerSchema = z
  .strictObject({
    slug: z
      .string()
      .regex(SLUG, "must be lower-case letters, digits and single hyphens")
      .max(MAX_SLUG_CHARS)
      .describe(`Name of the mount, used in ?servers= and in tool-name prefixes; at most ${MAX_SLUG_CHARS} characters.`),
    kind: z.enum(["bundle", "remote-http"]).describe("bundle: a service-bound Worker; remote-http: an MCP server reached over fetch."),
    bundle: z.string().regex(ENV_NAME, "must be a service binding name").optional().describe("Service binding of the bundle Worker (kind: bundle)."),
    path: z
      .string()
      .regex(/^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$|^\/$/, 'must be "/" or "/"-separated segments of letters, digits, "._~-", with no empty, "." or ".." segment')
      .optional()
      .describe("Mount path inside the bundle (kind: bundle)."),
    url: z.string().url().optional().describe("Endpoint of the remote MCP server (kind: remote-http)."),
    entitlements: z.array(z.string().min(1)).min(1).describe("Roles that may see and call this server; a caller needs one of them."),
    timeoutMs: z.number().int().min(1000).max(3_600_000).default(120_000).describe("Bound on the hop to the server; past it the upstream request is aborted."),
    maxRequestBytes: z
      .number()
      .int()
      .min(MIN_MAX_REQUEST_BYTES)
      .max(MAX_REQUEST_BYTES_CEILING)
      .default(DEFAULT_MAX_REQUEST_BYTES)
      .describe(
        `The largest tools/call body, in bytes, the gateway takes for this slug (413 past it); every other request is held to ${DEFAULT_MAX_REQUEST_BYTES}. At most ${MAX_REQUEST_BYTES_CEILING}: an isolate's 128 MB of memory is what binds, not Cloudflare's request body limit. Raise it for inline file uploads (Gmail's content_base64); larger files go by URL.`,
      ),
    tools: z
      .array(z.string().min(1).max(128))
      .min(1)
      .refine((list) => new Set(list).size === list.length, "lists a tool twice")
      .optional()
      .describe(
        "The tools this slug serves, by the server's own names: tools/list leaves every other out, and a tools/call of another is refused naming the slug and the tool. Absent: every tool the server lists. A runtime write (/admin/roster) may narrow it (to some of these, or to any list when absent), never widen or remove it.",
      ),
    headers: headerMap.default({}).describe('Headers added to every upstream request; values may reference secrets as "${VAR}".'),
    confirmations: z.boolean().default(false).describe("Forward the caller's approval channel to this slug's guarded tools."),
    skipConfirmations: z.boolean().default(false).describe("The mailbox is the agent's own: guarded tools act without asking."),
    fallback: z
      .enum(["none", "token"])
      .default("none")
      .describe(
        'When nobody can be asked (the call brings no approval address, or the slug declares no confirmations; or the bundle runs with ELICITATION=false): "none" (the default) refuses the guarded call; "token" lets a bundle that opts in (pads) fall back to the two-call token, which proves only that the call was made twice with the same arguments. Gmail and 1Password never take it.',
      ),
    clientQuestions: z
      .boolean()
      .default(false)
      .describe(
        "Lets a caller declared asks: client be asked at its own client (2026-07-28 input_required with a sealed requestState) when its call names no approval URL. Off by default for every slug, Gmail and 1Password included; needs confirmations: true.",
      ),
    confirmationHeaders: headerMap.default({}).describe("Headers the bundle puts on every approval request (e.g. a Cloudflare Access service token); needs confirmations: true."),
    approvalUrlPrefixes: z
      .array(prefix)
      .optional()
      .describe(
        "The approval service this slug asks: entries of gateway.elicitation.allowedUrlPrefixes, all of one origin when the slug has confirmationHeaders. Absent: every allowed prefix. Needs confirmations: true.",
      ),
    mayBeUnseeded: z
      .array(z.string().regex(ENV_NAME))
      .default([])
      .describe(
        "Secret names this slug may run without: deploy:check, posture and the gateway's log take them as expected. Whether listed or not, an unseeded one makes only this slug's calls that need it refuse, naming it; every other slug answers.",
      ),
    env: z
      .record(z.string().regex(ENV_NAME, "must be an environment variable name"), z.string())
      .default({})
      .describe("Variables the bundle Worker is deployed with for this slug; bare names are shared by every slug of the bundle."),
  })
  .describe("One upstream MCP server mounted by the gateway.");

const secureOrLoopbackUrl = (u: string): boolean => {
  try {
    return isSecureOrLoopback(new URL(u));
  } catch {
    return false;
  }
};

/** The Access team domain, as the approval service takes ACCESS_TEAM_DOMAIN. */
export const ACCESS_TEAM_DOMAIN = /^https:\/\/[a-z0-9-]+\.cloudflareaccess\.com$/;

export const OperatorAccessSchema = z
  .strictObject({
    teamDomain: z.string().regex(ACCESS_TEAM_DOMAIN, "must look like https://<team>.cloudflareaccess.com").describe("The Access team domain: the issuer of the application token."),
    audience: z.string().min(1).describe("The audience (AUD) tag of the Access application in front of the gateway's /admin/roster."),
    certsUrl: z
      .string()
      .url()
      .refine(secureOrLoopbackUrl, "must be https (http on a loopback host only, for a local key set)")
      .optional()
      .describe("Where the team's signing keys are; absent: <teamDomain>/cdn-cgi/access/certs."),
    operators: z
      .array(
        z
          .string()
          .regex(/^[^\s@]+@[^\s@]+$/, "must be an email address")
          .transform((e) => e.toLowerCase()),
      )
      .min(1)
      .describe("Emails of the people who may read and write the roster; anyone else Access signs in is refused. A service token is never an operator."),
  })
  .describe("Cloudflare Access sign-in for /admin/roster operators.");

const RosterBase = z
  .strictObject({
    gateway: z
      .strictObject({
        elicitation: z
          .strictObject({
            allowedUrlPrefixes: z.array(prefix).default([]).describe("URL prefixes an X-Elicitation-Url must sit strictly under. Empty: every confirmed tool refuses."),
          })
          .prefault({})
          .describe("Where approval requests may go."),
        allowedOrigins: z
          .array(
            z
              .string()
              .regex(
                /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\]|[a-z][a-z0-9+.-]*:\/\/\*)$/,
                'must be a hostname (no scheme, no port), an IPv6 address in brackets, or "<scheme>://*" for a browser extension scheme',
              ),
          )
          .default([])
          .describe(
            "Hostnames a request's Origin header may name (any port), as the MCP SDK's Origin check takes them. A request carrying any other Origin is refused 403. Empty (the default): every request with an Origin is refused; requests without one (server-side MCP clients send none) pass.",
          ),
        operatorAccess: OperatorAccessSchema.optional().describe(
          "People who may change the roster at runtime through /admin/roster by signing in with Cloudflare Access (its Cf-Access-Jwt-Assertion, verified as the approval service verifies its people), besides an admin caller's bearer token. Absent: only the admin bearer reaches /admin/roster.",
        ),
      })
      .prefault({})
      .describe("Gateway-wide settings."),
    callers: z.array(CallerSchema).default([]).describe("Who may call /mcp."),
    servers: z.array(ServerSchema).default([]).describe("The mounts."),
  })
  .describe("strad roster: callers, servers and the approval allowlist.");

export const RosterSchema = RosterBase.superRefine(checkCrossFieldRules);

export type Roster = z.output<typeof RosterSchema>;
export type ServerEntry = Roster["servers"][number];
/** A caller as the gateway holds it; `asks` absent is "service", as the schema's default makes it. */
export type CallerEntry = Omit<Roster["callers"][number], "asks"> & { asks?: Roster["callers"][number]["asks"] };

function checkCrossFieldRules(roster: z.output<typeof RosterBase>, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });

  const seenCallers = new Map<string, number>();
  roster.callers.forEach((c, i) => {
    const prior = seenCallers.get(c.id);
    if (prior !== undefined) issue(["callers", i, "id"], `duplicate caller id "${c.id}" (also callers[${prior}])`);
    else seenCallers.set(c.id, i);
    // A console or grant caller has no prompt surface to ask at (docs/rules.md R-CHAN-2, R-CONF-17).
    if (c.asks === "client" && (c.kind === "console" || c.kind === "grant")) issue(["callers", i, "asks"], `a ${c.kind} caller has no client a person answers at, so it cannot be asks: client`);
  });

  const seen = new Map<string, number>();
  const callerSecrets = new Set(roster.callers.map((c) => c.tokenSecret));
  roster.servers.forEach((s, i) => {
    const at = (...rest: (string | number)[]) => ["servers", i, ...rest];
    const prior = seen.get(s.slug);
    if (prior !== undefined) issue(at("slug"), `duplicate slug "${s.slug}" (also servers[${prior}])`);
    else seen.set(s.slug, i);

    if (s.kind === "bundle") {
      if (s.bundle === undefined) issue(at("bundle"), "a bundle server needs bundle: <service binding name>");
      if (s.path === undefined) issue(at("path"), "a bundle server needs path: /<mount path>");
      if (s.url !== undefined) issue(at("url"), "url belongs to remote-http servers only");
    } else {
      if (s.url === undefined) issue(at("url"), "a remote-http server needs url");
      if (s.bundle !== undefined) issue(at("bundle"), "bundle belongs to bundle servers only");
      if (s.path !== undefined) issue(at("path"), "path belongs to bundle servers only");
      // Confirmation keys decide where a credential travels; remote servers are third-party code.
      if (s.confirmations) issue(at("confirmations"), "a remote-http server cannot receive the approval channel");
      if (s.skipConfirmations) issue(at("skipConfirmations"), "a remote-http server cannot declare skipConfirmations");
      if (Object.keys(s.confirmationHeaders).length > 0) issue(at("confirmationHeaders"), "a remote-http server cannot receive confirmationHeaders");
    }
    if (s.url !== undefined && s.kind === "remote-http") {
      // A caller's arguments and the entry's headers go there: never in clear text off this machine, and a credential
      // goes in headers (shown by name only), not in the URL every listing shows (docs/rules.md R-CONF-18).
      const u = new URL(s.url);
      if (u.protocol !== "https:" && u.protocol !== "http:") issue(at("url"), "url must be http(s)");
      else if (!isSecureOrLoopback(u)) issue(at("url"), "url must be https (plain http only for a loopback host)");
      if (u.username !== "" || u.password !== "") issue(at("url"), "url must not carry userinfo: put a credential in headers");
    }
    for (const field of ["headers", "confirmationHeaders"] as const) {
      for (const [header, raw] of Object.entries(s[field])) {
        // What HTTP allows in a field value (RFC 9110 §5.5): a line break would fail every call, not split a header.
        if (!FIELD_VALUE.test(raw)) issue(at(field, header), "a header value may hold only visible characters, spaces and tabs: no line break or control character");
        for (const name of new Set(refsIn(raw))) {
          if (name.includes("__"))
            issue(at(field, header), `\${${name}} names a variable in a slug's namespace: write the bare name (this slug's own ${slugNamespace(s.slug)}<NAME> is read first, another slug's never)`);
          // Read as the slug's own <SLUG>__NAME first (R-CONF-7): a caller's secret under either spelling goes to no server.
          else if (callerSecrets.has(name) || callerSecrets.has(`${slugNamespace(s.slug)}${name}`)) {
            issue(at(field, header), `\${${name}} is a caller's bearer token (callers[].tokenSecret), which goes to no server`);
          }
        }
      }
    }
    if (s.fallback === "token" && s.kind === "remote-http") issue(at("fallback"), "a remote-http server cannot take the two-call token: its tools are not the gateway's to guard");
    if (s.fallback === "token" && s.skipConfirmations) issue(at("fallback"), "skipConfirmations acts unasked, so a token fallback would never be used; drop one of them");
    if (s.confirmations && s.skipConfirmations) {
      issue(at("skipConfirmations"), "confirmations and skipConfirmations are both true; strad will not pick one for you");
    }
    // The client question is another way of asking for a slug that already asks (docs/rules.md R-CONF-17).
    if (s.clientQuestions && (!s.confirmations || s.kind !== "bundle")) {
      issue(at("clientQuestions"), "clientQuestions needs confirmations: true on a bundle server: it is another way to ask for a slug that already asks");
    }
    if (Object.keys(s.confirmationHeaders).length > 0 && !s.confirmations && s.kind === "bundle") {
      issue(at("confirmationHeaders"), "confirmationHeaders without confirmations: true would never be sent");
    }
    for (const name of Object.keys(s.confirmationHeaders)) {
      if (isReservedChannelHeader(name)) {
        issue(at("confirmationHeaders", name), `"${name}" is set by the bundle itself (or by the HTTP connection) and cannot be configured`);
      }
    }
    checkApprovalPrefixes(s, roster.gateway.elicitation.allowedUrlPrefixes, at, issue);
  });
  checkOneSecretOneOrigin(roster, issue);

  // A waived slug beside a gated one on the same mount would be an ungated door next to a gated one.
  roster.servers.forEach((s, i) => {
    if (!s.skipConfirmations || s.kind !== "bundle") return;
    roster.servers.forEach((t, j) => {
      if (j !== i && t.confirmations && t.kind === "bundle" && t.bundle === s.bundle && t.path === s.path) {
        issue(["servers", i, "skipConfirmations"], `shares bundle ${s.bundle} and path ${s.path} with servers[${j}] ("${t.slug}"), which declares confirmations: true`);
      }
    });
  });

  // One bundle Worker has one environment: a bare name means the same thing to every slug in it.
  const bare = new Map<string, { value: string; index: number }>();
  roster.servers.forEach((s, i) => {
    if (s.kind !== "bundle" || s.bundle === undefined) return;
    for (const [name, value] of Object.entries(s.env)) {
      if (name.includes("__")) {
        // A namespaced name is this slug's own: one slug never sets another's variable (scripts/roster-env.mjs).
        const own = slugNamespace(s.slug);
        if (!name.startsWith(own) || name.length === own.length) issue(["servers", i, "env", name], `a name holding "__" must be in this slug's own namespace (${own}<NAME>)`);
        continue;
      }
      const key = `${s.bundle}\u0000${name}`;
      const prior = bare.get(key);
      if (prior === undefined) bare.set(key, { value, index: i });
      else if (prior.value !== value) {
        issue(["servers", i, "env", name], `bundle ${s.bundle} already has ${name} with a different value (servers[${prior.index}]); write it per slug as <SLUG>__${name}`);
      }
    }
  });
}

/** The origin (scheme, host, port) of a prefix; undefined for one the prefix rule already refuses. */
function originOf(prefix: string): string | undefined {
  try {
    return new URL(prefix).origin;
  } catch {
    return undefined;
  }
}

/**
 * A slug's approval prefixes are some of the allowed ones, and a slug holding an edge credential reaches one
 * origin only, so one approval service's token can never be sent to another (docs/rules.md R-CONF-14).
 */
function checkApprovalPrefixes(
  s: z.output<typeof ServerSchema>,
  allowed: readonly string[],
  at: (...rest: (string | number)[]) => (string | number)[],
  issue: (path: (string | number)[], message: string) => void,
): void {
  const own = s.approvalUrlPrefixes;
  if (own !== undefined) {
    if (s.kind !== "bundle") issue(at("approvalUrlPrefixes"), "a remote-http server cannot receive the approval channel");
    else if (!s.confirmations) issue(at("approvalUrlPrefixes"), "approvalUrlPrefixes without confirmations: true would never be used");
    own.forEach((p, k) => {
      if (!allowed.includes(p)) issue(at("approvalUrlPrefixes", k), "is not one of gateway.elicitation.allowedUrlPrefixes (a slug's prefixes are a subset of them)");
    });
  }
  if (!s.confirmations || Object.keys(s.confirmationHeaders).length === 0) return;
  const origins = new Set((own ?? allowed).map(originOf).filter((o) => o !== undefined));
  if (origins.size > 1) {
    const from = own === undefined ? "every gateway.elicitation.allowedUrlPrefixes entry (approvalUrlPrefixes is absent)" : "its approvalUrlPrefixes";
    issue(
      at("approvalUrlPrefixes"),
      `confirmationHeaders would reach ${origins.size} origins through ${from}; a slug with confirmationHeaders asks one approval service: list prefixes of one scheme, host and port`,
    );
  }
}

/**
 * The origins a slug sends its confirmationHeaders to (those of its approvalUrlPrefixes, or of every allowed prefix
 * when it has none), or of the url a remote-http server's headers go to; empty when it sends them nowhere.
 */
function originsReached(s: z.output<typeof ServerSchema>, allowed: readonly string[], field: "headers" | "confirmationHeaders"): string[] {
  if (field === "headers") return s.kind === "remote-http" && s.url !== undefined ? [originOf(s.url)].filter((o) => o !== undefined) : [];
  if (s.kind !== "bundle" || !s.confirmations) return [];
  return [...new Set((s.approvalUrlPrefixes ?? allowed).map(originOf).filter((o) => o !== undefined))];
}

/**
 * One secret, one origin (docs/rules.md R-CONF-16): a `${VAR}` named in one slug's confirmationHeaders falls back to
 * the shared VAR, which every slug naming it reads, so the schema, which cannot see what is seeded, goes by the name.
 * Every slug naming it in confirmationHeaders (or a remote-http server in headers) must send it to the same origin.
 */
function checkOneSecretOneOrigin(roster: z.output<typeof RosterBase>, issue: (path: (string | number)[], message: string) => void): void {
  const allowed = roster.gateway.elicitation.allowedUrlPrefixes;
  const first = new Map<string, { origin: string; index: number }>();
  const uses: { name: string; index: number; field: "headers" | "confirmationHeaders"; header: string; origins: string[] }[] = [];
  roster.servers.forEach((s, i) => {
    for (const field of ["confirmationHeaders", "headers"] as const) {
      const origins = originsReached(s, allowed, field);
      if (origins.length === 0) continue;
      for (const [header, raw] of Object.entries(s[field])) for (const name of new Set(refsIn(raw))) uses.push({ name, index: i, field, header, origins });
    }
  });
  // Only names some slug sends as an approval credential count: two remote servers sharing a token is another matter.
  const credentials = new Set(uses.filter((u) => u.field === "confirmationHeaders").map((u) => u.name));
  for (const use of uses) {
    if (!credentials.has(use.name)) continue;
    for (const origin of use.origins) {
      const prior = first.get(use.name);
      if (prior === undefined) {
        first.set(use.name, { origin, index: use.index });
        continue;
      }
      // One slug spanning origins is R-CONF-14's error, reported there.
      if (prior.origin === origin || prior.index === use.index) continue;
      const other = roster.servers[prior.index]?.slug ?? "";
      issue(
        ["servers", use.index, use.field, use.header],
        `\${${use.name}} is also sent by servers[${prior.index}] ("${other}"), which sends it to another origin: a shared secret reaches one origin only; give each approval service a secret name of its own`,
      );
      break;
    }
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out === "" ? String(part) : `.${String(part)}`;
  return out === "" ? "(root)" : out;
}

export function validateRoster(data: unknown): RosterResult {
  const parsed = RosterSchema.safeParse(data ?? {});
  if (parsed.success) return { ok: true, roster: parsed.data };
  return { ok: false, errors: parsed.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })) };
}
