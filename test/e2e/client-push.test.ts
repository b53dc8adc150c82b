// Issue 28 on 2025-11-25, through the running stack: a guarded write of a caller the roster declares human-backed
// (dev-person, asks: client) on a slug that allows it (echo-client, clientQuestions) is asked at the caller's own client
// as elicitation/create on the call's stream; the answer comes back as a POST of its own, reaches the waiting call
// through the CallRegistry, and the echo bundle's kit acts on it exactly as on 2026-07-28 (docs/rules.md R-PUSH-1..4).
// Real clients stand in for the person: the v2 SDK client (@modelcontextprotocol/client, which speaks 2025-11-25 unless
// told to negotiate) and the v1 SDK client (@modelcontextprotocol/sdk), each with an elicitation handler.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { bearer, DEV_VARS, mcpUrl, nothingMore, recorder, TOKENS, textOf } from "./helpers";

const PERSON = DEV_VARS.STRAD_TOKEN_DEV_PERSON as string;

interface Asked {
  message: string;
  mode: unknown;
}
type Answer = { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> };

interface Person {
  call: (note: string) => Promise<{ isError?: boolean; content?: unknown }>;
  asked: Asked[];
  revision: () => string | undefined;
  close: () => Promise<void>;
}

/** The v2 client on 2025-11-25 (its default), declaring form elicitation when `declares`, answering with `answer`. */
async function v2Person(token: string, answer: (asked: Asked) => Answer, declares = true): Promise<Person> {
  const asked: Asked[] = [];
  const client = new Client({ name: "e2e-push-v2", version: "1.0.0" }, declares ? { capabilities: { elicitation: { form: {} } } } : {});
  if (declares) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { message: string; mode?: unknown };
      const question = { message: params.message, mode: params.mode };
      asked.push(question);
      return answer(question) as never;
    });
  }
  await client.connect(new StreamableHTTPClientTransport(mcpUrl("echo-client"), { requestInit: { headers: bearer(token) } }));
  return {
    call: (note) => client.callTool({ name: "demo_write", arguments: { note } }, { timeout: 30_000 }) as never,
    asked,
    revision: () => client.getNegotiatedProtocolVersion(),
    close: () => client.close(),
  };
}

