// An approval is bound to the exact target it was given for: a digest of the operation and the target,
// computed from the live target at execution time. A set is order-free, a tuple is not, and the operation
// is part of the key, so move and copy never share one, and an approval for ["a"] does not execute ["a", "b"]
// (docs/rules.md R-GATE-6).

export type FingerprintScalar = string | number | boolean | null;
/** `set`: order does not matter (sorted, duplicates kept). `tuple`: order matters. */
export type FingerprintPart = FingerprintScalar | { set: readonly FingerprintScalar[] } | { tuple: readonly FingerprintScalar[] };

export interface FingerprintInput {
  /** "move", "copy", "demo_write"…: different operations get different keys. */
  operation: string;
  target: Readonly<Record<string, FingerprintPart>>;
}

function scalar(value: FingerprintScalar): string {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("a fingerprint cannot hold a non-finite number");
    return JSON.stringify(Object.is(value, -0) ? 0 : value);
  }
  return JSON.stringify(value);
}

function part(value: FingerprintPart): string {
  if (value !== null && typeof value === "object") {
    if ("set" in value) return `{"set":[${value.set.map(scalar).sort().join(",")}]}`;
    return `{"tuple":[${value.tuple.map(scalar).join(",")}]}`;
  }
  return `{"value":${scalar(value)}}`;
}

/** The canonical text a fingerprint digests: stable under key order and set order, nothing else. */
export function canonicalTarget(input: FingerprintInput): string {
  const keys = Object.keys(input.target).sort();
  const body = keys.map((key) => `${JSON.stringify(key)}:${part(input.target[key] as FingerprintPart)}`).join(",");
  return `{"operation":${JSON.stringify(input.operation)},"target":{${body}}}`;
}

export async function fingerprint(input: FingerprintInput): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalTarget(input)));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
