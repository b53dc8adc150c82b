// Issue 28 through the running stack: the official v2 SDK client (2026-07-28, an elicitation handler standing in for the person) is asked a mount's question through the gateway, its retry reaches the mount with the answer (R-FWD-8, R-FWD-9), and a guarded write is asked at a human-backed caller's client under a sealed state (R-CHAN-15, R-SEAL-1..3).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { openSeal, seal, sealNonce } from "../../bundles/kit/seal";
import { bearer, connectLegacy, DEV_VARS, mcpUrl, nothingMore, ROOT, recorder, TOKENS, textOf } from "./helpers";

interface Asked {
  message: string;
  mode: unknown;
}

/** A v2 client negotiating 2026-07-28 that declares form elicitation and answers every question with `answer`. */
async function personAt(answer: (asked: Asked) => { action: "accept" | "decline" | "cancel"; content?: Record<string, string> }): Promise<{ client: Client; asked: Asked[] }> {
  const asked: Asked[] = [];
  const client = new Client({ name: "e2e-person", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler("elicitation/create", async (request) => {
    const params = request.params as { message: string; mode?: unknown };
    const question = { message: params.message, mode: params.mode };
    asked.push(question);
    return answer(question);
  });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl("echo"), { requestInit: { headers: bearer(TOKENS.session) } }));
  return { client, asked };
}

