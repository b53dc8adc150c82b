// Covers bundles/kit/fingerprint.ts: an approval's key is the operation plus the exact target, order-free only where declared.
import { describe, expect, it } from "vitest";
import { canonicalTarget, fingerprint } from "../../../bundles/kit/fingerprint";

describe("a fingerprint", () => {
  it("is a SHA-256 digest, stable for the same operation and target", async () => {
    const a = await fingerprint({ operation: "delete", target: { mailbox: "INBOX", uids: { set: [1, 2] } } });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await fingerprint({ operation: "delete", target: { uids: { set: [1, 2] }, mailbox: "INBOX" } })).toBe(a);
  });

  it("binds a set exactly: an approval for [a] never covers [a, b]", async () => {
    const one = await fingerprint({ operation: "delete", target: { uids: { set: ["a"] } } });
    const two = await fingerprint({ operation: "delete", target: { uids: { set: ["a", "b"] } } });
    const again = await fingerprint({ operation: "delete", target: { uids: { set: ["a", "a"] } } });
    expect(two).not.toBe(one);
    expect(again).not.toBe(one);
  });

  it("ignores the order of a set, and keeps the order of a tuple", async () => {
    expect(await fingerprint({ operation: "op", target: { ids: { set: [3, 1, 2] } } })).toBe(await fingerprint({ operation: "op", target: { ids: { set: [1, 2, 3] } } }));
    expect(await fingerprint({ operation: "op", target: { pair: { tuple: ["a", "b"] } } })).not.toBe(await fingerprint({ operation: "op", target: { pair: { tuple: ["b", "a"] } } }));
  });

  it("gives different operations different keys: move is not copy", async () => {
    const target = { from: "INBOX", to: "Public/Shared", uids: { set: [1] } };
    expect(await fingerprint({ operation: "move", target })).not.toBe(await fingerprint({ operation: "copy", target }));
  });

  it("tells a set from a tuple, a string from a number, and a value from a one-element list", async () => {
    const keys = await Promise.all([
      fingerprint({ operation: "op", target: { x: { set: [1] } } }),
      fingerprint({ operation: "op", target: { x: { tuple: [1] } } }),
      fingerprint({ operation: "op", target: { x: 1 } }),
      fingerprint({ operation: "op", target: { x: "1" } }),
      fingerprint({ operation: "op", target: { x: true } }),
      fingerprint({ operation: "op", target: { x: null } }),
      fingerprint({ operation: "op", target: {} }),
    ]);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("cannot be made to collide by a value that looks like the encoding", async () => {
    const a = await fingerprint({ operation: "op", target: { a: "x", b: "y" } });
    const b = await fingerprint({ operation: "op", target: { a: 'x"},"b":{"value":"y' } });
    expect(a).not.toBe(b);
    expect(canonicalTarget({ operation: "op", target: { a: 'x"' } })).toBe('{"operation":"op","target":{"a":{"value":"x\\""}}}');
  });

  it("refuses a non-finite number rather than keying it loosely", async () => {
    await expect(fingerprint({ operation: "op", target: { n: Number.NaN } })).rejects.toThrow(/non-finite/);
  });
});
