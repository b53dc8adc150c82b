// The service-account client: the official 1Password SDK (@1password/sdk), signed in with the mount's own
// OP_SERVICE_ACCOUNT_TOKEN. On workerd its WASM core is loaded as a module (sdk-loader.mjs, wrangler.toml), and the
// SDK itself is imported on first use, so a mount served by Connect never evaluates it. A signed-in client is kept
// per mount for the isolate's life and dropped when the token changes. The SDK has no way to route a request
// through the send gate, so each create or share is one gated write whose "request" is the SDK call: the gate
// decides (a live call, a yes for this target, the call's one claim) before the SDK is asked to do anything
// (docs/rules.md R-OP-9). Errors name a reason, never an SDK or upstream message.
import type { Client, ItemCategory, ItemCreateParams, ItemFieldType, ItemShareDuration, Item as SdkItem } from "@1password/sdk";
import { GateRefusal } from "../kit/gate";
import { currentScope } from "../kit/scope";
import { type Item, type ItemField, type ItemSummary, type NewItem, type OnePasswordClient, OnePasswordError, OP_ID, type ShareRequest, type Vault, type WriteDoor } from "./onepassword.client";

export type SdkModule = Pick<typeof import("@1password/sdk"), "createClient">;

declare global {
  /**
   * True in the Connect-only build only: wrangler.toml's [env.connect] defines it (esbuild's `define`), and the build
   * then drops the SDK and its WebAssembly, which the dead branch below is the only import of. Unset everywhere else.
   */
  var STRAD_ONEPASSWORD_CONNECT_ONLY: boolean | undefined;
}

/** This build has no service-account client: it was built Connect-only (wrangler.toml [env.connect]). */
export const CONNECT_ONLY: boolean = globalThis.STRAD_ONEPASSWORD_CONNECT_ONLY === true;

/**
 * Why a service-account mount is not served by the Connect-only build: the deploy switch, the variable that asked for
 * the SDK (`<NS>OP_SERVICE_ACCOUNT_TOKEN`) and the two to seed instead, never a value.
 */
export function connectOnlyRefusal(tokenName = "OP_SERVICE_ACCOUNT_TOKEN"): string {
  const ns = tokenName.slice(0, tokenName.length - "OP_SERVICE_ACCOUNT_TOKEN".length);
  return `this deployment's 1Password bundle is the Connect-only build (npm run deploy -- --onepassword connect), which has no service-account client, and this mount's ${tokenName} is set (it is read before Connect's): delete it and seed ${ns}OP_CONNECT_HOST and ${ns}OP_CONNECT_TOKEN, or deploy the full build`;
}

const loadSdk = (): Promise<SdkModule> => (globalThis.STRAD_ONEPASSWORD_CONNECT_ONLY ? Promise.reject(new OnePasswordError(connectOnlyRefusal())) : import("@1password/sdk"));

export const INTEGRATION = { integrationName: "strad", integrationVersion: "0.1.0" } as const;
const SDK = "1Password";

/** The SDK's field types in Connect's vocabulary, which the sensitive rule reads (onepassword.sensitive.ts). */
const FIELD_TYPES: Record<string, string> = {
  Text: "STRING",
  Concealed: "CONCEALED",
  CreditCardType: "CREDIT_CARD_TYPE",
  CreditCardNumber: "CREDIT_CARD_NUMBER",
  Phone: "PHONE",
  Url: "URL",
  Totp: "OTP",
  Email: "EMAIL",
  Reference: "REFERENCE",
  SshKey: "SSHKEY",
  Menu: "MENU",
  MonthYear: "MONTH_YEAR",
  Address: "ADDRESS",
  Date: "DATE",
};
const TO_SDK_FIELD: Record<string, string> = { STRING: "Text", CONCEALED: "Concealed", URL: "Url", EMAIL: "Email" };
const TO_SDK_CATEGORY: Record<NewItem["category"], string> = { LOGIN: "Login", SECURE_NOTE: "SecureNote", API_CREDENTIAL: "ApiCredentials" };
const EXPIRY: Record<ShareRequest["expires"], string> = { "1h": "OneHour", "1d": "OneDay", "7d": "SevenDays", "14d": "FourteenDays", "30d": "ThirtyDays" };

