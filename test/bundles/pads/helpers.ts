// What the pads bundle's Node tests share: the Rustpad fake on a free port, a fetch that opens its WebSocket the way
// workerd does, and a stand-in for the gateway's CallRegistry that keeps the call's claim, the two-call tokens and
// the pads' edit leases with the Durable Object's rules (durable-objects/call-registry.ts; the real one is tested on
// workerd).
import { afterAll, afterEach, beforeAll, vi } from "vitest";
import { MAX_LIVE_TOKENS, type MintedToken, TOKEN_PATTERN, TOKEN_TTL_MS, type TokenBinding, type TokenCheck } from "../../../contract/call-registry";
import { PAD_LEASE_HOLDER, PAD_LEASE_MS } from "../../../contract/pad-lease";
// @ts-expect-error: plain ESM helper without types
import { socketFetch } from "../../fakes/rustpad/node-socket.mjs";
// @ts-expect-error: plain ESM helper without types
import { startRustpadFake } from "../../fakes/rustpad/rustpad.fake.mjs";
import { fakeCalls } from "../kit/helpers/bundle";

export interface RecordedEdit {
  pad: string;
  kind: "edit" | "injected" | "language" | "rejected";
  client: number;
  revision?: number;
  operation?: unknown;
  applied?: unknown;
  language?: string;
}

export interface RustpadFake {
  port: number;
  url: string;
  pads: Map<string, { text: string; language: string | null; operations: unknown[]; conns: Set<unknown> }>;
  edits: RecordedEdit[];
  stop: () => Promise<void>;
}

/** The fake for this file, and global fetch opening its sockets as workerd would (other requests go out as usual). */
export function useRustpad(): { fake: () => RustpadFake; opened: () => string[] } {
  let fake: RustpadFake | undefined;
  const real = globalThis.fetch;
  const fetcher = socketFetch(real) as ((input: string, init?: RequestInit) => Promise<Response>) & { opened: string[] };
  beforeAll(async () => {
    fake = (await startRustpadFake({ port: 0 })) as RustpadFake;
    vi.stubGlobal("fetch", fetcher);
  });
  // A test that stubs fetch itself gets this one back afterwards.
  afterEach(() => {
    vi.stubGlobal("fetch", fetcher);
  });
  afterAll(async () => {
    vi.unstubAllGlobals();
    await fake?.stop();
  });
  return {
    fake: () => {
      if (fake === undefined) throw new Error("the Rustpad fake is not running");
      return fake;
    },
    opened: () => fetcher.opened,
  };
}

/** Seeds a pad as a stored document, over the fake's own HTTP route. */
export async function seedPad(fake: RustpadFake, pad: string, text: string, language?: string): Promise<void> {
  const response = await fetch(`${fake.url}/_fake/pads/${pad}`, { method: "PUT", body: JSON.stringify({ text, ...(language === undefined ? {} : { language }) }) });
  if (!response.ok) throw new Error(`seeding ${pad} failed: ${response.status}`);
  await response.body?.cancel();
}

/** Another client's edit on the pad: now, or held until a client next sends an edit. */
export async function otherEdit(fake: RustpadFake, pad: string, body: { append?: string; operation?: unknown[]; when?: "now" | "before-next-edit" }): Promise<void> {
  const response = await fetch(`${fake.url}/_fake/pads/${pad}/edit`, { method: "POST", body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`the other edit failed: ${response.status}`);
  await response.body?.cancel();
}

export function padText(fake: RustpadFake, pad: string): string | undefined {
  return fake.pads.get(pad)?.text;
}

export function editsTo(fake: RustpadFake, pad: string, kind?: RecordedEdit["kind"]): RecordedEdit[] {
  return fake.edits.filter((e) => e.pad === pad && (kind === undefined || e.kind === kind));
}

let padCount = 0;
/** A fresh pad id of Rustpad's shape for each test. */
export function freshPad(): string {
  const n = (++padCount).toString(36).padStart(2, "0");
  return `T${Date.now().toString(36).slice(-3)}${n}`.slice(0, 6).padEnd(6, "x");
}

/**
 * The CallRegistry as the gate, the two-call token and the pads' edit lease see it: a call's claim (once, while
 * live), tokens and leases kept with the Durable Object's rules. `clock.offset` moves time on to expire them.
 */
export function fakeRegistry() {
  // The claim is the kit's stand-in's (test/bundles/kit/helpers/bundle.ts); the tokens are added beside it.
  const calls = fakeCalls();
  const tokens = new Map<string, { scope: string; binding: TokenBinding; expires: number; used: boolean }>();
  const minted: { scope: string; ttlMs: number }[] = [];
  const clock = { offset: 0 };
  const now = () => Date.now() + clock.offset;
  // One lease per object (the object is the pad): the real one's check and write, with no await between them.
  const leases = new Map<string, { holder: string; expires: number }>();
  const leaseLog: { name: string; won: boolean }[] = [];
  const ns = {
    idFromName: (name: string) => name,
    get: (scope: string) => ({
      ...calls.ns.get(scope),
      mintToken: async (binding: TokenBinding, ttlMs: number): Promise<MintedToken> => {
        const ours = [...tokens.values()].filter((t) => t.scope === scope && t.expires > now());
        if (ours.length >= MAX_LIVE_TOKENS) return { ok: false, reason: "too_many" };
        const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
        const ttl = Math.min(TOKEN_TTL_MS.max, Math.max(TOKEN_TTL_MS.min, ttlMs));
        tokens.set(token, { scope, binding, expires: now() + ttl, used: false });
        minted.push({ scope, ttlMs: ttl });
        return { ok: true, token, expiresAt: now() + ttl };
      },
      redeemToken: async (token: string, binding: TokenBinding): Promise<TokenCheck> => {
        const row = TOKEN_PATTERN.test(token) ? tokens.get(token) : undefined;
        if (row === undefined || row.scope !== scope) return "unknown";
        if (row.used) return "used";
        if (now() >= row.expires) return "expired";
        if (row.binding.args !== binding.args) return "arguments_differ";
        if (row.binding.target !== binding.target) return "target_changed";
        row.used = true;
        return "ok";
      },
      leasePad: async (holder: string, ttlMs: number): Promise<boolean> => {
        // A round trip, as to the real object: calls made at the same moment reach it interleaved.
        await new Promise((r) => setTimeout(r, 1));
        const held = leases.get(scope);
        const won = PAD_LEASE_HOLDER.test(holder) && Number.isFinite(ttlMs) && (held === undefined || held.holder === holder || held.expires <= now());
        if (won) leases.set(scope, { holder, expires: now() + Math.min(PAD_LEASE_MS.max, Math.max(PAD_LEASE_MS.min, Math.floor(ttlMs))) });
        leaseLog.push({ name: scope, won });
        return won;
      },
      releasePad: async (holder: string): Promise<void> => {
        await new Promise((r) => setTimeout(r, 1));
        if (leases.get(scope)?.holder === holder) leases.delete(scope);
      },
    }),
  };
  return { ns, claims: calls.claims, minted, clock, live: calls.live, leases: leaseLog, held: () => [...leases].filter(([, l]) => l.expires > now()).map(([name]) => name) };
}

export const CALL = { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" };

/** An ask channel as the gateway builds it for a pads slug. */
export function ask(url: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { slug: "pads", url, ttlMs: 10_000, headers: {}, call: CALL, caller: "dev-session", ...over };
}

/** The channel the gateway sends a `fallback: token` slug when nobody can be asked. */
export function fallback(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { slug: "pads-token", fallback: "token", reason: "no approval address came with this call", ttlMs: 10_000, call: CALL, caller: "dev-session", ...over };
}
