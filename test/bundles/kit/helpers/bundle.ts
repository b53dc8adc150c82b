// Drives a bundle's exported handler in Node the way the gateway does (its own upstream client, 2026-07-28,
// one POST per call), with a stand-in for the gateway's CallRegistry and a recorder for writes.
import { GATEWAY_PROPS } from "../../../../bundles/kit/gateway-only";
import { CHANNEL_META_KEY } from "../../../../contract/channel";
import type { ServerEntry } from "../../../../worker/roster";
import { callUpstream, type UpstreamError } from "../../../../worker/upstream";

type Handler = ExportedHandler<Record<string, unknown>>;

/** The CallRegistry's claim rule: true once per call, and only while the gateway holds the call live. */
export function fakeCalls() {
  const live = new Set<string>();
  const claimed = new Set<string>();
  const claims: { scope: string; key: string; won: boolean }[] = [];
  const ns = {
    idFromName: (name: string) => name,
    get: (scope: string) => ({
      claim: async (key: string) => {
        await new Promise((r) => setTimeout(r, 5));
        const id = `${scope}/${key}`;
        const won = live.has(id) && !claimed.has(id);
        if (won) claimed.add(id);
        claims.push({ scope, key, won });
        return won;
      },
    }),
  };
  return {
    ns,
    claims,
    live: (scope: string, key: string) => live.add(`${scope}/${key}`),
    end: (scope: string, key: string) => live.delete(`${scope}/${key}`),
  };
}

export interface BundleCall {
  mount: string;
  name: string;
  args?: Record<string, unknown>;
  /** The gateway's _meta["dev.strad/elicitation"] entry; undefined = not sent. */
  channel?: unknown;
  progressToken?: string;
  env: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface BundleAnswer {
  ok: boolean;
  result: Record<string, unknown>;
  error?: UpstreamError;
  text: string;
  isError: boolean;
  progress: Record<string, unknown>[];
}

function bundleServer(mount: string): ServerEntry {
  return { slug: mount, kind: "bundle", bundle: "BUNDLE", path: `/${mount}` } as unknown as ServerEntry;
}

const inFlight = new Set<Request>();

function fetcherFor(handler: Handler, env: Record<string, unknown>) {
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;
  // The Request is kept until its answer settles: undici links its signal to the caller's only while the Request
  // lives (test/worker/helpers/gateway.ts, binding), and a bundle follows that signal to see its caller leave.
  return (url: string, init: RequestInit) => {
    const request = new Request(url, init);
    inFlight.add(request);
    return Promise.resolve((handler.fetch as NonNullable<Handler["fetch"]>)(request as never, env, ctx)).finally(() => inFlight.delete(request));
  };
}

export async function callBundle(handler: Handler, call: BundleCall): Promise<BundleAnswer> {
  const meta: Record<string, unknown> = {};
  if (call.channel !== undefined) meta[CHANNEL_META_KEY] = call.channel;
  if (call.progressToken !== undefined) meta.progressToken = call.progressToken;
  const progress: Record<string, unknown>[] = [];
  const answer = await callUpstream({
    server: bundleServer(call.mount),
    method: "tools/call",
    params: { name: call.name, arguments: call.args ?? {} },
    meta,
    headers: {},
    signal: call.signal ?? new AbortController().signal,
    fetcher: fetcherFor(handler, call.env),
    onProgress: (p) => progress.push(p),
  });
  const result = answer.ok ? answer.result : {};
  const content = (result.content as { text?: string }[] | undefined) ?? [];
  return { ok: answer.ok, result, error: answer.ok ? undefined : answer.error, text: content.map((c) => c.text ?? "").join(""), isError: result.isError === true, progress };
}

export async function listBundle(handler: Handler, mount: string, env: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const answer = await callUpstream({
    server: bundleServer(mount),
    method: "tools/list",
    params: {},
    meta: {},
    headers: {},
    signal: new AbortController().signal,
    fetcher: fetcherFor(handler, env),
  });
  if (!answer.ok) throw new Error(`tools/list failed: ${answer.error.code}`);
  return answer.result.tools as Record<string, unknown>[];
}

/** An ask channel as the gateway builds it. */
export function askChannel(url: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    slug: "kit-test",
    url,
    ttlMs: 10_000,
    headers: { "CF-Access-Client-Id": "edge-id.access", "CF-Access-Client-Secret": "edge-secret-0123" },
    call: { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" },
    ...over,
  };
}
