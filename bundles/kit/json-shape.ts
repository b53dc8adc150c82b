// The pieces of a hand check that holds an upstream's JSON answer to a zod schema's verdict and value (Gmail's
// answers, google.answers.ts; Connect's listing, onepassword.answers.ts): an optional key is checked only when
// present (`in`, as zod asks) and copied in the schema's order, an array is rebuilt entry by entry, and the first
// entry refused refuses the whole. Module-level checks with an argument, not closures: these run on every read.
import { isPlainObject } from "../../contract/tool-call";

export { isPlainObject };

/** Each entry of `value`, an array of at most `max`, as `check(entry, arg)` makes it; undefined when any is refused. */
export function arrayOf<T, A>(value: unknown, max: number, check: (entry: unknown, arg: A) => T | undefined, arg: A): T[] | undefined {
  if (!Array.isArray(value) || value.length > max) return undefined;
  const out: T[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const entry = check(value[i], arg);
    if (entry === undefined) return undefined;
    out[i] = entry;
  }
  return out;
}

/**
 * Copies each of `keys` that `input` has into `out`, in that order, when `accept(value, arg)` takes it; false at the
 * first present one it refuses. An absent key stays absent.
 */
export function copyPresent<A>(input: Record<string, unknown>, out: object, keys: readonly string[], accept: (value: unknown, arg: A) => boolean, arg: A): boolean {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (!(key in input)) continue;
    const value = input[key];
    if (!accept(value, arg)) return false;
    (out as Record<string, unknown>)[key] = value;
  }
  return true;
}

export const isString = (value: unknown): value is string => typeof value === "string";
/** z.number(): finite numbers only (JSON.parse makes Infinity of 1e400, which it refuses). */
export const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
