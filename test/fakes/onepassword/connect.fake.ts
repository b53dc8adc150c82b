// A fake of the 1Password Connect server's REST API, mounted by the fakes Worker under /onepassword/ (the
// bundle's OP_CONNECT_HOST is http://127.0.0.1:8789/onepassword). The routes and shapes are Connect's documented
// ones (developer.1password.com/docs/connect/api-reference, API spec 1.7):
//   GET  /v1/vaults                        Vault[]
//   GET  /v1/vaults/{vault}                Vault
//   GET  /v1/vaults/{vault}/items          Item[] (no fields)
//   POST /v1/vaults/{vault}/items          FullItem in, FullItem out (ids assigned)
//   GET  /v1/vaults/{vault}/items/{item}   FullItem (fields with their values)
//   GET  /heartbeat                        "."
// Connect has no share endpoint, and neither has this fake. Errors are Connect's { status, message }, with a
// secret-looking marker in the message so tests can check that the bundle never repeats one. For tests:
// GET /_fake/requests (every API request, recorded), GET /_fake/created (items created), POST /_fake/reset (the
// seed again, both lists emptied), POST /_fake/faults ({ method?, path, status }), POST /_fake/fields ({ vault,
// item, field }: adds a field to an item, as a person editing it in 1Password would).
import { type Context, Hono } from "hono";
import { type SeedAccount, type SeedField, type SeedItem, seedAccounts } from "./seed";

export const SECRET_MARKER = "fake-connect-secret-body";
const ID = /^[a-z0-9]{26}$/;
const CATEGORIES = new Set([
  "LOGIN",
  "PASSWORD",
  "API_CREDENTIAL",
  "SERVER",
  "DATABASE",
  "CREDIT_CARD",
  "MEMBERSHIP",
  "PASSPORT",
  "SOFTWARE_LICENSE",
  "OUTDOOR_LICENSE",
  "SECURE_NOTE",
  "WIRELESS_ROUTER",
  "BANK_ACCOUNT",
  "DRIVER_LICENSE",
  "IDENTITY",
  "REWARD_PROGRAM",
  "DOCUMENT",
  "EMAIL_ACCOUNT",
  "SOCIAL_SECURITY_NUMBER",
  "MEDICAL_RECORD",
  "SSH_KEY",
  "CUSTOM",
]);

export interface RecordedConnectRequest {
  at: number;
  method: string;
  path: string;
  /** The account the bearer token named; null for none or an unknown one. */
  account: string | null;
  status: number;
}

export interface CreatedItem {
  at: number;
  account: string;
  vault: string;
  id: string;
  title: string;
  category: string;
  fields: { label: string; type: string; purpose?: string; value: string }[];
  urls: string[];
  tags: string[];
}

interface Fault {
  method?: string;
  path: string;
  status: number;
}

interface StoredItem extends SeedItem {
  version: number;
  createdAt: string;
  updatedAt: string;
}

type Env = { Variables: { account: SeedAccount; entry: RecordedConnectRequest } };

const SEEDED_AT = "2026-01-05T09:00:00.000Z";

function randomId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(26));
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join("");
}

export class ConnectStore {
  accounts: SeedAccount[] = [];
  items = new Map<string, StoredItem>();
  requests: RecordedConnectRequest[] = [];
  created: CreatedItem[] = [];
  faults: Fault[] = [];

  constructor() {
    this.reset();
  }

  reset(): void {
    this.accounts = seedAccounts();
    this.items.clear();
    for (const a of this.accounts) for (const v of a.vaults) for (const i of v.items) this.items.set(`${v.id}/${i.id}`, { ...i, version: 1, createdAt: SEEDED_AT, updatedAt: SEEDED_AT });
    this.requests.length = 0;
    this.created.length = 0;
    this.faults.length = 0;
  }

