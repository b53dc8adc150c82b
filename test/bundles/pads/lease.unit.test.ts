// Covers the pad's edit lease through the pads bundle against the Rustpad fake (docs/rules.md R-PAD-13): unasked edits sent at the same moment are measured one after another, so 5 (and, randomized, 2-20) simultaneous one-occurrence replaces never take a pad under half its length without a yes; an approved edit holds the lease too; a held lease refuses at once, is the pad's whichever mount asks, and frees the pad once it runs out.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { WriteOptions } from "../../../bundles/kit/gate";
import handler from "../../../bundles/pads/pads.app";
import { PAD_BUSY, type TakeLease } from "../../../bundles/pads/pads.lease";
import { OpSeq } from "../../../bundles/pads/pads.ot";
import { PadSession } from "../../../bundles/pads/pads.session";
import { PAD_LEASE_MS, padLeaseName } from "../../../contract/pad-lease";
import { callBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { ask, CALL, editsTo, fakeRegistry, freshPad, padText, seedPad, useRustpad } from "./helpers";

const rustpad = useRustpad();
let approvals: HostileServer;
beforeAll(async () => {
  approvals = await new HostileServer().start();
});
afterAll(async () => {
  await approvals.stop();
});

let routes = 0;
/** An approval route answering `action`, and the prompts it was sent. */
function approval(action: "accept" | "decline"): { url: string; prompts: () => string[] } {
  const name = `lease${++routes}`;
  const body = action === "accept" ? { action, content: { confirm: true } } : { action, content: null };
  const url = approvals.route(name, { poll: async () => ({ body }) });
  return {
    url,
    prompts: () =>
      approvals
        .requestsTo(name)
        .filter((r) => r.method === "POST")
        .map((r) => (JSON.parse(r.body) as { message: string }).message),
  };
}

let keys = 0;
/** One tool call as the gateway forwards it: its own live call record, on the shared registry. */
async function call(registry: ReturnType<typeof fakeRegistry>, name: string, args: Record<string, unknown>, url: string, mount = "pads") {
  const key = `n:lease-${++keys}`;
  registry.live(CALL.scope, key);
  const env = { RUSTPAD_URL: rustpad.fake().url, CALLS: registry.ns, STRAD_POLL_INTERVAL_MS: "20" };
  return callBundle(handler, { mount, name, args, channel: ask(url, { call: { ...CALL, key } }), env });
}

/** What an answer may be when edits race: done, refused by the lease, refused because the pad moved on, or declined. */
const RACE_ANSWER = new RegExp(
  [
    `^Replaced 1 occurrence in pad "\\w{6}"; it now holds \\d+ characters\\.$`,
    `^Not done: ${PAD_BUSY}\\. Nothing was written\\.$`,
    "^Not done: the pad changed while the edit was being built",
    "^Not done: the person declined",
  ].join("|"),
);

/**
 * `n` one-occurrence replaces, fired at once, each deleting its own span of `width` characters from a pad of
 * `spans` such spans plus filler so that each deletion alone is within the unasked limits. The person declines.
 */
async function race(n: number, width: number) {
  const registry = fakeRegistry();
  const pad = freshPad();
  const runs = Array.from({ length: n }, (_, i) => String.fromCharCode(65 + i).repeat(width));
  // Each deletion is at most 20% of the pad: with fewer than 5 spans, filler makes up the length.
  const filler = ".".repeat(Math.max(0, 5 * width - n * width));
  const start = runs.join("") + filler;
  await seedPad(rustpad.fake(), pad, start);
  const asked = approval("decline");
  const answers = await Promise.all(runs.map((run) => call(registry, "replace_in_document", { pad_id: pad, search: run, replace: "" }, asked.url)));
  return { pad, start: [...start].length, answers: answers.map((a) => a.text), asked, registry };
}

describe("unasked edits sent at the same moment", () => {
  it("five one-occurrence replaces, each removing a different 200 characters of a 1,000-character pad, leave at least half of it without a yes", async () => {
    const { pad, start, answers, asked, registry } = await race(5, 200);
    expect(start).toBe(1_000);
    const left = [...(padText(rustpad.fake(), pad) ?? "")].length;
    expect(left * 2).toBeGreaterThanOrEqual(1_000);
    for (const answer of answers) expect(answer).toMatch(RACE_ANSWER);
    expect(answers.filter((a) => a.startsWith("Replaced"))).not.toHaveLength(0);
    expect(answers.some((a) => a.includes(PAD_BUSY) || a.includes("the pad changed while the edit was being built"))).toBe(true);
    // Nobody said yes, so nothing that asked was sent; and every lease was given back.
    expect(asked.prompts()).toHaveLength(answers.filter((a) => a.includes("declined")).length);
    expect(registry.held()).toEqual([]);
  });

  it("2 to 20 simultaneous one-occurrence replaces of 1 to 200 characters never leave a pad under half its length without a yes (randomized)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 1, max: 200 }), async (n, width) => {
        const { pad, start, answers, registry } = await race(n, width);
        const left = [...(padText(rustpad.fake(), pad) ?? "")].length;
        expect(left * 2).toBeGreaterThanOrEqual(start);
        for (const answer of answers) expect(answer).toMatch(RACE_ANSWER);
        expect(registry.held()).toEqual([]);
      }),
      // Each run is up to 20 calls against the fake: a dozen runs cover the range in a few seconds.
      { numRuns: 12 },
    );
  });
});

