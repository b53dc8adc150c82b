// What shows an item's values to someone: onepassword_get_item reveals them to the caller, onepassword_share_item
// mints a link that shows them to whoever opens it. Both ask a person first, once for the whole batch, shown each
// item's vault and title and, for a reveal, which values would be shown, never a value (docs/rules.md R-OP-2, R-OP-7,
// R-OP-10). `shownItem` is the one way an item is answered, its sensitive values withheld unless revealed (R-OP-1).
import * as z from "zod";
import type { FingerprintInput } from "../kit/fingerprint";
import type { WriteOptions, WriteWords } from "../kit/gate";
import type { PromptValue } from "../kit/prompt";
import { currentScope } from "../kit/scope";
import { afterFailedWrite, type Item, type OnePasswordClient, OP_ID, type ShareExpiry, type Vault } from "./onepassword.client";
import { type ConfirmedTool, json, reasonOf, text } from "./onepassword.confirm";
import type { OnePasswordPromptSpec } from "./onepassword.prompt";
import { isSensitive, REDACTED, redacted, revealed, revealsAnything, sensitiveParts, urlFacts } from "./onepassword.sensitive";

export const vaultId = z.string().regex(OP_ID).describe("The vault's 1Password id (26 lower-case letters and digits), from onepassword_list_vaults.");
const itemId = z.string().regex(OP_ID).describe("The item's 1Password id (26 lower-case letters and digits), from onepassword_list_items.");
export const ItemRef = z.object({ vault_id: vaultId, item_id: itemId });
type ItemRefArgs = z.infer<typeof ItemRef>;
/** At most this many items per share: one prompt lists them all, and each mints a link. */
export const MAX_SHARE_BATCH = 10;

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

export const revealTool: ConfirmedTool<{ items: ItemRefArgs[] }, RevealTarget> = {
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
export const EXPIRES = ["1h", "1d", "7d", "14d", "30d"] as const;

export const shareTool: ConfirmedTool<{ items: ItemRefArgs[]; expires?: ShareExpiry; one_time?: boolean; emails?: string[] }, ShareTarget> = {
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
