// Connect's answer to the read every listing makes (GET /v1/vaults/{vault}/items), checked by hand. zod's
// ItemListSchema in onepassword.connect.ts is the rule: itemListAnswer gives the same verdict and the same value as
// its safeParse for anything JSON.parse can make (the only values it is given), unknown keys dropped, the schema's
// keys in its order, a missing title made "" as the schema's default makes it, and every string cap counted in code
// points as this zod counts them; test/bundles/onepassword/answers.unit.test.ts holds it to that. By hand because
// zod's parse was a quarter of a listing's allocations in the bundle (docs/bench.md part 7).
import { codePointLength } from "../../contract/text";
import { arrayOf, copyPresent, isNumber, isPlainObject } from "../kit/json-shape";
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

/** A string of at most `max` code points (a string within `max` UTF-16 units always is). */
const textWithin = (v: unknown, max: number): v is string => typeof v === "string" && (v.length <= max || codePointLength(v) <= max);
const tagOf = (v: unknown): string | undefined => (textWithin(v, 1_000) ? v : undefined);
const isBoolean = (v: unknown): boolean => typeof v === "boolean";
const isOpId = (v: unknown): v is string => typeof v === "string" && OP_ID.test(v);
const LABEL = ["label"] as const;
const PRIMARY = ["primary"] as const;
const VERSION = ["version"] as const;
const DATES = ["createdAt", "updatedAt"] as const;

function urlOf(value: unknown): NonNullable<ItemRef["urls"]>[number] | undefined {
  if (!isPlainObject(value) || !textWithin(value.href, 10_000)) return undefined;
  const url: NonNullable<ItemRef["urls"]>[number] = { href: value.href };
  return copyPresent(value, url, LABEL, textWithin, 1_000) && copyPresent(value, url, PRIMARY, isBoolean, undefined) ? url : undefined;
}

function itemRef(value: unknown): ItemRef | undefined {
  if (!isPlainObject(value) || !isOpId(value.id)) return undefined;
  // The schema's default: an absent title is "".
  const title = "title" in value ? value.title : undefined;
  if (title !== undefined && !textWithin(title, 10_000)) return undefined;
  const vault = value.vault;
  if (!isPlainObject(vault) || !isOpId(vault.id) || !textWithin(value.category, 100)) return undefined;
  const out: ItemRef = { id: value.id, title: title ?? "", vault: { id: vault.id }, category: value.category };
  if ("tags" in value) {
    const tags = arrayOf(value.tags, MAX_ENTRIES, tagOf, undefined);
    if (tags === undefined) return undefined;
    out.tags = tags;
  }
  if ("urls" in value) {
    const urls = arrayOf(value.urls, MAX_ENTRIES, urlOf, undefined);
    if (urls === undefined) return undefined;
    out.urls = urls;
  }
  return copyPresent(value, out, VERSION, isNumber, undefined) && copyPresent(value, out, DATES, textWithin, 100) ? out : undefined;
}

/** ItemListSchema's safeParse, by hand: the listing, or undefined when the schema refuses it. */
export function itemListAnswer(value: unknown): ItemRef[] | undefined {
  return arrayOf(value, MAX_LISTING, itemRef, undefined);
}
