// The state of one Cloudflare account as the Workers API keeps it, for the local stand-in of the API
// (cloudflare-api.fake.ts): scripts, their versions and deployment, Durable Object classes and migration tag,
// secrets, workers.dev / Preview URL switches and custom domains. Every rule here that says what Cloudflare answers
// is an assumption about Cloudflare's behaviour (marked "Assumption"), listed in docs/deploy.md, "What the
// rehearsal assumes about Cloudflare"; the error messages and codes are the ones users reported from the real API.

/** One binding as the upload metadata (or the settings endpoint) carries it. */
export interface Binding {
  name: string;
  type: string;
  [key: string]: unknown;
}

/** The `migrations` member of an upload's metadata, as wrangler 4.86 builds it (src/durable.ts). */
export interface Migrations {
  old_tag?: string;
  new_tag: string;
  steps: {
    new_classes?: string[];
    new_sqlite_classes?: string[];
    renamed_classes?: { from: string; to: string }[];
    deleted_classes?: string[];
  }[];
}

/** The parsed `metadata` part of a script or version upload. */
export interface UploadMetadata {
  main_module?: string;
  bindings?: Binding[];
  compatibility_date?: string;
  compatibility_flags?: string[];
  migrations?: Migrations;
  keep_bindings?: string[];
  observability?: unknown;
  [key: string]: unknown;
}

export interface Version {
  id: string;
  number: number;
  metadata: UploadMetadata;
  /** The non-secret bindings of this version (the secrets are the script's, below). */
  bindings: Binding[];
}

export interface Script {
  name: string;
  tag: string;
  created: number;
  versions: Version[];
  deployed?: string;
  migrationTag?: string;
  /** The Durable Object classes this script implements (created by its applied migrations). */
  classes: Set<string>;
  secrets: Map<string, string>;
  subdomain: { enabled: boolean; previews_enabled: boolean };
  domains: { hostname: string; zone_id?: string; zone_name?: string }[];
  settings: Record<string, unknown>;
}