/** The v1 client, which speaks 2025-11-25 only. */
async function v1Person(token: string, answer: (asked: Asked) => Answer): Promise<Person> {
  const asked: Asked[] = [];
  const client = new LegacyClient({ name: "e2e-push-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as { message: string; mode?: unknown };
    const question = { message: params.message, mode: params.mode };
    asked.push(question);
    return answer(question) as never;
  });
  const transport = new LegacyTransport(mcpUrl("echo-client"), { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  return {
    call: (note) => client.callTool({ name: "demo_write", arguments: { note } }, undefined, { timeout: 30_000 }) as never,
    asked,
    revision: () => transport.protocolVersion,
    close: () => client.close(),
  };
}

const ACCEPT = (): Answer => ({ action: "accept", content: { confirm: true } });
const noteFor = (label: string) => `client-push ${label} ${crypto.randomUUID()}`;

async function notesWritten(note: string): Promise<number> {
  return (await recorder.events()).filter((e) => e.kind === "demo_write" && e.note === note).length;
}

describe.each([
  ["the v2 SDK client", v2Person],
  ["the v1 SDK client", v1Person],
])("issue 28: a guarded write asked at the client on 2025-11-25 (%s)", (_client, person) => {
  it("accept writes exactly once, and the question is the card the approval service would get", async () => {
    const note = noteFor("accept");
    const p = await person(PERSON, ACCEPT);
    try {
      expect(p.revision()).toBe("2025-11-25");
      const result = await p.call(note);
      expect(p.asked).toHaveLength(1);
      expect(p.asked[0]?.message).toContain("echo-client");
      expect(p.asked[0]?.message).toContain(note);
      expect(result.isError).not.toBe(true);
      expect(textOf(result)).toContain("Recorded.");
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(1);
    } finally {
      await p.close();
    }
  });

  it.each<[string, () => Answer]>([
    ["decline", () => ({ action: "decline" })],
    ["cancel", () => ({ action: "cancel" })],
    ["an accept with the confirm box unticked", () => ({ action: "accept", content: { confirm: false } })],
  ])("%s writes nothing", async (_label, answer) => {
    const note = noteFor("no");
    const p = await person(PERSON, answer);
    try {
      const result = await p.call(note);
      expect(p.asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("Nothing was written");
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(0);
    } finally {
      await p.close();
    }
  });

  it("a caller not declared human-backed is never asked at its client: refused without an approval URL, as before", async () => {
    const note = noteFor("not-human-backed");
    const p = await person(TOKENS.session, ACCEPT);
    try {
      const result = await p.call(note);
      expect(p.asked).toEqual([]);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("Refused:");
      await nothingMore("dev-session");
      expect(await notesWritten(note)).toBe(0);
    } finally {
      await p.close();
    }
  });
});

describe("issue 28: what a 2025-11-25 client that cannot be asked gets", () => {
  it("a human-backed caller whose client declared no elicitation is refused as before, never sent a question", async () => {
    const note = noteFor("no-capability");
    const p = await v2Person(PERSON, ACCEPT, false);
    try {
      const result = await p.call(note);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("Refused:");
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(0);
    } finally {
      await p.close();
    }
  });
});

// ---- The drop (a call whose caller left never acts, even if the yes arrives later: README): raw HTTP, so the test
// chooses exactly when the caller's connection closes and when its answer is sent.

const HEADERS = { ...bearer(PERSON), "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

async function rawSession(): Promise<string> {
  const response = await fetch(mcpUrl("echo-client"), {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: { elicitation: {} }, clientInfo: { name: "e2e-push-raw", version: "0" } },
    }),
  });
  await response.text();
  const session = response.headers.get("mcp-session-id");
  if (session === null) throw new Error("no session id");
  return session;
}

/** Starts demo_write and reads its stream up to the pushed question; returns the question's id and the call's abort. */
async function askedCall(session: string, note: string, id: number): Promise<{ questionId: unknown; leave: () => void }> {
  const leave = new AbortController();
  const response = await fetch(mcpUrl("echo-client"), {
    method: "POST",
    headers: { ...HEADERS, "mcp-session-id": session },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "demo_write", arguments: { note } } }),
    signal: leave.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the call ended before its question: ${buffer}`);
    buffer += value;
    const line = buffer.split("\n").find((l) => l.startsWith("data: ") && l.includes('"elicitation/create"'));
    if (line !== undefined) return { questionId: (JSON.parse(line.slice(6)) as { id: unknown }).id, leave: () => leave.abort() };
  }
}

describe("issue 28: a 2025-11-25 caller that leaves while its question is open", () => {
  // A yes 0-500 ms after the drop, at the edges and at random between them: none may write. A yes that lands before the
  // gateway noticed the drop reaches the bundle, whose claim then finds the caller gone (the hold's probes fail).
  const gaps = [0, 1, 20, 100, 250, 499, 500, ...Array.from({ length: 5 }, () => Math.floor(Math.random() * 501))];
  it.each(gaps)("a yes %i ms after the drop writes nothing", async (gapMs) => {
    const note = noteFor(`drop-${gapMs}`);
    const session = await rawSession();
    const { questionId, leave } = await askedCall(session, note, 1);
    leave();
    await new Promise((r) => setTimeout(r, gapMs));
    const answered = await fetch(mcpUrl("echo-client"), {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": session },
      body: JSON.stringify({ jsonrpc: "2.0", id: questionId, result: { action: "accept", content: { confirm: true } } }),
    });
    await answered.text();
    expect([202, 400]).toContain(answered.status);
    await nothingMore("dev-person");
    expect(await notesWritten(note)).toBe(0);
  });

  it("a yes sent while the caller is still there writes once, and the same yes again is refused", async () => {
    const note = noteFor("raw-accept");
    const session = await rawSession();
    const { questionId, leave } = await askedCall(session, note, 2);
    const body = JSON.stringify({ jsonrpc: "2.0", id: questionId, result: { action: "accept", content: { confirm: true } } });
    const first = await fetch(mcpUrl("echo-client"), { method: "POST", headers: { ...HEADERS, "mcp-session-id": session }, body });
    expect(first.status).toBe(202);
    await first.text();
    const again = await fetch(mcpUrl("echo-client"), { method: "POST", headers: { ...HEADERS, "mcp-session-id": session }, body });
    expect(again.status).toBe(400);
    await again.text();
    await nothingMore("dev-person");
    expect(await notesWritten(note)).toBe(1);
    leave();
  });
});
