// Covers the RosterOverlay Durable Object on workerd with the gateway built as the dev stack builds it, run as two
// Worker scripts (two isolates) sharing the one object: a runtime remote server is served by both within
// OVERLAY_TTL_MS, the object's compare-and-swap and history, and garbage written straight into the object.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OVERLAY_OBJECT, type RosterOverlayApi } from "../../contract/roster-overlay";
// @ts-expect-error: a plain ES module without types
import { buildWorker, startRuntime } from "../../scripts/bench-runtime.mjs";
import { OVERLAY_TTL_MS } from "../../worker/overlay";
import { DEV_VARS } from "../e2e/helpers";

const ADMIN = DEV_VARS.STRAD_TOKEN_DEV_ADMIN as string;
const SESSION = DEV_VARS.STRAD_TOKEN_DEV_SESSION as string;

interface Fetcher {
  fetch(url: string, init?: RequestInit): Promise<Response>;
}
let runtime: {
  miniflare: { getDurableObjectNamespace(name: string): Promise<DurableObjectNamespace>; getWorker(name: string): Promise<Fetcher> };
  stop: () => Promise<void>;
};
const built = mkdtempSync(join(tmpdir(), "strad-overlay-"));
let output = "";
let remote: Server;
let remoteUrl: string;

beforeAll(async () => {
  // A third-party MCP server a runtime write mounts: it answers tools/list with one tool.
  remote = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const id = (JSON.parse(body) as { id: number }).id;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id, result: { tools: [{ name: "runtime_ping", inputSchema: { type: "object" } }] } }));
    });
  });
  await new Promise<void>((resolve) => remote.listen(0, "127.0.0.1", resolve));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;
  const gateway = buildWorker("wrangler.toml", { into: built });
  // Two scripts of the same build are two isolates; the second reaches the first's objects, as every isolate of
  // the deployed gateway reaches the one global overlay. No call is forwarded to a bundle here.
  const second = {
    ...gateway,
    name: "strad-gateway-b",
    serviceBindings: {},
    durableObjects: {
      CALLS: { className: "CallRegistry", scriptName: gateway.name },
      ROSTER_OVERLAY: { className: "RosterOverlay", scriptName: gateway.name },
    },
  };
  runtime = await startRuntime([{ ...gateway, serviceBindings: {} }, second], {
    onOutput: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
      for (const stream of [stdout, stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString()));
    },
  });
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
  await new Promise((resolve) => remote?.close(resolve));
  rmSync(built, { recursive: true, force: true });
});

const isolate = (name: "strad-gateway" | "strad-gateway-b") => runtime.miniflare.getWorker(name);

async function object(): Promise<RosterOverlayApi> {
  const ns = await runtime.miniflare.getDurableObjectNamespace("ROSTER_OVERLAY");
  return ns.get(ns.idFromName(OVERLAY_OBJECT)) as unknown as RosterOverlayApi;
}

function adminRequest(method: string, path: string, body?: unknown): [string, RequestInit] {
  return [
    `http://gateway.test/admin/roster${path}`,
    { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) },
  ];
}