describe("issue 28: a mount's question through the gateway", () => {
  it("the v2 client on 2026-07-28 is asked demo_ask's question and its retry reaches the mount with the answer", async () => {
    const { client, asked } = await personAt(() => ({ action: "accept", content: { reply: "ship it" } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const result = await client.callTool({ name: "demo_ask", arguments: { question: "Ship the release?" } }, { timeout: 30_000 });
      expect(asked).toEqual([{ message: "Ship the release?", mode: "form" }]);
      // The mount saw the answer on the retry, under the state it sealed for this very question.
      expect(result.structuredContent).toEqual({ question: "Ship the release?", action: "accept", content: { reply: "ship it" } });
    } finally {
      await client.close();
    }
  });

  it("a decline reaches the mount as a decline, asked once", async () => {
    const { client, asked } = await personAt(() => ({ action: "decline" }));
    try {
      const result = await client.callTool({ name: "demo_ask", arguments: { question: "Delete the branch?" } }, { timeout: 30_000 });
      expect(asked).toHaveLength(1);
      expect(result.structuredContent).toEqual({ question: "Delete the branch?", action: "decline", content: null });
    } finally {
      await client.close();
    }
  });

  it("a 2025-11-25 client gets an error naming the server, never the SDK's -32602 invalid result, and is asked nothing", async () => {
    const legacy = await connectLegacy("echo", bearer(TOKENS.session));
    try {
      const failure = await legacy.callTool("demo_ask", { question: "Anyone there?" }).then(
        (result) => ({ result }),
        (error: unknown) => ({ error: error as { code?: number; message?: string } }),
      );
      expect("error" in failure, JSON.stringify(failure)).toBe(true);
      const error = (failure as { error: { code?: number; message?: string } }).error;
      expect(error.code).not.toBe(-32602);
      expect(error.message).toContain('server "echo"');
    } finally {
      await legacy.close();
    }
  });
});

// ---- The guarded write asked at the client (R-CHAN-15, R-SEAL-1..3): dev-person is declared asks: client, and
// echo-client (the confirmed echo mount) has clientQuestions: true. demo_write records a note at the fakes' recorder
// through the send gate, so the recorder counts what acted.

const PERSON = DEV_VARS.STRAD_TOKEN_DEV_PERSON as string;
const SEAL_KEYS = { current: readDevVar(join(ROOT, "bundles", "echo", ".dev.vars.example"), "STRAD_SEAL_KEY") };

function readDevVar(file: string, name: string): string {
  const line = readFileSync(file, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}=`));
  if (line === undefined) throw new Error(`${file} has no ${name}`);
  return JSON.parse(line.slice(name.length + 1)) as string;
}

/** Rewrites the JSON body of the first retry (the POST carrying requestState) before it leaves, and keeps a copy of every retry as sent. */
type RetryEdit = (params: Record<string, unknown>) => Promise<void> | void;

interface Sent {
  headers: Headers;
  body: Record<string, unknown>;
}

async function personAtClient(
  token: string,
  answers: ((asked: Asked, round: number) => { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> })[],
  editFirstRetry?: RetryEdit,
): Promise<{ client: Client; asked: Asked[]; retries: Sent[] }> {
  const asked: Asked[] = [];
  const retries: Sent[] = [];
  let edited = false;
  const fetchWith = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (typeof init?.body === "string") {
      const body = JSON.parse(init.body) as Record<string, unknown>;
      const params = body.params as Record<string, unknown> | undefined;
      if (body.method === "tools/call" && params !== undefined && typeof params.requestState === "string") {
        if (editFirstRetry !== undefined && !edited) {
          edited = true;
          await editFirstRetry(params);
        }
        retries.push({ headers: new Headers(init.headers), body });
        return fetch(input, { ...init, body: JSON.stringify(body) });
      }
    }
    return fetch(input, init);
  };
  const client = new Client({ name: "e2e-person", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler("elicitation/create", async (request) => {
    const params = request.params as { message: string; mode?: unknown };
    const question = { message: params.message, mode: params.mode };
    asked.push(question);
    const answer = answers[asked.length - 1] ?? (() => ({ action: "cancel" as const }));
    return answer(question, asked.length) as never;
  });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl("echo-client"), { requestInit: { headers: bearer(token) }, fetch: fetchWith }));
  return { client, asked, retries };
}

const ACCEPT = () => ({ action: "accept" as const, content: { confirm: true } });
const CANCEL = () => ({ action: "cancel" as const });

async function notesWritten(note: string): Promise<number> {
  return (await recorder.events()).filter((e) => e.kind === "demo_write" && e.note === note).length;
}

/** A unique note per test, so the recorder's count is this test's alone. */
const noteFor = (label: string) => `client-question ${label} ${crypto.randomUUID()}`;

describe("issue 28: a guarded write asked at the client on 2026-07-28", () => {
  it("accept writes exactly once, on the retry carrying the answer, and the question is the approval service's card", async () => {
    const note = noteFor("accept");
    const { client, asked } = await personAtClient(PERSON, [ACCEPT]);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const result = await client.callTool({ name: "demo_write", arguments: { note } }, { timeout: 30_000 });
      expect(asked).toHaveLength(1);
      expect(asked[0]?.mode).toBe("form");
      // The same card the approval service would get: the slug, then the tool's words and the note on its own line.
      expect(asked[0]?.message).toContain("echo-client");
      expect(asked[0]?.message).toContain(note);
      expect(result.isError).not.toBe(true);
      expect(textOf(result)).toContain("Recorded.");
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(1);
    } finally {
      await client.close();
    }
  });

  it.each([
    ["decline", () => ({ action: "decline" as const })],
    ["cancel", CANCEL],
    ["an accept with the confirm box unticked", () => ({ action: "accept" as const, content: { confirm: false } })],
  ])("%s writes nothing", async (_label, answer) => {
    const note = noteFor("no");
    const { client, asked } = await personAtClient(PERSON, [answer]);
    try {
      const result = await client.callTool({ name: "demo_write", arguments: { note } }, { timeout: 30_000 });
      expect(asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("Nothing was written");
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(0);
    } finally {
      await client.close();
    }
  });

  // Each bad seal gets a fresh question (asked again; the stand-in person then cancels), never an error, and nothing
  // acts: had the first answer counted, the note would be written. `asks`: how often the person is asked. The
  // other-arguments retry's fresh question is sealed for the other note, and the client's next retry brings the
  // original note again, which is another target once more: a third question, for the original note.
  it.each<[string, RetryEdit, number]>([
    [
      "a tampered seal (one byte of it changed)",
      (params) => {
        const state = params.requestState as string;
        const at = Math.floor(state.length / 2);
        params.requestState = `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`;
      },
      2,
    ],
    [
      "an expired seal (the same payload, resealed with its expiry 1 ms in the past)",
      async (params) => {
        const opened = await openSeal(params.requestState, SEAL_KEYS);
        if (!opened.ok) throw new Error(`the bundle's seal did not open with the dev key: ${opened.problem}`);
        params.requestState = await seal({ ...opened.payload, exp: Date.now() - 1, nonce: sealNonce() }, SEAL_KEYS);
      },
      2,
    ],
    [
      "a seal for other arguments (the retry names another note)",
      (params) => {
        params.arguments = { note: `${(params.arguments as { note: string }).note} and more` };
      },
      3,
    ],
  ])("%s gets a fresh question, and nothing acts", async (_label, edit, asks) => {
    const note = noteFor("bad-seal");
    const { client, asked } = await personAtClient(PERSON, [ACCEPT, CANCEL], edit);
    try {
      const result = await client.callTool({ name: "demo_write", arguments: { note } }, { timeout: 30_000 });
      expect(asked).toHaveLength(asks);
      expect(result.isError).toBe(true);
      await nothingMore("dev-person");
      expect((await recorder.events()).filter((e) => e.kind === "demo_write" && String(e.note).startsWith(note))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a replayed seal gets a fresh question, and the write it carried happens once", async () => {
    const note = noteFor("replay");
    const { client, retries } = await personAtClient(PERSON, [ACCEPT]);
    try {
      await client.callTool({ name: "demo_write", arguments: { note } }, { timeout: 30_000 });
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(1);
      const retry = retries[0];
      if (retry === undefined) throw new Error("the client sent no retry");
      // The very same retry again, on a new id: its nonce was spent by the first.
      const response = await fetch(mcpUrl("echo-client"), { method: "POST", headers: retry.headers, body: JSON.stringify({ ...retry.body, id: 9_999 }) });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(text).toContain('"resultType":"input_required"');
      expect(text).not.toContain("Recorded.");
      await nothingMore("dev-person");
      expect(await notesWritten(note)).toBe(1);
    } finally {
      await client.close();
    }
  });

  it("a caller not declared human-backed gets today's behaviour: refused without an approval URL, and never asked at its client", async () => {
    const note = noteFor("not-human-backed");
    const { client, asked } = await personAtClient(TOKENS.session, [ACCEPT]);
    try {
      const result = await client.callTool({ name: "demo_write", arguments: { note } }, { timeout: 30_000 });
      expect(asked).toEqual([]);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("Refused:");
      await nothingMore("dev-session");
      expect(await notesWritten(note)).toBe(0);
    } finally {
      await client.close();
    }
  });
});
