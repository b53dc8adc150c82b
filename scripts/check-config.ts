// `npm run check-config [file] [--root <dir>]`: validates a roster offline (default strad.config.yaml) with the
// same schema the Worker loads, then against the tree it deploys with (this repository, or --root): every
// bundle server's binding must be one of the gateway's [[services]], that service must be a bundle folder's
// Worker, and the bundle must serve the server's path (a path its bundle.json lists, or, for a "per-slug"
// bundle, `/<slug>` of a server on it), and a tool-group setting in a server's env must name groups its bundle
// declares and be one its mount reads. Prints every error as "<path>: <message>". Exit 0 and "ok", or exit 1.
// The gateway itself cannot see bundle folders, so these rules live here.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { type ToolGroupSpec, toolGroupsFor } from "../bundles/kit/tool-groups";
import { slugNamespace } from "../contract/slug";
import { type Roster, type RosterError, ServerSchema } from "../worker/roster";
import { parseRoster } from "../worker/roster-text";
// @ts-expect-error: plain ESM helper without types
import { gatewayServices } from "./bundle-tree.mjs";
// @ts-expect-error: plain ESM helper without types
import { discoverWorkers, ROOT } from "./workers.mjs";

/** bundle.json's `mounts` for a bundle serving `/<slug>` for every slug with credentials of its own (PER_SLUG in bundles/kit/mount.ts). */
export const PER_SLUG = "per-slug";

export type Manifest = { ok: true; mounts: readonly string[] | typeof PER_SLUG; secrets: readonly string[]; toolGroups?: ToolGroupSpec } | { ok: false; problems: string[] };

/** What the roster's bundle servers are checked against: the gateway's service bindings and the bundle folders. */
export interface BundleTree {
  services: readonly { binding?: string; service?: string }[];
  bundles: readonly { dir: string; name: string; manifest: Manifest }[];
}

const MANIFEST = "bundle.json";
const NAME = /^[A-Z][A-Z0-9_]*$/;
const GROUP = /^[a-z][a-z0-9_]*$/;
const TOOL = /^[A-Za-z0-9_.-]{1,128}$/;
/**
 * A mount is written as a roster path is: the manifest reuses the roster's own rule for it. Strict, so a key
 * added later is added here and in serveBundle (bundles/kit/mount.ts) at once.
 */
const ManifestSchema = z
  .strictObject({
    // Every mount path the bundle serves, or "per-slug": `/<slug>` for each slug whose `secrets` are all set
    // under its own namespace (docs/rules.md R-GMAIL-3).
    mounts: z.union([
      z
        .array(ServerSchema.shape.path.unwrap())
        .min(1, "must list at least one mount")
        .refine((mounts) => new Set(mounts).size === mounts.length, "lists a mount twice"),
      z.literal(PER_SLUG),
    ]),
    // The credentials each mount reads from its own namespace (<MOUNT>__NAME, contract/slug.ts): `npm run
    // deploy:check` lists one `wrangler secret put` per mount the roster uses.
    secrets: z
      .array(z.string().regex(NAME, "must be an upper-case variable name"))
      .refine((names) => names.every((n) => !n.includes("__")), 'a secret name holds no "__": the mount\'s namespace is added to it')
      .default([]),
    // Which tools each mount serves, from its own <MOUNT>__<variable> (bundles/kit/tool-groups.ts).
    toolGroups: z
      .strictObject({
        variable: z
          .string()
          .regex(NAME, "must be an upper-case variable name")
          .refine((n) => !n.includes("__"), 'holds no "__": the mount\'s namespace is added to it'),
        default: z.string(),
        groups: z
          .record(z.string().regex(GROUP, "must be a lower-case group name"), z.array(z.string().regex(TOOL, "must be a tool name")).min(1, "must list at least one tool"))
          .refine((groups) => Object.keys(groups).length > 0, "must declare at least one group"),
      })
      .refine((spec) => Object.hasOwn(spec.groups, spec.default), { message: "default must be one of its groups", path: ["default"] })
      .optional(),
  })
  .refine((m) => m.mounts !== PER_SLUG || m.secrets.length > 0, { message: `a "${PER_SLUG}" bundle lists in secrets the credentials that give a slug its mount`, path: ["secrets"] });

/** A bundle's bundle.json, read and checked; its problems name the field, never more of the file than that. */
export function parseManifest(text: string | undefined): Manifest {
  if (text === undefined) return { ok: false, problems: [`has no ${MANIFEST}: a bundle lists the mounts it serves there ({ "mounts": ["/<path>", …] })`] };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, problems: [`${MANIFEST} is not valid JSON`] };
  }
  const parsed = ManifestSchema.safeParse(data);
  if (parsed.success) {
    const { mounts, secrets, toolGroups } = parsed.data;
    return { ok: true, mounts, secrets, ...(toolGroups === undefined ? {} : { toolGroups }) };
  }
  return { ok: false, problems: parsed.error.issues.map((i) => `${MANIFEST}${i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")}: ${i.message}`) };
}