  accountFor(authorization: string | undefined): SeedAccount | undefined {
    const token = /^Bearer (\S+)$/.exec(authorization ?? "")?.[1];
    return token === undefined ? undefined : this.accounts.find((a) => a.token === token);
  }

  vaultOf(account: SeedAccount, id: string) {
    return account.vaults.find((v) => v.id === id);
  }

  itemsOf(vault: string): StoredItem[] {
    return [...this.items.entries()].filter(([key]) => key.startsWith(`${vault}/`)).map(([, item]) => item);
  }
}

function error(c: Context<Env>, status: number, message: string): Response {
  return c.json({ status, message: `${SECRET_MARKER}: ${message}` }, status as 400);
}

function vaultResource(v: { id: string; name: string; description: string }, count: number) {
  return { id: v.id, name: v.name, description: v.description, attributeVersion: 1, contentVersion: 1 + count, items: count, type: "USER_CREATED", createdAt: SEEDED_AT, updatedAt: SEEDED_AT };
}

function itemRef(vault: string, i: StoredItem) {
  return {
    id: i.id,
    title: i.title,
    vault: { id: vault },
    category: i.category,
    urls: i.urls,
    favorite: false,
    tags: i.tags,
    version: i.version,
    createdAt: i.createdAt,
    updatedAt: i.updatedAt,
    lastEditedBy: "fakeuser00000000000000001a",
  };
}

function fullItem(vault: string, i: StoredItem) {
  return {
    ...itemRef(vault, i),
    sections: i.sections ?? [],
    fields: i.fields.map((f) => ({ ...f, ...(f.type === "CONCEALED" && f.purpose === "PASSWORD" ? { entropy: 96 } : {}) })),
  };
}

