// parseChannel (contract/channel.ts) checks the gateway's channel entry against the one form its own key names; the
// union ChannelSchema is the rule. Held to the union's verdict on every entry, valid or not: each form as the gateway
// writes it, each with one key dropped, one key of another form added or one value made wrong, and fast-check's
// entries built from every key of every form with right and wrong values.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChannelSchema, parseChannel } from "../../contract/channel";

const CALL = { scope: "session-1", key: "req-1", nonce: "n".repeat(16) };
const VALID = {
  url: { slug: "pads", url: "https://approvals.example.com/s/1", ttlMs: 60_000, headers: { "cf-access-client-id": "x" }, call: CALL, caller: "alice", fallback: "token" },
  urlBare: { slug: "pads", url: "http://127.0.0.1:8788/s/1", ttlMs: 1, headers: {} },
  refused: { slug: "pads", refused: "no approval address", caller: "alice" },
  refusedBare: { slug: "", refused: "x" },
  skip: { slug: "gmail", skip: true, ttlMs: 5, call: CALL, caller: "bob" },
  skipBare: { slug: "gmail", skip: true },
  fallback: { slug: "pads", fallback: "token", reason: "nobody to ask", ttlMs: 10, call: CALL, caller: "alice" },
  client: { slug: "mailbox", ask: "client", ttlMs: 10, call: CALL, caller: "alice", fallback: "token" },
  clientBare: { slug: "mailbox", ask: "client", ttlMs: 10, call: CALL, caller: "alice" },
} satisfies Record<string, Record<string, unknown>>;
const FORMS: Record<string, unknown>[] = Object.values(VALID);
/** Values at the edges of each check, right and wrong: numbers zod refuses or takes, URLs it trims or refuses, ids, lengths. */
const EDGES: Record<string, unknown[]> = {
  slug: ["", "a".repeat(300), ["pads"]],
  url: [" https://approvals.example.com/s/1 ", "\thttps://a.example/x", "https://a b.example/", "javascript:alert(1)", "http://[::1]:8788/s/", "mailto:x@example.com", "", "https://", 5],
  ttlMs: [1, 1.5, -1, 0, -0, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 2 ** 53 - 1, "5", null],
  headers: [{}, { a: "b", "cf-access-client-secret": "s" }, { a: 1 }, [], null, "x", Object.create(null), { a: undefined }],
  call: [
    CALL,
    // zod counts code points: 8 astral characters are 16 UTF-16 units but 8 long; lone surrogates count one each.
    { ...CALL, nonce: "😀".repeat(8) },
    { ...CALL, nonce: "😀".repeat(16) },
    { ...CALL, nonce: `${"😀".repeat(7)}ab` },
    { ...CALL, nonce: "\ud800".repeat(16) },
    { ...CALL, nonce: `${"\udc00\ud800".repeat(4)}x` },
    { ...CALL, nonce: "n".repeat(15) },
    { ...CALL, scope: "" },
    { ...CALL, extra: 1 },
    { scope: "s", key: "k" },
    [],
    null,
  ],
  caller: ["alice", "a-b", "a-", "-a", "a--b", "A", "", "a_b", 5],
  fallback: ["token", "TOKEN", "", true],
  refused: ["x", "", 1],
  skip: [true, "true", 1],
  reason: ["why", "", null],
  ask: ["client", "Client", true],
};
/** A wrong value for each key any form has. */
const WRONG: Record<string, unknown> = {
  slug: 7,
  url: "not a url",
  ttlMs: 0,
  headers: { a: 1 },
  call: { ...CALL, nonce: "short" },
  caller: "Not An Id!",
  fallback: "always",
  refused: "",
  skip: false,
  reason: "",
  ask: "server",
};

function sameVerdict(raw: unknown): void {
  const union = ChannelSchema.safeParse(raw);
  expect(parseChannel(raw)).toStrictEqual(union.success ? union.data : undefined);
}

describe("parseChannel", () => {
  it("accepts each form as the gateway writes it, with the same value the union gives", () => {
    for (const [name, raw] of Object.entries(VALID) as [string, Record<string, unknown>][]) {
      expect(ChannelSchema.safeParse(raw).success, name).toBe(true);
      expect(parseChannel(raw), name).toEqual(ChannelSchema.parse(raw));
    }
  });

  it("refuses, as the union does, each form with a key dropped, a key of another form added, or a value made wrong", () => {
    let refused = 0;
    for (const raw of FORMS) {
      const variants: unknown[] = [];
      for (const key of Object.keys(raw)) {
        const { [key]: _dropped, ...rest } = raw;
        variants.push(rest, { ...raw, [key]: WRONG[key] });
      }
      for (const key of Object.keys(WRONG))
        if (!(key in raw))
          variants.push({ ...raw, [key]: (VALID.url as Record<string, unknown>)[key] ?? (VALID.client as Record<string, unknown>)[key] ?? (VALID.fallback as Record<string, unknown>)[key] ?? true });
      variants.push({ ...raw, extra: 1 });
      for (const variant of variants) {
        sameVerdict(variant);
        if (parseChannel(variant) === undefined) refused++;
      }
    }
    // Most variants are refusals (dropping an optional key or adding one is not): the check above compared them.
    expect(refused).toBeGreaterThan(60);
  });

  it("refuses what is not an object, an array and an empty object, and reads a prototype's keys as the union does", () => {
    for (const raw of [null, undefined, 0, "url", true, [], [VALID.url], {}]) {
      sameVerdict(raw);
      expect(parseChannel(raw)).toBeUndefined();
    }
    // The union reads an entry's keys through its prototype too (no entry parsed from JSON has one): the same verdict.
    for (const form of FORMS) sameVerdict(Object.create(form));
    expect(parseChannel(Object.create(VALID.refused))).toEqual(VALID.refused);
  });

  it("agrees with the union on entries built at random from every form's keys, right and wrong values", () => {
    const keys = Object.keys(WRONG);
    const rights = (key: string) => FORMS.flatMap((form) => (key in form ? [form[key]] : []));
    // Each key of a form the gateway writes kept (most often), dropped, or given another form's value, a wrong one or null.
    const change = (key: string) =>
      fc.oneof(
        { weight: 6, arbitrary: fc.constant<"keep">("keep") },
        { weight: 1, arbitrary: fc.constant<"drop">("drop") },
        { weight: 2, arbitrary: fc.constantFrom(...rights(key), ...(EDGES[key] ?? []), WRONG[key], null, undefined).map((value) => ({ value })) },
      );
    const entry = fc.tuple(fc.constantFrom(...FORMS), fc.tuple(...keys.map(change))).map(([form, changes]) => {
      const raw: Record<string, unknown> = { ...form };
      keys.forEach((key, i) => {
        const c = changes[i] as (typeof changes)[number];
        if (c === "drop") delete raw[key];
        else if (c !== "keep") raw[key] = c.value;
      });
      return raw;
    });
    let accepted = 0;
    let runs = 0;
    fc.assert(
      fc.property(entry, (raw) => {
        sameVerdict(raw);
        runs++;
        if (parseChannel(raw) !== undefined) accepted++;
      }),
      { numRuns: 3000, seed: 31 },
    );
    // The runs reached both verdicts, each often: the comparison above was made on accepted entries and refused ones.
    expect(accepted).toBeGreaterThan(runs / 20);
    expect(runs - accepted).toBeGreaterThan(runs / 20);
  });
});
