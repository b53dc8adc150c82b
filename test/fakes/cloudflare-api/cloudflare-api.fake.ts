// A local stand-in for the Cloudflare API, for rehearsing `npm run deploy` without an account: a plain Node http
// server on 127.0.0.1 that wrangler 4.86 reaches through CLOUDFLARE_API_BASE_URL (docs/deploy.md §8). It answers the
// endpoints `wrangler deploy`, `wrangler secret put` and `wrangler secret bulk` call (paths and shapes read from
// node_modules/wrangler/wrangler-dist/cli.js), keeps the account's state (account.ts), and records every request in
// order: method, path, route, the parsed `metadata` of every upload (and its raw text, to search for values), the
// body of every JSON request with secret values left out. Any other request is answered 404 and recorded in
// `unknown`, which a rehearsal must find empty. Each answer that is a guess at Cloudflare's behaviour says so
// ("Assumption"), and docs/deploy.md lists them all.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Account, ApiError, type Binding, type Script, type UploadMetadata, type Version } from "./account";

export interface UploadPart {
  name: string;
  type: string;
  bytes: number;
}

export interface RecordedRequest {
  seq: number;
  method: string;
  /** The path under the API base (without /client/v4). */
  path: string;
  query: Record<string, string>;
  /** Which endpoint answered ("script.put", "version.post", "secret.put" …), or "unknown". */
  route: string;
  script?: string;
  status: number;
  /** The refusal's message, when the stand-in refused the request. */
  error?: string;
  /** A JSON body as sent, with every secret value replaced by "<secret>". */
  body?: unknown;
  /** A script or version upload: its parsed metadata, the metadata part verbatim, and every part's name and size. */
  upload?: { metadata: UploadMetadata; raw: string; parts: UploadPart[] };
}

export interface SecretWrite {
  seq: number;
  script: string;
  name: string;
  via: "secret put" | "secret bulk";
}

export interface CloudflareApiStandIn {
  /** What CLOUDFLARE_API_BASE_URL is set to: http://127.0.0.1:<port>/client/v4. */
  baseUrl: string;
  accountId: string;
  token: string;
  account: Account;
  requests: RecordedRequest[];
  /** Requests no endpoint of the stand-in knows (answered 404): anything here is a gap or a call that should not be. */
  unknown: RecordedRequest[];
  secretWrites: SecretWrite[];
  /** The account's scripts, in the order they were created. */
  scripts(): Script[];
  close(): Promise<void>;
}

export interface StandInOptions {
  accountId?: string;
  token?: string;
  workersDevSubdomain?: string;
  /** Zone name → zone id: the zones the account holds (custom domains must lie in one). */
  zones?: Record<string, string>;
}

const PREFIX = "/client/v4";
const SECRET = "<secret>";

type Handler = (ctx: { req: IncomingMessage; body: Buffer; params: string[]; query: URLSearchParams; rec: RecordedRequest }) => Promise<unknown> | unknown;

/** A result list (`fetchListResult` pages on `result_info.cursor`; none here). */
const list = (items: unknown[]) => ({ __list: items });

function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new ApiError(400, 10026, "the request body is not JSON");
  }
}

async function form(req: IncomingMessage, body: Buffer): Promise<FormData> {
  const type = req.headers["content-type"] ?? "";
  if (!type.startsWith("multipart/form-data")) throw new ApiError(400, 10026, `expected a multipart/form-data body, got ${type || "none"}`);
  return (await new Response(body, { headers: { "content-type": type } }).formData()) as FormData;
}

async function readUpload(req: IncomingMessage, body: Buffer): Promise<{ metadata: UploadMetadata; raw: string; parts: UploadPart[] }> {
  const data = await form(req, body);
  const raw = data.get("metadata");
  if (typeof raw !== "string") throw new ApiError(400, 10021, "the upload has no metadata part");
  const parts: UploadPart[] = [];
  for (const [name, entry] of data.entries()) {
    const value = entry as unknown as string | Blob;
    if (typeof value === "string") parts.push({ name, type: "text", bytes: Buffer.byteLength(value) });
    else parts.push({ name, type: value.type, bytes: value.size });
  }
  const metadata = JSON.parse(raw) as UploadMetadata;
  if (metadata.main_module !== undefined && !parts.some((p) => p.name === metadata.main_module)) throw new ApiError(400, 10021, `main_module ${metadata.main_module} is not among the uploaded parts`);
  return { metadata, raw, parts };
}