export function createConnectFake(): { app: Hono<Env>; store: ConnectStore } {
  const store = new ConnectStore();
  const app = new Hono<Env>();

  // Every API request is recorded with its status; the fake's own test routes are not.
  app.use("*", async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (path.includes("/_fake/") || path.endsWith("/heartbeat")) return next();
    const account = store.accountFor(c.req.header("authorization"));
    const entry: RecordedConnectRequest = { at: Date.now(), method: c.req.method, path, account: account?.name ?? null, status: 0 };
    store.requests.push(entry);
    const fault = store.faults.find((f) => path.endsWith(f.path) && (f.method === undefined || f.method === c.req.method));
    if (fault !== undefined) {
      entry.status = fault.status;
      return error(c, fault.status, "injected fault");
    }
    if (account === undefined) {
      entry.status = 401;
      return error(c, 401, "Invalid token signature");
    }
    c.set("account", account);
    await next();
    entry.status = c.res.status;
  });

  app.get("/heartbeat", (c) => c.text("."));

  app.get("/v1/vaults", (c) => {
    const account = c.get("account");
    return c.json(account.vaults.map((v) => vaultResource(v, store.itemsOf(v.id).length)));
  });

  app.get("/v1/vaults/:vault", (c) => {
    const id = c.req.param("vault");
    const v = store.vaultOf(c.get("account"), id);
    // An id of another account's vault is as unknown here as one that does not exist.
    if (v === undefined) return error(c, 404, `vault ${id} not found`);
    return c.json(vaultResource(v, store.itemsOf(v.id).length));
  });

  app.get("/v1/vaults/:vault/items", (c) => {
    const id = c.req.param("vault");
    if (store.vaultOf(c.get("account"), id) === undefined) return error(c, 404, `vault ${id} not found`);
    return c.json(store.itemsOf(id).map((i) => itemRef(id, i)));
  });

  app.get("/v1/vaults/:vault/items/:item", (c) => {
    const vault = c.req.param("vault");
    const id = c.req.param("item");
    if (store.vaultOf(c.get("account"), vault) === undefined) return error(c, 404, `vault ${vault} not found`);
    const item = store.items.get(`${vault}/${id}`);
    if (item === undefined) return error(c, 404, `item ${id} not found`);
    return c.json(fullItem(vault, item));
  });

  app.post("/v1/vaults/:vault/items", async (c) => {
    const vault = c.req.param("vault");
    const account = c.get("account");
    if (store.vaultOf(account, vault) === undefined) return error(c, 404, `vault ${vault} not found`);
    let body: Record<string, unknown>;
    try {
      body = (await c.req.json()) as Record<string, unknown>;
    } catch {
      return error(c, 400, "Unable to create item due to invalid input");
    }
    const category = body.category;
    if (typeof category !== "string" || !CATEGORIES.has(category)) return error(c, 400, "Invalid item category");
    if ((body.vault as { id?: unknown } | undefined)?.id !== vault) return error(c, 400, "The item's vault does not match the path");
    const title = typeof body.title === "string" ? body.title : "";
    const rawFields = Array.isArray(body.fields) ? (body.fields as Record<string, unknown>[]) : [];
    const fields: SeedField[] = rawFields.map((f) => {
      const purpose = typeof f.purpose === "string" && f.purpose !== "" ? f.purpose : undefined;
      // Connect names a purposed field by its purpose and gives any other a generated id.
      const id = typeof f.id === "string" ? f.id : purpose === "USERNAME" ? "username" : purpose === "PASSWORD" ? "password" : purpose === "NOTES" ? "notesPlain" : randomId();
      return {
        id,
        type: typeof f.type === "string" ? f.type.toUpperCase() : "STRING",
        ...(purpose === undefined ? {} : { purpose }),
        label: typeof f.label === "string" ? f.label : id,
        value: typeof f.value === "string" ? f.value : "",
      };
    });
    const urls = Array.isArray(body.urls)
      ? (body.urls as { href?: unknown; primary?: unknown }[]).filter((u) => typeof u.href === "string").map((u) => ({ href: u.href as string, ...(u.primary === true ? { primary: true } : {}) }))
      : [];
    const tags = Array.isArray(body.tags) ? (body.tags as unknown[]).filter((t): t is string => typeof t === "string") : [];
    const now = new Date().toISOString();
    const item: StoredItem = { id: randomId(), title, category, tags, urls, fields, version: 1, createdAt: now, updatedAt: now };
    store.items.set(`${vault}/${item.id}`, item);
    store.created.push({
      at: Date.now(),
      account: account.name,
      vault,
      id: item.id,
      title,
      category,
      fields: fields.map(({ label, type, purpose, value }) => ({ label, type, ...(purpose === undefined ? {} : { purpose }), value })),
      urls: urls.map((u) => u.href),
      tags,
    });
    return c.json(fullItem(vault, item));
  });

  app.get("/_fake/requests", (c) => c.json(store.requests));
  app.get("/_fake/created", (c) => c.json(store.created));
  app.post("/_fake/reset", (c) => {
    store.reset();
    return c.json({ ok: true });
  });
  app.post("/_fake/faults", async (c) => {
    const f = (await c.req.json()) as { method?: unknown; path?: unknown; status?: unknown };
    if (typeof f.path !== "string" || typeof f.status !== "number") return c.json({ error: "path and status are required" }, 400);
    store.faults.push({ path: f.path, status: f.status, ...(typeof f.method === "string" ? { method: f.method } : {}) });
    return c.json({ ok: true });
  });
  app.post("/_fake/fields", async (c) => {
    const f = (await c.req.json()) as { vault?: unknown; item?: unknown; field?: SeedField };
    const item = typeof f.vault === "string" && typeof f.item === "string" ? store.items.get(`${f.vault}/${f.item}`) : undefined;
    if (item === undefined || f.field === undefined || !ID.test(String(f.item))) return c.json({ error: "no such item" }, 404);
    item.fields.push(f.field);
    item.version++;
    item.updatedAt = new Date().toISOString();
    return c.json({ ok: true });
  });
  return { app, store };
}

export const connectFake = createConnectFake();
