// The 1Password tools of one mount. Listing and metadata answer without asking, every sensitive value withheld;
// a reveal (onepassword_get_item), the three creates and a share ask a person first, one prompt for the whole
// batch (docs/rules.md R-OP-2, R-OP-7). Which client serves the mount (the service account's SDK or Connect) is
// the client module's business: the tools see one interface. No tool takes a user, token or host (R-TOOL-2).
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { type Editable, type EditValue, planEdits } from "../kit/edits";
import type { FingerprintInput } from "../kit/fingerprint";
import type { WriteOptions, WriteWords } from "../kit/gate";
import { type DeclaredAnnotations, declareGuard, type GuardKind } from "../kit/guard";
import type { PromptValue } from "../kit/prompt";
import { activeScope, type CallState, currentScope } from "../kit/scope";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import {
  afterFailedWrite,
  credentialsFor,
  type Item,
  type ItemSummary,
  type NewField,
  type NewItem,
  type OnePasswordClient,
  OnePasswordError,
  OP_ID,
  type ShareExpiry,
  type Vault,
} from "./onepassword.client";
import { type ConfirmedTool, reasonOf, refusal, runConfirmed, text, warnIgnoredVariables } from "./onepassword.confirm";
import { ConnectClient } from "./onepassword.connect";
import type { OnePasswordPromptSpec } from "./onepassword.prompt";
import { CONNECT_ONLY, connectOnlyRefusal, ServiceAccountClient } from "./onepassword.sdk";
import { isSensitive, isSensitiveUrl, REDACTED, redacted, revealed, revealsAnything, sensitiveParts, urlFacts } from "./onepassword.sensitive";

/** The 1Password bundle's registry of confirmed tools: every tool that asks a person, and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set([
  "onepassword_get_item",
  "onepassword_create_login",
  "onepassword_create_secure_note",
  "onepassword_create_api_credential",
  "onepassword_share_item",
]);

/** At most this many items per call: one prompt lists them all, and each costs a read or a write. */
export const MAX_BATCH = 20;
/**
 * A create batch is smaller, and its shown values shorter than a form might allow, so that the largest legal
 * create builds a prompt within the approval service's cap (contract/elicitation.ts MAX_PROMPT_BYTES): every
 * value a person is shown is shown whole, so a limit the prompt cannot carry would be a create nobody can approve
 * (docs/rules.md R-LIMIT-1; test/bundles/onepassword/prompt-limits.unit.test.ts builds the largest one).
 */
export const MAX_CREATE_BATCH = 10;
export const CREATE_LIMITS = { title: 200, username: 200, url: 500, tags: 10, tagChars: 32, keyType: 100 } as const;
export const MAX_SHARE_BATCH = 10;

const READS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
// A reveal changes nothing in 1Password (MCP reads destructiveHint only when readOnlyHint is false); what cannot be
// taken back is the value shown, which is why it asks.
const REVEALS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const CREATES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
// A share link reveals the item to whoever opens it, and cannot be called back from them.
const SHARES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

/** The mount's client, from its own credentials only (docs/rules.md R-OP-6). Throws with a reason naming variables. */
export function clientForMount(mount: string, env: Record<string, unknown>): OnePasswordClient {
  const found = credentialsFor(mount, env);
  if (!found.ok) throw new OnePasswordError(found.reason);
  const c = found.credentials;
  if (c.kind === "service-account" && CONNECT_ONLY) throw new OnePasswordError(connectOnlyRefusal(c.names.token));
  return c.kind === "service-account" ? new ServiceAccountClient(mount, c.token) : new ConnectClient(c.host, c.token, c.names.host);
}

const currentClient = (): OnePasswordClient => {
  const scope = currentScope();
  return clientForMount(scope.mount, scope.env);
};

const vaultId = z.string().regex(OP_ID).describe("The vault's 1Password id (26 lower-case letters and digits), from onepassword_list_vaults.");
const itemId = z.string().regex(OP_ID).describe("The item's 1Password id (26 lower-case letters and digits), from onepassword_list_items.");
const ItemRef = z.object({ vault_id: vaultId, item_id: itemId });
type ItemRefArgs = z.infer<typeof ItemRef>;
const title = z.string().min(1).max(CREATE_LIMITS.title).describe("The item's title.");
const tags = z.array(z.string().min(1).max(CREATE_LIMITS.tagChars)).max(CREATE_LIMITS.tags).optional().describe("Tags to put on the item.");
const url = z.string().url().max(CREATE_LIMITS.url).optional().describe("The website the item is for, e.g. https://example.com/login.");

