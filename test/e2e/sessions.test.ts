// Issue 26 through the running stack with the official clients of both generations: agent sessions sharing one caller token never collide on a waived call's request id and a cancel reaches only its own session (R-CALL-12), and a tool called by its plain name without ?servers= is told how mounts are named (R-MCP-8).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRoster } from "../../worker/roster-text";
import { bearer, type Connected, callsEnded, connectLegacy, connectModern, quiet, ROOT, recorder, registryStats, TOKENS, textOf, waitFor } from "./helpers";

/** Waits (bounded) until exactly `n` confirmed calls of dev-session are registered and live. */
const liveCalls = (n: number) => waitFor(async () => ((await registryStats("dev-session")).live === n ? true : undefined));

/** The recorder's word on how a wait_for_abort call ended (aborted or elapsed), once the bundle has reported it. */
async function outcomeOf(tag: string): Promise<string> {
  const event = await waitFor(async () => (await recorder.events()).find((e) => e.tag === tag));
  return String(event.outcome);
}

describe("issue 26: sessions sharing one caller token", () => {
  it("issue 26: two 2025-11-25 SDK sessions with one token both run a waived call with the same request id, and one's cancel leaves the other's call running", async () => {
    await callsEnded("dev-session");
    const run = Date.now();
    const [one, two] = [await connectLegacy("echo-waived", bearer(TOKENS.session)), await connectLegacy("echo-waived", bearer(TOKENS.session))];
    try {
      const cancel = new AbortController();
      // Each client numbers its requests alike (its first tools/call is id 1 in both), so the two calls share an id.
      const first = one.callTool("wait_for_abort", { ms: 4_000, tag: `one-${run}` }, { signal: cancel.signal });
      const second = two.callTool("wait_for_abort", { ms: 4_000, tag: `two-${run}` });
      // Both registered at once: before issue 26 the second was refused as already in flight.
      await liveCalls(2);
      // The SDK client sends notifications/cancelled for its request id, with its own Mcp-Session-Id.
      cancel.abort();
      await expect(first).rejects.toThrow();
      expect(await outcomeOf(`one-${run}`)).toBe("aborted");
      await liveCalls(1);
      // The other session's call, same id, same token, runs on to its end.
      const answer = await second;
      expect(textOf(answer)).toBe("elapsed");
      expect(await outcomeOf(`two-${run}`)).toBe("elapsed");
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
    await callsEnded("dev-session");
  });

  it("issue 26: two 2026-07-28 SDK clients with one token both run a waived call with the same request id", async () => {
    await callsEnded("dev-session");
    const run = Date.now();
    const clients = [await connectModern("echo-waived", bearer(TOKENS.session)), await connectModern("echo-waived", bearer(TOKENS.session))];
    try {
      const calls = clients.map((c, i) => c.callTool("wait_for_abort", { ms: 1_500, tag: `modern-${run}-${i}` }));
      await liveCalls(2);
      const answers = await Promise.all(calls);
      expect(answers.map(textOf)).toEqual(["elapsed", "elapsed"]);
      await quiet();
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    await callsEnded("dev-session");
  });
});

describe("issue 26: a plain tool name without ?servers=", () => {
  /** The slugs the dev roster lets dev-session (role user) use, in roster order, as the answer lists them. */
  function listedFor(role: string): string {
    const roster = parseRoster(readFileSync(join(ROOT, "strad.dev.yaml"), "utf8"));
    if (!roster.ok) throw new Error("the dev roster is invalid");
    const slugs = roster.roster.servers.filter((s) => s.entitlements.includes(role)).map((s) => s.slug);
    return slugs.length > 10 ? `${slugs.slice(0, 10).join(", ")} and ${slugs.length - 10} more` : slugs.join(", ");
  }

  it.each([
    ["2025-11-25", connectLegacy],
    ["2026-07-28", connectModern],
  ] as const)("issue 26: on %s the SDK client is told tools are named <slug>__<tool> and how to name one server", async (_revision, connect) => {
    const session: Connected = await connect(undefined, bearer(TOKENS.session));
    try {
      const refused = await session.callTool("echo", { text: "plain" }).then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(refused).toContain(
        `unknown tool "echo": no ?servers= was given, so every server this caller may use is selected (${listedFor("user")}), so tools are named <slug>__<tool>, e.g. "echo__echo"; or call /mcp?servers=<slug> to use one server's own tool names`,
      );
      expect(textOf(await session.callTool("echo__echo", { text: "prefixed" }))).toBe("prefixed");
    } finally {
      await session.close();
    }
  });
});
