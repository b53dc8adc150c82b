// Races of a caller's drop against the person's yes (issue 12): confirmed demo_write calls on both MCP revisions, each
// dropped at a random moment while its approval is pending, with the accept delivered at a random offset from -1 s to
// +2 s around the drop, plus a control group that stays connected. Every write is counted at the recorder.
import { describe, expect, it } from "vitest";
import { CLAIM_HOLD_MS } from "../../contract/call-registry";
import { type Plan, useScriptedApprover } from "../bundles/kit/helpers/hostile-server";
import { bearer, callsEnded, GATEWAY, quiet, recorder, TOKENS, waitFor } from "./helpers";

const scripted = useScriptedApprover();
const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };
const PENDING: Plan = { body: { action: "pending", content: null } };
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
type Revision = (typeof REVISIONS)[number];

const RACES = 200;
const CONTROLS = 40;
const BATCH = 20;
/**
 * What the gateway promises (README, "A dropped call never acts"): a caller that left before the yes reached the
 * bundle, or during the claim's hold, is noticed before the hold ends, and the call writes nothing. Only a drop in the
 * last moments of the hold or later, the residual window below, may still see its one write go out.
 */
const RESIDUAL_MS = 150;

let seq = 0;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++seq}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

interface Race {
  revision: Revision;
  control: boolean;
  /** The yes, relative to the drop (ms); for a control, relative to when the drop would have been. */
  offset: number;
  note: string;
  gotResult: boolean;
  resultText: string;
  droppedAt: number | undefined;
  writes: number[];
}

function request(revision: Revision, id: string, note: string): RequestInit {
  const modern = revision === "2026-07-28";
  const meta = modern
    ? { "io.modelcontextprotocol/protocolVersion": revision, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "race", version: "0" } }
    : undefined;
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": revision,
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": "demo_write" } : {}),
      ...bearer(TOKENS.session),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "demo_write", arguments: { note }, ...(meta === undefined ? {} : { _meta: meta }) } }),
  };
}

/** One race: the call, the prompt, the drop (unless a control) and the yes at `offset` ms from the drop. */
async function race(revision: Revision, control: boolean): Promise<Race> {
  const route = unique("race");
  const note = unique("note");
  const offset = Math.round(-1000 + Math.random() * 3000);
  let acceptAt = Number.POSITIVE_INFINITY;
  // Each poll is held until the yes is due, so the yes reaches the bundle the moment it is given.
  const url = scripted.route(route, {
    poll: async () => {
      const wait = acceptAt - Date.now();
      if (wait > 15_000) return PENDING;
      await sleep(wait);
      return ACCEPT;
    },
  });
  const init = request(revision, unique("id"), note);
  const drop = new AbortController();
  const out: Race = { revision, control, offset, note, gotResult: false, resultText: "", droppedAt: undefined, writes: [] };
  const response = await fetch(`${GATEWAY}/mcp?servers=echo-scripted`, { ...init, headers: { ...(init.headers as Record<string, string>), "x-elicitation-url": url }, signal: drop.signal });
  const reading = (async () => {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        const data = text.split("\n").find((l) => l.startsWith("data:") && l.includes('"result"'));
        if (data !== undefined) {
          out.gotResult = true;
          out.resultText = data;
          return;
        }
      }
    } catch {
      // Dropped.
    }
  })();
  // The approval is pending once the bundle has created the prompt and polls.
  await waitFor(async () => (scripted.requestsTo(route).some((r) => r.method === "GET") ? true : undefined), 10_000, 10);
  const dropAt = Date.now() + 1_000 + Math.random() * 500;
  acceptAt = dropAt + offset;
  if (control) {
    await Promise.race([reading, sleep(dropAt - Date.now() + Math.max(offset, 0) + 5_000)]);
  } else {
    await Promise.race([reading, sleep(dropAt - Date.now())]);
    if (!out.gotResult) {
      out.droppedAt = Date.now();
      drop.abort();
    }
    await reading;
  }
  return out;
}

async function countWrites(races: Race[]): Promise<void> {
  await callsEnded("dev-session", 20_000);
  // A write already past the gate has this long to reach the recorder.
  await quiet(CLAIM_HOLD_MS.fallback + 500);
  const events = await recorder.events();
  for (const r of races) r.writes = events.filter((e) => e.kind === "demo_write" && e.note === r.note).map((e) => e.at);
}

