// Runtime roster writes (docs/rules.md R-RT-1..R-RT-6): the checked-in roster is the base, an overlay of runtime
// entries (durable-objects/roster-overlay.ts) is merged onto it, and the result passes the same schema and
// cross-field rules as check-config. The overlay never sets a key that decides where a credential goes (R-RT-3).
import type { RosterOverlayApi } from "../contract/roster-overlay";
import { lazily } from "../contract/sdk";
import type { Roster, ServerEntry } from "./roster";
import type { RosterError } from "./roster-use";

/**
 * The roster's schema (zod), loaded on the first merge of a non-empty overlay or a replacement: the gateway's start
 * and every call served from the checked-in roster alone never evaluate it (docs/bench.md, cold starts).
 */
const rosterSchema = lazily(() => import("./roster"));

/**
 * How long an isolate serves the overlay it last read before reading it again (R-RT-2): a write is served by every
 * isolate within this bound. Short, because a removed server must stop answering soon; one Durable Object read per
 * isolate per 5 s is cheap beside the calls it serves.
 */
export const OVERLAY_TTL_MS = 5_000;

/** Keys only the checked-in roster sets, on any entry: together they decide where a stored credential is sent (R-RT-3). */
export const GUARD_KEYS = ["confirmations", "confirmationHeaders", "skipConfirmations", "approvalUrlPrefixes", "fallback", "clientQuestions"] as const;
/** What a runtime write may change on a checked-in entry (R-RT-4); every other key of it is frozen, present and future. */
export const CHANGEABLE_KEYS = ["entitlements", "timeoutMs", "maxRequestBytes", "tools"] as const;
/** What a runtime entry of its own may name (R-RT-3): a mount, who sees it and its limits, and literal headers. */
export const NEW_ENTRY_KEYS = ["slug", "kind", "bundle", "path", "url", "entitlements", "timeoutMs", "maxRequestBytes", "tools", "headers"] as const;

/** The overlay as stored: entries of its own (`add`) and changes to checked-in entries (`change`, by slug). */
export interface Overlay {
  add: Record<string, unknown>[];
  change: Record<string, unknown>[];
}
export const EMPTY_OVERLAY: Overlay = { add: [], change: [] };

export type OverlayRefusal =
  | { code: "GUARD_KEY"; slug: string; key: string }
  | { code: "FROZEN_KEY"; slug: string; key: string }
  | { code: "KEY_NOT_RUNTIME"; slug: string; key: string }
  | { code: "SECRET_REF"; slug: string; key: string }
  | { code: "WIDENS_TOOLS"; slug: string; key: string; tool: string | undefined }
  | { code: "SHADOWS_GUARD"; slug: string; other: string }
  | { code: "UNKNOWN_BUNDLE"; slug: string; bundle: string }
  | { code: "BAD_ENTRY"; slug: string }
  | { code: "BAD_OVERLAY"; why: string }
  | { code: "SCHEMA"; errors: RosterError[] };

/** One sentence naming what was wrong and the key; never a value (a header value may be a credential). */
export function describeRefusal(r: OverlayRefusal): string {
  switch (r.code) {
    case "GUARD_KEY":
      return `servers "${r.slug}": "${r.key}" is set only by the checked-in roster; a runtime write may not add, change or remove it (it decides where a stored credential is sent)`;
    case "FROZEN_KEY":
      return `servers "${r.slug}": "${r.key}" of a checked-in entry decides where a credential goes and changes only with a redeploy; a runtime write may change ${CHANGEABLE_KEYS.join(", ")}`;
    case "KEY_NOT_RUNTIME":
      return `servers "${r.slug}": "${r.key}" cannot be set by a runtime write; a runtime entry may name ${NEW_ENTRY_KEYS.join(", ")}`;
    case "SECRET_REF":
      return `servers "${r.slug}": "${r.key}" references a secret ("\${...}"); a runtime entry never sends a stored secret, so its header values are literal`;
    case "WIDENS_TOOLS":
      return r.tool === undefined
        ? `servers "${r.slug}": "tools" of a checked-in entry that selects tools may be narrowed at runtime, never removed (that would serve every tool)`
        : `servers "${r.slug}": "tools" may only narrow the checked-in selection; "${r.tool.slice(0, 128)}" is not one of its tools`;
    case "SHADOWS_GUARD":
      return `servers "${r.slug}": shares its bundle and path with checked-in "${r.other}", which is guarded; a runtime mount may not stand beside a guarded one`;
    case "UNKNOWN_BUNDLE":
      return `servers "${r.slug}": bundle ${r.bundle} is not one the checked-in roster mounts; a runtime entry adds another mount of a deployed bundle only`;
    case "BAD_ENTRY":
      return `servers "${r.slug}": a runtime entry must be an object with a slug`;
    case "BAD_OVERLAY":
      return `the overlay is unreadable: ${r.why}`;
    case "SCHEMA":
      return r.errors.map((e) => `${e.path}: ${e.message}`).join("; ");
  }
}

