// Shared pieces of the e2e suite: the running stack's addresses, the dev callers' tokens, and the two
// official MCP client generations connected through the gateway.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

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
};

export function mcpUrl(servers?: string): URL {
  const url = new URL("/mcp", GATEWAY);
  if (servers !== undefined) url.searchParams.set("servers", servers);
  return url;
}

export interface Connected {
  callTool(name: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal; onprogress?: (p: unknown) => void; timeout?: number }): Promise<{ content?: unknown; isError?: boolean; structuredContent?: unknown }>;
  listTools(): Promise<{ tools: { name: string; annotations?: Record<string, unknown> }[] }>;
  close(): Promise<void>;
  revision: string | undefined;
}

/** The 2025-11-25 peer: @modelcontextprotocol/sdk 1.x. */
export async function connectLegacy(servers: string | undefined, headers: Record<string, string>): Promise<Connected> {
  const client = new LegacyClient({ name: "e2e-legacy", version: "1.0.0" });
  const transport = new LegacyTransport(mcpUrl(servers), { requestInit: { headers } });
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
    revision: client.getNegotiatedProtocolVersion?.() ,
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
  const data = text.startsWith("event:") || text.startsWith("data:") ? text.split("\n").find((l) => l.startsWith("data:"))?.slice(5) : text;
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
