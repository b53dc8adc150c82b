// Which mounts a request reaches (?servers=a,b), and how tool names map onto them.
// One mount: upstream names unchanged. Several: every name is "<slug>__<tool>". A slug cannot contain "_",
// so the split at the first "__" is unambiguous and two mounts' tools can never shadow each other.
import { type Caller, isEntitled } from "./auth";
import type { Roster, ServerEntry } from "./roster";

export const TOOL_SEPARATOR = "__";

export type Selection = { ok: true; servers: ServerEntry[]; prefixed: boolean } | { ok: false; message: string };

export function selectServers(roster: Roster, caller: Caller, param: string | null): Selection {
  const entitled = roster.servers.filter((s) => isEntitled(caller, s.entitlements));
  if (param === null) return { ok: true, servers: entitled, prefixed: entitled.length > 1 };
  const slugs = param.split(",").map((s) => s.trim());
  if (slugs.some((s) => s === "")) return { ok: false, message: "?servers= holds an empty slug" };
  if (slugs.length > 64) return { ok: false, message: "?servers= names more than 64 servers" };
  const picked: ServerEntry[] = [];
  for (const slug of slugs) {
    const server = entitled.find((s) => s.slug === slug);
    // Unknown and not-entitled read the same, so a caller cannot probe the roster.
    if (server === undefined) return { ok: false, message: `unknown server "${slug.slice(0, 64)}" (or not one this caller may use)` };
    if (!picked.includes(server)) picked.push(server);
  }
  return { ok: true, servers: picked, prefixed: picked.length > 1 };
}

export function exposedName(server: ServerEntry, tool: string, prefixed: boolean): string {
  return prefixed ? `${server.slug}${TOOL_SEPARATOR}${tool}` : tool;
}

export function routeTool(selection: Extract<Selection, { ok: true }>, name: string): { server: ServerEntry; tool: string } | undefined {
  if (!selection.prefixed) {
    const server = selection.servers[0];
    return server === undefined ? undefined : { server, tool: name };
  }
  const at = name.indexOf(TOOL_SEPARATOR);
  if (at <= 0) return undefined;
  const slug = name.slice(0, at);
  const server = selection.servers.find((s) => s.slug === slug);
  return server === undefined ? undefined : { server, tool: name.slice(at + TOOL_SEPARATOR.length) };
}