export type Effective = { ok: true; roster: Roster; runtime: Map<string, "added" | "changed"> } | { ok: false; refusal: OverlayRefusal };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const has = (list: readonly string[], key: string) => list.includes(key);
const isGuarded = (s: ServerEntry) => s.confirmations || s.skipConfirmations || s.fallback !== "none" || Object.keys(s.confirmationHeaders).length > 0 || s.approvalUrlPrefixes !== undefined;

/** The overlay from its stored text: JSON of { add: [...], change: [...] }, nothing else. */
export function parseOverlay(text: string | null): { ok: true; overlay: Overlay } | { ok: false; refusal: OverlayRefusal } {
  if (text === null || text === "") return { ok: true, overlay: EMPTY_OVERLAY };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, refusal: { code: "BAD_OVERLAY", why: "not JSON" } };
  }
  if (!isRecord(data) || !Array.isArray(data.add) || !Array.isArray(data.change) || Object.keys(data).length !== 2) {
    return { ok: false, refusal: { code: "BAD_OVERLAY", why: "expected an object with exactly add: [] and change: []" } };
  }
  if (![...data.add, ...data.change].every(isRecord)) return { ok: false, refusal: { code: "BAD_OVERLAY", why: "every entry must be an object" } };
  return { ok: true, overlay: { add: data.add as Record<string, unknown>[], change: data.change as Record<string, unknown>[] } };
}

/** The guard and key rules for one runtime entry (R-RT-3, R-RT-4); the schema's own rules run on the merged roster. */
export function checkEntry(entry: Record<string, unknown>, base: Roster, kind: "add" | "change"): OverlayRefusal | undefined {
  const slug = typeof entry.slug === "string" ? entry.slug : "";
  if (slug === "") return { code: "BAD_ENTRY", slug };
  const keys = Object.keys(entry);
  // A guard key is refused whatever its value, even one equal to the base's: the overlay never names it (R-RT-3).
  const guard = keys.find((k) => has(GUARD_KEYS, k));
  if (guard !== undefined) return { code: "GUARD_KEY", slug, key: guard };
  if (kind === "change") {
    const frozen = keys.find((k) => k !== "slug" && !has(CHANGEABLE_KEYS, k));
    if (frozen !== undefined) return { code: "FROZEN_KEY", slug, key: frozen };
    // A runtime tool selection only narrows a checked-in one: a tool it does not serve never becomes served.
    const selected = base.servers.find((s) => s.slug === slug)?.tools;
    if ("tools" in entry && selected !== undefined) {
      if (!Array.isArray(entry.tools)) return { code: "WIDENS_TOOLS", slug, key: "tools", tool: undefined };
      const wider = entry.tools.find((t) => !selected.includes(t as string));
      if (wider !== undefined) return { code: "WIDENS_TOOLS", slug, key: "tools", tool: String(wider) };
    }
    return undefined;
  }
  const other = keys.find((k) => !has(NEW_ENTRY_KEYS, k));
  if (other !== undefined) return { code: "KEY_NOT_RUNTIME", slug, key: other };
  // A ${VAR} would resolve to a stored secret and send it to wherever this entry points (R-RT-3).
  if (isRecord(entry.headers)) {
    for (const [name, value] of Object.entries(entry.headers)) if (typeof value === "string" && value.includes("${")) return { code: "SECRET_REF", slug, key: `headers.${name}` };
  }
  if (entry.kind === "bundle" && typeof entry.bundle === "string") {
    if (!base.servers.some((s) => s.kind === "bundle" && s.bundle === entry.bundle)) return { code: "UNKNOWN_BUNDLE", slug, bundle: entry.bundle };
    const beside = base.servers.find((s) => s.kind === "bundle" && s.bundle === entry.bundle && s.path === entry.path && isGuarded(s));
    if (beside !== undefined) return { code: "SHADOWS_GUARD", slug, other: beside.slug };
  }
  return undefined;
}

/**
 * The effective roster: the base with the overlay merged on, held to every rule (R-RT-1). A slug of the base under
 * `add` is a duplicate (the schema says so), never a replacement; `change` names base entries only.
 */
