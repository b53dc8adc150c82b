// 1Password Connect's REST API over fetch (developer.1password.com/docs/connect/api-reference): GET /v1/vaults,
// GET /v1/vaults/{vault}, GET /v1/vaults/{vault}/items, GET /v1/vaults/{vault}/items/{item} and
// POST /v1/vaults/{vault}/items, with the mount's bearer token. Reads are tied to the call's signal; the one
// write (a create) leaves only through the kit's send gate, its token added once the gate let it through.
// No request follows a redirect, and every failure names a status or a reason, never a byte of Connect's body.
// Connect has no share endpoint, so this client cannot share (docs/rules.md R-OP-8).
import * as z from "zod";
import { readCappedText } from "../../contract/body";
import { isSecureOrLoopback } from "../../contract/url-policy";
import { GateRefusal } from "../kit/gate";
import { currentScope } from "../kit/scope";
import { itemListAnswer } from "./onepassword.answers";
import { type Item, type ItemSummary, type NewItem, type OnePasswordClient, OnePasswordError, OP_ID, type Vault, type WriteDoor } from "./onepassword.client";

export const REQUEST_TIMEOUT_MS = 30_000;
/** A Connect answer larger than this is refused unread: an item with its fields is a few KiB. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** A listing is cut here: the tools answer titles, and a model reads no more. */
export const MAX_LISTED = 500;
const CONNECT = "1Password Connect";
const TOKEN_SHAPE = /^[\x21-\x7e]{1,8192}$/;

const VaultSchema = z.object({ id: z.string().regex(OP_ID), name: z.string().max(1_000), description: z.string().max(10_000).optional(), items: z.number().optional() });
export const ItemRefSchema = z.object({
  id: z.string().regex(OP_ID),
  title: z.string().max(10_000).default(""),
  vault: z.object({ id: z.string().regex(OP_ID) }),
  category: z.string().max(100),
  tags: z.array(z.string().max(1_000)).max(500).optional(),
  urls: z
    .array(z.object({ href: z.string().max(10_000), label: z.string().max(1_000).optional(), primary: z.boolean().optional() }))
    .max(500)
    .optional(),
  version: z.number().optional(),
  createdAt: z.string().max(100).optional(),
  updatedAt: z.string().max(100).optional(),
});
const FieldSchema = z.object({
  id: z.string().max(200),
  type: z.string().max(100).default("STRING"),
  purpose: z.string().max(100).optional(),
  label: z.string().max(10_000).optional(),
  value: z.string().max(1_000_000).optional(),
  section: z.object({ id: z.string().max(200), label: z.string().max(10_000).optional() }).optional(),
});
const FullItemSchema = ItemRefSchema.extend({
  fields: z.array(FieldSchema).max(1_000).optional(),
  sections: z
    .array(z.object({ id: z.string().max(200), label: z.string().max(10_000).optional() }))
    .max(500)
    .optional(),
});

// The list answers' schemas, built once per isolate (a schema built in the read cost ~2.5 KiB of every call).
const VaultListSchema = z.array(VaultSchema).max(10_000);
export const ItemListSchema = z.array(ItemRefSchema).max(100_000);

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new OnePasswordError(`${CONNECT} gave an answer of an unexpected shape`);
  return result.data;
}

/** Where the mount's Connect server is: https, plain http only for a loopback host; no userinfo, query or fragment. */
export function connectBase(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OnePasswordError(`${name} is not an absolute URL`);
  }
  // The Connect token goes to this address.
  if (!isSecureOrLoopback(url)) throw new OnePasswordError(`${name} must be https (plain http only for a loopback host)`);
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") throw new OnePasswordError(`${name} must carry no userinfo, query or fragment`);
  return url.href.replace(/\/+$/, "");
}

/** A non-2xx (or redirect) answer becomes an error naming only its status; the body is discarded unread. */
async function checkStatus(response: Response): Promise<void> {
  if ((response.type as string) === "opaqueredirect" || response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    throw new OnePasswordError(`${CONNECT} answered HTTP ${response.status}`, response.status);
  }
}

async function readJson(response: Response): Promise<unknown> {
  const read = await readCappedText(response, MAX_ANSWER_BYTES);
  if (!read.ok) throw new OnePasswordError(read.tooLarge ? `${CONNECT}'s answer is too large` : `${CONNECT}'s answer could not be read`);
  try {
    return JSON.parse(read.value) as unknown;
  } catch {
    throw new OnePasswordError(`${CONNECT} gave an answer that is not JSON`);
  }
}

function checkId(id: string, what: string): string {
  if (!OP_ID.test(id)) throw new OnePasswordError(`the ${what} id is not a 1Password id (26 lower-case letters and digits)`);
  return id;
}

function summaryOf(item: z.infer<typeof ItemRefSchema>): ItemSummary {
  return { id: item.id, vaultId: item.vault.id, title: item.title, category: item.category, tags: item.tags ?? [] };
}

