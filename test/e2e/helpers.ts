// Shared pieces of the e2e suite: the running stack's addresses, the dev callers' tokens, the two official
// MCP client generations connected through the gateway, and what a test waits for instead of sleeping (the
// call registry's live calls, the stack log catching up).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const ROOT = join(import.meta.dirname, "..", "..");
export const GATEWAY = "http://127.0.0.1:8787";
export const FAKES = "http://127.0.0.1:8789";

/** The dev secrets the stack runs with (copied from .dev.vars.example). */
export const DEV_VARS: Record<string, string> = Object.fromEntries(
  readFileSync(join(ROOT, ".dev.vars.example"), "utf8")
    .split("\n")
    .map((l) => /^([A-Z0-9_]+)="(.*)"$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1] as string, m[2] as string]),
);

export const TOKENS = {
  session: DEV_VARS.STRAD_TOKEN_DEV_SESSION as string,
  session2: DEV_VARS.STRAD_TOKEN_DEV_SESSION_2 as string,
  admin: DEV_VARS.STRAD_TOKEN_DEV_ADMIN as string,
  console: DEV_VARS.STRAD_TOKEN_DEV_CONSOLE as string,
  grant: DEV_VARS.STRAD_TOKEN_DEV_GRANT as string,
  reader: DEV_VARS.STRAD_TOKEN_DEV_READER as string,
  /** Approval Flow's own callers (strad.dev.yaml): its file runs beside the others (scripts/test.mjs). */
  flow: DEV_VARS.STRAD_TOKEN_DEV_FLOW as string,
  flow2: DEV_VARS.STRAD_TOKEN_DEV_FLOW_2 as string,
};

export function mcpUrl(servers?: string, gateway = GATEWAY): URL {
  const url = new URL("/mcp", gateway);
  if (servers !== undefined) url.searchParams.set("servers", servers);
  return url;
}

export interface Connected {
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: { signal?: AbortSignal; onprogress?: (p: unknown) => void; timeout?: number },
  ): Promise<{ content?: unknown; isError?: boolean; structuredContent?: unknown }>;
  listTools(): Promise<{ tools: { name: string; annotations?: Record<string, unknown> }[] }>;
  close(): Promise<void>;
  revision: string | undefined;
}

/** The 2025-11-25 peer: @modelcontextprotocol/sdk 1.x. */
export async function connectLegacy(servers: string | undefined, headers: Record<string, string>, gateway = GATEWAY): Promise<Connected> {
  const client = new LegacyClient({ name: "e2e-legacy", version: "1.0.0" });
  const transport = new LegacyTransport(mcpUrl(servers, gateway), { requestInit: { headers } });
  await client.connect(transport);
  return {
    callTool: (name, args = {}, o = {}) => client.callTool({ name, arguments: args }, undefined, { signal: o.signal, onprogress: o.onprogress, timeout: o.timeout ?? 30_000 }) as never,
    listTools: () => client.listTools() as never,
    close: () => client.close(),
    revision: transport.protocolVersion,
  };
}

/** The 2026-07-28 peer: @modelcontextprotocol/client 2.x with version negotiation. */
export async function connectModern(servers: string | undefined, headers: Record<string, string>): Promise<Connected> {
  const client = new ModernClient({ name: "e2e-modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  const transport = new ModernTransport(mcpUrl(servers), { requestInit: { headers } });
  await client.connect(transport);
  return {
    callTool: (name, args = {}, o = {}) => client.callTool({ name, arguments: args }, { signal: o.signal, onprogress: o.onprogress, timeout: o.timeout ?? 30_000 }) as never,
    listTools: () => client.listTools() as never,
    close: () => client.close(),
    revision: client.getNegotiatedProtocolVersion?.(),
  };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** A raw JSON-RPC POST, for what no well-behaved client sends. */
export async function rawPost(body: string | object, headers: Record<string, string>, servers?: string): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(mcpUrl(servers), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  const data =
    text.startsWith("event:") || text.startsWith("data:")
      ? text
          .split("\n")
          .find((l) => l.startsWith("data:"))
          ?.slice(5)
      : text;
  try {
    json = data === undefined || data === "" ? undefined : JSON.parse(data);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function textOf(result: { content?: unknown }): string {
  const content = result.content as { type: string; text?: string }[] | undefined;
  return (content ?? []).map((c) => c.text ?? "").join("");
}

export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface RecordedEvent {
  kind: string;
  at: number;
  [key: string]: unknown;
}

export const recorder = {
  async events(): Promise<RecordedEvent[]> {
    return (await (await fetch(`${FAKES}/recorder/events`)).json()) as RecordedEvent[];
  },
  async clear(): Promise<void> {
    await (await fetch(`${FAKES}/recorder/events`, { method: "DELETE" })).body?.cancel();
  },
};

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The gateway's call-registry statistics for one caller (GET /_dev/calls/<caller>, dev routes only). */
export async function registryStats(scope: string): Promise<{ served: number; live: number }> {
  const response = await fetch(`${GATEWAY}/_dev/calls/${encodeURIComponent(scope)}`);
  if (response.status !== 200) throw new Error(`/_dev/calls answered HTTP ${response.status}`);
  return (await response.json()) as { served: number; live: number };
}

/**
 * Waits (bounded) until no confirmed call of `scope` is live: the gateway has answered or torn down every
 * one, so none can claim a write any more (the send gate's claim holds only while the call is live).
 */
export async function callsEnded(scope = "dev-session", timeoutMs = 10_000): Promise<void> {
  await waitFor(async () => ((await registryStats(scope)).live === 0 ? true : undefined), timeoutMs);
}

/**
 * What a test that asserts that something did *not* happen waits, once everything it can wait for has
 * happened: several of the dev bundles' poll intervals (100 ms) and a keepalive interval (500 ms), for a
 * write already under way to land.
 */
export const QUIET_MS = 500;
export const quiet = (ms = QUIET_MS): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every confirmed call of `scope` is over and a write already under way has had time to land. */
export async function nothingMore(scope = "dev-session"): Promise<void> {
  await callsEnded(scope);
  await quiet();
}

/** How long a person's late approval stays on offer after the caller left: many of the bundles' poll intervals (100 ms). */
export const LATE_APPROVAL_MS = 1_500;

/** The stack log the global setup keeps (test-output/stack.log). */
export const STACK_LOG = join(ROOT, "test-output", "stack.log");

/** The gateway's JSON request-log lines in the stack log. */
export function requestLogLines(): Record<string, unknown>[] {
  return readFileSync(STACK_LOG, "utf8")
    .split("\n")
    .filter((l) => l.includes('"event":"mcp_request"'))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>);
}

/**
 * Waits (bounded) until the stack log holds the request-log line of a call made now: what the gateway and the
 * bundles (one runtime, one output stream) wrote before it is then in the file too.
 */
export async function logsCaughtUp(): Promise<void> {
  const since = Date.now();
  const r = await rawPost(
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "log barrier" } } },
    { "mcp-protocol-version": "2025-11-25", ...bearer(TOKENS.session) },
    "echo",
  );
  if (r.status !== 200) throw new Error(`the log barrier's call answered HTTP ${r.status}`);
  await waitFor(async () => (requestLogLines().some((l) => l.caller === "dev-session" && l.tool === "echo" && Date.parse(String(l.at)) >= since) ? true : undefined), 10_000, 100);
}