describe("the pad's lease", () => {
  /** Holds the pad's lease as another isolate's edit would, through the registry the bundle uses. */
  async function holdLease(registry: ReturnType<typeof fakeRegistry>, pad: string): Promise<void> {
    const name = await padLeaseName(new URL(rustpad.fake().url).origin, pad);
    expect(await registry.ns.get(name).leasePad("another-holder-0123456789", PAD_LEASE_MS.request)).toBe(true);
  }

  it("while held, refuses an unasked edit that removes text at once on any mount, and an approved one after the yes; an append still goes", async () => {
    const registry = fakeRegistry();
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    await holdLease(registry, pad);
    const none = approval("decline");
    for (const mount of ["pads", "pads-token"]) {
      expect((await call(registry, "replace_in_document", { pad_id: pad, search: "b", replace: "" }, none.url, mount)).text).toBe(`Not done: ${PAD_BUSY}. Nothing was written.`);
    }
    expect(none.prompts()).toEqual([]);
    const yes = approval("accept");
    expect((await call(registry, "replace_in_document", { pad_id: pad, search: "a", replace: "o", replace_all: true }, yes.url)).text).toBe(`Not done: ${PAD_BUSY}. Nothing was written.`);
    expect(yes.prompts()).toHaveLength(1);
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
    // Taking nothing away, an append needs no lease.
    expect((await call(registry, "append_to_document", { pad_id: pad, text: "!" }, none.url)).text).toBe(`Appended 1 character to pad "${pad}"; it now holds 7 characters.`);
    expect(padText(rustpad.fake(), pad)).toBe("banana!");
  });

  it("frees the pad once a dead holder's lease runs out, not a moment before", async () => {
    const registry = fakeRegistry();
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    await holdLease(registry, pad);
    const none = approval("decline");
    registry.clock.offset = PAD_LEASE_MS.request - 1_000;
    expect((await call(registry, "replace_in_document", { pad_id: pad, search: "b", replace: "" }, none.url)).text).toBe(`Not done: ${PAD_BUSY}. Nothing was written.`);
    registry.clock.offset = PAD_LEASE_MS.request + 100;
    expect((await call(registry, "replace_in_document", { pad_id: pad, search: "b", replace: "" }, none.url)).text).toBe(`Replaced 1 occurrence in pad "${pad}"; it now holds 5 characters.`);
    expect(registry.held()).toEqual([]);
  });

  it("is taken by an approved edit too, and given back once Rustpad acknowledged it", async () => {
    const registry = fakeRegistry();
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "banana");
    const yes = approval("accept");
    expect((await call(registry, "replace_in_document", { pad_id: pad, search: "a", replace: "o", replace_all: true }, yes.url)).text).toBe(
      `Replaced 3 occurrences in pad "${pad}"; it now holds 6 characters.`,
    );
    const name = await padLeaseName(new URL(rustpad.fake().url).origin, pad);
    expect(registry.leases).toEqual([{ name, won: true }]);
    expect(registry.held()).toEqual([]);
  });
});

