// The three creates (a login, a secure note, an API credential): always asked, one prompt for the whole batch, except
// under the mount's provisioning posture; the card shows every item but no concealed value or note body, and a person
// may correct the public fields (docs/rules.md R-OP-7, R-OP-12). A create is bound to its items with their values by
// digest, so the fingerprint's text never holds a secret.
import * as z from "zod";
import type { Editable, EditValue } from "../kit/edits";
import type { FingerprintInput } from "../kit/fingerprint";
import type { WriteOptions, WriteWords } from "../kit/gate";
import type { PromptValue } from "../kit/prompt";
import { currentScope } from "../kit/scope";
import { afterFailedWrite, type ItemSummary, type NewField, type NewItem, type Vault } from "./onepassword.client";
import { type ConfirmedTool, json, reasonOf, text } from "./onepassword.confirm";
import type { OnePasswordPromptSpec } from "./onepassword.prompt";
import { isSensitive, isSensitiveUrl } from "./onepassword.sensitive";

/**
 * A create batch is smaller, and its shown values shorter than a form might allow, so that the largest legal
 * create builds a prompt within the approval service's cap (contract/elicitation.ts MAX_PROMPT_BYTES): every
 * value a person is shown is shown whole, so a limit the prompt cannot carry would be a create nobody can approve
 * (docs/rules.md R-LIMIT-1; test/bundles/onepassword/prompt-limits.unit.test.ts builds the largest one).
 */
export const MAX_CREATE_BATCH = 10;
export const CREATE_LIMITS = { title: 200, username: 200, url: 500, tags: 10, tagChars: 32, keyType: 100 } as const;

const title = z.string().min(1).max(CREATE_LIMITS.title).describe("The item's title.");
const tags = z.array(z.string().min(1).max(CREATE_LIMITS.tagChars)).max(CREATE_LIMITS.tags).optional().describe("Tags to put on the item.");
const url = z.string().url().max(CREATE_LIMITS.url).optional().describe("The website the item is for, e.g. https://example.com/login.");

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

export function createTool<A extends { vault_id: string }>(tool: string, items: (args: A) => NewItem[]): ConfirmedTool<A, CreateTarget> {
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

export const LoginItem = z.object({
  title,
  username: z.string().max(CREATE_LIMITS.username).optional().describe("The login's username, stored in the item."),
  password: z.string().min(1).max(1_000).optional().describe("The password to store (concealed). It is never shown in the approval prompt."),
  url,
  tags,
});
export const NoteItem = z.object({ title, note: z.string().min(1).max(100_000).describe("The note's body. It is never shown in the approval prompt."), tags });
export const ApiItem = z.object({
  title,
  secret: z.string().min(1).max(10_000).describe("The API key or secret to store (concealed). It is never shown in the approval prompt."),
  username: z.string().max(CREATE_LIMITS.username).optional().describe("A username that goes with the key, stored in the item."),
  key_type: z.string().max(CREATE_LIMITS.keyType).optional().describe('What kind of key it is, e.g. "bearer".'),
  url,
  tags,
});
export const batch = <T extends z.ZodTypeAny>(item: T) => z.array(item).min(1).max(MAX_CREATE_BATCH);

export const newItem = (vault: string, category: NewItem["category"], t: string, fields: (NewField | undefined)[], href: string | undefined, itemTags: string[] | undefined): NewItem => ({
  vaultId: vault,
  title: t,
  category,
  fields: fields.filter((f): f is NewField => f !== undefined),
  urls: href === undefined ? [] : [href],
  tags: itemTags ?? [],
});