function json(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 1) }] };
}

/** A read-only tool's answer: a failure names a status or a reason, never an upstream body. */
async function reading(work: (client: OnePasswordClient) => Promise<unknown>): Promise<CallToolResult> {
  let client: OnePasswordClient;
  try {
    client = currentClient();
  } catch (error) {
    return refusal(reasonOf(error, "the mount's 1Password client could not be made"), false);
  }
  try {
    return json(await work(client));
  } catch (error) {
    return text(`Not done: ${reasonOf(error, "the read failed")}.`, true);
  }
}

/**
 * An item as the tools answer it: every sensitive value withheld unless `reveal` (a person said yes), websites never
 * with their userinfo, and every field and website saying whether it is sensitive (docs/rules.md R-OP-1).
 */
export function shownItem(raw: Item, reveal: boolean, vault?: Vault) {
  const item = reveal ? revealed(raw) : redacted(raw);
  return {
    id: item.id,
    vault_id: item.vaultId,
    ...(vault === undefined ? {} : { vault_name: vault.name }),
    title: item.title,
    category: item.category,
    tags: item.tags,
    urls: item.urls,
    fields: item.fields.map((f) => ({ ...f, sensitive: isSensitive(f) })),
    ...(item.version === undefined ? {} : { version: item.version }),
    ...(item.createdAt === undefined ? {} : { created_at: item.createdAt }),
    ...(item.updatedAt === undefined ? {} : { updated_at: item.updatedAt }),
  };
}

/** Vaults read once per call, by id. */
async function vaultsOf(client: OnePasswordClient, ids: readonly string[]): Promise<Map<string, Vault>> {
  const unique = [...new Set(ids)];
  return new Map(await Promise.all(unique.map(async (id) => [id, await client.getVault(id)] as const)));
}

// ---- onepassword_get_item: a reveal, asked when a sensitive value would be shown ----

interface RevealTarget {
  mount: string;
  entries: { vault: Vault; item: Item }[];
}

const uniqueRefs = (refs: readonly ItemRefArgs[]): ItemRefArgs[] => [...new Map(refs.map((r) => [`${r.vault_id}/${r.item_id}`, r])).values()];

async function resolveReveal(args: { items: ItemRefArgs[] }, client: OnePasswordClient): Promise<RevealTarget> {
  const refs = uniqueRefs(args.items);
  const vaults = await vaultsOf(
    client,
    refs.map((r) => r.vault_id),
  );
  const items = await Promise.all(refs.map((r) => client.getItem(r.vault_id, r.item_id)));
  return { mount: currentScope().mount, entries: items.map((item) => ({ vault: vaults.get(item.vaultId) as Vault, item })) };
}

/** What a reveal is bound to: the exact item set, and which fields and websites of it would be shown (docs/rules.md R-OP-7). */
export function revealFingerprint(target: RevealTarget): FingerprintInput {
  return {
    operation: "onepassword_get_item",
    target: {
      mount: target.mount,
      items: { set: target.entries.map((e) => `${e.item.vaultId}/${e.item.id}`) },
      reveals: {
        set: target.entries.flatMap((e) => {
          const parts = sensitiveParts(e.item);
          const at = `${e.item.vaultId}/${e.item.id}`;
          return [...parts.fields.map((f) => `${at}/${f.id}`), ...parts.urls.map((u) => `${at}/url:${u.index}`)];
        }),
      },
    },
  };
}

/** What a reveal would show of one item, by name: its fields' labels, and each withheld website by its host. */
function revealedNames(item: Item): string[] {
  const parts = sensitiveParts(item);
  const website = (label: string | undefined, host: string | undefined) => `${label?.trim() || "website"} (${host === undefined ? "not a plain URL" : `at ${host}`})`;
  return [...parts.fields.map((f) => (f.label.trim() === "" ? f.id : f.label)), ...parts.urls.map((u) => website(u.url.label, urlFacts(u.url.href).host))];
}