function histogram(values: number[], from: number, to: number, step: number): string {
  const rows: string[] = [];
  for (let lo = from; lo < to; lo += step) rows.push(`  [${lo}, ${lo + step}) ms: ${values.filter((v) => v >= lo && v < lo + step).length}`);
  return rows.join("\n");
}

describe("a yes racing a caller's drop", () => {
  it("never writes for a caller that left before the yes, on both revisions (200 races, 40 controls)", async () => {
    const plan: [Revision, boolean][] = [];
    for (let i = 0; i < RACES; i++) plan.push([REVISIONS[i % 2] as Revision, false]);
    for (let i = 0; i < CONTROLS; i++) plan.push([REVISIONS[i % 2] as Revision, true]);
    plan.sort(() => Math.random() - 0.5);
    const races: Race[] = [];
    for (let i = 0; i < plan.length; i += BATCH) {
      const batch = await Promise.all(plan.slice(i, i + BATCH).map(([revision, control]) => race(revision, control)));
      await countWrites(batch);
      races.push(...batch);
    }

    const dropped = races.filter((r) => !r.control && !r.gotResult);
    const completed = races.filter((r) => !r.control && r.gotResult);
    const controls = races.filter((r) => r.control);
    const yesAfterDrop = dropped.filter((r) => r.offset >= 0);
    const residual = dropped.filter((r) => r.writes.length > 0);
    // The promise, race by race: at most one write; none when the yes came at or after the drop; a write for a
    // dropped call only when the drop came less than RESIDUAL_MS before it; one write for every answered call.
    const kept = (r: Race) =>
      r.writes.length <= 1 &&
      (r.control
        ? r.gotResult && r.writes.length === 1
        : r.gotResult
          ? r.writes.length === 1
          : r.offset >= 0
            ? r.writes.length === 0
            : r.writes.length === 0 || (r.writes[0] as number) - (r.droppedAt as number) < RESIDUAL_MS);
    const summary = [
      `races that kept the promise: ${races.filter((r) => !r.control && kept(r)).length}/${RACES}; controls: ${controls.filter(kept).length}/${CONTROLS}`,
      `races: ${RACES} (${dropped.length} dropped before their answer, ${completed.length} answered before the drop), controls: ${CONTROLS}`,
      `dropped with the yes at or after the drop: ${yesAfterDrop.length}, writes: ${yesAfterDrop.reduce((n, r) => n + r.writes.length, 0)}`,
      `dropped with the yes before the drop: ${dropped.length - yesAfterDrop.length}, of which wrote once in the residual window: ${residual.length}`,
      `answered before the drop: ${completed.length}, each wrote once: ${completed.every((r) => r.writes.length === 1)}`,
      `controls accepted and wrote once: ${controls.filter((r) => r.gotResult && r.writes.length === 1).length}/${controls.length}`,
      `offsets (yes - drop) of the races:\n${histogram(
        races.filter((r) => !r.control).map((r) => r.offset),
        -1000,
        2000,
        250,
      )}`,
      `drop-to-write of residual writes (ms): ${residual.map((r) => Math.round((r.writes[0] as number) - (r.droppedAt as number))).join(", ") || "none"}`,
    ].join("\n");
    console.log(summary);

    for (const r of races) expect(r.writes.length, `at most one write: ${JSON.stringify(r)}`).toBeLessThanOrEqual(1);
    for (const r of yesAfterDrop) expect(r.writes, `a yes after the drop wrote: ${JSON.stringify(r)}`).toEqual([]);
    for (const r of residual) {
      // The caller was still there until at most RESIDUAL_MS before the write went out.
      expect((r.writes[0] as number) - (r.droppedAt as number), JSON.stringify(r)).toBeLessThan(RESIDUAL_MS);
    }
    for (const r of completed) expect(r.writes, JSON.stringify(r)).toHaveLength(1);
    for (const r of controls) {
      expect(r.gotResult, JSON.stringify(r)).toBe(true);
      expect(r.resultText).toContain("Recorded.");
      expect(r.writes, JSON.stringify(r)).toHaveLength(1);
    }
  }, 600_000);
});
