// `npm run soak [-- N]`: N (default 500) confirmed calls pending at once on one local stack, spread over three
// callers and ten approval sessions; then every caller drops. Reports how long until every call's record is ended
// and every bundle has stopped asking, the peak memory of each workerd process, call-registry requests per call
// and any error. Then N more calls, all accepted at once: every one must write exactly once. Exits 1 on a violation.
// Everything runs on 127.0.0.1 and every loop is bounded.
import { readdirSync, readFileSync } from "node:fs";
import { decidePrompt, listPrompts, mintSession } from "../approvals/dev-api.mjs";
import { PORTS, startStack } from "./stack.mjs";

const N = Number(process.argv[2] ?? 500);
const GATEWAY = `http://127.0.0.1:${PORTS.gateway}`;
const FAKES = `http://127.0.0.1:${PORTS.fakes}`;
const vars = Object.fromEntries(
  readFileSync(new URL("../.dev.vars.example", import.meta.url), "utf8")
    .split("\n")
    .map((l) => /^([A-Z0-9_]+)="(.*)"$/.exec(l.trim()))
    .filter((m) => m !== null)
    .map((m) => [m[1], m[2]]),
);
const CALLERS = [
  { id: "dev-session", token: vars.STRAD_TOKEN_DEV_SESSION },
  { id: "dev-session-2", token: vars.STRAD_TOKEN_DEV_SESSION_2 },
  { id: "dev-admin", token: vars.STRAD_TOKEN_DEV_ADMIN },
];
const SESSIONS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const errors = [];

async function until(what, probe, timeoutMs, everyMs = 100) {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (errors.length > 0) throw new Error(`while waiting for ${what}: ${errors.length} errors, first: ${errors.slice(0, 3).join("; ")}`);
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The workerd processes this script started (through Miniflare), oldest first: gateway+bundles, approvals, fakes. */
function workerdPids() {
  const parentOf = (pid) => Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  const mine = (pid) => {
    for (let p = pid, i = 0; p > 1 && i < 16; p = parentOf(p), i++) if (p === process.pid) return true;
    return false;
  };
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd" && mine(pid);
      } catch {
        return false;
      }
    })
    .sort((a, b) => a - b);
}
const memoryOf = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { peakMiB: Math.round(kb("VmHWM") / 1024), nowMiB: Math.round(kb("VmRSS") / 1024) };
};

async function stats(caller) {
  const r = await fetch(`${GATEWAY}/_dev/calls/${caller}`);
  return r.json();
}
const servedTotal = async () => (await Promise.all(CALLERS.map((c) => stats(c.id)))).reduce((n, s) => n + s.served, 0);
const liveTotal = async () => (await Promise.all(CALLERS.map((c) => stats(c.id)))).reduce((n, s) => n + s.live, 0);

/** Starts one confirmed call; resolves with what the caller read (the result, or nothing if it dropped). */
function startCall(i, phase, sessions) {
  const caller = CALLERS[i % CALLERS.length];
  const session = sessions[i % sessions.length];
  const note = `soak-${phase}-${i}-${Date.now().toString(36)}`;
  const drop = new AbortController();
  const done = (async () => {
    try {
      const response = await fetch(`${GATEWAY}/mcp?servers=echo-confirmed`, {
        method: "POST",
        signal: drop.signal,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
          authorization: `Bearer ${caller.token}`,
          "x-elicitation-url": session.elicitationUrl,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: `${phase}-${i}`, method: "tools/call", params: { name: "demo_write", arguments: { note } } }),
      });
      if (response.status !== 200) errors.push(`${phase} call ${i}: HTTP ${response.status}`);
      return await response.text();
    } catch (error) {
      if (!drop.signal.aborted) errors.push(`${phase} call ${i}: ${error.message}`);
      return "";
    }
  })();
  return { note, drop, done };
}

async function pendingPrompts(sessions) {
  const lists = await Promise.all(sessions.map((s) => listPrompts(s.sessionId)));
  return lists.flat().filter((p) => p.status === "pending");
}
const pollCounts = async (sessions) => (await Promise.all(sessions.map((s) => listPrompts(s.sessionId)))).flat().reduce((n, p) => n + (p.polls ?? 0), 0);

