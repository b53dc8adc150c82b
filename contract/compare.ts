// Constant-time comparison of a presented secret with an expected one: no early exit, and the time taken
// depends only on the presented value's length (which its sender already knows), never on a secret byte.

const encoder = new TextEncoder();

export function timingSafeEqual(presented: Uint8Array, expected: Uint8Array): boolean {
  const n = expected.length;
  let diff = presented.length ^ n;
  for (let i = 0; i < presented.length; i++) diff |= (presented[i] as number) ^ (n === 0 ? 0 : (expected[i % n] as number));
  return diff === 0;
}

export function timingSafeEqualText(presented: string, expected: string): boolean {
  return timingSafeEqual(encoder.encode(presented), encoder.encode(expected));
}
