// What the gateway does with a validated roster at every call: tool selection, ${VAR} resolution, the seeding check.
// No zod and no yaml here: the schema (worker/roster.ts) is loaded only to validate a roster's text or a runtime write,
// so the gateway's start does not evaluate either (docs/bench.md, cold starts).
import { slugNamespace } from "../contract/slug";
import type { Roster, ServerEntry } from "./roster";

/** Whether a slug's tool selection serves `tool` (the server's own name): every tool when it names none. */
export function toolAllowed(server: Pick<ServerEntry, "tools">, tool: string): boolean {
  return server.tools === undefined || server.tools.includes(tool);
}

/** Why a tools/call of a tool the slug's selection leaves out is refused: the slug and the tool, never more. */
export function describeUnselected(slug: string, tool: string): string {
  return `tool "${tool.slice(0, 128)}" is not served on "${slug}": the roster's tool selection for "${slug}" leaves it out (tools/list shows the tools it serves)`;
}

export interface RosterError {
  path: string;
  message: string;
}

export type RosterResult = { ok: true; roster: Roster } | { ok: false; errors: RosterError[] };

export type Resolved = { ok: true; value: string } | { ok: false; missing: string };

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Resolves every ${VAR} in a value: the slug's own namespace first, then the shared one. */
export function resolveRefs(value: string, slug: string, env: Record<string, unknown>): Resolved {
  let missing: string | undefined;
  const out = value.replace(REF, (_m, name: string) => {
    const own = env[`${slugNamespace(slug)}${name}`];
    const shared = env[name];
    const hit = typeof own === "string" ? own : typeof shared === "string" ? shared : undefined;
    if (hit === undefined) {
      missing ??= name;
      return "";
    }
    return hit;
  });
  return missing === undefined ? { ok: true, value: out } : { ok: false, missing };
}

export type ResolvedHeaders = { ok: true; headers: Record<string, string> } | { ok: false; missing: string };

export function resolveHeaderMap(map: Record<string, string>, slug: string, env: Record<string, unknown>): ResolvedHeaders {
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(map)) {
    const r = resolveRefs(raw, slug, env);
    if (!r.ok) return r;
    headers[name] = r.value;
  }
  return { ok: true, headers };
}

/** Names referenced by ${VAR} in a value. */
export function refsIn(value: string): string[] {
  return [...value.matchAll(REF)].map((m) => m[1] as string);
}

/**
 * Start-up check against the Worker's environment: every ${VAR} a server's headers or confirmationHeaders name
 * that is unseeded and not listed in mayBeUnseeded. The gateway logs these; the server's calls refuse (R-CONF-8).
 */
export function checkSeeded(roster: Roster, env: Record<string, unknown>): RosterError[] {
  const errors: RosterError[] = [];
  roster.servers.forEach((s, i) => {
    for (const field of ["headers", "confirmationHeaders"] as const) {
      for (const [name, raw] of Object.entries(s[field])) {
        for (const ref of refsIn(raw)) {
          if (s.mayBeUnseeded.includes(ref)) continue;
          const seeded = typeof env[`${slugNamespace(s.slug)}${ref}`] === "string" || typeof env[ref] === "string";
          if (!seeded) errors.push({ path: `servers[${i}].${field}.${name}`, message: `secret ${ref} is not seeded (list it in mayBeUnseeded to deploy before seeding)` });
        }
      }
    }
  });
  roster.callers.forEach((c, i) => {
    if (typeof env[c.tokenSecret] !== "string") errors.push({ path: `callers[${i}].tokenSecret`, message: `secret ${c.tokenSecret} is not seeded` });
  });
  return errors;
}