export function revealPrompt(target: RevealTarget): OnePasswordPromptSpec {
  const names = target.entries.map((e) => revealedNames(e.item));
  const count = names.reduce((n, list) => n + list.length, 0);
  return {
    heading: `This will reveal ${count} sensitive value(s) of ${names.filter((list) => list.length > 0).length} 1Password item(s) to the caller.`,
    consequence: "A revealed password, key or card number cannot be un-revealed. No value is shown here.",
    // The ids are the caller's; the names they stand for were read from 1Password (R-OP-10).
    values: target.entries.map((e): PromptValue => ({ label: "Asked for", value: `${e.item.vaultId}/${e.item.id}` })),
    read: target.entries.flatMap((e, i): PromptValue[] => {
      const shown = names[i] ?? [];
      return [
        { label: "Item", value: `${e.vault.name} / ${e.item.title} (${e.item.id})` },
        // Counted first: a label is written in the vault, so one reading "nothing (no sensitive value)", or holding ", ",
        // could otherwise pass for no value or for two (R-PROMPT-13).
        { label: "Reveals", value: shown.length === 0 ? "nothing (no sensitive value)" : `${shown.length} ${shown.length === 1 ? "value" : "values"}: ${shown.join(", ")}` },
      ];
    }),
  };
}

const revealTool: ConfirmedTool<{ items: ItemRefArgs[] }, RevealTarget> = {
  words: { nothing: "Nothing was revealed." },
  provisioning: false,
  resolve: resolveReveal,
  asks: (target) => target.entries.some((e) => revealsAnything(e.item)),
  fingerprint: revealFingerprint,
  prompt: revealPrompt,
  act: async (target) => json({ items: target.entries.map((e) => shownItem(e.item, true, e.vault)), _credentialsRevealed: target.entries.some((e) => revealsAnything(e.item)) }),
  // Declined, expired, cancelled, unticked, unrecognised or changed: the items, every sensitive value withheld.
  notDone: (target, why) =>
    json({
      items: target.entries.map((e) => shownItem(e.item, false, e.vault)),
      _credentialsRevealed: false,
      _notRevealed: `${why}; every sensitive field is ${REDACTED}`,
    }),
};

// ---- the creates: asked, except under the mount's provisioning posture ----

interface CreateTarget {
  mount: string;
  tool: string;
  vault: Vault;
  items: NewItem[];
}

