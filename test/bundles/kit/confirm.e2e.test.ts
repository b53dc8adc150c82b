// The confirm kit end to end: echo's guarded demo_write through the real gateway, against a scripted approval service on 8790.
import { describe, expect, it } from "vitest";
import { waivedLine } from "../../../bundles/kit/confirm";
import { bearer, type Connected, connectLegacy, connectModern, DEV_VARS, LATE_APPROVAL_MS, nothingMore, quiet, recorder, TOKENS, textOf, waitFor } from "../../e2e/helpers";
import { type Plan, SCRIPTED_PORT, useScriptedApprover } from "./helpers/hostile-server";

const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };
const PENDING: Plan = { body: { action: "pending", content: null } };

const scripted = useScriptedApprover();
let run = 0;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++run}`;

const clients = [
  ["2026-07-28 (@modelcontextprotocol/client 2.x)", connectModern],
  ["2025-11-25 (@modelcontextprotocol/sdk 1.x)", connectLegacy],
] as const;

async function demoWrites(note: string): Promise<Record<string, unknown>[]> {
  return (await recorder.events()).filter((e) => e.kind === "demo_write" && e.note === note);
}

async function connectTo(connect: (typeof clients)[number][1], slug: string, approvalUrl?: string, token = TOKENS.session): Promise<Connected> {
  return connect(slug, { ...bearer(token), ...(approvalUrl === undefined ? {} : { "x-elicitation-url": approvalUrl }) });
}

describe.each(clients)("a %s caller", (_label, connect) => {
  it("gets exactly one write when the person approves, after being asked over its own approval URL with the edge credential", async () => {
    const name = unique("approve");
    const url = scripted.route(name, { poll: (_r, i) => (i < 3 ? PENDING : ACCEPT) });
    const note = unique("note");
    const client = await connectTo(connect, "echo-scripted", url);
    try {
      const result = await client.callTool("demo_write", { note });
      expect(textOf(result)).toBe("Recorded.");
      expect(result.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    expect(await demoWrites(note)).toEqual([expect.objectContaining({ kind: "demo_write", note, mount: "echo-confirmed" })]);
    const seen = scripted.requestsTo(name);
    expect(seen[0]?.method).toBe("POST");
    const prompt = JSON.parse(seen[0]?.body ?? "{}").message as string;
    expect(prompt.split("\n")[0]).toBe("echo-scripted: This will record a note in the demo recorder.");
    expect(prompt).toContain(`Values below are supplied by the caller, not by this server:\n  Note: ${note}`);
    expect(seen.length).toBe(4);
    for (const r of seen) {
      expect(r.headers["cf-access-client-id"]).toBe(DEV_VARS.SCRIPTED_CF_ACCESS_CLIENT_ID);
      expect(r.headers["cf-access-client-secret"]).toBe(DEV_VARS.SCRIPTED_CF_ACCESS_CLIENT_SECRET);
      // The caller's own credential never reaches the approval service.
      expect(r.headers.authorization).toBeUndefined();
    }
  });

  it.each(["decline", "expired", "cancel"])("gets no write when the answer is %s", async (action) => {
    const url = scripted.route(unique(action), { poll: () => ({ body: { action } }) });
    const note = unique("note");
    const client = await connectTo(connect, "echo-scripted", url);
    try {
      const result = await client.callTool("demo_write", { note });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Not done: .*Nothing was written\.$/);
    } finally {
      await client.close();
    }
    await nothingMore();
    expect(await demoWrites(note)).toEqual([]);
  });

  it("gets no write when it leaves while the person decides, even when the person then approves", async () => {
    const name = unique("drop");
    let decision: Plan = PENDING;
    const url = scripted.route(name, { poll: () => decision });
    const note = unique("note");
    const client = await connectTo(connect, "echo-scripted", url);
    const drop = new AbortController();
    try {
      const call = client.callTool("demo_write", { note }, { signal: drop.signal });
      call.catch(() => {});
      await waitFor(async () => (scripted.requestsTo(name).some((r) => r.method === "GET") ? true : undefined));
      drop.abort();
      await expect(call).rejects.toThrow();
      // The gateway has torn the call down (and aborted the bundle's request), and a poll already under way is over.
      await nothingMore();
      const pollsAfterDrop = scripted.requestsTo(name).length;
      decision = ACCEPT;
      await quiet(LATE_APPROVAL_MS);
      // The bundle stopped asking when the caller left; the late approval reached nobody.
      expect(scripted.requestsTo(name).length).toBe(pollsAfterDrop);
      expect(await demoWrites(note)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("gets a fresh prompt when it retries after leaving, and one write happens in total", async () => {
    const name = unique("retry");
    let decision: Plan = PENDING;
    const url = scripted.route(name, { poll: () => decision });
    const note = unique("note");
    const client = await connectTo(connect, "echo-scripted", url);
    try {
      const drop = new AbortController();
      const first = client.callTool("demo_write", { note }, { signal: drop.signal });
      first.catch(() => {});
      await waitFor(async () => (scripted.requestsTo(name).some((r) => r.method === "GET") ? true : undefined));
      drop.abort();
      await expect(first).rejects.toThrow();
      // The person approves only once the first delivery is over.
      await nothingMore();
      decision = ACCEPT;
      const retried = await client.callTool("demo_write", { note });
      expect(textOf(retried)).toBe("Recorded.");
    } finally {
      await client.close();
    }
    const prompts = scripted.requestsTo(name).filter((r) => r.method === "POST");
    expect(prompts).toHaveLength(2);
    const ids = prompts.map((p) => JSON.parse(p.body)._meta["com.pulsemcp/request-id"]);
    expect(ids[0]).not.toBe(ids[1]);
    await nothingMore();
    expect(await demoWrites(note)).toHaveLength(1);
  });

  it("hears keepalive progress while the person decides, when it asked for progress", async () => {
    const name = unique("progress");
    let decision: Plan = PENDING;
    const url = scripted.route(name, { poll: () => decision });
    const note = unique("note");
    const progress: unknown[] = [];
    const client = await connectTo(connect, "echo-scripted", url);
    try {
      const call = client.callTool("demo_write", { note }, { onprogress: (p) => progress.push(p) });
      call.catch(() => {});
      // The person decides 2.2 s after the prompt reached the approval service: several keepalive intervals (500 ms).
      await waitFor(async () => (scripted.requestsTo(name).some((r) => r.method === "POST") ? true : undefined));
      await new Promise((r) => setTimeout(r, 2_200));
      decision = ACCEPT;
      const result = await call;
      expect(textOf(result)).toBe("Recorded.");
    } finally {
      await client.close();
    }
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatchObject({ progress: 1, message: "waiting for a person to approve" });
  });
});

describe("one call, two deliveries", () => {
  it("writes once when one call is delivered twice and both deliveries are approved", async () => {
    const name = unique("twice");
    const url = scripted.route(name, { poll: () => ACCEPT });
    const note = unique("note");
    // Two fresh 2025 clients on one caller, in one session (each sends the same Mcp-Session-Id, as a replaying proxy
    // would), give their first tools/call the same JSON-RPC id: one call key (docs/rules.md R-CALL-12).
    const session = { ...bearer(TOKENS.session), "x-elicitation-url": url, "mcp-session-id": unique("one-session") };
    const [a, b] = await Promise.all([connectLegacy("echo-scripted", session), connectLegacy("echo-scripted", session)]);
    try {
      const results = await Promise.allSettled([a.callTool("demo_write", { note }), b.callTool("demo_write", { note })]);
      const outcomes = results.map((r) => (r.status === "fulfilled" ? textOf(r.value) : String(r.reason)));
      expect(outcomes.filter((o) => o === "Recorded.")).toHaveLength(1);
      // The other delivery is stopped by the gateway (the call is in flight) or by the bundle's claim.
      expect(outcomes.find((o) => o !== "Recorded.")).toMatch(/already in flight|already used for a write/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    await nothingMore();
    expect(await demoWrites(note)).toHaveLength(1);
  });

  it("writes once when the approval service repeats its accept on every poll and on a second prompt", async () => {
    const name = unique("repeat");
    const url = scripted.route(name, { create: () => ({ status: 201, body: { requestId: "same-id" } }), poll: () => ACCEPT });
    const note = unique("note");
    const client = await connectTo(connectModern, "echo-scripted", url);
    try {
      expect(textOf(await client.callTool("demo_write", { note }))).toBe("Recorded.");
    } finally {
      await client.close();
    }
    await nothingMore();
    expect(await demoWrites(note)).toHaveLength(1);
    expect(scripted.requestsTo(name).filter((r) => r.method === "GET")).toHaveLength(1);
  });
});

describe("mounts that do not ask", () => {
  it("writes on echo-waived without asking anyone, whatever approval URL the caller sends", async () => {
    const name = unique("waived");
    const url = scripted.route(name, { poll: () => ({ body: { action: "decline" } }) });
    const note = unique("note");
    const client = await connectTo(connectModern, "echo-waived", url);
    try {
      // The answer says nobody was asked (docs/rules.md R-CHAN-14).
      expect(textOf(await client.callTool("demo_write", { note }))).toBe(`Recorded.${waivedLine("echo-waived")}`);
    } finally {
      await client.close();
    }
    expect(scripted.requestsTo(name)).toEqual([]);
    expect(await demoWrites(note)).toEqual([expect.objectContaining({ mount: "echo-waived" })]);
  });

  it("refuses on echo, which declares no confirmations, and asks no one", async () => {
    const name = unique("plain");
    const url = scripted.route(name, { poll: () => ACCEPT });
    const note = unique("note");
    const client = await connectTo(connectModern, "echo", url);
    try {
      const result = await client.callTool("demo_write", { note });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Refused: no approval channel reached this call/);
    } finally {
      await client.close();
    }
    await nothingMore();
    expect(scripted.requestsTo(name)).toEqual([]);
    expect(await demoWrites(note)).toEqual([]);
  });

  it("refuses on echo-unseeded, naming the secret that is not seeded", async () => {
    const name = unique("unseeded");
    const url = scripted.route(name, { poll: () => ACCEPT });
    const note = unique("note");
    const client = await connectTo(connectLegacy, "echo-unseeded", url);
    try {
      const result = await client.callTool("demo_write", { note });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Refused: .*UNSEEDED_ACCESS_ID/);
    } finally {
      await client.close();
    }
    await nothingMore();
    expect(scripted.requestsTo(name)).toEqual([]);
    expect(await demoWrites(note)).toEqual([]);
  });

  it("refuses when the caller names no approval URL, or one outside the allowed prefix, repeating the gateway's reason", async () => {
    for (const header of [undefined, `http://127.0.0.1:${SCRIPTED_PORT}/elsewhere/${unique("x")}/`]) {
      const note = unique("note");
      const client = await connectTo(connectModern, "echo-confirmed", header);
      try {
        const result = await client.callTool("demo_write", { note });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/^Refused: the gateway refused the approval channel: /);
      } finally {
        await client.close();
      }
      expect(await demoWrites(note)).toEqual([]);
    }
    expect(scripted.requests).toEqual([]);
  });
});