export function readBundleTree(root: string): BundleTree {
  const bundles = (discoverWorkers(root).bundles as { dir: string; name: string }[]).map(({ dir, name }) => {
    const file = join(root, "bundles", dir, MANIFEST);
    return { dir, name, manifest: parseManifest(existsSync(file) ? readFileSync(file, "utf8") : undefined) };
  });
  return { services: gatewayServices(root), bundles };
}

/** The tree's own problems (gateway bindings, bundle folders), then each bundle server's binding and path. */
export function checkBundles(roster: Roster, tree: BundleTree): RosterError[] {
  const errors: RosterError[] = [];
  const bindings = new Map<string, string | undefined>();
  for (const { binding, service } of tree.services) {
    if (binding === undefined || service === undefined) errors.push({ path: "wrangler.toml", message: `a [[services]] entry needs both binding and service (${binding ?? service})` });
    if (binding === undefined) continue;
    if (bindings.has(binding)) errors.push({ path: "wrangler.toml", message: `[[services]] declares binding ${binding} twice` });
    else bindings.set(binding, service);
  }
  const byService = new Map<string, (typeof tree.bundles)[number]>();
  for (const bundle of tree.bundles) {
    const prior = byService.get(bundle.name);
    if (prior !== undefined) errors.push({ path: `bundles/${bundle.dir}/wrangler.toml`, message: `names the Worker ${bundle.name}, as bundles/${prior.dir}/wrangler.toml does` });
    else byService.set(bundle.name, bundle);
    if (!bundle.manifest.ok) for (const problem of bundle.manifest.problems) errors.push({ path: `bundles/${bundle.dir}`, message: problem });
  }

  roster.servers.forEach((s, i) => {
    if (s.kind !== "bundle" || s.bundle === undefined || s.path === undefined) return;
    const slug = `slug "${s.slug}"`;
    if (!bindings.has(s.bundle)) {
      const known = [...bindings.keys()].join(", ") || "none";
      errors.push({ path: `servers[${i}].bundle`, message: `${slug} names binding ${s.bundle}, which no [[services]] entry of wrangler.toml declares (declared: ${known})` });
      return;
    }
    const service = bindings.get(s.bundle);
    const bundle = service === undefined ? undefined : byService.get(service);
    if (bundle === undefined) {
      errors.push({ path: `servers[${i}].bundle`, message: `${slug} names binding ${s.bundle}, bound to service ${service ?? "(none)"}, which no bundles/<name>/wrangler.toml provides` });
      return;
    }
    const where = `bundle ${s.bundle} (bundles/${bundle.dir})`;
    if (!bundle.manifest.ok) {
      errors.push({ path: `servers[${i}].path`, message: `${slug} mounts ${s.path} on ${where}, whose ${MANIFEST} does not list its mounts` });
      return;
    }
    const manifest = bundle.manifest;
    if (manifest.mounts === PER_SLUG) {
      // `/<slug>` of a server on the same Worker: its own, or one it shares (gmail-scripted on /gmail-rw-external).
      const own = roster.servers.filter((t) => t.kind === "bundle" && t.bundle !== undefined && bindings.get(t.bundle) === service).map((t) => `/${t.slug}`);
      if (!own.includes(s.path)) {
        errors.push({
          path: `servers[${i}].path`,
          message: `${slug} mounts ${s.path}, which ${where} does not serve: its ${MANIFEST} serves a mount per slug, at /<slug> of a server on it (here ${own.join(", ")}), for a slug with credentials of its own`,
        });
      }
    } else if (!manifest.mounts.includes(s.path)) {
      errors.push({ path: `servers[${i}].path`, message: `${slug} mounts ${s.path}, which ${where} does not serve; its ${MANIFEST} lists ${manifest.mounts.join(", ")}` });
    }
    if (manifest.toolGroups !== undefined) errors.push(...checkToolGroups(s, i, manifest.toolGroups));
    // A credential is a secret: never a roster env value (plain text here, a plain var once deployed), and a bare
    // one would be rendered bundle-wide, where a shared mount reads bare credentials (docs/rules.md R-CONF-15).
    const own = slugNamespace(s.slug);
    for (const name of Object.keys(s.env)) {
      const base = name.startsWith(own) ? name.slice(own.length) : name;
      if (manifest.secrets.includes(base)) {
        errors.push({ path: `servers[${i}].env.${name}`, message: `${base} is one of ${where}'s credentials (its ${MANIFEST} secrets): seed it with wrangler secret put, never in the roster's env` });
      }
    }
  });
  errors.push(...checkWaivedMounts(roster, bindings));
  return errors;
}

