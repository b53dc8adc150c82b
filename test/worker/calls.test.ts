// Covers the gateway's side of a confirmed call's record (worker/calls.ts) against a stand-in registry stream:
// what each word from the CallRegistry does to the call's upstream request, and when nothing may happen.
import { describe, expect, it } from "vitest";
import type { CallRegistryNamespace } from "../../contract/call-registry";
import { requestKey, watchCall } from "../../worker/calls";
import type { AbortReason, UpstreamError } from "../../worker/upstream";

/** A registry whose watch answers `status` and then says each word, as the Durable Object's stream does. */
function registry(status: number, words: string[]) {
  let sendMore: ((word: string) => void) | undefined;
  const encoder = new TextEncoder();
  const confirmed: string[] = [];
  const stub = {
    confirm: async (key: string, nonce: string) => {
      confirmed.push(`${key}/${nonce}`);
    },
    fetch: async () => {
      if (status !== 200) return new Response("refused", { status });
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const w of words) controller.enqueue(encoder.encode(`${w}\n`));
          sendMore = (w) => controller.enqueue(encoder.encode(`${w}\n`));
        },
      });
      return new Response(stream);
    },
  };
  const ns = { idFromName: (name: string) => name, get: () => stub } as unknown as CallRegistryNamespace;
  return { ns, say: (word: string) => sendMore?.(word), confirmed };
}

const ref = { scope: "alice", key: requestKey(7), nonce: "nonce-0123456789abcdef" };
const tick = () => new Promise((r) => setTimeout(r, 20));

/** `alive`: what each probe round finds (the caller still there, or not). */
async function watched(words: string[], status = 200, alive = true) {
  const reasons: UpstreamError[] = [];
  let probes = 0;
  const { ns, say, confirmed } = registry(status, words);
  const probe = async () => {
    probes++;
    return alive;
  };
  const result = await watchCall(ns, ref, Date.now() + 5_000, { abort: (reason: AbortReason) => reasons.push(reason.error), probe }, 5_000);
  return { result, reasons, say, probes: () => probes, confirmed };
}

describe("watchCall", () => {
  it("keys string and number ids apart, as a cancel names them", () => {
    expect(requestKey(7)).toBe("n:7");
    expect(requestKey("7")).toBe("s:7");
  });

  it("aborts the call as timed out when the registry says its deadline passed", async () => {
    const { result, reasons, say } = await watched(["live"]);
    expect(result.ok).toBe(true);
    expect(reasons).toEqual([]);
    say("deadline");
    await tick();
    expect(reasons).toEqual([{ code: "UPSTREAM_TIMEOUT", timeoutMs: 5_000 }]);
  });

  it("aborts the call as cancelled when the registry says the caller cancelled it", async () => {
    const { reasons, say } = await watched(["live"]);
    say("cancelled");
    await tick();
    expect(reasons).toEqual([{ code: "UPSTREAM_ABORTED", reason: "the caller cancelled it" }]);
  });

  it("confirms the caller to the registry only when its probes went out, and never for a caller found gone", async () => {
    const there = await watched(["live", "probe"]);
    await tick();
    expect(there.confirmed, "R-GATE-10: a caller whose probes went out is confirmed").toEqual([`${ref.key}/${ref.nonce}`]);
    const gone = await watched(["live", "probe"], 200, false);
    await tick();
    expect(gone.probes()).toBe(1);
    expect(gone.confirmed, "R-GATE-10: a caller whose probes failed is never confirmed").toEqual([]);
  });

  it("probes the caller each time a claim is put on hold, and still hears a cancel after the probes", async () => {
    const { reasons, say, probes } = await watched(["live", "probe"]);
    await tick();
    expect(probes()).toBe(1);
    say("probe");
    await tick();
    expect(probes()).toBe(2);
    expect(reasons).toEqual([]);
    say("cancelled");
    await tick();
    expect(reasons).toEqual([{ code: "UPSTREAM_ABORTED", reason: "the caller cancelled it" }]);
  });

  it("does nothing once the gateway stopped watching, whatever the registry says after", async () => {
    const { result, reasons, say, probes } = await watched(["live"]);
    if (!result.ok) throw new Error("not watched");
    result.stop();
    say("probe");
    say("cancelled");
    await tick();
    expect(reasons).toEqual([]);
    expect(probes()).toBe(0);
  });

  it("reports a call already in flight, and a registry that never says live as a failure", async () => {
    expect((await watched([], 409)).result).toEqual({ ok: false, inFlight: true });
    expect((await watched([], 500)).result).toEqual({ ok: false, inFlight: false });
    expect((await watched(["something else"])).result).toEqual({ ok: false, inFlight: false });
  });

  it("reports an object that cannot be reached as a failure, never its error: the gateway words the caller's answer", async () => {
    const ns = {
      idFromName: (name: string) => name,
      get: () => ({
        fetch: () => Promise.reject(new Error("Durable Object storage operation exceeded timeout; internal detail xyz")),
      }),
    } as unknown as CallRegistryNamespace;
    const ref = { scope: "alice", key: "k:1", nonce: "n-0123456789abcdef" };
    await expect(watchCall(ns, ref, Date.now() + 5_000, { abort: () => {} }, 5_000)).resolves.toEqual({ ok: false, inFlight: false });
  });
});