describe("a session's leased edit", () => {
  /** A stand-in for the gate that opens the door it is handed after `ms` (a slow claim), so only the session decides. */
  const slowGate = (ms: number) =>
    vi.fn(async (url: string, init: RequestInit, options: WriteOptions) => {
      await new Promise((r) => setTimeout(r, ms));
      return (options.fetch as NonNullable<WriteOptions["fetch"]>)(url, init);
    });

  it("is not sent when the lease ran out while the gate decided, says so, and gives the lease back", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "abcde");
    const released = vi.fn(async () => {});
    // 300 ms is ample for a sync over loopback; the gate then takes 500 ms, past the lease.
    const take: TakeLease = async () => ({ until: Date.now() + 300, release: released });
    const session = await PadSession.open(new URL(rustpad.fake().url), pad, new AbortController().signal, "strad", take);
    try {
      await expect(session.edit(new OpSeq().delete(1).retain(4), slowGate(500) as never, { needsApproval: false })).rejects.toThrow(
        /^the pad's edit lease ran out before the edit could be sent; call again$/,
      );
    } finally {
      session.close();
    }
    expect(released).toHaveBeenCalledTimes(1);
    expect(editsTo(rustpad.fake(), pad, "edit")).toEqual([]);
    expect(padText(rustpad.fake(), pad)).toBe("abcde");
  });

  it("is sent when the gate decides within the lease, and the lease is given back once Rustpad acknowledged it", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "abcde");
    const released = vi.fn(async () => {});
    const take: TakeLease = async () => ({ until: Date.now() + 5_000, release: released });
    const session = await PadSession.open(new URL(rustpad.fake().url), pad, new AbortController().signal, "strad", take);
    try {
      expect(await session.edit(new OpSeq().delete(1).retain(4), slowGate(50) as never, { needsApproval: false })).toMatchObject({ merged: 0 });
    } finally {
      session.close();
    }
    expect(released).toHaveBeenCalledTimes(1);
    expect(padText(rustpad.fake(), pad)).toBe("bcde");
  });

  it("is not sent without a way to lease the pad, while an edit that removes nothing still is", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "abcde");
    const session = await PadSession.open(new URL(rustpad.fake().url), pad, new AbortController().signal);
    const gate = slowGate(0);
    try {
      await expect(session.edit(new OpSeq().delete(1).retain(4), gate as never, { needsApproval: false })).rejects.toThrow(
        "this session cannot lease the pad, so an edit that removes text is not sent",
      );
      expect(gate).not.toHaveBeenCalled();
      await session.edit(new OpSeq().retain(5).insert("f"), gate as never, { needsApproval: false });
    } finally {
      session.close();
    }
    expect(padText(rustpad.fake(), pad)).toBe("abcdef");
  });

  it("is not sent when another edit landed between the measure and the lease", async () => {
    const pad = freshPad();
    await seedPad(rustpad.fake(), pad, "abcde");
    const released = vi.fn(async () => {});
    let other: Promise<void> = Promise.resolve();
    // Another client's edit lands just as the lease is taken: the sync under the lease sees it.
    const take: TakeLease = async () => {
      other = fetch(`${rustpad.fake().url}/_fake/pads/${pad}/edit`, { method: "POST", body: JSON.stringify({ append: "!" }) }).then((r) => r.body?.cancel());
      await other;
      return { until: Date.now() + 5_000, release: released };
    };
    const session = await PadSession.open(new URL(rustpad.fake().url), pad, new AbortController().signal, "strad", take);
    const gate = slowGate(0);
    try {
      await expect(session.edit(new OpSeq().delete(1).retain(4), gate as never, { needsApproval: false })).rejects.toThrow(
        "the pad changed while the edit was being built, so nothing was sent; call again",
      );
      expect(gate).not.toHaveBeenCalled();
    } finally {
      session.close();
    }
    expect(released).toHaveBeenCalledTimes(1);
    expect(padText(rustpad.fake(), pad)).toBe("abcde!");
  });
});
