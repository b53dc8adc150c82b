// The pads bundle as deployed (`wrangler deploy --dry-run`) on workerd through Miniflare, beside the gateway's build
// for its CallRegistry, against the Rustpad fake in this process: the outbound WebSocket a Worker opens works, and
// ELICITATION's three cases hold as the runtime runs them. "true" asks through the channel and writes no start-up
// line; "false" writes its one line, hands out a two-call token kept in the real CallRegistry, and acts on the second
// call once; "off" (neither value) fails every request naming both valid values, and says so once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { buildWorker, startRuntime } from "../../../scripts/stack.mjs";
import type { ServerEntry } from "../../../worker/roster";
import { callUpstream } from "../../../worker/upstream";
// @ts-expect-error: plain ESM helper without types
import { startRustpadFake } from "../../fakes/rustpad/rustpad.fake.mjs";
import { gatewayStandIn } from "../kit/helpers/gateway-binding";
import { HostileServer } from "../kit/helpers/hostile-server";
import type { RustpadFake } from "./helpers";

interface Registry {
  fetch(url: string, init: RequestInit): Promise<Response>;
  confirm(key: string, nonce: string): Promise<void>;
}
type Runtime = {
  miniflare: { dispatchFetch: (url: string, init: RequestInit) => Promise<Response>; getDurableObjectNamespace(name: string, worker?: string): Promise<DurableObjectNamespace> };
  stop: () => Promise<void>;
  lines: string[];
};

const out = mkdtempSync(join(tmpdir(), "strad-pads-workerd-"));
let fake: RustpadFake;
let approvals: HostileServer;
let pads: Record<string, unknown>;
let gateway: Record<string, unknown>;
const runtimes: Record<string, Runtime> = {};