const redactBindings = (bindings: Binding[]) => bindings.map((b) => (b.type === "secret_text" && "text" in b ? { ...b, text: SECRET } : b));

export async function startCloudflareApi(options: StandInOptions = {}): Promise<CloudflareApiStandIn> {
  const accountId = options.accountId ?? "0123456789abcdef0123456789abcdef";
  const token = options.token ?? "rehearsal-dummy-api-token";
  const account = new Account(accountId, options.workersDevSubdomain ?? "acme", new Map(Object.entries(options.zones ?? {})));
  const requests: RecordedRequest[] = [];
  const unknown: RecordedRequest[] = [];
  const secretWrites: SecretWrite[] = [];
  const now = new Date().toISOString();

  const scriptInfo = (s: Script) => ({
    id: s.name,
    tag: s.tag,
    tags: [],
    etag: s.deployed ?? "",
    handlers: ["fetch"],
    created_on: new Date(s.created).toISOString(),
    modified_on: now,
    // Assumption: an upload through wrangler (its User-Agent) is recorded as last deployed from "wrangler", so the
    // next deploy neither warns about a dashboard edit nor asks to overwrite one.
    last_deployed_from: "wrangler",
    ...(s.migrationTag !== undefined && { migration_tag: s.migrationTag }),
  });
  const deployment = (s: Script) => ({
    id: crypto.randomUUID(),
    source: "wrangler",
    strategy: "percentage",
    created_on: now,
    versions: s.deployed === undefined ? [] : [{ version_id: s.deployed, percentage: 100 }],
    annotations: {},
  });
  const versionResult = (s: Script, v: Version) => ({
    id: v.id,
    number: v.number,
    metadata: { source: "wrangler", created_on: now },
    resources: { script: { etag: v.id, handlers: ["fetch"] }, bindings: v.bindings },
    startup_time_ms: 0,
    script: s.name,
  });
  const settings = (s: Script) => {
    const meta = s.versions.find((v) => v.id === s.deployed)?.metadata ?? {};
    return {
      bindings: account.currentBindings(s.name),
      compatibility_date: meta.compatibility_date,
      compatibility_flags: meta.compatibility_flags ?? [],
      logpush: false,
      placement: {},
      tags: [],
      tail_consumers: [],
      usage_model: "standard",
      ...s.settings,
    };
  };

  const A = "/accounts/([^/]+)";
  const S = `${A}/workers/scripts/([^/]+)`;
  const routes: [string, RegExp, string, Handler][] = [
    // Whether the Worker exists, and its tag (the first call of every `wrangler deploy`).
    [
      "GET",
      new RegExp(`^${A}/workers/services/([^/]+)$`),
      "service.get",
      ({ params }) => {
        const s = account.script(params[1] as string);
        return { id: s.name, created_on: now, modified_on: now, default_environment: { environment: "production", created_on: now, modified_on: now, script: scriptInfo(s) } };
      },
    ],
    // The script list: wrangler reads each script's migration_tag here to decide which migrations to send.
    ["GET", new RegExp(`^${A}/workers/scripts$`), "scripts.list", () => list([...account.scripts.values()].map(scriptInfo))],
    [
      "PUT",
      new RegExp(`^${S}$`),
      "script.put",
      async ({ req, body, params, rec }) => {
        const upload = await readUpload(req, body);
        rec.upload = upload;
        const { script, version } = account.putScript(params[1] as string, upload.metadata);
        return { ...scriptInfo(script), deployment_id: version.id, startup_time_ms: 0, compatibility_date: upload.metadata.compatibility_date };
      },
    ],
    [
      "POST",
      new RegExp(`^${S}/versions$`),
      "version.post",
      async ({ req, body, params, rec }) => {
        const upload = await readUpload(req, body);
        rec.upload = upload;
        const version = account.uploadVersion(params[1] as string, upload.metadata);
        return versionResult(account.script(params[1] as string), version);
      },
    ],
    ["GET", new RegExp(`^${S}/deployments$`), "deployments.get", ({ params }) => ({ deployments: [deployment(account.script(params[1] as string))] })],
    [
      "POST",
      new RegExp(`^${S}/deployments$`),
      "deployment.post",
      ({ body, params, rec }) => {
        const sent = json(body) as { versions?: { version_id: string; percentage: number }[] };
        rec.body = sent;
        account.deploy(
          params[1] as string,
          (sent.versions ?? []).filter((v) => v.percentage === 100).map((v) => v.version_id),
        );
        return deployment(account.script(params[1] as string));
      },
    ],
    [
      "PATCH",
      new RegExp(`^${S}/script-settings$`),
      "script-settings.patch",
      ({ body, params, rec }) => {
        const s = account.script(params[1] as string);
        rec.body = json(body);
        Object.assign(s.settings, rec.body);
        return s.settings;
      },
    ],
    // workers.dev and Preview URLs: wrangler 4.86 sends these here, not in the upload's metadata.
    ["GET", new RegExp(`^${A}/workers/subdomain$`), "account-subdomain.get", () => ({ subdomain: account.workersDevSubdomain })],
    ["GET", new RegExp(`^${S}/subdomain$`), "subdomain.get", ({ params }) => account.script(params[1] as string).subdomain],
    [
      "POST",
      new RegExp(`^${S}/subdomain$`),
      "subdomain.post",
      ({ body, params, rec }) => {
        const s = account.script(params[1] as string);
        const sent = json(body) as { enabled?: unknown; previews_enabled?: unknown };
        rec.body = sent;
        // Assumption: a switch left out of the body keeps its current value (the account default on a new script).
        if (typeof sent.enabled === "boolean") s.subdomain.enabled = sent.enabled;
        if (typeof sent.previews_enabled === "boolean") s.subdomain.previews_enabled = sent.previews_enabled;
        return s.subdomain;
      },
    ],
    // Routes and custom domains.
    [
      "GET",
      /^\/zones$/,
      "zones.list",
      ({ query }) => {
        const name = query.get("name") ?? "";
        const id = account.zones.get(name);
        return list(id === undefined ? [] : [{ id, name, status: "active", account: { id: accountId } }]);
      },
    ],
    ["GET", /^\/zones\/([^/]+)\/workers\/routes$/, "zone-routes.list", () => list([])],
    [
      "PUT",
      new RegExp(`^${S}/routes$`),
      "routes.put",
      ({ body, params, rec }) => {
        account.script(params[1] as string);
        rec.body = json(body);
        return rec.body;
      },
    ],
    [
      "POST",
      new RegExp(`^${S}/domains/changeset$`),
      "domains-changeset.post",
      ({ body, params, rec }) => {
        account.script(params[1] as string);
        rec.body = json(body);
        return { added: rec.body, removed: [], updated: [], conflicting: [] };
      },
    ],
    [
      "PUT",
      new RegExp(`^${S}/domains/records$`),
      "domains.put",
      ({ body, params, rec }) => {
        const s = account.script(params[1] as string);
        const sent = json(body) as { origins?: { hostname: string; zone_id?: string; zone_name?: string }[] };
        rec.body = sent;
        // Assumption: a custom domain must lie in a zone on the account (Cloudflare creates its DNS record there).
        for (const o of sent.origins ?? []) if (account.zoneFor(o.hostname) === undefined) throw new ApiError(400, 100117, `no zone on the account holds ${o.hostname}`);
        s.domains = sent.origins ?? [];
        return s.domains.map((o) => ({ ...o, service: s.name, environment: "production", zone_id: account.zoneFor(o.hostname)?.id }));
      },
    ],
    // Secrets: `wrangler secret put` (and list), `wrangler secret bulk` through the settings endpoint.
    [
      "PUT",
      new RegExp(`^${S}/secrets$`),
      "secret.put",
      ({ body, params, rec }) => {
        const sent = json(body) as { name: string; text: string; type: string };
        rec.body = { ...sent, text: SECRET };
        account.putSecret(params[1] as string, sent);
        secretWrites.push({ seq: rec.seq, script: params[1] as string, name: sent.name, via: "secret put" });
        return { name: sent.name, type: sent.type };
      },
    ],
    ["GET", new RegExp(`^${S}/secrets$`), "secrets.list", ({ params }) => list([...account.script(params[1] as string).secrets.keys()].map((name) => ({ name, type: "secret_text" })))],
    ["GET", new RegExp(`^${S}/settings$`), "settings.get", ({ params }) => settings(account.script(params[1] as string))],
    [
      "PATCH",
      new RegExp(`^${S}/settings$`),
      "settings.patch",
      async ({ req, body, params, rec }) => {
        const raw = (await form(req, body)).get("settings");
        if (typeof raw !== "string") throw new ApiError(400, 10021, "the settings upload has no settings part");
        const sent = JSON.parse(raw) as { bindings?: Binding[] };
        const bindings = sent.bindings ?? [];
        rec.body = { ...sent, bindings: redactBindings(bindings) };
        account.patchBindings(params[1] as string, bindings);
        for (const b of bindings) if (b.type === "secret_text" && "text" in b) secretWrites.push({ seq: rec.seq, script: params[1] as string, name: b.name, via: "secret bulk" });
        return settings(account.script(params[1] as string));
      },
    ],
  ];

  const send = (res: ServerResponse, status: number, payload: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
  };
  const refuse = (res: ServerResponse, rec: RecordedRequest, error: ApiError) => {
    rec.status = error.status;
    rec.error = `${error.message} [code: ${error.code}]`;
    send(res, error.status, { success: false, errors: [{ code: error.code, message: error.message }], messages: [], result: null });
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://stand-in");
    const path = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname;
    const rec: RecordedRequest = { seq: requests.length + 1, method: req.method ?? "", path, query: Object.fromEntries(url.searchParams), route: "unknown", status: 0 };
    requests.push(rec);
    const match = url.pathname.startsWith(PREFIX) ? routes.map(([m, re, name, h]) => ({ m, name, h, hit: re.exec(path) })).find((r) => r.m === req.method && r.hit !== null) : undefined;
    if (match === undefined || match.hit === null) {
      unknown.push(rec);
      return refuse(res, rec, new ApiError(404, 7003, `the stand-in does not know ${req.method} ${url.pathname}`));
    }
    rec.route = match.name;
    const params = match.hit.slice(1).map((p) => decodeURIComponent(p));
    if (path.startsWith("/accounts/")) {
      if (params[0] !== accountId) return refuse(res, rec, new ApiError(403, 10000, "Authentication error: not this account"));
      if (params[1] !== undefined) rec.script = params[1];
    }
    // Assumption: the API token is a bearer token; anything else is answered as Cloudflare answers a bad token.
    if (req.headers.authorization !== `Bearer ${token}`) return refuse(res, rec, new ApiError(403, 10000, "Authentication error"));
    try {
      const result = await match.h({ req, body, params, query: url.searchParams, rec });
      rec.status = 200;
      if (typeof result === "object" && result !== null && "__list" in result) {
        const items = (result as { __list: unknown[] }).__list;
        send(res, 200, { success: true, errors: [], messages: [], result: items, result_info: { page: 1, per_page: items.length, count: items.length, total_count: items.length } });
      } else send(res, 200, { success: true, errors: [], messages: [], result });
    } catch (error) {
      refuse(res, rec, error instanceof ApiError ? error : new ApiError(500, 10013, error instanceof Error ? error.message : "stand-in failure"));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${PREFIX}`,
    accountId,
    token,
    account,
    requests,
    unknown,
    secretWrites,
    scripts: () => [...account.scripts.values()],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
