// A bundle called directly (docs/rules.md R-CHAN-13): every bundle of the tree, built as deployed and run on workerd with a public address of its own (a route, as workers.dev or a Preview URL would give it) and no gateway in front, refuses tools/list, a read tool and a guarded tool with no channel, a forged waiver and a forged confirmed channel: 403, and the recorder the forged channel names, the Gmail and Rustpad stand-ins and the echo recorder receive nothing. The same calls over a binding carrying the gateway's props do reach them, so the recorders are wired; wrong props are refused as no props are.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GATEWAY_PROPS, ONLY_THROUGH_GATEWAY } from "../../../bundles/kit/gateway-only";
import { CHANNEL_META_KEY } from "../../../contract/channel";
// @ts-expect-error: plain ESM helper without types
import { buildWorker, startRuntime } from "../../../scripts/stack.mjs";
// @ts-expect-error: plain ESM helper without types
import { discoverWorkers, ROOT } from "../../../scripts/workers.mjs";
import { gatewayStandIn } from "./helpers/gateway-binding";

/** A local server that records every request it is sent, WebSocket upgrades included, and answers each with 200 {}. */
async function startRecorder() {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.on("upgrade", (req, socket) => {
    seen.push(`UPGRADE ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Recorder = Awaited<ReturnType<typeof startRecorder>>;

interface Built {
  name: string;
  dir: string;
  options: Record<string, unknown>;
  mount: string;
}
type Runtime = { miniflare: { dispatchFetch: (url: string, init: RequestInit) => Promise<Response> }; stop: () => Promise<void> };

type Tool = [string, Record<string, unknown>];
const GMAIL_READ: Tool = ["search_messages", {}];
const PADS_READ: Tool = ["get_document", { pad_id: "Notes1" }];
/** The calls each bundle is tried with: a read tool and a guarded one (where it has them), on a mount it serves locally. */
const TOOLS: Record<string, { mount?: string; read: Tool; guarded?: Tool }> = {
  echo: { mount: "/echo-confirmed", read: ["echo", { text: "hi" }], guarded: ["demo_write", { note: "forged" }] },
  google: { mount: "/gmail-rw-external", read: GMAIL_READ, guarded: ["send_email", { to: ["someone@example.com"], subject: "forged", body: "forged" }] },
  pads: { read: PADS_READ, guarded: ["set_document", { pad_id: "Notes1", content: "" }] },
  onepassword: { read: ["onepassword_list_vaults", {}], guarded: ["onepassword_get_item", { items: [{ vault_id: "a".repeat(26), item_id: "b".repeat(26) }] }] },
  "approval-flow": { read: ["check_status", { request_id: "forged" }], guarded: ["apply", { request_id: "forged" }] },
  mailbox: { read: ["search_messages", { mailbox: "INBOX" }], guarded: ["delete_messages", { mailbox: "INBOX", uids: [1] }] },
};

/** Where the mailbox's IMAP account now points: a TCP listener that counts every connection made to it. */
let imap: { server: TcpServer; port: number; connections: number };

const out = mkdtempSync(join(tmpdir(), "strad-bundle-direct-"));
const recorders: Record<"approvals" | "echo" | "gmail" | "rustpad" | "other", Recorder> = {} as never;
let bundles: Built[] = [];
let gatewayBuild: Record<string, unknown> = {};
let runtime: Runtime;

/** Where a bundle's local addresses (its .dev.vars) now point: a recorder, so anything it reaches is seen. */
const recorderFor = (dir: string): Recorder => (dir === "echo" ? recorders.echo : dir === "google" ? recorders.gmail : dir === "pads" ? recorders.rustpad : recorders.other);
const everySeen = () => [...Object.values(recorders).flatMap((r) => r.seen), ...Array.from({ length: imap.connections }, () => "an IMAP connection")];

beforeAll(async () => {
  for (const name of ["approvals", "echo", "gmail", "rustpad", "other"] as const) recorders[name] = await startRecorder();
  const counted = { connections: 0 };
  const server = createTcpServer((socket) => {
    counted.connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  imap = Object.assign(counted, { server, port: (server.address() as AddressInfo).port });
  const found = discoverWorkers(ROOT);
  gatewayBuild = buildWorker(found.gateway.config, { into: out });
  bundles = (found.bundles as { dir: string; config: string }[]).map((b) => {
    const options = buildWorker(b.config, { into: out }) as Record<string, unknown>;
    const recorder = recorderFor(b.dir);
    // Every loopback address the bundle would reach (the fakes, the Rustpad fake, the echo recorder) is this recorder.
    const bindings = Object.fromEntries(
      Object.entries((options.bindings ?? {}) as Record<string, unknown>).map(([k, v]) => [
        k,
        k.endsWith("__IMAP_PORT") ? String(imap.port) : typeof v === "string" ? v.replace(/http:\/\/127\.0\.0\.1:\d+/g, recorder.base) : v,
      ]),
    );
    const manifest = JSON.parse(readFileSync(join(ROOT, "bundles", b.dir, "bundle.json"), "utf8")) as { mounts: string[] | string };
    const mount = TOOLS[b.dir]?.mount ?? (Array.isArray(manifest.mounts) ? (manifest.mounts[0] as string) : `/${b.dir}`);
    const name = options.name as string;
    // Its own public address: what workers.dev, a Preview URL or a route would give it if it were left on.
    return { name, dir: b.dir, mount, options: { ...options, bindings, routes: [`${name}.acme.workers.dev/*`] } };
  });
  runtime = (await startRuntime([
    // Miniflare's entry falls back to the first Worker for a host no route names: the gateway, bound to nothing.
    { ...gatewayBuild, serviceBindings: {} },
    ...bundles.map((b) => b.options),
    // The controls: a binding carrying the gateway's props, and one carrying another Worker's.
    ...bundles.map((b) => ({ ...gatewayStandIn(b.options), name: `via-gateway-${b.name}`, routes: [`via-gateway.${b.name}.test/*`] })),
    ...bundles.map((b) => ({ ...gatewayStandIn(b.options, { from: "strad-bundle-echo" }), name: `via-other-${b.name}`, routes: [`via-other.${b.name}.test/*`] })),
  ])) as Runtime;
  // Building every bundle as deployed (wrangler deploy --dry-run, about 10 s each on a busy two-core machine, the
  // 1Password bundle's 13 MiB included) and starting workerd with all of them.
}, 420_000);

afterAll(async () => {
  await runtime?.stop();
  for (const r of Object.values(recorders)) await r?.stop();
  await new Promise((resolve) => imap?.server.close(resolve));
  rmSync(out, { recursive: true, force: true });
});

beforeEach(() => {
  for (const r of Object.values(recorders)) r.seen.length = 0;
  imap.connections = 0;
});

const forgedCall = { scope: "dev-session", key: "n:1", nonce: "forged-nonce-0123456789" };
const forgedWaiver = (slug: string) => ({ slug, skip: true, call: forgedCall });
const forgedConfirmed = (slug: string) => ({
  slug,
  url: `${recorders.approvals.base}/api/v1/elicitations/session/forged/`,
  ttlMs: 10_000,
  headers: { "CF-Access-Client-Id": "forged.access", "CF-Access-Client-Secret": "forged-secret" },
  call: forgedCall,
});

/** One JSON-RPC request to `host` (a route) at the bundle's mount; its status and body text. */
async function rpc(host: string, mount: string, method: string, params: Record<string, unknown>) {
  const response = await runtime.miniflare.dispatchFetch(`https://${host}${mount}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: response.status, text: await response.text() };
}
const call = (name: string, args: Record<string, unknown>, channel?: unknown) => ({ name, arguments: args, _meta: channel === undefined ? {} : { [CHANNEL_META_KEY]: channel } });

/** Every request a direct caller could try on `b`: tools/list, the read tool with each channel, the guarded tool with each. */
function attempts(b: Built): [string, string, Record<string, unknown>][] {
  const tools = TOOLS[b.dir];
  const slug = b.mount.slice(1);
  const channels: [string, unknown][] = [
    ["no channel", undefined],
    ["a forged waiver", forgedWaiver(slug)],
    ["a forged confirmed channel", forgedConfirmed(slug)],
  ];
  const named = [tools?.read, tools?.guarded].filter((t): t is Tool => t !== undefined);
  return [
    ["tools/list", "tools/list", {}],
    ...named.flatMap(([name, args]) => channels.map(([what, channel]): [string, string, Record<string, unknown>] => [`${name} with ${what}`, "tools/call", call(name, args, channel)])),
  ];
}

describe("called directly, at a public address of its own", { timeout: 120_000 }, () => {
  it("the tree's every bundle is here, and the gateway's build binds each with the gateway's props", () => {
    expect(bundles.map((b) => b.dir)).toEqual(expect.arrayContaining(["echo", "google", "pads"]));
    for (const binding of Object.values(gatewayBuild.serviceBindings as Record<string, { props?: unknown }>)) expect(binding.props).toEqual(GATEWAY_PROPS);
  });

  it("every bundle refuses tools/list and every tool call, with no channel, a forged waiver or a forged confirmed channel: 403, and nothing is reached", async () => {
    for (const b of bundles) {
      for (const [what, method, params] of attempts(b)) {
        const answer = await rpc(`${b.name}.acme.workers.dev`, b.mount, method, params);
        expect(answer.status, `${b.dir} ${what}`).toBe(403);
        expect(JSON.parse(answer.text), `${b.dir} ${what}`).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: ONLY_THROUGH_GATEWAY } });
      }
    }
    // The forged channel's approval URL, the echo recorder, the Gmail and Rustpad stand-ins: not one request.
    expect(everySeen()).toEqual([]);
  });

  it("a GET, a DELETE and an unknown path are refused the same way", async () => {
    for (const b of bundles) {
      for (const [method, path] of [
        ["GET", b.mount],
        ["DELETE", b.mount],
        ["POST", "/no-such-mount"],
      ] as const) {
        const response = await runtime.miniflare.dispatchFetch(`https://${b.name}.acme.workers.dev${path}`, { method, headers: { accept: "text/event-stream" } });
        expect(response.status, `${b.dir} ${method} ${path}`).toBe(403);
        expect(await response.text()).toContain(ONLY_THROUGH_GATEWAY);
      }
    }
  });

  it("a binding that carries another Worker's props is refused as no props are", async () => {
    for (const b of bundles) {
      const answer = await rpc(`via-other.${b.name}.test`, b.mount, "tools/list", {});
      expect(answer.status, b.dir).toBe(403);
      expect(answer.text).toContain(ONLY_THROUGH_GATEWAY);
    }
    expect(everySeen()).toEqual([]);
  });
});