/** A refusal shaped as the Cloudflare API answers one: HTTP status, error code, message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const SCRIPT_NOT_FOUND = (name: string) => new ApiError(404, 10007, `workers.api.error.script_not_found (${name})`);

const hex = () => crypto.randomUUID().replaceAll("-", "");

export class Account {
  readonly scripts = new Map<string, Script>();
  /**
   * Assumption: the account has a workers.dev subdomain registered (wrangler otherwise asks for one, and refuses in
   * a non-interactive run), and new scripts start with workers.dev off and Preview URLs on, the account default
   * wrangler leaves alone unless the config sets `preview_urls` (docs/deploy.md §8). On is the pessimistic default:
   * a Worker whose deploy does not turn Preview URLs off ends the rehearsal with them on.
   */
  constructor(
    readonly id: string,
    readonly workersDevSubdomain: string,
    /** Assumption: the zones on the account (name → id); a custom domain's hostname must lie in one of them. */
    readonly zones: Map<string, string>,
  ) {}

  script(name: string): Script {
    const script = this.scripts.get(name);
    if (script === undefined) throw SCRIPT_NOT_FOUND(name);
    return script;
  }

  /**
   * Checks an upload's bindings and migrations against the account and returns the script's classes after it.
   * Assumptions (answers users report from the real API, cloudflare/workers-sdk issues #10034, #10246, #2968):
   *  - a Durable Object binding with `script_name` needs that script to exist and implement the class (10061);
   *  - a Durable Object binding without `script_name` needs the class implemented by this script once this
   *    upload's migrations are applied (10061);
   *  - a service binding needs its target script to exist (10143, "could not resolve binding");
   *  - migrations apply only on top of the script's current tag: `old_tag` must equal it, and be absent when the
   *    script has none (10079 otherwise); a new class that the script already implements is refused (10074).
   */
  private checkUpload(name: string, existing: Script | undefined, metadata: UploadMetadata): Set<string> {
    const classes = new Set(existing?.classes ?? []);
    const m = metadata.migrations;
    if (m !== undefined) {
      const current = existing?.migrationTag;
      if ((m.old_tag ?? undefined) !== current)
        throw new ApiError(400, 10079, `migration tag precondition failed: the script's current tag is ${current ?? "(none)"}, the upload's old_tag is ${m.old_tag ?? "(none)"}`);
      for (const step of m.steps) {
        for (const c of [...(step.new_classes ?? []), ...(step.new_sqlite_classes ?? [])]) {
          if (classes.has(c)) throw new ApiError(400, 10074, `Cannot apply new-class migration to class '${c}' that is already a Durable Object class of '${name}'`);
          classes.add(c);
        }
        for (const r of step.renamed_classes ?? []) {
          classes.delete(r.from);
          classes.add(r.to);
        }
        for (const c of step.deleted_classes ?? []) classes.delete(c);
      }
    }
    for (const b of metadata.bindings ?? []) {
      if (b.type === "durable_object_namespace") {
        const target = typeof b.script_name === "string" ? b.script_name : undefined;
        const cls = String(b.class_name);
        if (target !== undefined && target !== name) {
          const other = this.scripts.get(target);
          if (other === undefined) throw new ApiError(400, 10061, `Cannot create binding for class '${cls}' in script '${target}' that does not exist.`);
          if (!other.classes.has(cls)) throw new ApiError(400, 10061, `Cannot create binding for class '${cls}' because it is not currently configured to implement Durable Objects in '${target}'.`);
        } else if (!classes.has(cls)) {
          throw new ApiError(
            400,
            10061,
            `Cannot create binding for class '${cls}' because it is not currently configured to implement Durable Objects. Ensure a --new-class migration has been applied to it.`,
          );
        }
      }
      if (b.type === "service" && !this.scripts.has(String(b.service)) && b.service !== name)
        throw new ApiError(400, 10143, `workers.api.error.service_binding_error: could not resolve binding "${b.name}": script "${String(b.service)}" not found`);
    }
    return classes;
  }

  /**
   * A whole-script upload (PUT /workers/scripts/:name), which also deploys the new version. Assumptions: the
   * upload replaces every non-secret binding, and the secrets set through the secrets endpoint stay (a `wrangler
   * deploy` never carries them and never removes them); a secret_text binding in the upload sets that secret.
   */
  putScript(name: string, metadata: UploadMetadata): { script: Script; version: Version } {
    const existing = this.scripts.get(name);
    const classes = this.checkUpload(name, existing, metadata);
    const script: Script = existing ?? {
      name,
      tag: hex(),
      created: Date.now(),
      versions: [],
      classes,
      secrets: new Map(),
      subdomain: { enabled: false, previews_enabled: true },
      domains: [],
      settings: {},
    };
    script.classes = classes;
    if (metadata.migrations !== undefined) script.migrationTag = metadata.migrations.new_tag;
    this.scripts.set(name, script);
    const version = this.addVersion(script, metadata);
    script.deployed = version.id;
    return { script, version };
  }

  /**
   * A version upload (POST /workers/scripts/:name/versions): not deployed until a deployment names it.
   * Assumption: a version upload carries no migrations (wrangler 4.86 only uses this path when it has none to send).
   */
  uploadVersion(name: string, metadata: UploadMetadata): Version {
    const script = this.script(name);
    if (metadata.migrations !== undefined) throw new ApiError(400, 10211, "migrations are not accepted on a version upload; upload the whole script");
    this.checkUpload(name, script, metadata);
    return this.addVersion(script, metadata);
  }

  private addVersion(script: Script, metadata: UploadMetadata): Version {
    const bindings: Binding[] = [];
    for (const b of metadata.bindings ?? []) {
      if (b.type === "secret_text") script.secrets.set(b.name, String(b.text));
      else bindings.push(b);
    }
    const version: Version = { id: crypto.randomUUID(), number: script.versions.length + 1, metadata, bindings };
    script.versions.push(version);
    return version;
  }

  deploy(name: string, versionIds: string[]): void {
    const script = this.script(name);
    const id = versionIds[0];
    if (versionIds.length !== 1 || id === undefined || !script.versions.some((v) => v.id === id)) throw new ApiError(400, 10200, "the stand-in deploys exactly one existing version at 100%");
    script.deployed = id;
  }

  /** The bindings the deployed version has, secrets listed without their values (as the settings endpoint shows them). */
  currentBindings(name: string): Binding[] {
    const script = this.script(name);
    const version = script.versions.find((v) => v.id === script.deployed);
    return [...(version?.bindings ?? []), ...[...script.secrets.keys()].map((n) => ({ name: n, type: "secret_text" }))];
  }

  /**
   * `wrangler secret put` (PUT /workers/scripts/:name/secrets). Assumption: Cloudflare answers 10007 for a script
   * that does not exist (wrangler then offers to create it), and otherwise stores the secret on the deployed version.
   */
  putSecret(name: string, secret: { name: string; text: string; type: string }): void {
    const script = this.script(name);
    if (secret.type !== "secret_text") throw new ApiError(400, 10021, `the stand-in stores secret_text secrets only, not ${secret.type}`);
    script.secrets.set(secret.name, secret.text);
  }

  /**
   * `wrangler secret bulk` (PATCH /workers/scripts/:name/settings with the full binding list). Assumption: an entry
   * with only `name` and `type` keeps that existing binding as it is, a secret_text entry with `text` sets that
   * secret, and a secret left out of the list is removed (the stand-in changes only secrets this way: the other
   * bindings stay as the deployed version has them).
   */
  patchBindings(name: string, bindings: Binding[]): void {
    const script = this.script(name);
    const current = new Map(this.currentBindings(name).map((b) => [b.name, b]));
    const secrets = new Map<string, string>();
    for (const b of bindings) {
      if (b.type === "secret_text" && typeof b.text === "string") secrets.set(b.name, b.text);
      else if (current.get(b.name)?.type !== b.type) throw new ApiError(400, 10021, `binding ${b.name} of type ${b.type} is not on the script, so it cannot be kept`);
      else if (b.type === "secret_text") secrets.set(b.name, script.secrets.get(b.name) ?? "");
    }
    script.secrets = secrets;
  }

  /** The zone id a hostname lies in (its longest suffix that is a zone on the account), or undefined. */
  zoneFor(hostname: string): { id: string; name: string } | undefined {
    const labels = hostname.split(".");
    for (let i = 0; i < labels.length - 1; i++) {
      const name = labels.slice(i).join(".");
      const id = this.zones.get(name);
      if (id !== undefined) return { id, name };
    }
    return undefined;
  }
}