describe("a misbehaving approval service", () => {
  it("fails the call naming the status of a redirect, follows nothing and writes nothing", async () => {
    const trap = unique("trap");
    scripted.route(trap, {});
    const url = scripted.route(unique("redirect"), { create: () => ({ status: 302, headers: { location: `http://127.0.0.1:${SCRIPTED_PORT}/scripted/${trap}/` } }) });
    const note = unique("note");
    const client = await connectTo(connectModern, "echo-scripted", url);
    try {
      const result = await client.callTool("demo_write", { note });
      expect(textOf(result)).toBe("Not done: the approval service answered with a redirect (HTTP 302), which is never followed. Nothing was written.");
    } finally {
      await client.close();
    }
    expect(scripted.requestsTo(trap)).toEqual([]);
    expect(await demoWrites(note)).toEqual([]);
  });

  it("fails the call naming a 500's status and none of its secret-looking body", async () => {
    const url = scripted.route(unique("boom"), { poll: () => ({ status: 500, body: "SECRET-e2e-4411 stack: at db.query(password=hunter2)" }) });
    const note = unique("note");
    const client = await connectTo(connectLegacy, "echo-scripted", url);
    try {
      const result = await client.callTool("demo_write", { note });
      expect(textOf(result)).toBe("Not done: the approval service answered HTTP 500. Nothing was written.");
      expect(JSON.stringify(result)).not.toMatch(/SECRET|hunter2|db\.query/);
    } finally {
      await client.close();
    }
    expect(await demoWrites(note)).toEqual([]);
  });
});