function itemOf(item: z.infer<typeof FullItemSchema>): Item {
  const sections = new Map((item.sections ?? []).map((s) => [s.id, s.label ?? ""]));
  return {
    ...summaryOf(item),
    urls: (item.urls ?? []).map((u) => ({ href: u.href, ...(u.label === undefined ? {} : { label: u.label }), ...(u.primary === undefined ? {} : { primary: u.primary }) })),
    fields: (item.fields ?? []).map((f) => {
      const section = f.section === undefined ? undefined : (f.section.label ?? sections.get(f.section.id) ?? f.section.id);
      return {
        id: f.id,
        label: f.label ?? f.id,
        type: f.type.toUpperCase(),
        ...(f.purpose === undefined || f.purpose === "" ? {} : { purpose: f.purpose }),
        ...(section === undefined || section === "" ? {} : { section }),
        ...(f.value === undefined ? {} : { value: f.value }),
      };
    }),
    ...(item.version === undefined ? {} : { version: item.version }),
    ...(item.createdAt === undefined ? {} : { createdAt: item.createdAt }),
    ...(item.updatedAt === undefined ? {} : { updatedAt: item.updatedAt }),
  };
}

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export class ConnectClient implements OnePasswordClient {
  readonly kind = "connect";
  readonly canShare = false;
  readonly base: string;

  constructor(
    host: string,
    private readonly token: string,
    hostName = "OP_CONNECT_HOST",
    private readonly doFetch: Fetch = (input, init) => fetch(input, init),
  ) {
    this.base = connectBase(host, hostName);
    if (!TOKEN_SHAPE.test(token)) throw new OnePasswordError("the mount's Connect token is not a token (printable characters, no spaces)");
  }

  private get signal(): AbortSignal {
    return currentScope().signal;
  }

  /**
   * A GET against Connect. Reads change nothing, so one whose connection failed before any answer (a kept-alive
   * connection the server had closed) is tried once more, never once the call was dropped or the request's own time
   * ran out, and never after an answer.
   */
  private async get(path: string): Promise<unknown> {
    const signal = this.signal;
    let response: Response;
    for (let reconnected = false; ; reconnected = true) {
      const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      try {
        response = await this.doFetch(`${this.base}${path}`, {
          method: "GET",
          headers: { authorization: `Bearer ${this.token}`, accept: "application/json" },
          redirect: "manual",
          signal: AbortSignal.any([signal, timeout]),
        });
        break;
      } catch {
        if (!reconnected && !signal.aborted && !timeout.aborted) continue;
        throw new OnePasswordError(signal.aborted ? "the call was dropped" : `${CONNECT} could not be reached`);
      }
    }
    await checkStatus(response);
    return readJson(response);
  }

  async listVaults(): Promise<Vault[]> {
    const vaults = parsed(VaultListSchema, await this.get("/v1/vaults"));
    return vaults.slice(0, MAX_LISTED).map((v) => ({ id: v.id, name: v.name, ...(v.description ? { description: v.description } : {}), ...(v.items === undefined ? {} : { items: v.items }) }));
  }

  async getVault(vaultId: string): Promise<Vault> {
    const v = parsed(VaultSchema, await this.get(`/v1/vaults/${checkId(vaultId, "vault")}`));
    return { id: v.id, name: v.name };
  }

  async listItems(vaultId: string): Promise<ItemSummary[]> {
    // Checked by hand as ItemListSchema checks it (onepassword.answers.ts): every listing makes this read.
    const items = itemListAnswer(await this.get(`/v1/vaults/${checkId(vaultId, "vault")}/items`));
    if (items === undefined) throw new OnePasswordError(`${CONNECT} gave an answer of an unexpected shape`);
    return items.slice(0, MAX_LISTED).map(summaryOf);
  }

  async getItem(vaultId: string, itemId: string): Promise<Item> {
    const item = parsed(FullItemSchema, await this.get(`/v1/vaults/${checkId(vaultId, "vault")}/items/${checkId(itemId, "item")}`));
    if (item.vault.id !== vaultId || item.id !== itemId) throw new OnePasswordError(`${CONNECT} answered with another item than the one asked for`);
    return itemOf(item);
  }

  /** Creates one item: through the send gate, bound as the door says, the token added once the gate let it through. */
  async createItem(item: NewItem, door: WriteDoor): Promise<ItemSummary> {
    const signal = this.signal;
    const body = JSON.stringify({
      vault: { id: checkId(item.vaultId, "vault") },
      title: item.title,
      category: item.category,
      tags: item.tags,
      urls: item.urls.map((href, i) => ({ href, primary: i === 0 })),
      fields: item.fields.map((f) => ({ label: f.label, type: f.type, ...(f.purpose === undefined ? {} : { purpose: f.purpose }), value: f.value })),
    });
    const init = (): RequestInit => ({ method: "POST", headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json", accept: "application/json" }, body });
    let response: Response;
    try {
      response = await door.write(`${this.base}/v1/vaults/${item.vaultId}/items`, init, door.options);
    } catch (error) {
      if (error instanceof GateRefusal) throw error;
      // Past the gate the request may have reached Connect before it failed: nobody can say it created nothing.
      const why = signal.aborted ? "the call was dropped while the request was in flight" : "the request failed before an answer came back";
      throw new OnePasswordError(`${why}, so whether ${CONNECT} created the item is unknown`, undefined, true);
    }
    await checkStatus(response);
    try {
      return summaryOf(parsed(ItemRefSchema, await readJson(response)));
    } catch {
      // A 2xx is Connect's word that the item exists; only its answer was unusable.
      throw new OnePasswordError(`${CONNECT} answered HTTP ${response.status}, so the item was created, but its answer could not be read`, response.status, true);
    }
  }

  async shareItem(): Promise<{ url: string }> {
    throw new OnePasswordError(`${CONNECT} has no share endpoint`);
  }
}
