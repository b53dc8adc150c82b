// What the differential tests of a bundle's hand-checked answers build (test/bundles/google/answers.unit.test.ts,
// test/bundles/onepassword/answers.unit.test.ts): JSON values shaped like an upstream's answer, to hold a hand check
// (bundles/kit/json-shape.ts) to the zod schema it stands for.
import fc from "fast-check";
import { expect } from "vitest";

/** What JSON.parse could make of it: the only values the checks are given (NaN becomes null, -0 becomes 0). */
export const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/**
 * An object of `fields` in a random order, each present (`presentFreq` in `presentFreq + 1`) or absent, with up to two
 * keys of `extraKey` added holding any JSON.
 */
export function objectOf(fields: Record<string, fc.Arbitrary<unknown>>, extraKey: fc.Arbitrary<string>, presentFreq: number): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([key, value]) =>
    fc.option(
      value.map((v) => [key, v] as const),
      { nil: undefined, freq: presentFreq },
    ),
  );
  return fc
    .tuple(fc.tuple(...entries), fc.array(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 1 })), { maxLength: 2 }))
    .chain(([present, extra]) => {
      const pairs = [...present.filter((e) => e !== undefined), ...extra];
      return fc.shuffledSubarray(pairs, { minLength: pairs.length });
    })
    .map((pairs) => {
      const out: Record<string, unknown> = {};
      // defineProperty: a "__proto__" key stays an own key, as JSON.parse leaves it.
      for (const [key, value] of pairs) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      return out;
    });
}

type Schema = { safeParse: (value: unknown) => { success: boolean; data?: unknown } };

/**
 * The hand check and the schema agree on `value`: both refuse it, or both take it and give the same value, keys in the
 * same order. Returns whether the schema took it.
 */
export function agree(schema: Schema, check: (value: unknown) => unknown, value: unknown): boolean {
  const rule = schema.safeParse(value);
  const mine = check(value);
  expect(mine !== undefined, JSON.stringify(value).slice(0, 300)).toBe(rule.success);
  if (rule.success) {
    expect(mine).toStrictEqual(rule.data);
    expect(JSON.stringify(mine)).toBe(JSON.stringify(rule.data));
  }
  return rule.success;
}

/** `runs` answers `built` makes, each as JSON.parse would give it, held to `agree`; how many the schema took. */
export function takenOf(built: fc.Arbitrary<unknown>, schema: Schema, check: (value: unknown) => unknown, runs: number): number {
  let taken = 0;
  fc.assert(
    fc.property(built, (answer) => {
      if (agree(schema, check, asJson(answer))) taken++;
    }),
    { numRuns: runs },
  );
  return taken;
}