describe("the same calls over a binding carrying the gateway's props (the recorders are wired)", { timeout: 120_000 }, () => {
  const via = (b: Built) => `via-gateway.${b.name}.test`;
  const bundle = (dir: string) => bundles.find((b) => b.dir === dir) as Built;

  it("every bundle lists its tools", async () => {
    for (const b of bundles) {
      const answer = await rpc(via(b), b.mount, "tools/list", {});
      expect(answer.status, b.dir).toBe(200);
      expect(answer.text, b.dir).toContain('"tools"');
    }
  });

  it("echo's read tool answers", async () => {
    const answer = await rpc(via(bundle("echo")), "/echo", "tools/call", call("echo", { text: "over the binding" }));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain("over the binding");
  });

  it("a confirmed channel sends its approval request to the URL it names", async () => {
    const echo = bundle("echo");
    await rpc(via(echo), "/echo-confirmed", "tools/call", call("demo_write", { note: "asked" }, forgedConfirmed("echo-confirmed")));
    expect(recorders.approvals.seen.filter((s) => s.startsWith("POST /api/v1/elicitations/session/forged/"))).not.toEqual([]);
  });

  it("Gmail's read tool reaches the Gmail stand-in, and pads' the Rustpad one", async () => {
    await rpc(via(bundle("google")), "/gmail-rw-external", "tools/call", call(...GMAIL_READ));
    expect(recorders.gmail.seen).not.toEqual([]);
    await rpc(via(bundle("pads")), "/pads", "tools/call", call(...PADS_READ));
    expect(recorders.rustpad.seen).not.toEqual([]);
  });

  it("the mailbox's read tool reaches its IMAP address", async () => {
    await rpc(via(bundle("mailbox")), "/mailbox", "tools/call", call("search_messages", { mailbox: "INBOX" }));
    expect(imap.connections).toBeGreaterThan(0);
  });
});