/** "ApiCredentials" → "API_CREDENTIAL", "SecureNote" → "SECURE_NOTE": Connect's names for the same categories. */
export function categoryOf(sdk: string): string {
  if (sdk === "ApiCredentials") return "API_CREDENTIAL";
  return sdk.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

export function itemOf(item: SdkItem): Item {
  const sections = new Map(item.sections.map((s) => [s.id, s.title]));
  const fields: ItemField[] = item.fields.map((f) => {
    const section = f.sectionId === undefined ? undefined : (sections.get(f.sectionId) ?? f.sectionId);
    return { id: f.id, label: f.title || f.id, type: FIELD_TYPES[f.fieldType] ?? "UNKNOWN", ...(section ? { section } : {}), value: f.value };
  });
  if (item.notes !== "") fields.push({ id: "notesPlain", label: "notesPlain", type: "STRING", purpose: "NOTES", value: item.notes });
  return {
    id: item.id,
    vaultId: item.vaultId,
    title: item.title,
    category: categoryOf(item.category),
    tags: item.tags,
    urls: item.websites.map((w) => ({ href: w.url, ...(w.label ? { label: w.label } : {}) })),
    fields,
    version: item.version,
    createdAt: new Date(item.createdAt).toISOString(),
    updatedAt: new Date(item.updatedAt).toISOString(),
  };
}

/** The SDK's item to create: notes as the item's notes, every other field by its label. */
export function createParams(item: NewItem): ItemCreateParams {
  const notes = item.fields.find((f) => f.purpose === "NOTES");
  return {
    category: TO_SDK_CATEGORY[item.category] as ItemCategory,
    vaultId: item.vaultId,
    title: item.title,
    fields: item.fields.filter((f) => f !== notes).map((f) => ({ id: f.label, title: f.label, fieldType: (TO_SDK_FIELD[f.type] ?? "Text") as ItemFieldType, value: f.value })),
    ...(notes === undefined ? {} : { notes: notes.value }),
    tags: item.tags,
    websites: item.urls.map((url) => ({ url, label: "website", autofillBehavior: "AnywhereOnWebsite" as never })),
  };
}

/** An SDK failure as shown: a reason this bundle words, never the SDK's or 1Password's message. */
export function sdkReason(error: unknown, what: string): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/invalid service account token/i.test(message)) return "the mount's OP_SERVICE_ACCOUNT_TOKEN is not a valid service-account token";
  if (/^authentication error/i.test(message)) return `${SDK} refused the service account's sign-in, or could not be reached`;
  if (/rate limit/i.test(message)) return `${SDK} is rate-limiting the service account`;
  return `${SDK} could not ${what} (${error instanceof Error ? error.name : "error"})`;
}

async function sha256(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Each mount's signed-in client, kept once its sign-in finished. A sign-in still in flight is never shared: workerd
 * cancels a request that waits on another request's I/O as hung (the gateway's overlay read did so under load), so
 * calls that arrive during one sign in for themselves, and the last to finish is kept.
 */
const clients = new Map<string, { source: string; client: Client }>();

/** Tests only: forget every signed-in client. */
export function forgetClients(): void {
  clients.clear();
}

function checkId(id: string, what: string): string {
  if (!OP_ID.test(id)) throw new OnePasswordError(`the ${what} id is not a 1Password id (26 lower-case letters and digits)`);
  return id;
}

export class ServiceAccountClient implements OnePasswordClient {
  readonly kind = "service-account";
  readonly canShare = true;

  constructor(
    readonly mount: string,
    private readonly token: string,
    private readonly load: () => Promise<SdkModule> = loadSdk,
  ) {}

  /** The mount's signed-in client: the kept one, or a sign-in of this call's own (a failed one is not kept). */
  private async client(): Promise<Client> {
    const source = await sha256(this.token);
    const kept = clients.get(this.mount);
    if (kept !== undefined && kept.source === source) return kept.client;
    const client = await (await this.load()).createClient({ auth: this.token, ...INTEGRATION });
    clients.set(this.mount, { source, client });
    return client;
  }