/**
 * A server's tool-group setting (`<SLUG>__<variable>`, or the bare name the roster renders as it): it must name
 * groups the bundle declares, and the slug must be on its own mount (`/<slug>`), the one mount that reads it;
 * a slug sharing another's path has that mount's groups (docs/rules.md R-GMAIL-2). Never repeats the value.
 */
export function checkToolGroups(s: Roster["servers"][number], i: number, spec: ToolGroupSpec): RosterError[] {
  const errors: RosterError[] = [];
  const own = `${slugNamespace(s.slug)}${spec.variable}`;
  for (const [name, value] of Object.entries(s.env)) {
    if (name !== own && name !== spec.variable) continue;
    const where = `servers[${i}].env.${name}`;
    const groups = toolGroupsFor(spec, s.slug, { [own]: value });
    if (!groups.ok) errors.push({ path: where, message: groups.reason.replace(own, name) });
    if (s.path !== `/${s.slug}`) {
      const read = `${slugNamespace((s.path ?? "/").slice(1))}${spec.variable}`;
      errors.push({
        path: where,
        message: `slug "${s.slug}" mounts ${s.path}, whose tool groups come from ${read} (set by the slug on that mount); ${own} is read by no mount`,
      });
    }
  }
  return errors;
}

/**
 * A waived slug never shares a mount with an asking one (docs/rules.md R-CONF-5), compared by the service each
 * binding resolves to: two binding names for one Worker are one mailbox. The schema compares binding names,
 * since the gateway cannot read wrangler.toml; this adds the case it cannot see.
 */
export function checkWaivedMounts(roster: Roster, bindings: ReadonlyMap<string, string | undefined>): RosterError[] {
  const errors: RosterError[] = [];
  roster.servers.forEach((s, i) => {
    if (s.kind !== "bundle" || !s.skipConfirmations || s.bundle === undefined) return;
    const service = bindings.get(s.bundle);
    if (service === undefined) return;
    roster.servers.forEach((t, j) => {
      if (j === i || t.kind !== "bundle" || !t.confirmations || t.bundle === undefined || t.bundle === s.bundle) return;
      if (bindings.get(t.bundle) !== service || t.path !== s.path) return;
      errors.push({
        path: `servers[${i}].skipConfirmations`,
        message: `shares service ${service} and path ${s.path} with servers[${j}] ("${t.slug}"), which declares confirmations: true (bindings ${s.bundle} and ${t.bundle} both resolve to ${service} in wrangler.toml)`,
      });
    });
  });
  return errors;
}

/** The schema first; the tree only once the roster is valid (its bundle servers then all have a binding and a path). */
export function checkConfigText(text: string, tree?: BundleTree): { ok: boolean; lines: string[] } {
  const result = parseRoster(text);
  const errors = !result.ok ? result.errors : tree === undefined ? [] : checkBundles(result.roster, tree);
  if (errors.length === 0) return { ok: true, lines: ["ok"] };
  return { ok: false, lines: errors.map((e) => `${e.path}: ${e.message}`) };
}

const USAGE = "usage: npm run check-config [file] [--root <dir>]\n";

function main(argv: readonly string[]): number {
  const files: string[] = [];
  let root: string = ROOT;
  let unknown = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--root" && argv[i + 1] !== undefined) root = argv[++i] as string;
    else if (arg.startsWith("-")) unknown = true;
    else files.push(arg);
  }
  if (unknown || files.length > 1) {
    process.stderr.write(USAGE);
    return 1;
  }
  const file = files[0] ?? join(root, "strad.config.yaml");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = error instanceof Error && "code" in error ? String(error.code) : "unreadable";
    process.stderr.write(`${file}: cannot read the file (${code})\n`);
    return 1;
  }
  let tree: BundleTree;
  try {
    tree = readBundleTree(root);
  } catch (error) {
    process.stderr.write(`${root}: cannot read the tree's Workers (${error instanceof Error ? error.message : "unreadable"})\n`);
    return 1;
  }
  const { ok, lines } = checkConfigText(text, tree);
  (ok ? process.stdout : process.stderr).write(`${lines.join("\n")}\n`);
  return ok ? 0 : 1;
}

// Run only as a script, so a test can import checkConfigText without side effects.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = main(process.argv.slice(2));
