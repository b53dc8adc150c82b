// Connect's answer to the read every listing makes (GET /v1/vaults/{vault}/items), checked by hand. zod's
// ItemListSchema in onepassword.connect.ts is the rule: itemListAnswer gives the same verdict and the same value as
// its safeParse for anything JSON.parse can make (the only values it is given), unknown keys dropped, the schema's
// keys in its order, a missing title made "" as the schema's default makes it, and every string cap counted in code
// points as this zod counts them; test/bundles/onepassword/answers.unit.test.ts holds it to that. By hand because
// zod's parse was a quarter of a listing's allocations in the bundle (docs/bench.md part 7).
import { codePointLength } from "../../contract/text";
import { OP_ID } from "./onepassword.client";

/** An item as a listing gives it (ItemRefSchema's output). */
export interface ItemRef {
  id: string;
  title: string;
  vault: { id: string };
  category: string;
  tags?: string[];
  urls?: { href: string; label?: string; primary?: boolean }[];
  version?: number;
  createdAt?: string;
  updatedAt?: string;
}

/** ItemListSchema's cap on a listing, and ItemRefSchema's on an item's tags and URLs. */
export const MAX_LISTING = 100_000;
const MAX_ENTRIES = 500;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A string of at most `max` code points (a string within `max` UTF-16 units always is). */
const textWithin = (v: unknown, max: number): v is string => typeof v === "string" && (v.length <= max || codePointLength(v) <= max);
const isOpId = (v: unknown): v is string => typeof v === "string" && OP_ID.test(v);

function urlsOf(value: unknown): ItemRef["urls"] | undefined {
  if (!Array.isArray(value) || value.length > MAX_ENTRIES) return undefined;
  const out: NonNullable<ItemRef["urls"]> = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const u: unknown = value[i];
    if (!isObject(u) || !textWithin(u.href, 10_000)) return undefined;
    const url: NonNullable<ItemRef["urls"]>[number] = { href: u.href };
    if ("label" in u) {
      if (!textWithin(u.label, 1_000)) return undefined;
      url.label = u.label;
    }
    if ("primary" in u) {
      if (typeof u.primary !== "boolean") return undefined;
      url.primary = u.primary;
    }
    out[i] = url;
  }
  return out;
}

function itemRef(value: unknown): ItemRef | undefined {
  if (!isObject(value) || !isOpId(value.id)) return undefined;
  // The schema's default: an absent title is "".
  const title = "title" in value ? value.title : undefined;
  if (title !== undefined && !textWithin(title, 10_000)) return undefined;
  const vault = value.vault;
  if (!isObject(vault) || !isOpId(vault.id) || !textWithin(value.category, 100)) return undefined;
  const out: ItemRef = { id: value.id, title: title ?? "", vault: { id: vault.id }, category: value.category };
  if ("tags" in value) {
    const tags = value.tags;
    if (!Array.isArray(tags) || tags.length > MAX_ENTRIES) return undefined;
    for (const tag of tags) if (!textWithin(tag, 1_000)) return undefined;
    out.tags = tags.slice() as string[];
  }
  if ("urls" in value) {
    const urls = urlsOf(value.urls);
    if (urls === undefined) return undefined;
    out.urls = urls;
  }
  if ("version" in value) {
    if (typeof value.version !== "number" || !Number.isFinite(value.version)) return undefined;
    out.version = value.version;
  }
  if ("createdAt" in value) {
    if (!textWithin(value.createdAt, 100)) return undefined;
    out.createdAt = value.createdAt;
  }
  if ("updatedAt" in value) {
    if (!textWithin(value.updatedAt, 100)) return undefined;
    out.updatedAt = value.updatedAt;
  }
  return out;
}

/** ItemListSchema's safeParse, by hand: the listing, or undefined when the schema refuses it. */
export function itemListAnswer(value: unknown): ItemRef[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_LISTING) return undefined;
  const out: ItemRef[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const item = itemRef(value[i]);
    if (item === undefined) return undefined;
    out[i] = item;
  }
  return out;
}
