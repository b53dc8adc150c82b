// Shared pieces of the Google bundle's Node tests: the Gmail fake served on a free loopback port, the bundle's
// env pointing at it, and a fetch that fails the test on any request to an origin the test did not name.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from "vitest";
import google from "../../../bundles/google/google.app";
import { forgetTokens } from "../../../bundles/google/google.client";
import { createGmailFake } from "../../fakes/gmail/gmail.fake";
import type { GmailStore } from "../../fakes/gmail/store";
import { askChannel, type BundleAnswer, callBundle, fakeCalls } from "../kit/helpers/bundle";
import { type Handler, HostileServer, type Plan } from "../kit/helpers/hostile-server";

export const PERSON = {
  mount: "gmail-rw-external",
  email: "person@example.com",
  clientId: "dev-gmail-client-person",
  secret: "dev-gmail-secret-person-0123456789abcdef0123456789abcdef",
  refresh: "dev-gmail-refresh-person-0123456789abcdef0123456789abcdef",
};
export const AGENT = {
  mount: "gmail-agent",
  email: "agent@example.com",
  clientId: "dev-gmail-client-agent",
  secret: "dev-gmail-secret-agent-0123456789abcdef0123456789abcdef",
  refresh: "dev-gmail-refresh-agent-0123456789abcdef0123456789abcdef",
};
/** The read-only mount of the dev roster: the person's mailbox, through an OAuth client of its own, tool groups unset. */
export const READER = {
  mount: "gmail-ro",
  email: "person@example.com",
  clientId: "dev-gmail-client-reader",
  secret: "dev-gmail-secret-reader-0123456789abcdef0123456789abcdef",
  refresh: "dev-gmail-refresh-reader-0123456789abcdef0123456789abcdef",
};

function headersOf(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** Serves a fetch handler on 127.0.0.1 (a free port by default), as a Worker would be served. */
export async function serveFetch(handler: (request: Request) => Response | Promise<Response>, port = 0): Promise<{ origin: string; stop: () => Promise<void> }> {
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
    const response = await handler(request);
    const body = Buffer.from(await response.arrayBuffer());
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    res.writeHead(response.status, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ServedFake {
  /** Where the fake's API sits: the bundle's GMAIL_API_BASE_URL. */
  base: string;
  origin: string;
  store: GmailStore;
  stop: () => Promise<void>;
}

/** A fresh Gmail fake mounted at /gmail, as the fakes Worker mounts it. */
export async function startGmailFake(): Promise<ServedFake> {
  const { app, store } = createGmailFake();
  const root = new Hono();
  root.route("/gmail", app);
  const served = await serveFetch((request) => root.fetch(request));
  return { base: `${served.origin}/gmail`, origin: served.origin, store, stop: served.stop };
}

/**
 * The bundle's env for a fake: API and token URLs, attachment prefix, each mount's credentials, fast polls, and
 * the tool groups the dev roster gives (the person's and the agent's mailboxes send; gmail-ro declares none).
 */
export function bundleEnv(fake: ServedFake, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    GMAIL_API_BASE_URL: fake.base,
    GMAIL_TOKEN_URL: `${fake.base}/token`,
    GMAIL_ATTACHMENT_URL_PREFIXES: `${fake.base}/_fake/files/`,
    GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: PERSON.clientId,
    GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: PERSON.secret,
    GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: PERSON.refresh,
    GMAIL_AGENT__GMAIL_CLIENT_ID: AGENT.clientId,
    GMAIL_AGENT__GMAIL_CLIENT_SECRET: AGENT.secret,
    GMAIL_AGENT__GMAIL_REFRESH_TOKEN: AGENT.refresh,
    GMAIL_RO__GMAIL_CLIENT_ID: READER.clientId,
    GMAIL_RO__GMAIL_CLIENT_SECRET: READER.secret,
    GMAIL_RO__GMAIL_REFRESH_TOKEN: READER.refresh,
    GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS: "readwrite_external",
    GMAIL_AGENT__GMAIL_ENABLED_TOOLGROUPS: "readwrite_external",
    STRAD_POLL_INTERVAL_MS: "20",
    STRAD_KEEPALIVE_MS: "50",
    ...extra,
  };
}

/**
 * Replaces global fetch with one that only reaches the given origins; anything else is recorded and fails.
 * Returns the list of unexpected requests, which a test expects to stay empty.
 */
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

/** Sends made through the fake, newest last. */
export const sent = (fake: ServedFake) => fake.store.outbox;
/** API requests (token and Gmail) the fake received whose path ends with the suffix. */
export const requestsTo = (fake: ServedFake, suffix: string, method = "POST") => fake.store.requests.filter((r) => r.method === method && r.path.endsWith(suffix));

export const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };
export const PENDING: Plan = { body: { action: "pending", content: null } };

/** The approval request the bundle POSTed to a scripted route: its prompt text, line by line. */
export function promptOf(body: string | undefined): string[] {
  return (JSON.parse(body ?? "{}") as { message?: string }).message?.split("\n") ?? [];
}

export async function sha256Hex(bytes: Uint8Array | string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The CallRegistry record a channel names, as the gateway builds it (scope = caller, key = request id, a per-call nonce). */
export function callRef(key: string): { scope: string; key: string; nonce: string } {
  return { scope: "dev-session", key, nonce: `nonce-${key}-0123456789abcdef` };
}

export interface SendCall {
  mount?: string;
  tool?: string;
  args: Record<string, unknown>;
  /** What the scripted approver answers each poll; accept by default. */
  poll?: Plan | Handler;
  /** "ask" (default): a channel to the scripted approver; "skip": the waiver; "none": no channel; or a raw entry. */
  channel?: "ask" | "skip" | "none" | Record<string, unknown>;
  /** Whether the gateway holds the call live in its registry (default true). */
  live?: boolean;
  key?: string;
  signal?: AbortSignal;
  env?: Record<string, unknown>;
}

export interface Harness {
  fake: ServedFake;
  approver: HostileServer;
  calls: ReturnType<typeof fakeCalls>;
  /** One tools/call on the bundle, as the gateway would make it. */
  call(c: SendCall): Promise<{ answer: BundleAnswer; route: string; prompts: string[][]; key: string }>;
  env(extra?: Record<string, unknown>): Record<string, unknown>;
}

/**
 * Sets up a test file's world: a fresh Gmail fake, a scripted approver, a stand-in CallRegistry, token cache
 * forgotten and the mailboxes reset before each test, and no request to any other origin.
 */
export function harness(): Harness {
  const h = { calls: fakeCalls() } as Harness;
  let unexpected: string[] = [];
  let seq = 0;
  beforeAll(async () => {
    h.fake = await startGmailFake();
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
    forgetTokens();
    unexpected = onlyOrigins(h.fake.origin, h.approver.base);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    expect(unexpected, "requests to an origin the test did not name").toEqual([]);
  });
  h.env = (extra = {}) => bundleEnv(h.fake, { CALLS: h.calls.ns, ...extra });
  h.call = async (c) => {
    const key = c.key ?? `n:${++seq}`;
    const route = `r${++seq}`;
    const mount = c.mount ?? PERSON.mount;
    const poll = c.poll ?? ACCEPT;
    const url = h.approver.route(route, { poll: typeof poll === "function" ? poll : () => poll });
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
    const answer = await callBundle(google, { mount, name: c.tool ?? "send_email", args: c.args, channel, env: { ...h.env(), ...c.env }, signal: c.signal });
    const prompts = h.approver
      .requestsTo(route)
      .filter((r) => r.method === "POST")
      .map((r) => promptOf(r.body));
    return { answer, route, prompts, key };
  };
  return h;
}