/** tools/list for `servers` as the dev session: its status, and whether the runtime server's tool is listed. */
async function listOn(name: "strad-gateway" | "strad-gateway-b", servers: string): Promise<{ status: number; served: boolean }> {
  const worker = await isolate(name);
  const response = await worker.fetch(`http://gateway.test/mcp?servers=${servers}`, {
    method: "POST",
    headers: { authorization: `Bearer ${SESSION}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  const text = await response.text();
  return { status: response.status, served: text.includes("runtime_ping") };
}

describe("the runtime roster overlay on workerd", () => {
  it("a runtime remote server is served by every isolate within OVERLAY_TTL_MS of the write", async () => {
    // Both isolates read the (empty) overlay just before the write: the worst case, a cache as fresh as it gets.
    expect(await listOn("strad-gateway", "runtime-remote")).toEqual({ status: 400, served: false });
    expect(await listOn("strad-gateway-b", "runtime-remote")).toEqual({ status: 400, served: false });
    const a = await isolate("strad-gateway");
    const written = await a.fetch(...adminRequest("POST", "/servers", { slug: "runtime-remote", kind: "remote-http", url: remoteUrl, entitlements: ["user"] }));
    expect(written.status).toBe(200);
    const at = Date.now();
    const seenAt: Record<string, number> = {};
    while (Object.keys(seenAt).length < 2 && Date.now() - at < OVERLAY_TTL_MS * 3) {
      for (const name of ["strad-gateway", "strad-gateway-b"] as const) {
        if (seenAt[name] === undefined && (await listOn(name, "runtime-remote")).served) seenAt[name] = Date.now() - at;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The bound is the TTL after each isolate's last read began; a request and a poll step of slack on a loaded machine.
    expect(seenAt["strad-gateway"]).toBeLessThan(OVERLAY_TTL_MS + 1500);
    expect(seenAt["strad-gateway-b"]).toBeLessThan(OVERLAY_TTL_MS + 1500);
    // Marked as a runtime entry in the operator's listing.
    const listing = (await (await a.fetch(...adminRequest("GET", ""))).json()) as { servers: { slug: string; source: string }[] };
    expect(listing.servers.find((s) => s.slug === "runtime-remote")?.source).toBe("runtime:added");
    expect(listing.servers.find((s) => s.slug === "echo")?.source).toBe("base");
    // 20 s: two isolates each wait up to OVERLAY_TTL_MS (5 s) plus a request per 200 ms poll on a loaded 2-core machine.
  }, 20_000);

  it("the object replaces the overlay only at the version the writer read, and records each write", async () => {
    const o = await object();
    const { version } = await o.read();
    const stale = await o.write(version - 1, JSON.stringify({ add: [], change: [] }), { who: "t", op: "reset", slug: "*", before: "x", after: "y" });
    expect(stale).toEqual({ ok: false, version });
    expect((await o.read()).version).toBe(version);
    const history = await o.history(10);
    expect(history[0]).toMatchObject({ who: "dev-admin", op: "add", slug: "runtime-remote", version });
  });

  it("garbage written straight into the object: /mcp answers from the base roster and the log says so once", async () => {
    const o = await object();
    const { version } = await o.read();
    expect((await o.write(version, "{{ not an overlay", { who: "test", op: "corrupt", slug: "*", before: "-", after: "-" })).ok).toBe(true);
    const at = Date.now();
    let fellBack = false;
    while (!fellBack && Date.now() - at < OVERLAY_TTL_MS * 3) {
      const runtimeGone = (await listOn("strad-gateway-b", "runtime-remote")).status === 400;
      fellBack = runtimeGone && output.includes('"event":"roster_overlay_fallback"');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(fellBack).toBe(true);
    // The base still answers: an initialize with no servers named, on both isolates.
    for (const name of ["strad-gateway", "strad-gateway-b"] as const) {
      const worker = await isolate(name);
      const init = await worker.fetch("http://gateway.test/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${SESSION}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } }),
      });
      expect(init.status).toBe(200);
    }
    const line = output.split("\n").find((l) => l.includes('"event":"roster_overlay_fallback"')) ?? "";
    expect(line).toContain('"serving":"base roster"');
    expect(line).not.toContain("not an overlay");
    // The operator sees why, and a reset brings the overlay back.
    const a = await isolate("strad-gateway");
    const listing = (await (await a.fetch(...adminRequest("GET", ""))).json()) as { overlayError: string | null };
    expect(listing.overlayError).toContain("unreadable");
    const refusedWrite = await a.fetch(...adminRequest("PATCH", "/servers/echo", { timeoutMs: 5000 }));
    expect(refusedWrite.status).toBe(409);
    expect((await a.fetch(...adminRequest("DELETE", ""))).status).toBe(200);
    // 20 s: up to OVERLAY_TTL_MS (5 s) for an isolate to read the garbage, polled every 200 ms on a loaded machine.
  }, 20_000);
});
