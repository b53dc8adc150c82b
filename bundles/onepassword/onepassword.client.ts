// The one small interface the 1Password tools see, whichever client serves the mount: the service-account
// client (the official SDK, onepassword.sdk.ts) when the mount's OP_SERVICE_ACCOUNT_TOKEN is seeded, else
// 1Password Connect over fetch (onepassword.connect.ts) when its OP_CONNECT_HOST and OP_CONNECT_TOKEN are,
// else every tool refuses naming the variables. A mount reads its own credentials only: an own-path mount
// (`/<slug>`) never falls back to the bare ones, which belong to another account (docs/rules.md R-OP-6). What
// counts as sensitive is decided once, for both clients, in onepassword.sensitive.ts (docs/rules.md R-OP-1).
import { slugNamespace } from "../../contract/slug";
import type { GatedWrite, WriteOptions } from "../kit/gate";

/** The mount whose slugs share one account: it reads its own ONEPASSWORD__ credentials, else the bare ones. */
export const SHARED_MOUNT = "onepassword";
export const SERVICE_ACCOUNT_TOKEN = "OP_SERVICE_ACCOUNT_TOKEN";
export const CONNECT_HOST = "OP_CONNECT_HOST";
export const CONNECT_TOKEN = "OP_CONNECT_TOKEN";
export const CREDENTIAL_NAMES = [SERVICE_ACCOUNT_TOKEN, CONNECT_HOST, CONNECT_TOKEN] as const;

/** 1Password's own ids (vaults, items): 26 lower-case letters and digits, so never anything that changes a path. */
export const OP_ID = /^[a-z0-9]{26}$/;
/** A field id as 1Password writes it ("password", "notesPlain", a generated id): shown and bound, never a path. */
export const FIELD_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export class OnePasswordError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    /** A write that left the gate and then failed: whether 1Password acted is not known, so no one may say it did not. */
    readonly outcomeUnknown = false,
  ) {
    super(message);
    this.name = "OnePasswordError";
  }
}

/**
 * What to add after a failed write's reason: that nothing was done only when the failure is known to have come
 * before 1Password acted (and the reason does not say so already); otherwise that nobody knows.
 */
export function afterFailedWrite(error: unknown, reason: string, nothing: string, unknown: string): string {
  if (error instanceof OnePasswordError && error.outcomeUnknown) return ` ${unknown}`;
  return reason.toLowerCase().endsWith(nothing.toLowerCase().replace(/\.$/, "")) ? "" : ` ${nothing}`;
}

export interface Vault {
  id: string;
  name: string;
  description?: string;
  items?: number;
}

export type Category = "LOGIN" | "SECURE_NOTE" | "API_CREDENTIAL" | (string & {});

export interface ItemSummary {
  id: string;
  vaultId: string;
  title: string;
  category: Category;
  tags: string[];
}

export interface ItemUrl {
  href: string;
  label?: string;
  primary?: boolean;
  /** Set as shown: whether the website needs a yes (onepassword.sensitive.ts), and its host when its href is withheld. */
  sensitive?: boolean;
  host?: string;
}

/** A field as both clients hand it over: Connect's vocabulary for types (CONCEALED, STRING, …). */
export interface ItemField {
  id: string;
  label: string;
  type: string;
  purpose?: string;
  section?: string;
  value?: string;
}

export interface Item extends ItemSummary {
  urls: ItemUrl[];
  fields: ItemField[];
  version?: number;
  createdAt?: string;
  updatedAt?: string;
}

/** A field to create: its value is the caller's, stored as written. */
export interface NewField {
  label: string;
  type: "STRING" | "CONCEALED" | "URL" | "EMAIL";
  purpose?: "USERNAME" | "PASSWORD" | "NOTES";
  value: string;
}

export interface NewItem {
  vaultId: string;
  title: string;
  category: "LOGIN" | "SECURE_NOTE" | "API_CREDENTIAL";
  fields: NewField[];
  urls: string[];
  tags: string[];
}

export type ShareExpiry = "1h" | "1d" | "7d" | "14d" | "30d";

export interface ShareRequest {
  vaultId: string;
  itemId: string;
  expires: ShareExpiry;
  oneTime: boolean;
  /** Email addresses that may open the link; none: anyone holding the link, as the account's policy allows. */
  emails: string[];
}

/** The door a client writes through: the kit's send gate, and what the write is bound to. */
export interface WriteDoor {
  write: GatedWrite;
  options: WriteOptions;
}

export interface OnePasswordClient {
  readonly kind: "service-account" | "connect";
  /** Whether this client can mint share links (Connect has no share endpoint). */
  readonly canShare: boolean;
  listVaults(): Promise<Vault[]>;
  getVault(vaultId: string): Promise<Vault>;
  listItems(vaultId: string): Promise<ItemSummary[]>;
  getItem(vaultId: string, itemId: string): Promise<Item>;
  createItem(item: NewItem, door: WriteDoor): Promise<ItemSummary>;
  shareItem(share: ShareRequest, door: WriteDoor): Promise<{ url: string }>;
}

export type Credentials = { kind: "service-account"; token: string; names: { token: string } } | { kind: "connect"; host: string; token: string; names: { host: string; token: string } };

const isSet = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

/** The namespaces a mount reads, in order: its own, and for the shared mount the bare names too. */
export function namespacesOf(mount: string): string[] {
  return mount === SHARED_MOUNT ? [slugNamespace(mount), ""] : [slugNamespace(mount)];
}

/**
 * The mount's credentials, all from one namespace: the first of the mount's namespaces that sets any of them
 * decides. Refusals name variables, never a value.
 */
export function credentialsFor(mount: string, env: Record<string, unknown>): { ok: true; credentials: Credentials } | { ok: false; reason: string } {
  for (const ns of namespacesOf(mount)) {
    const [tokenName, hostName, connectName] = CREDENTIAL_NAMES.map((n) => `${ns}${n}`) as [string, string, string];
    const sa = env[tokenName];
    const host = env[hostName];
    const connect = env[connectName];
    if (!isSet(sa) && !isSet(host) && !isSet(connect)) continue;
    if (isSet(sa)) return { ok: true, credentials: { kind: "service-account", token: sa.trim(), names: { token: tokenName } } };
    if (isSet(host) && isSet(connect)) return { ok: true, credentials: { kind: "connect", host: host.trim(), token: connect.trim(), names: { host: hostName, token: connectName } } };
    return { ok: false, reason: `this mount's 1Password Connect credentials are incomplete: ${isSet(host) ? connectName : hostName} is not set` };
  }
  const own = slugNamespace(mount);
  const shared = mount === SHARED_MOUNT ? ` (or the bare ${SERVICE_ACCOUNT_TOKEN}, or ${CONNECT_HOST} and ${CONNECT_TOKEN})` : "; an own-path mount never reads the bare ones";
  return { ok: false, reason: `this mount has no 1Password credentials: set ${own}${SERVICE_ACCOUNT_TOKEN}, or ${own}${CONNECT_HOST} and ${own}${CONNECT_TOKEN}${shared}` };
}