const stack = await startStack();
try {
  const pids = workerdPids();
  const names = ["gateway+bundles", "approvals", "fakes"];
  const report = [];
  const served0 = await servedTotal();

  // Phase 1: N pending, then every caller drops at once.
  const sessions1 = await Promise.all(Array.from({ length: SESSIONS }, () => mintSession()));
  const calls1 = Array.from({ length: N }, (_, i) => startCall(i, "drop", sessions1));
  const pendingMs = await until(`${N} pending prompts`, async () => (await pendingPrompts(sessions1)).length >= N, 180_000, 250);
  const droppedAt = Date.now();
  for (const c of calls1) c.drop.abort();
  await Promise.all(calls1.map((c) => c.done));
  const endedMs = await until("every record ended", async () => (await liveTotal()) === 0, 120_000, 50);
  // The protocol has no cancel: a bundle whose call dropped stops polling, and the prompt expires at its time.
  let last = await pollCounts(sessions1);
  const quietSince = Date.now();
  let stoppedAskingMs;
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const now = await pollCounts(sessions1);
    if (now === last) {
      stoppedAskingMs = quietSince - droppedAt + i * 500;
      break;
    }
    last = now;
  }
  const served1 = await servedTotal();
  const writes1 = (await (await fetch(`${FAKES}/recorder/events`)).json()).filter((e) => e.kind === "demo_write" && String(e.note).startsWith("soak-drop-")).length;
  report.push(
    `phase 1: ${N} confirmed calls pending at once over ${CALLERS.length} callers and ${SESSIONS} approval sessions (all pending after ${pendingMs} ms)`,
    `  every caller dropped: every call record ended after ${endedMs} ms; every bundle stopped polling within ${stoppedAskingMs ?? "(never, within 300 s)"} ms`,
    `  prompts still pending at the approval service (no cancel in the protocol; they expire): ${(await pendingPrompts(sessions1)).length}`,
    `  writes: ${writes1} (must be 0); call-registry requests per call: ${((served1 - served0) / N).toFixed(2)}`,
  );
  if (writes1 !== 0) errors.push(`phase 1 wrote ${writes1} times after every caller dropped`);
  if (stoppedAskingMs === undefined) errors.push("phase 1: bundles kept polling after the drop");

  // Phase 2: N more, all accepted at once.
  const sessions2 = await Promise.all(Array.from({ length: SESSIONS }, () => mintSession()));
  const calls2 = Array.from({ length: N }, (_, i) => startCall(i, "accept", sessions2));
  await until(`${N} pending prompts`, async () => (await pendingPrompts(sessions2)).length >= N, 180_000, 250);
  const byId = new Map();
  for (const s of sessions2) for (const p of await listPrompts(s.sessionId)) if (p.status === "pending") byId.set(p.requestId, s.sessionId);
  const acceptedAt = Date.now();
  await Promise.all([...byId].map(([requestId, sessionId]) => decidePrompt(sessionId, requestId, "accept").catch((e) => errors.push(`decide: ${e.message}`))));
  const texts = await Promise.all(calls2.map((c) => c.done));
  const answeredMs = Date.now() - acceptedAt;
  const recorded = texts.filter((t) => t.includes("Recorded.")).length;
  await until("every record ended", async () => (await liveTotal()) === 0, 60_000, 50);
  const events = (await (await fetch(`${FAKES}/recorder/events`)).json()).filter((e) => e.kind === "demo_write" && String(e.note).startsWith("soak-accept-"));
  const perNote = new Map();
  for (const e of events) perNote.set(e.note, (perNote.get(e.note) ?? 0) + 1);
  const once = calls2.filter((c) => perNote.get(c.note) === 1).length;
  const served2 = await servedTotal();
  report.push(
    `phase 2: ${N} more, all accepted at once: ${recorded} answered "Recorded." within ${answeredMs} ms; ${once}/${N} wrote exactly once; ${events.length} writes in all`,
    `  call-registry requests per call: ${((served2 - served1) / N).toFixed(2)}`,
  );
  if (once !== N || events.length !== N) errors.push(`phase 2: ${once}/${N} wrote exactly once (${events.length} writes)`);
  report.push(`peak memory: ${pids.map((pid, i) => `${names[i] ?? `workerd ${pid}`} ${memoryOf(pid).peakMiB} MiB (now ${memoryOf(pid).nowMiB})`).join(", ")}`);
  report.push(`errors: ${errors.length === 0 ? "none" : `${errors.length}\n  ${errors.slice(0, 20).join("\n  ")}`}`);
  console.log(report.join("\n"));
} finally {
  await stack.stop();
}
process.exit(errors.length === 0 ? 0 : 1);