async function start(elicitation: string): Promise<Runtime> {
  const lines: string[] = [];
  const { ELICITATION: _unset, ...vars } = (pads.bindings ?? {}) as Record<string, unknown>;
  const runtime = (await startRuntime(
    [
      // The runtime's URL reaches the bundle as the gateway's binding does: a bundle answers nothing else (R-CHAN-13).
      gatewayStandIn(pads),
      { ...pads, bindings: { ...vars, RUSTPAD_URL: fake.url, STRAD_POLL_INTERVAL_MS: "20", ELICITATION: elicitation } },
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

beforeAll(async () => {
  fake = (await startRustpadFake({ port: 0 })) as RustpadFake;
  approvals = await new HostileServer().start();
  pads = buildWorker("bundles/pads/wrangler.toml", { into: out });
  gateway = buildWorker("wrangler.toml", { into: out });
  for (const value of ["true", "false", "off"]) runtimes[value] = await start(value);
}, 180_000);

afterAll(async () => {
  for (const r of Object.values(runtimes)) await r.stop();
  await approvals?.stop();
  await fake?.stop();
  rmSync(out, { recursive: true, force: true });
});

let keys = 0;
async function call(runtime: Runtime, name: string, args: Record<string, unknown>, channel?: Record<string, unknown>) {
  const server = { slug: "pads", kind: "bundle", bundle: "PADS", path: "/pads" } as unknown as ServerEntry;
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

async function seed(pad: string, text: string): Promise<void> {
  await (await fetch(`${fake.url}/_fake/pads/${pad}`, { method: "PUT", body: JSON.stringify({ text }) })).body?.cancel();
}

/** Registers a call in the runtime's CallRegistry as the gateway does, and vouches for its caller while `work` runs. */
async function asTheGateway<T>(runtime: Runtime, scope: string, work: (call: { scope: string; key: string; nonce: string }) => Promise<T>): Promise<T> {
  const ns = await runtime.miniflare.getDurableObjectNamespace("CALLS", pads.name as string);
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

describe("the pads bundle on workerd", { timeout: 120_000 }, () => {
  it("opens Rustpad's socket from a Worker and edits a pad through it", async () => {
    const pad = "Wrkd01";
    await seed(pad, "abc");
    expect(textOf(await call(runtimes.true as Runtime, "append_to_document", { pad_id: pad, text: "🌍" }))).toBe(`Appended 1 character to pad "${pad}"; it now holds 4 characters.`);
    expect(fake.pads.get(pad)?.text).toBe("abc🌍");
  });

  it("ELICITATION=true asks through the channel, and writes no start-up line", async () => {
    const pad = "Wrkd02";
    await seed(pad, "keep");
    const url = approvals.route("workerd-decline", { poll: () => ({ body: { action: "decline", content: null } }) });
    const channel = { slug: "pads", url, ttlMs: 10_000, headers: {}, fallback: "token", caller: "dev-session" };
    expect(textOf(await call(runtimes.true as Runtime, "set_document", { pad_id: pad, content: "x" }, channel))).toBe("Not done: the person declined. Nothing was written.");
    expect(approvals.requestsTo("workerd-decline").filter((r) => r.method === "POST")).toHaveLength(1);
    expect(fake.pads.get(pad)?.text).toBe("keep");
    expect((runtimes.true as Runtime).lines.filter((l) => l.includes("ELICITATION"))).toEqual([]);
  });

  it("ELICITATION=false writes its one start-up line, hands out a two-call token kept in the CallRegistry, and acts on the second call once", async () => {
    const runtime = runtimes.false as Runtime;
    const pad = "Wrkd03";
    await seed(pad, "banana");
    const args = { pad_id: pad, search: "a", replace: "o", replace_all: true };
    const channel = (call: unknown) => ({ slug: "pads-token", url: approvals.route("workerd-unused", {}), ttlMs: 10_000, headers: {}, call, fallback: "token", caller: "dev-session" });
    const first = textOf(await asTheGateway(runtime, "dev-session", (ref) => call(runtime, "replace_in_document", args, channel(ref))));
    expect(first).toMatch(/^Not done yet: pads-token did not ask a person about this call \(this server runs with ELICITATION=false/);
    const token = /^[A-Za-z0-9_-]{43}$/m.exec(first)?.[0] as string;
    expect(fake.pads.get(pad)?.text).toBe("banana");
    const second = textOf(await asTheGateway(runtime, "dev-session", (ref) => call(runtime, "replace_in_document", { ...args, two_call_token: token }, channel(ref))));
    expect(second).toMatch(
      /^Replaced 3 occurrences in pad "Wrkd03"; it now holds 6 characters\.Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more/,
    );
    expect(fake.pads.get(pad)?.text).toBe("bonono");
    await seed(pad, "banana");
    const third = textOf(await asTheGateway(runtime, "dev-session", (ref) => call(runtime, "replace_in_document", { ...args, two_call_token: token }, channel(ref))));
    expect(third).toMatch(/^Not done: the two_call_token was already used once/);
    expect(fake.pads.get(pad)?.text).toBe("banana");
    expect(approvals.requestsTo("workerd-unused")).toEqual([]);
    expect(runtime.lines.filter((l) => l.includes("ELICITATION"))).toEqual(["pads: ELICITATION=false — guarded tools fall back to the two-call token"]);
  });

  it("ELICITATION=off fails every request naming both valid values, and says so once", async () => {
    const runtime = runtimes.off as Runtime;
    const before = fake.edits.length;
    for (const [name, args] of [
      ["get_document", { pad_id: "Wrkd04" }],
      ["append_to_document", { pad_id: "Wrkd04", text: "x" }],
    ] as const) {
      const answer = await call(runtime, name, args);
      expect(answer.ok).toBe(false);
      expect(JSON.stringify(answer.ok ? {} : answer.error)).toContain('ELICITATION must be \\"true\\" (ask a person through the approval channel, the default) or \\"false\\"');
    }
    expect(fake.edits.length).toBe(before);
    expect(fake.pads.has("Wrkd04")).toBe(false);
    expect(runtime.lines.filter((l) => l.includes("ELICITATION"))).toEqual(["pads: ELICITATION is neither true nor false — every request fails until it is one of the two"]);
  });
});
