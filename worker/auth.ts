// Bearer tokens: each caller's token is the value of a Worker secret named in the roster.
// A presented token is compared with every caller's token, byte by byte with no early exit: the time taken
// depends only on the presented token's length, which the caller already knows, never on a secret byte
// or on which caller matched.
import { timingSafeEqual } from "../contract/compare";
import type { CallerEntry, Roster } from "./roster";

export type Caller = CallerEntry & { isAdmin: boolean };

const encoder = new TextEncoder();

export class CallerTable {
  private constructor(private readonly entries: { caller: Caller; token: Uint8Array }[]) {}

  /** Callers whose token secret is not seeded are left out (and named, by secret name only, in `unseeded`). */
  static build(roster: Roster, env: Record<string, unknown>): { table: CallerTable; unseeded: string[] } {
    const entries: { caller: Caller; token: Uint8Array }[] = [];
    const unseeded: string[] = [];
    for (const c of roster.callers) {
      const token = env[c.tokenSecret];
      if (typeof token !== "string" || token.length < 16) {
        unseeded.push(c.tokenSecret);
        continue;
      }
      entries.push({ caller: { ...c, isAdmin: c.kind === "admin" }, token: encoder.encode(token) });
    }
    return { table: new CallerTable(entries), unseeded };
  }

  authenticate(authorization: string | null): Caller | undefined {
    if (authorization === null) return undefined;
    // The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
    const match = /^bearer ([\x21-\x7e]{1,4096})$/i.exec(authorization);
    if (match === null) return undefined;
    const presented = encoder.encode(match[1] as string);
    let found: Caller | undefined;
    for (const e of this.entries) {
      if (timingSafeEqual(presented, e.token) && found === undefined) found = e.caller;
    }
    return found;
  }
}

export function isEntitled(caller: Caller, entitlements: readonly string[]): boolean {
  return caller.isAdmin || caller.roles.some((r) => entitlements.includes(r));
}