export async function applyOverlay(base: Roster, overlay: Overlay): Promise<Effective> {
  // Nothing merged: the checked-in roster as it was validated, the same object (so what is cached per roster stays).
  if (overlay.add.length === 0 && overlay.change.length === 0) return { ok: true, roster: base, runtime: new Map() };
  const runtime = new Map<string, "added" | "changed">();
  const servers: Record<string, unknown>[] = base.servers.map((s) => ({ ...s }));
  for (const change of overlay.change) {
    const refusal = checkEntry(change, base, "change");
    if (refusal !== undefined) return { ok: false, refusal };
    const i = base.servers.findIndex((s) => s.slug === change.slug);
    if (i < 0) return { ok: false, refusal: { code: "BAD_OVERLAY", why: "a change names a slug that is not a checked-in entry" } };
    servers[i] = { ...servers[i], ...change };
    runtime.set(String(change.slug), "changed");
  }
  for (const entry of overlay.add) {
    const refusal = checkEntry(entry, base, "add");
    if (refusal !== undefined) return { ok: false, refusal };
    servers.push(entry);
    if (!base.servers.some((s) => s.slug === entry.slug)) runtime.set(String(entry.slug), "added");
  }
  const result = (await rosterSchema()).validateRoster({ ...base, servers });
  if (!result.ok) return { ok: false, refusal: { code: "SCHEMA", errors: result.errors } };
  return { ok: true, roster: result.roster, runtime };
}

/**
 * A whole replacement (PUT) of a checked-in entry, as the change it amounts to: only CHANGEABLE_KEYS may differ from
 * the base once defaults are filled, so leaving out `confirmations: true` is removing it, and refused (R-RT-4).
 */
export async function replacementAsChange(base: ServerEntry, body: Record<string, unknown>): Promise<{ ok: true; change: Record<string, unknown> } | { ok: false; refusal: OverlayRefusal }> {
  const parsed = (await rosterSchema()).ServerSchema.safeParse({ ...body, slug: base.slug });
  if (!parsed.success) {
    return { ok: false, refusal: { code: "SCHEMA", errors: parsed.error.issues.map((i) => ({ path: `servers "${base.slug}".${i.path.join(".")}`, message: i.message })) } };
  }
  const next = parsed.data as Record<string, unknown>;
  const before = base as Record<string, unknown>;
  const keys = new Set([...Object.keys(next), ...Object.keys(before)]);
  const change: Record<string, unknown> = { slug: base.slug };
  const differing = [...keys].filter((k) => JSON.stringify(next[k]) !== JSON.stringify(before[k]));
  const guard = differing.find((k) => has(GUARD_KEYS, k));
  if (guard !== undefined) return { ok: false, refusal: { code: "GUARD_KEY", slug: base.slug, key: guard } };
  const frozen = differing.find((k) => !has(CHANGEABLE_KEYS, k));
  if (frozen !== undefined) return { ok: false, refusal: { code: "FROZEN_KEY", slug: base.slug, key: frozen } };
  for (const k of differing) change[k] = next[k];
  return { ok: true, change };
}

/** Canonical JSON (sorted keys) of the overlay: what its digest is taken over. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the overlay's canonical JSON, hex: the audit line's before/after, which names no value (R-RT-5). */
export async function digest(overlay: Overlay): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical(overlay)));
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What the gateway reads the overlay through: the Durable Object's stub, or a stand-in in tests. */
export type OverlayStore = Pick<RosterOverlayApi, "read">;

export interface EffectiveView {
  roster: Roster;
  runtime: ReadonlyMap<string, "added" | "changed">;
  version: number;
}

/**
 * How long a read of the RosterOverlay object may take (R-RT-6): past it the read counts as failed, so a hung object
 * never hangs /mcp. A healthy read is one Durable Object round trip, milliseconds; this is far past one.
 */
export const OVERLAY_READ_TIMEOUT_MS = 2_000;

/** The object's answer, or a rejection once `ms` have passed without one. */
export function readWithin(s: OverlayStore, ms: number): Promise<{ version: number; text: string | null }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
  });
  return Promise.race([Promise.resolve().then(() => s.read()), timeout]).finally(() => clearTimeout(timer));
}

/** The slugs an overlay's text changes, as far as it can be read: a `change` list of entries naming a slug. */
function changedSlugs(text: string | null): string[] {
  if (text === null) return [];
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isRecord(data) || !Array.isArray(data.change)) return [];
  return data.change.flatMap((c) => (isRecord(c) && typeof c.slug === "string" ? [c.slug] : []));
}

/**
 * An isolate's view of the effective roster, read at most once per `ttlMs` (R-RT-2), each read bounded by
 * `readTimeoutMs`. A bad overlay serves the base less the slugs it changes (R-RT-6). A read that fails or times out keeps the last good view
 * this isolate had (fail closed: a runtime narrowing of entitlements is not undone by an outage), the base only when
 * it never had one. Each is logged once until a read succeeds, naming the rule and never a value.
 */
