// The mailbox bundle as deployed (`wrangler deploy --dry-run`) on workerd through Miniflare, beside the gateway's build
// for its CallRegistry, against a Dovecot of its own: ELICITATION's three cases as the runtime runs them ("true" asks
// and writes no start-up line; "false" writes its one line and takes the two-call token, acting once; "off" fails
// every request naming both valid values), and the TLS path from a Worker: implicit TLS and STARTTLS to Dovecot with
// a local CA the runtime trusts, and the same server refused by a runtime that does not trust that CA.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { buildWorker, startRuntime } from "../../../scripts/stack.mjs";
import type { ServerEntry } from "../../../worker/roster";
import { callUpstream } from "../../../worker/upstream";
import { gatewayStandIn } from "../kit/helpers/gateway-binding";
import { HostileServer } from "../kit/helpers/hostile-server";
import { type Dovecot, startTestDovecot } from "./helpers";

interface Registry {
  fetch(url: string, init: RequestInit): Promise<Response>;
  confirm(key: string, nonce: string): Promise<void>;
}
type Runtime = {
  miniflare: { dispatchFetch: (url: string, init: RequestInit) => Promise<Response>; getDurableObjectNamespace(name: string, worker?: string): Promise<DurableObjectNamespace> };
  stop: () => Promise<void>;
  lines: string[];
};

const out = mkdtempSync(join(tmpdir(), "strad-mailbox-workerd-"));
let dovecot: Dovecot;
let approvals: HostileServer;
let mailbox: Record<string, unknown>;
let gateway: Record<string, unknown>;
const runtimes: Record<string, Runtime> = {};

/** A mount's account at this file's Dovecot: `mailbox` plain on loopback (alice), the others over TLS. */
function accounts(): Record<string, string> {
  const account = (ns: string, user: string, port: number, security: string) => ({
    [`${ns}__IMAP_HOST`]: "127.0.0.1",
    [`${ns}__IMAP_PORT`]: String(port),
    [`${ns}__IMAP_USER`]: user,
    [`${ns}__IMAP_PASSWORD`]: dovecot.users[user] as string,
    [`${ns}__IMAP_SECURITY`]: security,
  });
  return {
    ...account("MAILBOX", "alice", dovecot.port, "plain"),
    // dave over TLS where the runtime trusts the CA; carol over TLS where it does not, so carol never logs in.
    ...account("MAILBOX_TLS", "dave", dovecot.tlsPort, "tls"),
    ...account("MAILBOX_STARTTLS", "dave", dovecot.port, "starttls"),
    ...account("UNTRUSTED_TLS", "carol", dovecot.tlsPort, "tls"),
    ...account("UNTRUSTED_STARTTLS", "carol", dovecot.port, "starttls"),
  };
}

/**
 * One runtime with ELICITATION set to `elicitation`. `trustCa`: the bundle's outbound network trusts the local CA
 * Dovecot's certificate is signed by (Miniflare's own network trusts only the public CAs and NODE_EXTRA_CA_CERTS, read
 * once when Miniflare loads; a network of the Worker's own holds the CA for this runtime alone).
 */
async function start(elicitation: string, trustCa: boolean): Promise<Runtime> {
  const lines: string[] = [];
  const vars = Object.fromEntries(Object.entries((mailbox.bindings ?? {}) as Record<string, unknown>).filter(([k]) => k !== "ELICITATION" && !k.includes("__IMAP_")));
  const outbound = trustCa ? { outboundService: { network: { allow: ["private"], tlsOptions: { trustedCertificates: [dovecot.caPem] } } } } : {};
  const runtime = (await startRuntime(
    [
      // The runtime's URL reaches the bundle as the gateway's binding does: a bundle answers nothing else (R-CHAN-13).
      gatewayStandIn(mailbox),
      { ...mailbox, ...outbound, bindings: { ...vars, ...accounts(), STRAD_POLL_INTERVAL_MS: "20", ELICITATION: elicitation } },
      { ...gateway, serviceBindings: {} },
    ],
    {
      onOutput: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
        for (const stream of [stdout, stderr])
          stream.on("data", (chunk: Buffer) =>
            lines.push(
              ...chunk
                .toString()
                .split("\n")
                .filter((l) => l.trim() !== ""),
            ),
          );
      },
    },
  )) as Omit<Runtime, "lines">;
  return { ...runtime, lines };
}

