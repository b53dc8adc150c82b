// Bearer tokens: each caller's token is the value of a Worker secret named in the roster.
// Every caller's digest is compared (constant time, no early exit), so timing says nothing about which matched.
import type { CallerEntry, Roster } from "./roster";

export type Caller = CallerEntry & { isAdmin: boolean };

const encoder = new TextEncoder();

async function digest(value: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(value));
}

export class CallerTable {
  private constructor(private readonly entries: { caller: Caller; digest: ArrayBuffer }[]) {}

  /** Callers whose token secret is not seeded are left out (and named, by secret name only, in `unseeded`). */
  static async build(roster: Roster, env: Record<string, unknown>): Promise<{ table: CallerTable; unseeded: string[] }> {
    const entries: { caller: Caller; digest: ArrayBuffer }[] = [];
    const unseeded: string[] = [];
    for (const c of roster.callers) {
      const token = env[c.tokenSecret];
      if (typeof token !== "string" || token.length < 16) {
        unseeded.push(c.tokenSecret);
        continue;
      }
      entries.push({ caller: { ...c, isAdmin: c.kind === "admin" }, digest: await digest(token) });
    }
    return { table: new CallerTable(entries), unseeded };
  }

  async authenticate(authorization: string | null): Promise<Caller | undefined> {
    if (authorization === null) return undefined;
    const match = /^Bearer ([\x21-\x7e]{1,4096})$/.exec(authorization);
    if (match === null) return undefined;
    const presented = await digest(match[1] as string);
    let found: Caller | undefined;
    for (const e of this.entries) {
      if (crypto.subtle.timingSafeEqual(presented, e.digest) && found === undefined) found = e.caller;
    }
    return found;
  }
}

export function isEntitled(caller: Caller, entitlements: readonly string[]): boolean {
  return caller.isAdmin || caller.roles.some((r) => entitlements.includes(r));
}
