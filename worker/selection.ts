// Which mounts a request reaches (?servers=a,b), and how tool names map onto them.
// One mount: upstream names unchanged. Several: every name is "<slug>__<tool>". A slug cannot contain "_",
// so the split at the first "__" is unambiguous and two mounts' tools can never shadow each other.
import { type Caller, isEntitled } from "./auth";
import type { Roster, ServerEntry } from "./roster";

export const TOOL_SEPARATOR = "__";

/** `implicit`: the caller named no servers, so it got every one it is entitled to. */
export type Selection = { ok: true; servers: readonly ServerEntry[]; prefixed: boolean; implicit?: boolean } | { ok: false; message: string };

/** How many distinct (caller, ?servers=) selections a gateway isolate keeps; past it the cache starts over. */
export const SELECTION_CACHE_SIZE = 256;

/**
 * A query of printable ASCII without `%` and `+`: nothing in it that URLSearchParams decodes or the URL parser strips
 * (tabs, newlines, a trailing space), so it reads as it is; any other goes to the URL parser.
 */
const PLAIN_QUERY = /^[\x21-\x24\x26-\x2a\x2c-\x7e]*$/;

/**
 * The `servers` parameter of a request's URL as `new URL(url).searchParams.get("servers")` reads it: the first
 * one's value, "" for one without `=`, null for none. A query with nothing to decode (PLAIN_QUERY, as a URL the
 * runtime parsed is unless it holds an encoded byte) and no fragment is split by hand; any other is the URL
 * parser's (test/worker/selection.test.ts holds the two to the same answers). Every /mcp request reads it, and the
 * parser cost the gateway about 6 us of CPU per call side by side (docs/bench.md).
 */
export function serversParam(url: string): string | null {
  // A fragment may hold a "?" of its own: such a URL (never one a client sends) is the parser's.
  if (url.includes("#")) return new URL(url).searchParams.get("servers");
  const at = url.indexOf("?");
  if (at < 0) return null;
  const query = url.slice(at + 1);
  if (!PLAIN_QUERY.test(query)) return new URL(url).searchParams.get("servers");
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    if ((eq < 0 ? pair : pair.slice(0, eq)) === "servers") return eq < 0 ? "" : pair.slice(eq + 1);
  }
  return null;
}

/**
 * selectServers, remembered per caller and ?servers= value: a selection depends on nothing else (the roster is
 * compiled in), and is frozen, so no request can change what another is handed. The cache holds no secret, and a
 * caller naming endless distinct values only makes it start over.
 */
export function selectionCache(roster: Roster): (caller: Caller, param: string | null) => Selection {
  const cache = new Map<Caller, Map<string | null, Selection>>();
  let size = 0;
  return (caller, param) => {
    let mine = cache.get(caller);
    const known = mine?.get(param);
    if (known !== undefined) return known;
    if (size >= SELECTION_CACHE_SIZE) {
      cache.clear();
      size = 0;
      mine = undefined;
    }
    const selection = freeze(selectServers(roster, caller, param));
    if (mine === undefined) {
      mine = new Map();
      cache.set(caller, mine);
    }
    mine.set(param, selection);
    size++;
    return selection;
  };
}

function freeze(selection: Selection): Selection {
  if (selection.ok) Object.freeze(selection.servers);
  return Object.freeze(selection);
}

export function selectServers(roster: Roster, caller: Caller, param: string | null): Selection {
  const entitled = roster.servers.filter((s) => isEntitled(caller, s.entitlements));
  if (param === null) return { ok: true, servers: entitled, prefixed: entitled.length > 1, implicit: true };
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

/**
 * The selection in words, for the `instructions` of the initialize and server/discover answers: a caller that
 * named no servers learns which it got and how their tools are named (docs/rules.md R-MCP-5).
 */
export function describeSelection(selection: Extract<Selection, { ok: true }>): string {
  const slugs = selection.servers.map((s) => s.slug);
  const listed = slugs.length === 0 ? "none" : slugs.join(", ");
  const chosen = selection.implicit
    ? `No ?servers= was given, so every server this caller may use is selected: ${listed}. Name the ones you want with ?servers=<slug>,<slug> on the /mcp URL.`
    : `Selected servers: ${listed}.`;
  const naming = selection.prefixed
    ? `Tools are named <slug>${TOOL_SEPARATOR}<tool> (for example ${slugs[0]}${TOOL_SEPARATOR}<tool>), so two servers' tools never share a name.`
    : "Tool names are the server's own.";
  return `${chosen} ${naming}`;
}

/** Slugs an unknown-tool answer names at most: the selection can hold every server the caller may use. */
const SLUGS_NAMED = 10;

/**
 * Why a tool name routes to no mount, and how names are formed here (docs/rules.md R-MCP-8): the selected slugs (all
 * of them the caller's own, R-AUTH-6) and the `<slug>__<tool>` naming, or how to get a server's own names.
 */
export function describeUnroutable(selection: Extract<Selection, { ok: true }>, name: string): string {
  const shown = name.slice(0, 128);
  const slugs = selection.servers.map((s) => s.slug);
  if (slugs.length === 0) return `unknown tool "${shown}": this caller may use no server, so no tool is served here`;
  const listed = slugs.length > SLUGS_NAMED ? `${slugs.slice(0, SLUGS_NAMED).join(", ")} and ${slugs.length - SLUGS_NAMED} more` : slugs.join(", ");
  const at = name.indexOf(TOOL_SEPARATOR);
  if (at > 0) {
    const slug = name.slice(0, at).slice(0, 64);
    return `unknown tool "${shown}": "${slug}" is not one of the selected servers (${listed}); tools are named <slug>${TOOL_SEPARATOR}<tool> after a selected server`;
  }
  const chosen = selection.implicit ? `no ?servers= was given, so every server this caller may use is selected (${listed})` : `?servers= selects several servers (${listed})`;
  const example = `${slugs[0]}${TOOL_SEPARATOR}${name.slice(0, 64)}`;
  return `unknown tool "${shown}": ${chosen}, so tools are named <slug>${TOOL_SEPARATOR}<tool>, e.g. "${example}"; or call /mcp?servers=<slug> to use one server's own tool names`;
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