// Two Worker builds (`wrangler deploy --dry-run`, some seconds each) and three workerd processes started one after
// another, each ready in a few seconds on a quiet machine; 180 s leaves room for this machine's two shared cores
// under other engineers' runs, as the pads bundle's workerd test allows.
beforeAll(async () => {
  dovecot = await startTestDovecot();
  approvals = await new HostileServer().start();
  mailbox = buildWorker("bundles/mailbox/wrangler.toml", { into: out });
  gateway = buildWorker("wrangler.toml", { into: out });
  runtimes.true = await start("true", true);
  runtimes.false = await start("false", false);
  runtimes.off = await start("off", false);
}, 180_000);

afterAll(async () => {
  for (const r of Object.values(runtimes)) await r.stop();
  await approvals?.stop();
  await dovecot?.stop();
  rmSync(out, { recursive: true, force: true });
});

let keys = 0;
async function call(runtime: Runtime, slug: string, name: string, args: Record<string, unknown>, channel?: Record<string, unknown>) {
  const server = { slug, kind: "bundle", bundle: "MAILBOX", path: `/${slug}` } as unknown as ServerEntry;
  return callUpstream({
    server,
    method: "tools/call",
    params: { name, arguments: args },
    meta: channel === undefined ? {} : { "dev.strad/elicitation": channel },
    headers: {},
    signal: new AbortController().signal,
    fetcher: (url, init) => runtime.miniflare.dispatchFetch(url, init),
  });
}
const textOf = (answer: Awaited<ReturnType<typeof call>>) => (answer.ok ? ((answer.result.content as { text: string }[]) ?? []).map((c) => c.text).join("") : `error: ${JSON.stringify(answer.error)}`);