export function overlayReader(
  base: Roster,
  store: (env: Record<string, unknown>) => OverlayStore | undefined,
  ttlMs = OVERLAY_TTL_MS,
  now = () => Date.now(),
  readTimeoutMs = OVERLAY_READ_TIMEOUT_MS,
) {
  const baseView: EffectiveView = { roster: base, runtime: new Map(), version: 0 };
  let cached: { at: number; view: EffectiveView; answer: Promise<EffectiveView> } | undefined;
  const baseAnswer = Promise.resolve(baseView);
  /** When the read this isolate counts as its refresh started; undefined while none is in flight. */
  let refreshing: number | undefined;
  let lastBad: string | undefined;
  /** The last overlay this isolate read and could serve; what an unreadable object leaves it serving. */
  let lastGood: EffectiveView | undefined;

  const say = (key: string, line: Record<string, unknown>) => {
    if (key !== lastBad) console.error(JSON.stringify({ event: "roster_overlay_fallback", ...line }));
    lastBad = key;
  };

  /**
   * A bad overlay's view: the base, less every checked-in slug the overlay changes. A change that no longer applies (a
   * redeploy made the overlay invalid) may have narrowed who reaches the slug, so the slug is withheld until the
   * overlay is fixed or reset, never served wider than the operator left it (R-RT-6).
   */
  const fallback = (version: number, reason: string, changed: readonly string[] = []): EffectiveView => {
    const withheld = base.servers.filter((s) => changed.includes(s.slug)).map((s) => s.slug);
    say(`${version}:${reason}`, { version, reason, serving: withheld.length === 0 ? "base roster" : `base roster without ${withheld.join(", ")} (their runtime changes no longer apply)` });
    if (withheld.length === 0) return { ...baseView, version };
    return { roster: { ...base, servers: base.servers.filter((s) => !withheld.includes(s.slug)) }, runtime: new Map(), version };
  };

  const unreadable = (reason: string): EffectiveView => {
    if (lastGood === undefined) return fallback(-1, reason);
    say(`unreadable:${reason}`, { version: lastGood.version, reason, serving: `last good overlay (version ${lastGood.version})` });
    return lastGood;
  };

  const load = async (s: OverlayStore): Promise<EffectiveView> => {
    let read: { version: number; text: string | null };
    try {
      read = await readWithin(s, readTimeoutMs);
    } catch (error) {
      return unreadable(error instanceof Error && error.message === "timed out" ? `the overlay read took longer than ${readTimeoutMs} ms` : "the overlay could not be read");
    }
    const parsed = parseOverlay(read.text);
    if (!parsed.ok) return fallback(read.version, describeRefusal(parsed.refusal), changedSlugs(read.text));
    const effective = await applyOverlay(base, parsed.overlay);
    if (!effective.ok) {
      return fallback(read.version, effective.refusal.code === "SCHEMA" ? "the merged roster fails the schema" : effective.refusal.code, changedSlugs(read.text));
    }
    lastBad = undefined;
    lastGood = { roster: effective.roster, runtime: effective.runtime, version: read.version };
    return lastGood;
  };

  // A fresh view answers before anything else is touched: naming the object (a stub of it) is needed only for a read.
  return (env: Record<string, unknown>): Promise<EffectiveView> => {
    const t = now();
    if (cached !== undefined && t - cached.at < ttlMs) return cached.answer;
    const s = store(env);
    if (s === undefined) return baseAnswer;
    // No request waits on a read another request made: workerd cancels a request that waits on another's I/O as
    // hung (it answered 500 to a few calls at each refresh under load, bench part 1). So while one request's read is
    // in flight, the others are served the view it will replace, if that view is within ttlMs plus one bounded read
    // of its own read (R-RT-2's bound); any other request (no view yet, or an older one) reads for itself.
    const inFlight = refreshing !== undefined && t - refreshing < readTimeoutMs;
    if (inFlight && cached !== undefined && t - cached.at < ttlMs + readTimeoutMs) return cached.answer;
    if (!inFlight) refreshing = t;
    return load(s).then((view) => {
      if (cached === undefined || cached.at <= t) cached = { at: t, view, answer: Promise.resolve(view) };
      if (refreshing === t) refreshing = undefined;
      return view;
    });
  };
}

/** One value per roster object (the selection cache of each effective roster an isolate serves); dropped with it. */
export function perRoster<T>(make: (roster: Roster) => T): (roster: Roster) => T {
  const made = new WeakMap<Roster, T>();
  return (roster) => {
    let value = made.get(roster);
    if (value === undefined) {
      value = make(roster);
      made.set(roster, value);
    }
    return value;
  };
}