async function sha256(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Values are bound by digest, so the fingerprint's own text never holds a secret. */
const valueDigests = new WeakMap<NewField, string>();

async function digestFields(items: readonly NewItem[]): Promise<void> {
  await Promise.all(items.flatMap((i) => i.fields.map(async (f) => valueDigests.set(f, await sha256(f.value)))));
}

/** What a create is bound to: the vault and every item with its field set, values by digest (docs/rules.md R-OP-7). */
export function createFingerprint(target: CreateTarget): FingerprintInput {
  return {
    operation: target.tool,
    target: {
      mount: target.mount,
      vault: target.vault.id,
      items: {
        tuple: target.items.map((i) => JSON.stringify([i.category, i.title, i.tags, i.urls, i.fields.map((f) => [f.label, f.type, f.purpose ?? null, valueDigests.get(f) ?? null])])),
      },
    },
  };
}

const KIND: Record<NewItem["category"], string> = { LOGIN: "login", SECURE_NOTE: "secure note", API_CREDENTIAL: "API credential" };

export function createPrompt(target: CreateTarget): OnePasswordPromptSpec {
  const kind = KIND[target.items[0]?.category ?? "LOGIN"];
  return {
    heading: `This will create ${target.items.length} ${kind} item(s) in the 1Password vault ${target.vault.id}.`,
    consequence: "The items are stored as written. Concealed values and note bodies are not shown.",
    read: [{ label: "Vault", value: `${target.vault.name} (${target.vault.id})` }],
    values: target.items.flatMap((i): PromptValue[] => [
      { label: "Title", value: i.title },
      ...i.fields.map((f): PromptValue => {
        if (f.type === "CONCEALED") return { label: "Stores", value: `${f.label} (concealed, not shown)` };
        if (f.purpose === "NOTES") return { label: "Stores", value: `${f.label} (${f.value.length} characters, not shown)` };
        return { label: f.label, value: f.value };
      }),
      ...i.urls.map((href): PromptValue => ({ label: "Website", value: href })),
      ...i.tags.map((tag): PromptValue => ({ label: "Tag", value: tag })),
    ]),
  };
}

const CREATE: WriteWords = { act: "create", done: "created", target: "item set" };

/**
 * Whether a value may sit on the card as a default and be named back in the answer: the bundle's one rule of what is
 * public (onepassword.sensitive.ts, R-OP-1) applied to the field the value would be stored as. A secret never is.
 */
const shownAs =
  (field: { label: string; type: "STRING" | "URL"; purpose?: "USERNAME" }) =>
  (value: EditValue): boolean =>
    typeof value === "string" && !isSensitive({ ...field, id: field.label, value });
const plainWebsite = (value: EditValue): boolean => typeof value === "string" && !isSensitiveUrl({ href: value });

/**
 * What a person may correct on a create's card (docs/rules.md R-OP-12): each item's title and tags, and where the tool
 * has them its username and website, while their values are public by R-OP-1 (a website with a path or credentials
 * is not offered). A password, an API secret, a note body or a key's type (not a public field) never: they are not
 * on the card and a form answer naming them is refused.
 */
export const CREATE_EDITABLE: Readonly<Record<string, Editable>> = {
  onepassword_create_login: {
    "items.*.title": "free",
    "items.*.username": { mode: "free", label: "Username", offers: shownAs({ label: "username", type: "STRING", purpose: "USERNAME" }) },
    "items.*.url": { mode: "free", label: "Website", offers: plainWebsite },
    "items.*.tags": "free",
  },
  onepassword_create_secure_note: { "items.*.title": "free", "items.*.tags": "free" },
  onepassword_create_api_credential: {
    "items.*.title": "free",
    "items.*.username": { mode: "free", label: "Username", offers: shownAs({ label: "username", type: "STRING" }) },
    "items.*.url": { mode: "free", label: "Website", offers: plainWebsite },
    "items.*.tags": "free",
  },
};

function createTool<A extends { vault_id: string }>(tool: string, items: (args: A) => NewItem[]): ConfirmedTool<A, CreateTarget> {
  return {
    ...(CREATE_EDITABLE[tool] === undefined ? {} : { editable: CREATE_EDITABLE[tool] }),
    words: { nothing: "Nothing was created." },
    provisioning: true,
    resolve: async (args, client) => {
      const built = items(args);
      await digestFields(built);
      return { mount: currentScope().mount, tool, vault: await client.getVault(args.vault_id), items: built };
    },
    asks: () => true,
    fingerprint: createFingerprint,
    prompt: createPrompt,
    act: async (target, run) => {
      const created: ItemSummary[] = [];
      for (const [i, item] of target.items.entries()) {
        // The first write is bound to the approved batch; the rest ride on the same approval and claim.
        const options: WriteOptions = { needsApproval: run.asked, words: CREATE, ...(i === 0 ? { binds: createFingerprint(target) } : {}) };
        try {
          created.push(await run.client.createItem(item, { write: run.write, options }));
        } catch (error) {
          const reason = reasonOf(error, "the create failed");
          const before = created.length > 0 ? ` Created before it: ${created.map((c) => `${c.title} (${c.id})`).join(", ")}.` : "";
          const done = `${before}${afterFailedWrite(error, reason, created.length > 0 ? "Nothing after it was created." : "Nothing was created.", "Check the vault before trying again: a retry may create it twice.")}`;
          return text(`Not done: item ${i + 1} (${item.title}): ${reason}.${done}`, true);
        }
      }
      return json({ created: created.map((c) => ({ id: c.id, vault_id: c.vaultId, title: c.title, category: c.category })), vault_name: target.vault.name });
    },
    notDone: (_target, why) => text(`Not done: ${why}. Nothing was created.`, true),
  };
}

const LoginItem = z.object({
  title,
  username: z.string().max(CREATE_LIMITS.username).optional().describe("The login's username, stored in the item."),
  password: z.string().min(1).max(1_000).optional().describe("The password to store (concealed). It is never shown in the approval prompt."),
  url,
  tags,
});
const NoteItem = z.object({ title, note: z.string().min(1).max(100_000).describe("The note's body. It is never shown in the approval prompt."), tags });
const ApiItem = z.object({
  title,
  secret: z.string().min(1).max(10_000).describe("The API key or secret to store (concealed). It is never shown in the approval prompt."),
  username: z.string().max(CREATE_LIMITS.username).optional().describe("A username that goes with the key, stored in the item."),
  key_type: z.string().max(CREATE_LIMITS.keyType).optional().describe('What kind of key it is, e.g. "bearer".'),
  url,
  tags,
});
const batch = <T extends z.ZodTypeAny>(item: T) => z.array(item).min(1).max(MAX_CREATE_BATCH);

const newItem = (vault: string, category: NewItem["category"], t: string, fields: (NewField | undefined)[], href: string | undefined, itemTags: string[] | undefined): NewItem => ({
  vaultId: vault,
  title: t,
  category,
  fields: fields.filter((f): f is NewField => f !== undefined),
  urls: href === undefined ? [] : [href],
  tags: itemTags ?? [],
});

// ---- onepassword_share_item: always asked; Connect cannot share ----

interface ShareTarget {
  mount: string;
  entries: { vault: Vault; item: Item }[];
  expires: ShareExpiry;
  oneTime: boolean;
  emails: string[];
}

export function shareFingerprint(target: ShareTarget): FingerprintInput {
  return {
    operation: "onepassword_share_item",
    target: {
      mount: target.mount,
      items: { set: target.entries.map((e) => `${e.item.vaultId}/${e.item.id}`) },
      expires: target.expires,
      oneTime: target.oneTime,
      emails: { set: target.emails },
    },
  };
}

const SHARE: WriteWords = { act: "share", done: "shared", target: "item set" };
const EXPIRES = ["1h", "1d", "7d", "14d", "30d"] as const;

const shareTool: ConfirmedTool<{ items: ItemRefArgs[]; expires?: ShareExpiry; one_time?: boolean; emails?: string[] }, ShareTarget> = {
  words: { nothing: "Nothing was shared." },
  provisioning: false,
  unsupported: (client) =>
    client.canShare
      ? undefined
      : "this slug is served by 1Password Connect, which has no share endpoint, so it cannot mint a share link; onepassword_share_item works on a slug whose own OP_SERVICE_ACCOUNT_TOKEN is seeded",
  resolve: async (args, client) => {
    const reveal = await resolveReveal(args, client);
    return { ...reveal, expires: args.expires ?? "7d", oneTime: args.one_time ?? false, emails: [...new Set((args.emails ?? []).map((e) => e.toLowerCase()))] };
  },
  asks: () => true,
  fingerprint: shareFingerprint,
  prompt: (target) => ({
    heading: `This will create a share link for each of ${target.entries.length} 1Password item(s).`,
    consequence: "Whoever opens a link sees the whole item, passwords and keys included, until it expires; it cannot be called back from someone who opened it.",
    read: target.entries.map((e): PromptValue => ({ label: "Item", value: `${e.vault.name} / ${e.item.title} (${e.item.id})` })),
    values: [
      { label: "Expires after", value: target.expires },
      { label: "One view only", value: target.oneTime ? "yes" : "no" },
      ...(target.emails.length === 0
        ? [{ label: "Who can open it", value: "anyone holding the link, as the account's sharing policy allows" }]
        : target.emails.map((e): PromptValue => ({ label: "Recipient", value: e }))),
    ],
  }),
  act: async (target, run) => {
    const shared: { vault_id: string; item_id: string; title: string; url: string }[] = [];
    for (const [i, e] of target.entries.entries()) {
      const options: WriteOptions = { needsApproval: true, words: SHARE, ...(i === 0 ? { binds: shareFingerprint(target) } : {}) };
      try {
        const link = await run.client.shareItem({ vaultId: e.item.vaultId, itemId: e.item.id, expires: target.expires, oneTime: target.oneTime, emails: target.emails }, { write: run.write, options });
        shared.push({ vault_id: e.item.vaultId, item_id: e.item.id, title: e.item.title, url: link.url });
      } catch (error) {
        const reason = reasonOf(error, "the share failed");
        const before = shared.length > 0 ? ` Shared before it: ${shared.map((s) => s.title).join(", ")}.` : "";
        const done = `${before}${afterFailedWrite(error, reason, shared.length > 0 ? "Nothing after it was shared." : "Nothing was shared.", "Whether a link was made is unknown.")}`;
        return text(`Not done: item ${i + 1} (${e.item.title}): ${reason}.${done}`, true);
      }
    }
    return json({ shared, expires: target.expires, one_time: target.oneTime });
  },
  notDone: (_target, why) => text(`Not done: ${why}. Nothing was shared.`, true),
};

/**
 * A confirmed tool's entry. Its edit plan is checked against its schema once, when the isolate loads the bundle, so a
 * wrong edit declaration fails at start-up, never on a call (R-EDIT-1); each server it is registered on records how
 * it asks (the kit's registry checks).
 */
function confirmedTool<S extends z.ZodObject, T>(
  name: string,
  kind: GuardKind,
  config: { description: string; inputSchema: S; annotations: DeclaredAnnotations },
  tool: ConfirmedTool<z.infer<S>, T>,
): ToolEntry {
  const plan = planEdits(name, config.inputSchema, tool.editable);
  const handler = (args: z.infer<S>) => runConfirmed(tool, args, currentClient, plan);
  return {
    name,
    register: (server) => {
      declareGuard(server, CONFIRMED_TOOLS, name, kind);
      server.registerTool(name, config, handler as never);
    },
  };
}

let warnedAtStart = false;
/** The calls already warned for: a read the kit's lane ran and then left to the SDK's path warns once, not twice. */
const warnedCalls = new WeakSet<CallState>();

/** Tests only: the next request warns again as an isolate's first does. */
export function resetStartWarning(): void {
  warnedAtStart = false;
}

/** The upstream switches are checked when the isolate starts serving and once on every call (docs/rules.md R-OP-3). */
function warnOfIgnoredSwitches(mount: string, env: Record<string, unknown>): void {
  const call = activeScope()?.call;
  if (call === undefined ? warnedAtStart : warnedCalls.has(call)) return;
  warnedAtStart = true;
  if (call !== undefined) warnedCalls.add(call);
  warnIgnoredVariables(mount, env);
}

/**
 * A read that asks nobody, as a plain tool (bundles/kit/tools.ts): the kit's lane may serve its call without running
 * the mount's factory, so the read warns of the ignored switches for its call itself.
 */
function readTool<S extends z.ZodObject>(
  name: string,
  config: { description: string; inputSchema: S; annotations: DeclaredAnnotations },
  work: (args: z.infer<S>, client: OnePasswordClient) => Promise<unknown>,
): ToolEntry {
  return plainTool(name, config, async (args) => {
    const scope = currentScope();
    warnOfIgnoredSwitches(scope.mount, scope.env);
    return reading((client) => work(args as z.infer<S>, client));
  });
}

// Every tool's definition, schema and handler is built once per isolate, not per request: the SDK serves one exchange per
// server, so the bundle builds a server for each request, and building every tool's zod schemas and closures anew for
// it was most of what a call allocated. A handler reads its mount and env from the call's scope. The three reads are
// plain tools: the kit's lane serves a 2026-07-28 call of one without an SDK server; every tool that asks is the SDK's.

const LIST_VAULTS = {
  description: "Lists the vaults this slug's 1Password account can reach: id, name, description and item count.",
  inputSchema: jsonSchemaOnce(z.object({})),
  annotations: READS,
};
const LIST_ITEMS = {
  description: "Lists a vault's items: id, title, category and tags only. No field is read.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId })),
  annotations: READS,
};
const GET_ITEM_METADATA = {
  description: `Reads one item without asking anyone: its title, category, tags, websites and every field, with every value that is not plainly public (anything but a username or email, a title-like field or a website's address) replaced by ${REDACTED}, and websites without their userinfo. onepassword_get_item reveals them, after a person approves.`,
  inputSchema: jsonSchemaOnce(ItemRef),
  annotations: READS,
};
const GET_ITEM = {
  description: `Reads items with their sensitive values (every value but a username or email, a title-like field or a plain website's address: passwords, keys, card numbers, notes, any other field). When any would be shown, a person is asked first, once for the whole batch, and shown each item's vault, title and which fields would be revealed; without their yes the items come back with every sensitive value ${REDACTED} and _credentialsRevealed: false. Refuses when no approval channel reaches the call.`,
  inputSchema: jsonSchemaOnce(z.object({ items: z.array(ItemRef).min(1).max(MAX_BATCH).describe(`The items to read (at most ${MAX_BATCH}).`) })),
  annotations: REVEALS,
};
const CREATE_LOGIN = {
  description: "Creates login items (title, username, password, website) in a vault. A person is asked first, once for the whole batch, and shown every item but no password.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId, items: batch(LoginItem).describe(`The logins to create (at most ${MAX_CREATE_BATCH}).`) })),
  annotations: CREATES,
};
const CREATE_SECURE_NOTE = {
  description: "Creates secure notes in a vault. A person is asked first, once for the whole batch, and shown every title but no note body.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId, items: batch(NoteItem).describe(`The notes to create (at most ${MAX_CREATE_BATCH}).`) })),
  annotations: CREATES,
};
const CREATE_API_CREDENTIAL = {
  description:
    "Creates API-credential items (the key, and optionally a username, its kind and a website) in a vault. A person is asked first, once for the whole batch, and shown every item but no key.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId, items: batch(ApiItem).describe(`The API credentials to create (at most ${MAX_CREATE_BATCH}).`) })),
  annotations: CREATES,
};
const SHARE_ITEM = {
  description:
    "Creates a share link for each item: whoever opens it sees the whole item, secrets included, until it expires. A person is always asked first, once for the whole batch. Slugs served by 1Password Connect cannot share (Connect has no share endpoint).",
  inputSchema: jsonSchemaOnce(
    z.object({
      items: z.array(ItemRef).min(1).max(MAX_SHARE_BATCH).describe(`The items to share (at most ${MAX_SHARE_BATCH}).`),
      expires: z.enum(EXPIRES).optional().describe("How long each link works (default 7d)."),
      one_time: z.boolean().optional().describe("Whether a link works for one view only (default false)."),
      emails: z.array(z.string().email().max(320)).max(20).optional().describe("Only these email addresses may open the links; none: anyone holding a link, as the account's sharing policy allows."),
    }),
  ),
  annotations: SHARES,
};

/** Every tool of the bundle, in the order a mount lists them. */
const ONEPASSWORD_TOOLS: readonly ToolEntry[] = [
  readTool("onepassword_list_vaults", LIST_VAULTS, async (_args, client) => ({ vaults: await client.listVaults() })),
  readTool("onepassword_list_items", LIST_ITEMS, async ({ vault_id }, client) => ({
    vault_id,
    items: (await client.listItems(vault_id)).map((i) => ({ id: i.id, title: i.title, category: i.category, tags: i.tags })),
  })),
  readTool("onepassword_get_item_metadata", GET_ITEM_METADATA, async ({ vault_id, item_id }, client) => shownItem(await client.getItem(vault_id, item_id), false, await client.getVault(vault_id))),
  confirmedTool("onepassword_get_item", "when", GET_ITEM, revealTool),
  confirmedTool(
    "onepassword_create_login",
    "always",
    CREATE_LOGIN,
    createTool("onepassword_create_login", (args: { vault_id: string; items: z.infer<typeof LoginItem>[] }) =>
      args.items.map((i) =>
        newItem(
          args.vault_id,
          "LOGIN",
          i.title,
          [
            i.username === undefined ? undefined : { label: "username", type: "STRING", purpose: "USERNAME", value: i.username },
            i.password === undefined ? undefined : { label: "password", type: "CONCEALED", purpose: "PASSWORD", value: i.password },
          ],
          i.url,
          i.tags,
        ),
      ),
    ),
  ),
  confirmedTool(
    "onepassword_create_secure_note",
    "always",
    CREATE_SECURE_NOTE,
    createTool("onepassword_create_secure_note", (args: { vault_id: string; items: z.infer<typeof NoteItem>[] }) =>
      args.items.map((i) => newItem(args.vault_id, "SECURE_NOTE", i.title, [{ label: "notesPlain", type: "STRING", purpose: "NOTES", value: i.note }], undefined, i.tags)),
    ),
  ),
  confirmedTool(
    "onepassword_create_api_credential",
    "always",
    CREATE_API_CREDENTIAL,
    createTool("onepassword_create_api_credential", (args: { vault_id: string; items: z.infer<typeof ApiItem>[] }) =>
      args.items.map((i) =>
        newItem(
          args.vault_id,
          "API_CREDENTIAL",
          i.title,
          [
            i.username === undefined ? undefined : { label: "username", type: "STRING", value: i.username },
            { label: "credential", type: "CONCEALED", value: i.secret },
            i.key_type === undefined ? undefined : { label: "type", type: "STRING", value: i.key_type },
          ],
          i.url,
          i.tags,
        ),
      ),
    ),
  ),
  confirmedTool("onepassword_share_item", "always", SHARE_ITEM, shareTool),
];

export function onepasswordServer(mount: string, env: Record<string, unknown>): McpServer {
  warnOfIgnoredSwitches(mount, env);
  return registerTools(new McpServer({ name: `strad-onepassword/${mount}`, version: "0.1.0" }), ONEPASSWORD_TOOLS);
}