  /** One SDK read for the current call: refused once the call was dropped, its failure worded here. */
  private async read<T>(what: string, work: (client: Client) => Promise<T>): Promise<T> {
    const signal = currentScope().signal;
    if (signal.aborted) throw new OnePasswordError("the call was dropped");
    try {
      return await work(await this.client());
    } catch (error) {
      throw new OnePasswordError(signal.aborted ? "the call was dropped" : sdkReason(error, what));
    }
  }

  async listVaults(): Promise<Vault[]> {
    const vaults = await this.read("list the vaults", (c) => c.vaults.list());
    return vaults.map((v) => ({ id: v.id, name: v.title, ...(v.description ? { description: v.description } : {}), items: v.activeItemCount }));
  }

  async getVault(vaultId: string): Promise<Vault> {
    checkId(vaultId, "vault");
    const v = await this.read("read the vault", (c) => c.vaults.getOverview(vaultId));
    return { id: v.id, name: v.title };
  }

  async listItems(vaultId: string): Promise<ItemSummary[]> {
    checkId(vaultId, "vault");
    const items = await this.read("list the vault's items", (c) => c.items.list(vaultId, { type: "ByState", content: { active: true, archived: false } }));
    return items.map((i) => ({ id: i.id, vaultId: i.vaultId, title: i.title, category: categoryOf(i.category), tags: i.tags }));
  }

  async getItem(vaultId: string, itemId: string): Promise<Item> {
    checkId(vaultId, "vault");
    checkId(itemId, "item");
    const item = itemOf(await this.read("read the item", (c) => c.items.get(vaultId, itemId)));
    if (item.vaultId !== vaultId || item.id !== itemId) throw new OnePasswordError(`${SDK} answered with another item than the one asked for`);
    return item;
  }

  /** One SDK call as a gated write: the gate decides before the SDK is asked, and the call's signal is checked again. */
  private async gated<T>(door: WriteDoor, what: string, work: (client: Client) => Promise<T>): Promise<T> {
    const signal = currentScope().signal;
    let result: { value: T } | undefined;
    let failure: unknown;
    // Set once the gate let the write out: from then on a failure may have come after 1Password acted.
    let released = false;
    try {
      await door.write(
        `op-sdk://${this.mount}/${what.replaceAll(" ", "-")}`,
        {},
        {
          ...door.options,
          fetch: async () => {
            released = true;
            try {
              result = { value: await work(await this.client()) };
              return new Response(null, { status: 201 });
            } catch (error) {
              failure = error;
              throw error;
            }
          },
        },
      );
    } catch (error) {
      if (error instanceof GateRefusal) throw error;
      if (signal.aborted && released) throw new OnePasswordError(`the call was dropped while ${SDK} was asked to ${what}, so whether it did is unknown`, undefined, true);
      throw new OnePasswordError(released ? `${sdkReason(failure ?? error, what)}; whether it did ${what} is unknown` : sdkReason(failure ?? error, what), undefined, released);
    }
    if (result === undefined) throw new OnePasswordError(sdkReason(failure, what), undefined, released);
    return result.value;
  }

  async createItem(item: NewItem, door: WriteDoor): Promise<ItemSummary> {
    checkId(item.vaultId, "vault");
    const params = createParams(item);
    const created = await this.gated(door, "create the item", (c) => c.items.create(params));
    return { id: created.id, vaultId: created.vaultId, title: created.title, category: categoryOf(created.category), tags: created.tags };
  }

  async shareItem(share: ShareRequest, door: WriteDoor): Promise<{ url: string }> {
    checkId(share.vaultId, "vault");
    checkId(share.itemId, "item");
    const url = await this.gated(door, "share the item", async (c) => {
      const item = await c.items.get(share.vaultId, share.itemId);
      const policy = await c.items.shares.getAccountPolicy(share.vaultId, share.itemId);
      const recipients = share.emails.length === 0 ? undefined : await c.items.shares.validateRecipients(policy, share.emails);
      return c.items.shares.create(item, policy, { oneTimeOnly: share.oneTime, expireAfter: EXPIRY[share.expires] as ItemShareDuration, ...(recipients === undefined ? {} : { recipients }) });
    });
    return { url };
  }
}