/** A fresh mailbox of `n` messages in `user`'s account. */
async function freshMailbox(user: string, n: number): Promise<string> {
  const name = `Wrkd-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const a = await dovecot.admin(user);
  try {
    await a.create(name);
    for (let i = 1; i <= n; i++) await a.append(name, `Subject: Message ${i}\r\nFrom: ann@example.com\r\n\r\nText ${i}.\r\n`);
  } finally {
    await a.close();
  }
  return name;
}

async function uidsIn(user: string, name: string): Promise<number[]> {
  const a = await dovecot.admin(user);
  try {
    return (await a.messages(name)).map((m) => m.uid);
  } finally {
    await a.close();
  }
}

/** Dovecot's log lines of `user`'s logins, each saying how the connection was secured. */
const logins = (user: string) =>
  dovecot
    .log()
    .split("\n")
    .filter((l) => l.includes("Login: user=<") && l.includes(`user=<${user}>`));

/** Registers a call in the runtime's CallRegistry as the gateway does, and vouches for its caller while `work` runs. */
async function asTheGateway<T>(runtime: Runtime, scope: string, work: (call: { scope: string; key: string; nonce: string }) => Promise<T>): Promise<T> {
  const ns = await runtime.miniflare.getDurableObjectNamespace("CALLS", mailbox.name as string);
  const registry = ns.get(ns.idFromName(scope)) as unknown as Registry;
  const ref = { scope, key: `n:${++keys}`, nonce: `nonce-${keys}-0123456789abcdef` };
  const watch = await registry.fetch("https://calls/watch", { method: "POST", body: JSON.stringify({ key: ref.key, nonce: ref.nonce, deadline: Date.now() + 60_000 }) });
  let done = false;
  const vouching = (async () => {
    while (!done) {
      await registry.confirm(ref.key, ref.nonce);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return await work(ref);
  } finally {
    done = true;
    await vouching;
    await watch.body?.cancel();
  }
}

// Each test makes a few calls of a few hundred ms each through workerd to Dovecot; 120 s leaves room for the shared
// machine's load, as the pads bundle's workerd test allows.
describe("the mailbox bundle on workerd: ELICITATION", { timeout: 120_000 }, () => {
  it("ELICITATION=true asks through the channel, and writes no start-up line", async () => {
    const box = await freshMailbox("alice", 2);
    const url = approvals.route("workerd-decline", { poll: () => ({ body: { action: "decline", content: null } }) });
    const channel = { slug: "mailbox", url, ttlMs: 10_000, headers: {}, caller: "dev-session" };
    expect(textOf(await call(runtimes.true as Runtime, "mailbox", "delete_messages", { mailbox: box, uids: [1, 2] }, channel))).toBe("Not done: the person declined. Nothing was written.");
    expect(approvals.requestsTo("workerd-decline").filter((r) => r.method === "POST")).toHaveLength(1);
    expect(await uidsIn("alice", box)).toEqual([1, 2]);
    expect((runtimes.true as Runtime).lines.filter((l) => l.includes("ELICITATION"))).toEqual([]);
  });

  it("ELICITATION=false writes its one start-up line, hands out a two-call token kept in the CallRegistry, and acts on the second call once", async () => {
    const runtime = runtimes.false as Runtime;
    const box = await freshMailbox("alice", 1);
    const dest = await freshMailbox("alice", 0);
    const args = { mailbox: box, uids: [1], destination: dest, mode: "copy" };
    const channel = (ref: unknown) => ({ slug: "mailbox-token", url: approvals.route("workerd-unused", {}), ttlMs: 10_000, headers: {}, call: ref, fallback: "token", caller: "dev-session" });
    // The slug is mailbox-token; its mount is /mailbox, alice's account (as the roster gives a slug another's path).
    const viaMailbox = (a: Record<string, unknown>) => asTheGateway(runtime, "dev-session", (ref) => call(runtime, "mailbox", "move_messages", a, channel(ref)));
    const first = textOf(await viaMailbox(args));
    expect(first).toMatch(/^Not done yet: mailbox-token did not ask a person about this call \(this server runs with ELICITATION=false/);
    const token = /^[A-Za-z0-9_-]{43}$/m.exec(first)?.[0] as string;
    expect(await uidsIn("alice", dest)).toEqual([]);
    const second = textOf(await viaMailbox({ ...args, two_call_token: token }));
    expect(second).toMatch(
      /^Copied 1 message from .*Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: mailbox-token did not ask a person\.$/,
    );
    expect(await uidsIn("alice", dest)).toEqual([1]);
    expect(textOf(await viaMailbox({ ...args, two_call_token: token }))).toMatch(/^Not done: the two_call_token was already used once/);
    expect(await uidsIn("alice", dest)).toEqual([1]);
    expect(approvals.requestsTo("workerd-unused")).toEqual([]);
    expect(runtime.lines.filter((l) => l.includes("ELICITATION"))).toEqual(["mailbox: ELICITATION=false — guarded tools fall back to the two-call token"]);
  });

  it("ELICITATION=off fails every request naming both valid values, and says so once", async () => {
    const runtime = runtimes.off as Runtime;
    const box = await freshMailbox("alice", 1);
    for (const [name, args] of [
      ["list_mailboxes", {}],
      ["delete_messages", { mailbox: box, uids: [1] }],
      ["manage_mailbox", { action: "create", mailbox: `${box}-new` }],
    ] as const) {
      const answer = await call(runtime, "mailbox", name, args);
      expect(answer.ok).toBe(false);
      expect(JSON.stringify(answer.ok ? {} : answer.error)).toContain('ELICITATION must be \\"true\\" (ask a person through the approval channel, the default) or \\"false\\"');
    }
    expect(await uidsIn("alice", box)).toEqual([1]);
    const a = await dovecot.admin("alice");
    try {
      expect(await a.mailboxes()).not.toContain(`${box}-new`);
    } finally {
      await a.close();
    }
    expect(runtime.lines.filter((l) => l.includes("ELICITATION"))).toEqual(["mailbox: ELICITATION is neither true nor false — every request fails until it is one of the two"]);
  });
});

describe("the mailbox bundle on workerd: TLS to Dovecot with a local CA", { timeout: 120_000 }, () => {
  it.each([
    ["implicit TLS", "mailbox-tls"],
    ["STARTTLS", "mailbox-starttls"],
  ])("reads over %s from a Worker that trusts the local CA, logging in only inside TLS", async (_how, slug) => {
    const before = logins("dave").length;
    const found = JSON.parse(textOf(await call(runtimes.true as Runtime, slug, "search_messages", { mailbox: "INBOX", subject: "Grüße" })));
    expect(found.total).toBe(1);
    expect(found.messages[0].subject).toBe("Grüße aus Köln");
    // Dovecot writes "TLS" on a login whose connection was encrypted when the password arrived.
    const added = logins("dave").slice(before);
    expect(added.length).toBeGreaterThan(0);
    for (const line of added) expect(line).toMatch(/, TLS[,:]|, TLS$/);
  });

  it.each([
    ["implicit TLS", "untrusted-tls"],
    ["STARTTLS", "untrusted-starttls"],
  ])("refuses Dovecot over %s from a Worker that does not trust its CA: the handshake fails, and the password is never sent", async (_how, slug) => {
    // carol logged in once, over plain loopback, when the Dovecot was seeded; no login of hers may follow.
    const before = logins("carol");
    const text = textOf(await call(runtimes.false as Runtime, slug, "list_mailboxes", {}));
    expect(text).toMatch(/^Not done: the IMAP (connection failed|server could not be reached)/);
    expect(text).not.toContain(dovecot.users.carol as string);
    expect(logins("carol")).toEqual(before);
  });
});
