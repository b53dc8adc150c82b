// Shared pieces of the 1Password bundle's Node tests: the Connect fake served on a free loopback port, the bundle's
// env pointing at it, a scripted approval service, the stand-in CallRegistry, and one tools/call as the gateway makes it.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from "vitest";
import handler from "../../../bundles/onepassword/onepassword.app";
import { forgetClients } from "../../../bundles/onepassword/onepassword.sdk";
import { resetStartWarning } from "../../../bundles/onepassword/onepassword.tools";
import { type ConnectStore, createConnectFake } from "../../fakes/onepassword/connect.fake";
import { PROVISIONING_TOKEN, SHARED_TOKEN, TEAM_TOKEN } from "../../fakes/onepassword/seed";
import { askChannel, type BundleAnswer, callBundle, fakeCalls } from "../kit/helpers/bundle";
import { type Handler, HostileServer, type Plan } from "../kit/helpers/hostile-server";

export const SHARED = "onepassword";
export const PROVISIONING = "onepassword-provisioning";
/** A slug no roster holds, added by a roster entry alone: its own <SLUG>__ credentials reach the fake's third account. */
export const TEAM = "onepassword-team";

function headersOf(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** Serves a fetch handler on 127.0.0.1 (a free port), as a Worker would be served. */
export async function serveFetch(handle: (request: Request) => Response | Promise<Response>): Promise<{ origin: string; stop: () => Promise<void> }> {
  const server = createServer(async (req, res) => {
    res.on("error", () => {});
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = req.method ?? "GET";
    const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
      method,
      headers: headersOf(req.headers),
      body: method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks),
    });
    const response = await handle(request);
    const body = Buffer.from(await response.arrayBuffer());
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    res.writeHead(response.status, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Replaces global fetch with one that only reaches the given origins; anything else is recorded and fails. */
export function onlyOrigins(...origins: string[]): string[] {
  const real = globalThis.fetch;
  const unexpected: string[] = [];
  vi.stubGlobal("fetch", (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!origins.includes(url.origin)) {
      unexpected.push(url.href);
      return Promise.reject(new TypeError("unexpected outbound request"));
    }
    return real(input, init);
  });
  return unexpected;
}

export const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };
export const PENDING: Plan = { body: { action: "pending", content: null } };

export interface ServedConnect {
  /** The bundle's OP_CONNECT_HOST. */
  host: string;
  origin: string;
  store: ConnectStore;
  stop: () => Promise<void>;
}

/** A fresh Connect fake mounted at /onepassword, as the fakes Worker mounts it. */
export async function startConnectFake(): Promise<ServedConnect> {
  const { app, store } = createConnectFake();
  const root = new Hono();
  root.route("/onepassword", app);
  const served = await serveFetch((request) => root.fetch(request));
  return { host: `${served.origin}/onepassword`, origin: served.origin, store, stop: served.stop };
}

/** Each mount's Connect credentials (the shared one bare, the provisioning and team ones under their own namespaces), fast polls. */
export function bundleEnv(fake: ServedConnect, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    OP_CONNECT_HOST: fake.host,
    OP_CONNECT_TOKEN: SHARED_TOKEN,
    ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST: fake.host,
    ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN: PROVISIONING_TOKEN,
    ONEPASSWORD_TEAM__OP_CONNECT_HOST: fake.host,
    ONEPASSWORD_TEAM__OP_CONNECT_TOKEN: TEAM_TOKEN,
    STRAD_POLL_INTERVAL_MS: "20",
    STRAD_KEEPALIVE_MS: "50",
    ...extra,
  };
}

/** The approval request the bundle POSTed to a scripted route: its prompt text, line by line. */
export function promptOf(body: string | undefined): string[] {
  return (JSON.parse(body ?? "{}") as { message?: string }).message?.split("\n") ?? [];
}

export function callRef(key: string): { scope: string; key: string; nonce: string } {
  return { scope: "dev-session", key, nonce: `nonce-${key}-0123456789abcdef` };
}

export interface OpCall {
  mount?: string;
  tool: string;
  args: Record<string, unknown>;
  /** What the scripted approver answers each poll; accept by default. */
  poll?: Plan | Handler;
  /** What it answers the create POST; a 201 with a request id by default. */
  create?: Handler;
  /** "ask" (default): a channel to the scripted approver; "skip": the waiver; "none": no channel; or a raw entry. */
  channel?: "ask" | "skip" | "none" | Record<string, unknown>;
  /** Whether the gateway holds the call live in its registry (default true). */
  live?: boolean;
  signal?: AbortSignal;
  env?: Record<string, unknown>;
}

export interface OpAnswer {
  answer: BundleAnswer;
  /** Each approval request's prompt, line by line. */
  prompts: string[][];
  /** The answer's JSON, when it is JSON. */
  json: Record<string, unknown> | undefined;
  key: string;
}

export interface Harness {
  fake: ServedConnect;
  approver: HostileServer;
  calls: ReturnType<typeof fakeCalls>;
  env(extra?: Record<string, unknown>): Record<string, unknown>;
  call(c: OpCall): Promise<OpAnswer>;
}

function jsonOf(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * A test file's world: a fresh Connect fake, a scripted approver, a stand-in CallRegistry; the fake reset, the
 * SDK clients forgotten and no request to any other origin, before each test.
 */
export function harness(): Harness {
  const h = { calls: fakeCalls() } as Harness;
  let unexpected: string[] = [];
  let seq = 0;
  beforeAll(async () => {
    h.fake = await startConnectFake();
    h.approver = await new HostileServer("/scripted").start();
  });
  afterAll(async () => {
    await h.fake?.stop();
    await h.approver?.stop();
  });
  beforeEach(() => {
    h.fake.store.reset();
    h.approver.requests.length = 0;
    h.calls = fakeCalls();
    forgetClients();
    resetStartWarning();
    unexpected = onlyOrigins(h.fake.origin, h.approver.base);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    expect(unexpected, "requests to an origin the test did not name").toEqual([]);
  });
  h.env = (extra = {}) => bundleEnv(h.fake, { CALLS: h.calls.ns, ...extra });
  h.call = async (c) => {
    const key = `n:${++seq}`;
    const route = `r${++seq}`;
    const mount = c.mount ?? SHARED;
    const poll = c.poll ?? ACCEPT;
    const url = h.approver.route(route, { poll: typeof poll === "function" ? poll : () => poll, ...(c.create === undefined ? {} : { create: c.create }) });
    if (c.live !== false) h.calls.live("dev-session", key);
    const ref = callRef(key);
    const channel =
      c.channel === "none"
        ? undefined
        : c.channel === "skip"
          ? { slug: mount, skip: true, ttlMs: 10_000, call: ref }
          : c.channel === undefined || c.channel === "ask"
            ? askChannel(url, { slug: mount, call: ref })
            : c.channel;
    const answer = await callBundle(handler, { mount, name: c.tool, args: c.args, channel, env: { ...h.env(), ...c.env }, signal: c.signal });
    const prompts = h.approver
      .requestsTo(route)
      .filter((r) => r.method === "POST")
      .map((r) => promptOf(r.body));
    return { answer, prompts, json: jsonOf(answer.text), key };
  };
  return h;
}
