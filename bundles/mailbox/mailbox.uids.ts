// UID sets: what a caller names is a list of UIDs; what an approval binds is that list sorted, without
// duplicates, and the mailbox's UIDVALIDITY with it (docs/rules.md R-MAIL-2). On the wire a set is an IMAP
// sequence set ("1:3,7"), and one the server sends (ESEARCH, COPYUID) is parsed back into ranges, never
// expanded whole: a search over a large mailbox pages through its ranges.

/** The largest UID IMAP allows (RFC 3501: a non-zero 32-bit number). */
export const MAX_UID = 4_294_967_295;

export type Range = readonly [number, number];

/** The caller's UIDs, sorted ascending, duplicates dropped; throws on anything that is not a UID. */
export function canonicalUids(uids: readonly number[]): number[] {
  for (const uid of uids) if (!Number.isInteger(uid) || uid < 1 || uid > MAX_UID) throw new RangeError(`${uid} is not a UID (a whole number from 1 to ${MAX_UID})`);
  return [...new Set(uids)].sort((a, b) => a - b);
}

/** A sorted, duplicate-free list of UIDs as an IMAP sequence set, consecutive runs joined ("1:3,7"). */
export function toSequenceSet(sorted: readonly number[]): string {
  if (sorted.length === 0) throw new RangeError("an empty UID set has no sequence set");
  const parts: string[] = [];
  let start = sorted[0] as number;
  let prev = start;
  for (const uid of sorted.slice(1)) {
    if (uid === prev + 1) {
      prev = uid;
      continue;
    }
    parts.push(start === prev ? `${start}` : `${start}:${prev}`);
    start = uid;
    prev = uid;
  }
  parts.push(start === prev ? `${start}` : `${start}:${prev}`);
  return parts.join(",");
}

/** A sequence set the server sent, as ascending, merged ranges. "*" is refused: a server's answer names numbers. */
export function parseSequenceSet(text: string): Range[] {
  if (!/^\d+(:\d+)?(,\d+(:\d+)?)*$/.test(text)) throw new RangeError("not a sequence set of numbers");
  const ranges = text.split(",").map((part): [number, number] => {
    const [a, b = a] = part.split(":").map(Number) as [number, number?];
    return a <= (b as number) ? [a, b as number] : [b as number, a];
  });
  ranges.sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

export const countOf = (ranges: readonly Range[]): number => ranges.reduce((n, [a, b]) => n + (b - a + 1), 0);

/** The page of UIDs `offset`..`offset + limit` counted from the newest (highest) down, without expanding the rest. */
export function pageNewestFirst(ranges: readonly Range[], offset: number, limit: number): number[] {
  const out: number[] = [];
  let skip = offset;
  for (let i = ranges.length - 1; i >= 0 && out.length < limit; i--) {
    const [a, b] = ranges[i] as Range;
    const size = b - a + 1;
    if (skip >= size) {
      skip -= size;
      continue;
    }
    for (let uid = b - skip; uid >= a && out.length < limit; uid--) out.push(uid);
    skip = 0;
  }
  return out;
}

/** The UIDs two ranges lists have in common with `wanted` (sorted), e.g. which requested UIDs a mailbox holds. */
export function present(wanted: readonly number[], ranges: readonly Range[]): number[] {
  return wanted.filter((uid) => ranges.some(([a, b]) => uid >= a && uid <= b));
}
