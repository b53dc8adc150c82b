// Connect's listing answer (GET /v1/vaults/{vault}/items) is checked by hand (onepassword.answers.ts); zod's
// ItemListSchema (onepassword.connect.ts) is the rule. Held to its verdict and value, byte for byte once serialized,
// on JSON values built from every key with right, wrong, edge and absent values, unknown keys added and keys in any
// order; every string cap at its edge in code points (astral characters, lone surrogates), as this zod counts them;
// the list and entry caps at their edges; and a refused listing, through the client, names no part of the answer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runInScope } from "../../../bundles/kit/scope";
import { itemListAnswer, MAX_LISTING } from "../../../bundles/onepassword/onepassword.answers";
import { ConnectClient, ItemListSchema } from "../../../bundles/onepassword/onepassword.connect";
import { agree, asJson, objectOf, takenOf } from "../kit/helpers/json-answers";

const ID = "a".repeat(26);

const wrong = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 3 }), fc.constant([]), fc.constant({}), fc.constant(["x"]));
const opId = fc.oneof(
  { weight: 30, arbitrary: fc.stringMatching(/^[a-z0-9]{26}$/) },
  { weight: 1, arbitrary: fc.constantFrom("a".repeat(25), "a".repeat(27), "A".repeat(26), `${"a".repeat(25)}-`, "") },
  { weight: 1, arbitrary: wrong },
);
/** Text around a cap: short, or exactly at, one under or one over it in code points, in ASCII, astral pairs or lone surrogates. */
function capped(max: number): fc.Arbitrary<unknown> {
  const around = fc
    .constantFrom(max - 1, max, max + 1)
    .chain((n) => fc.constantFrom("a".repeat(n), "😀".repeat(n), `${"😀".repeat(Math.max(0, n - 1))}\ud800`, `${"\udc00".repeat(Math.max(0, n - 1))}b`, `${"a".repeat(Math.max(0, n - 2))}😀`));
  return fc.oneof({ weight: 30, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 3, arbitrary: around }, { weight: 1, arbitrary: wrong });
}
const extraKey = fc.constantFrom("extra", "__proto__", "constructor", "favorite", "state", "lastEditedBy");
const fieldsOf = (fields: Record<string, fc.Arbitrary<unknown>>) => objectOf(fields, extraKey, 5);

const url = fc.oneof(
  { weight: 20, arbitrary: fieldsOf({ href: capped(10_000), label: capped(1_000), primary: fc.oneof({ weight: 20, arbitrary: fc.boolean() }, { weight: 1, arbitrary: wrong }) }) },
  { weight: 1, arbitrary: wrong },
);
const item = fieldsOf({
  id: opId,
  title: capped(10_000),
  vault: fc.oneof({ weight: 30, arbitrary: fieldsOf({ id: opId }) }, { weight: 1, arbitrary: wrong }),
  category: capped(100),
  tags: fc.oneof({ weight: 20, arbitrary: fc.array(capped(1_000), { maxLength: 3 }) }, { weight: 1, arbitrary: wrong }),
  urls: fc.oneof({ weight: 20, arbitrary: fc.array(url, { maxLength: 3 }) }, { weight: 1, arbitrary: wrong }),
  version: fc.oneof({ weight: 20, arbitrary: fc.oneof(fc.integer(), fc.double()) }, { weight: 1, arbitrary: wrong }),
  createdAt: capped(100),
  updatedAt: capped(100),
});
const listing = fc.oneof({ weight: 10, arbitrary: fc.array(fc.oneof({ weight: 20, arbitrary: item }, { weight: 1, arbitrary: wrong }), { maxLength: 3 }) }, { weight: 1, arbitrary: wrong });

describe("Connect's listing checked by hand, held to ItemListSchema", () => {
  it("gives the same verdict and value on 3,000 built listings", () => {
    const taken = takenOf(listing, ItemListSchema, itemListAnswer, 3000);
    expect(taken).toBeGreaterThan(300);
    expect(taken).toBeLessThan(2700);
  });

  it("counts every string cap in code points, at its edge, as this zod does", () => {
    const base = { id: ID, title: "t", vault: { id: ID }, category: "LOGIN" };
    const edges = (max: number) => [
      "a".repeat(max),
      "a".repeat(max + 1),
      "😀".repeat(max),
      "😀".repeat(max + 1),
      `${"😀".repeat(max - 1)}\ud800`,
      `${"😀".repeat(max)}\ud800`,
      "\ud800".repeat(max),
      "\ud800".repeat(max + 1),
    ];
    const cases: Record<string, unknown>[] = [];
    for (const text of edges(10_000)) cases.push({ ...base, title: text }, { ...base, urls: [{ href: text }] });
    for (const text of edges(1_000)) cases.push({ ...base, tags: [text] }, { ...base, urls: [{ href: "h", label: text }] });
    for (const text of edges(100)) cases.push({ ...base, category: text }, { ...base, createdAt: text }, { ...base, updatedAt: text });
    let taken = 0;
    for (const entry of cases) if (agree(ItemListSchema, itemListAnswer, asJson([entry]))) taken++;
    // Half of every cap's edges fit.
    expect(taken).toBe(cases.length / 2);
  });

  it("a missing title is the schema's default, an empty one; tags and URLs are capped at 500, a listing at 100,000", () => {
    const base = { id: ID, vault: { id: ID }, category: "LOGIN" };
    expect(itemListAnswer([base])?.[0]?.title).toBe("");
    agree(ItemListSchema, itemListAnswer, [base]);
    for (const n of [500, 501]) {
      expect(agree(ItemListSchema, itemListAnswer, [{ ...base, tags: Array.from({ length: n }, () => "x") }]), `${n} tags`).toBe(n <= 500);
      expect(agree(ItemListSchema, itemListAnswer, [{ ...base, urls: Array.from({ length: n }, () => ({ href: "h" })) }]), `${n} urls`).toBe(n <= 500);
    }
    const few = { id: ID, vault: { id: ID }, category: "C" };
    expect(
      agree(
        ItemListSchema,
        itemListAnswer,
        Array.from({ length: MAX_LISTING }, () => few),
      ),
    ).toBe(true);
    expect(
      agree(
        ItemListSchema,
        itemListAnswer,
        Array.from({ length: MAX_LISTING + 1 }, () => few),
      ),
    ).toBe(false);
  });

  it("a listing of an unexpected shape fails with a sentence that names no part of Connect's answer", async () => {
    const doFetch = async () => Response.json([{ id: ID, title: "SECRET-TITLE", vault: { id: ID }, category: 7 }]);
    const client = new ConnectClient("https://connect.example", "token-0123456789", "OP_CONNECT_HOST", doFetch);
    const scope = { mount: "onepassword", signal: new AbortController().signal, waitUntil: () => {}, env: {} };
    const failure = await runInScope(scope, () => client.listItems(ID)).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toBe("1Password Connect gave an answer of an unexpected shape");
    expect(failure?.message).not.toContain("SECRET");
  });
});
