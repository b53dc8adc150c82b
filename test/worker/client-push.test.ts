// Covers a mount's question pushed to a 2025-11-25 caller on its call's own stream (worker/push.ts, worker/mcp.ts
// putToCaller, worker/app.ts, docs/rules.md R-PUSH-1..4) in Node: the session id carries what initialize declared, the
// question goes out as elicitation/create with an id naming its round, the answer POST is routed through the caller's
// registry to the waiting call, and the mount is called again with the answers and its state, once, inside the call.
// The mount is a stand-in that asks and then reports what its retry carried; the registry a stand-in keeping the real
// one's answer rules (its workerd tests are in test/durable-objects/call-registry.test.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { questionTag } from "../../contract/call-registry";
import { RpcCode } from "../../contract/rpc";
import { createGateway } from "../../worker/gateway";
import { parseQuestionId } from "../../worker/push";
import { serialised } from "../../worker/upstream";
import { binding, executionContext } from "./helpers/gateway";

const PERSON = "person-token-0123456789abcdef";
const BOT = "bot-token-0123456789abcdef01";
const ROSTER = `callers:
  - { id: person, kind: session, roles: [user], tokenSecret: TOKEN_PERSON, asks: client }
  - { id: bot, kind: session, roles: [user], tokenSecret: TOKEN_BOT }
gateway:
  elicitation:
    allowedUrlPrefixes: [ "http://127.0.0.1:9/s/" ]
servers:
  - { slug: asker, kind: bundle, bundle: ASKER, path: /asker, entitlements: [user], confirmations: true, clientQuestions: true, timeoutMs: 20000 }
  - { slug: brief, kind: bundle, bundle: ASKER, path: /asker, entitlements: [user], confirmations: true, clientQuestions: true, timeoutMs: 1500 }
  - { slug: service, kind: bundle, bundle: ASKER, path: /asker, entitlements: [user], confirmations: true, timeoutMs: 20000 }
  - { slug: small, kind: bundle, bundle: ASKER, path: /asker, entitlements: [user], confirmations: true, clientQuestions: true, timeoutMs: 20000, maxRequestBytes: 65536 }
`;

/** What each call to the mount carried; the mount's questions per call come from `questions`. */
let calls: { channel: unknown; inputResponses?: unknown; requestState?: unknown; capabilities?: unknown }[] = [];
/** The input_required results the mount answers its first calls with, in turn; then it reports what it got. */
let questions: Record<string, unknown>[] = [];

const QUESTION = { mode: "form", message: "Write the note?", requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] } };
const ask = (state: string, params: Record<string, unknown> = QUESTION) => ({
  resultType: "input_required",
  inputRequests: { strad_confirm: { method: "elicitation/create", params } },
  requestState: state,
});

const ASKER = binding(async (request) => {
  const body = (await request.json()) as { id: number; params: Record<string, unknown> & { _meta?: Record<string, unknown> } };
  const meta = body.params._meta ?? {};
  calls.push({
    channel: meta["dev.strad/elicitation"],
    inputResponses: body.params.inputResponses,
    requestState: body.params.requestState,
    capabilities: meta["io.modelcontextprotocol/clientCapabilities"],
  });
  const next = questions.shift();
  const result = next ?? { content: [{ type: "text", text: `acted on ${JSON.stringify(body.params.inputResponses ?? null)} under ${String(body.params.requestState)}` }] };
  return Response.json({ jsonrpc: "2.0", id: body.id, result });
});

/**
 * The registry's rules for a pushed question's answer: one object per caller, a live record, its watcher, the tag its
 * nonce gives, once a round.
 */
function registry() {
  const encoder = new TextEncoder();
  const objects = new Map<string, ReturnType<typeof object>>();
  const object = () => {
    const live = new Map<string, { nonce: string; say: (line: string) => void; close: () => void; answered: Set<number> }>();
    return {
      fetch: async (_url: string, init: RequestInit) => {
        const { key, nonce } = JSON.parse(String(init.body)) as { key: string; nonce: string };
        if (live.has(key)) return new Response("in flight", { status: 409 });
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode("live\n"));
            live.set(key, {
              nonce,
              answered: new Set(),
              say: (line) => controller.enqueue(encoder.encode(`${line}\n`)),
              close: () => {
                try {
                  controller.close();
                } catch {}
              },
            });
          },
        });
        return new Response(stream);
      },
      end: async (key: string) => {
        live.get(key)?.close();
        live.delete(key);
      },
      cancel: async (key: string) => {
        const record = live.get(key);
        if (record === undefined) return false;
        live.delete(key);
        record.say("cancelled");
        record.close();
        return true;
      },
      answer: async (key: string, round: number, tag: string, payload: string) => {
        const record = live.get(key);
        if (record === undefined || tag !== (await questionTag(record.nonce, round)) || record.answered.has(round)) return false;
        record.answered.add(round);
        record.say(`answer ${round} ${payload}`);
        return true;
      },
      claim: async () => false,
      confirm: async () => {},
    };
  };
  const get = (scope: string) => {
    const known = objects.get(scope) ?? object();
    objects.set(scope, known);
    return known;
  };
  return { ns: { idFromName: (name: string) => name, get } };
}

let reg = registry();
const env = () => ({ TOKEN_PERSON: PERSON, TOKEN_BOT: BOT, ASKER, CALLS: reg.ns });
let gateway = createGateway(ROSTER);

/** A 2025-11-25 POST of `body`: a message's members beside jsonrpc, or (a string) the whole JSON text as it is sent. */
function post(token: string, body: Record<string, unknown> | string, { slug = "asker", session, signal }: { slug?: string; session?: string; signal?: AbortSignal } = {}): Request {
  return new Request(`https://gateway.test/mcp?servers=${slug}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(session === undefined ? {} : { "mcp-session-id": session }),
    },
    body: typeof body === "string" ? body : JSON.stringify({ jsonrpc: "2.0", ...body }),
    signal,
  });
}

async function serve(request: Request): Promise<Response> {
  const ctx = executionContext();
  return (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env() as never, ctx);
}

/** An initialize declaring `capabilities`; the session id the gateway handed out. */
async function initialize(token: string, capabilities: Record<string, unknown>): Promise<string> {
  const response = await serve(post(token, { id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "push-test", version: "0" } } }));
  expect(response.status).toBe(200);
  await response.text();
  const session = response.headers.get("mcp-session-id");
  if (session === null) throw new Error("no session id");
  return session;
}

/** Reads a call's event stream message by message. */
function messages(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return async (): Promise<Record<string, unknown> | undefined> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n");
        if (data !== "") return JSON.parse(data) as Record<string, unknown>;
        continue;
      }
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffer += value;
    }
  };
}

/** Starts a call and reads up to its first message: the question, or the answer when nothing is asked. */
async function callAndFirst(token: string, session: string | undefined, { slug = "asker", id = 7, signal }: { slug?: string; id?: number | string; signal?: AbortSignal } = {}) {
  const response = await serve(post(token, { id, method: "tools/call", params: { name: "write", arguments: { note: "n" } } }, { slug, session, signal }));
  const next = messages(response);
  return { response, next, first: await next() };
}

const ACCEPT = { action: "accept", content: { confirm: true } };
const answerPost = (token: string, session: string | undefined, id: unknown, result: unknown = ACCEPT) => serve(post(token, { id, result }, { session }));

beforeEach(() => {
  calls = [];
  questions = [];
  reg = registry();
  gateway = createGateway(ROSTER);
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("R-PUSH-1: the session id carries what initialize declared", () => {
  it.each([
    [{ elicitation: {} }, ".f"],
    [{ elicitation: { form: {} } }, ".f"],
    [{ elicitation: { url: {} } }, ".u"],
    [{ elicitation: { form: {}, url: {} } }, ".fu"],
    [{}, ""],
    [{ sampling: {} }, ""],
  ])("capabilities %j give a session id ending %j", async (capabilities, mark) => {
    const session = await initialize(PERSON, capabilities);
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}(\.f|\.u|\.fu)?$/);
    expect(session.slice(43)).toBe(mark);
  });
});

describe("R-PUSH-1: a mount's question goes to a human-backed 2025-11-25 caller on its call's stream", () => {
  it("as elicitation/create with the mount's params and a question id; the answer POST is 202, and the mount's retry carries the answer and its state, once", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("sealed-state-1")];
    const { response, next, first } = await callAndFirst(PERSON, session);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(first).toMatchObject({ jsonrpc: "2.0", method: "elicitation/create", params: QUESTION });
    const named = parseQuestionId(first?.id);
    expect(named).toMatchObject({ round: 1, requestKey: "n:7" });
    // The mount was asked over a client channel, told the caller can show a form.
    expect(calls).toHaveLength(1);
    expect(calls[0]?.channel).toMatchObject({ slug: "asker", ask: "client", caller: "person" });
    expect(calls[0]?.capabilities).toEqual({ elicitation: { form: {} } });
    const answered = await answerPost(PERSON, session, first?.id);
    expect(answered.status).toBe(202);
    expect(await answered.text()).toBe("");
    const final = await next();
    expect(final).toMatchObject({ id: 7, result: { content: [{ type: "text", text: `acted on ${JSON.stringify({ strad_confirm: ACCEPT })} under sealed-state-1` }] } });
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({ inputResponses: { strad_confirm: ACCEPT }, requestState: "sealed-state-1" });
    // The same answer again reaches nothing: the call is over.
    expect((await answerPost(PERSON, session, first?.id)).status).toBe(400);
    expect(calls).toHaveLength(2);
  });

  it("a fresh question on the retry (the mount's seal did not open) is put to the caller again, as round 2", async () => {
    const session = await initialize(PERSON, { elicitation: { form: {} } });
    questions = [ask("s1"), ask("s2")];
    const { next, first } = await callAndFirst(PERSON, session);
    expect((await answerPost(PERSON, session, first?.id)).status).toBe(202);
    const second = await next();
    expect(second).toMatchObject({ method: "elicitation/create" });
    expect(parseQuestionId(second?.id)?.round).toBe(2);
    expect((await answerPost(PERSON, session, second?.id, { action: "decline" })).status).toBe(202);
    const final = await next();
    expect(final).toMatchObject({ result: { content: [{ text: `acted on ${JSON.stringify({ strad_confirm: { action: "decline" } })} under s2` }] } });
  });

  it(`stops a mount that keeps asking after 4 questions, with an error, and does not call it again`, async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1"), ask("s2"), ask("s3"), ask("s4"), ask("s5")];
    const { next, first } = await callAndFirst(PERSON, session);
    let message = first;
    for (let round = 1; round <= 4; round++) {
      expect(parseQuestionId(message?.id)?.round).toBe(round);
      expect((await answerPost(PERSON, session, message?.id)).status).toBe(202);
      message = await next();
    }
    expect(message).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable, message: expect.stringContaining("more than 4 questions") } });
    expect(calls).toHaveLength(5);
  });
});

describe("R-PUSH-2: an answer reaches only the call that asked, in the session that was asked", () => {
  it("refuses, 400, an answer with its tag one digit off, from another session, without a session, twice, and from another caller; the real answer still acts once", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    const other = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { next, first } = await callAndFirst(PERSON, session);
    const id = String(first?.id);
    const named = parseQuestionId(id);
    if (named === undefined) throw new Error("no question id");
    const flipped = id.replace(named.tag, `${named.tag[0] === "a" ? "b" : "a"}${named.tag.slice(1)}`);
    for (const [token, from, qid] of [
      [PERSON, session, flipped],
      [PERSON, other, id],
      [PERSON, undefined, id],
      [BOT, session, id],
      [PERSON, session, "strad-q:1:nothex:n:7"],
    ] as const) {
      const refused = await answerPost(token, from, qid);
      expect(refused.status, `${token === BOT ? "bot" : "person"} ${from === session ? "same" : "other"} session, id ${qid}`).toBe(400);
      expect(await refused.json()).toMatchObject({ error: { code: RpcCode.InvalidRequest } });
    }
    expect(calls).toHaveLength(1);
    expect((await answerPost(PERSON, session, id)).status).toBe(202);
    expect((await answerPost(PERSON, session, id)).status, "a round is answered once").toBe(400);
    expect(await next()).toMatchObject({ result: { content: [{ text: expect.stringContaining("acted on") }] } });
    expect(calls).toHaveLength(2);
  });

  it("an answer that is no JSON-RPC response (no result or error object) is refused, naming what it expected", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { first } = await callAndFirst(PERSON, session);
    for (const body of [{ id: first?.id }, { id: first?.id, result: "accept" }, { id: first?.id, result: [1] }]) {
      const refused = await serve(post(PERSON, body, { session }));
      expect(refused.status).toBe(400);
      expect(JSON.stringify(await refused.json())).toContain("expected a JSON-RPC 2.0 response");
    }
    expect(calls).toHaveLength(1);
  });

  it("a client that answers with a JSON-RPC error ends the call with an error naming the server, and the mount is not called again", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { next, first } = await callAndFirst(PERSON, session);
    expect((await serve(post(PERSON, { id: first?.id, error: { code: -32601, message: "no handler" } }, { session }))).status).toBe(202);
    expect(await next()).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable, message: expect.stringContaining('server "asker"') } });
    expect(calls).toHaveLength(1);
  });
});

describe("R-PUSH-3: nobody else is asked at the client, and a call that ends first never reaches the mount again", () => {
  it("a caller not declared human-backed, a session that declared no form, and a call without a session are not given the client channel", async () => {
    const bot = await initialize(BOT, { elicitation: {} });
    const urlOnly = await initialize(PERSON, { elicitation: { url: {} } });
    for (const [token, session] of [
      [BOT, bot],
      [PERSON, urlOnly],
      [PERSON, undefined],
    ] as const) {
      calls = [];
      const { first } = await callAndFirst(token, session);
      expect(first?.method).toBeUndefined();
      expect(calls[0]?.channel).toMatchObject({ refused: expect.stringContaining("X-Elicitation-Url") });
    }
  });

  it("a slug without clientQuestions is never asked at the client, even for a human-backed caller whose session declared form", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    const { first } = await callAndFirst(PERSON, session, { slug: "service" });
    expect(first?.method).toBeUndefined();
    expect(calls[0]?.channel).toMatchObject({ refused: expect.any(String) });
  });

  it("a question for URL mode the session did not declare is refused, and nothing is pushed", async () => {
    const session = await initialize(PERSON, { elicitation: { form: {} } });
    questions = [ask("s1", { mode: "url", message: "Open it", url: "https://example.com/x", elicitationId: "e1" })];
    const { first } = await callAndFirst(PERSON, session);
    expect(first).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable, message: expect.stringContaining("url elicitation") } });
    expect(calls).toHaveLength(1);
  });

  it("a sampling request is refused: only elicitation/create is relayed", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [{ resultType: "input_required", inputRequests: { s: { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } } }, requestState: "s" }];
    const { first } = await callAndFirst(PERSON, session);
    expect(first).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable } });
    expect(calls).toHaveLength(1);
  });

  it("a question unanswered past the slug's deadline ends the call as timed out; the answer after it is refused and reaches nothing", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { next, first } = await callAndFirst(PERSON, session, { slug: "brief" });
    expect(first?.method).toBe("elicitation/create");
    expect(await next()).toMatchObject({ error: { code: RpcCode.UpstreamTimeout } });
    expect((await answerPost(PERSON, session, first?.id)).status).toBe(400);
    expect(calls).toHaveLength(1);
  });

  // The bundle stops taking answers a margin before the gateway stops waiting (the channel's ttlMs), on this path as on
  // every other, so a retry always has that margin to claim and write in: brief's 1500 ms hop counts answers for 1125 ms.
  it.each([
    [600, true],
    [1250, false],
  ])("an answer %i ms into a 1500 ms call: acted on %s", async (atMs, acts) => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const started = Date.now();
    const { next, first } = await callAndFirst(PERSON, session, { slug: "brief" });
    await new Promise((r) => setTimeout(r, Math.max(0, started + atMs - Date.now())));
    const answered = await answerPost(PERSON, session, first?.id);
    const final = await next();
    if (acts) {
      expect(answered.status).toBe(202);
      expect(final).toMatchObject({ result: { content: [{ text: expect.stringContaining("acted on") }] } });
      expect(calls).toHaveLength(2);
    } else {
      expect(final).toMatchObject({ error: { code: RpcCode.UpstreamTimeout, message: expect.stringContaining("was not answered in time (answers count until 1125 ms") } });
      expect(calls).toHaveLength(1);
    }
  });

  it("an answer larger than the default body cap is refused 413, and the call still waits for a real one", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { next, first } = await callAndFirst(PERSON, session);
    const big = await answerPost(PERSON, session, first?.id, { action: "accept", content: { confirm: true, note: "x".repeat(1024 * 1024) } });
    expect(big.status).toBe(413);
    expect((await answerPost(PERSON, session, first?.id)).status).toBe(202);
    expect(await next()).toMatchObject({ result: { content: [{ text: expect.stringContaining("acted on") }] } });
  });

  it("answers that would make the retry larger than the slug's own cap end the call saying so, and the mount is not called again; one byte within it is retried", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    // The retry's params as the gateway sends them: the name, the arguments and the answers; the note fills them to `size` bytes.
    const retrySize = (note: string) =>
      new TextEncoder().encode(
        JSON.stringify({ name: "write", arguments: { note: "n" }, inputResponses: { strad_confirm: { action: "accept", content: { confirm: true, note } } }, requestState: "s1" }),
      ).byteLength;
    const filling = (size: number) => "x".repeat(size - retrySize(""));
    questions = [ask("s1")];
    const over = await callAndFirst(PERSON, session, { slug: "small" });
    expect((await answerPost(PERSON, session, over.first?.id, { action: "accept", content: { confirm: true, note: filling(65_537) } })).status).toBe(202);
    expect(await over.next()).toMatchObject({
      error: { code: RpcCode.InvalidRequest, message: 'the answers to server "small"\'s questions make its call larger than the 65536 bytes it takes; nothing was done' },
    });
    expect(calls).toHaveLength(1);
    calls = [];
    questions = [ask("s1")];
    const within = await callAndFirst(PERSON, session, { slug: "small", id: 8 });
    expect((await answerPost(PERSON, session, within.first?.id, { action: "accept", content: { confirm: true, note: filling(65_536) } })).status).toBe(202);
    expect(await within.next()).toMatchObject({ result: { content: [{ text: expect.stringContaining("acted on") }] } });
    expect(calls).toHaveLength(2);
  });

  /** `[[[…]]]` `depth` levels deep: valid JSON, which JSON.parse takes whatever its depth. */
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  /** Where this engine's JSON.stringify runs out of stack for an answer's `result`, found from this stack by bisection. */
  function relayLimit(): number {
    let fits = 1;
    let fails = 1 << 20;
    while (fails - fits > 1) {
      const mid = Math.floor((fits + fails) / 2);
      if (serialised({ action: "accept", content: { confirm: true, note: JSON.parse(nested(mid)) } }) === undefined) fails = mid;
      else fits = mid;
    }
    return fits;
  }

  // 400,000 levels: Node's JSON.stringify runs out of stack on it (workerd's follows it: oversized-bodies.workerd.test.ts).
  // 16 levels under the relay's own limit: the relay could serialise it, the retry, two levels deeper on another stack,
  // not surely.
  it.each([
    ["far past what the gateway can serialise", () => 400_000],
    ["16 levels under what the relay itself can serialise, which the retry would carry past it", () => relayLimit() - 16],
  ])("R-FWD-10: an answer nested %s is refused 400 naming why, and the call still waits for a real one", async (_what, depthOf) => {
    const depth = depthOf();
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { next, first } = await callAndFirst(PERSON, session);
    const deep = `{"jsonrpc":"2.0","id":${JSON.stringify(first?.id)},"result":{"action":"accept","content":{"confirm":true,"note":${nested(depth)}}}}`;
    const refused = await serve(post(PERSON, deep, { session }));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: RpcCode.InvalidRequest, message: "the answer nests too deeply to relay" } });
    expect(calls).toHaveLength(1);
    expect((await answerPost(PERSON, session, first?.id)).status).toBe(202);
    expect(await next()).toMatchObject({ result: { content: [{ text: expect.stringContaining("acted on") }] } });
    expect(calls).toHaveLength(2);
  });

  it("a cancel of the call while its question is open ends it Cancelled; the answer after it reaches nothing", async () => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const { next, first } = await callAndFirst(PERSON, session, { id: "call-9" });
    const cancelled = await serve(post(PERSON, { method: "notifications/cancelled", params: { requestId: "call-9" } }, { session }));
    expect(cancelled.status).toBe(202);
    expect(await next()).toMatchObject({ error: { code: RpcCode.Cancelled } });
    expect((await answerPost(PERSON, session, first?.id)).status).toBe(400);
    expect(calls).toHaveLength(1);
  });

  it.each([0, 50, 250, 500])("a caller gone %i ms before its answer arrives: the answer is refused or reaches a call already over, and the mount is never called again", async (gapMs) => {
    const session = await initialize(PERSON, { elicitation: {} });
    questions = [ask("s1")];
    const leave = new AbortController();
    const { response, first } = await callAndFirst(PERSON, session, { signal: leave.signal });
    leave.abort();
    await response.body?.cancel().catch(() => {});
    await new Promise((r) => setTimeout(r, gapMs));
    await answerPost(PERSON, session, first?.id);
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toHaveLength(1);
  });
});

describe("R-PUSH-5: a mount on an approval channel may put a link to its caller, and nothing else", () => {
  const APPROVAL = "http://127.0.0.1:9/s/approval-session";
  const LINK = { mode: "url", message: "Open the review page", url: "https://approvals.example/prompt/1" };
  const MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {}, url: {} } },
    "io.modelcontextprotocol/clientInfo": { name: "push-test", version: "0" },
  };
  async function callWithApproval(modern: boolean, session?: string) {
    const params = { name: "write", arguments: { note: "n" }, ...(modern ? { _meta: MODERN_META } : {}) };
    const request = new Request("https://gateway.test/mcp?servers=service", {
      method: "POST",
      headers: {
        authorization: `Bearer ${PERSON}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": modern ? "2026-07-28" : "2025-11-25",
        "x-elicitation-url": APPROVAL,
        ...(modern ? { "mcp-method": "tools/call", "mcp-name": "write" } : {}),
        ...(session === undefined ? {} : { "mcp-session-id": session }),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params }),
    });
    const next = messages(await serve(request));
    return { next, first: await next() };
  }

  it.each(["2025-11-25", "2026-07-28"])(
    "a mount on an approval channel is told its caller takes URL mode and nothing else, and a form it asks anyway never reaches the caller (%s)",
    async (revision) => {
      const modern = revision === "2026-07-28";
      const session = modern ? undefined : await initialize(PERSON, { elicitation: { form: {}, url: {} } });
      questions = [ask("form-state")];
      const refused = await callWithApproval(modern, session);
      expect(calls[0]?.channel).toMatchObject({ url: APPROVAL });
      expect(calls[0]?.capabilities).toEqual({ elicitation: { url: {} } });
      expect(refused.first).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable, message: expect.stringContaining("only a link") } });
      expect(calls).toHaveLength(1);

      calls = [];
      questions = [ask("link-state", LINK)];
      const linked = await callWithApproval(modern, session);
      if (modern) {
        // Relayed as the SDK encodes it: the caller's client retries.
        expect(linked.first).toMatchObject({ result: { resultType: "input_required", inputRequests: { strad_confirm: { method: "elicitation/create", params: LINK } }, requestState: "link-state" } });
      } else {
        // Pushed, with 2025-11-25's elicitationId (the question's own id), and not waited for: a link collects nothing, so
        // the mount is called again at once with its state and no answer, and the host's answer later changes nothing.
        expect(linked.first).toMatchObject({ method: "elicitation/create", params: { ...LINK, elicitationId: linked.first?.id } });
        expect(await linked.next()).toMatchObject({ result: { content: [{ text: "acted on {} under link-state" }] } });
        expect(calls).toHaveLength(2);
        expect([202, 400]).toContain((await answerPost(PERSON, session, linked.first?.id, { action: "accept" })).status);
        expect(calls).toHaveLength(2);
      }
    },
  );

  it.each(["http://approvals.example/prompt/1", "javascript:alert(1)", "not a url", 7])("a link that is no https URL (%j) is refused, and nothing is pushed", async (url) => {
    const session = await initialize(PERSON, { elicitation: { url: {} } });
    questions = [ask("link-state", { ...LINK, url })];
    const { first } = await callWithApproval(false, session);
    expect(first).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable, message: expect.stringContaining("not an https URL") } });
    expect(calls).toHaveLength(1);
  });

  it("a caller that declared no URL mode is told nothing, and even a link is not relayed", async () => {
    const session = await initialize(PERSON, { elicitation: { form: {} } });
    questions = [ask("link-state", LINK)];
    const { first } = await callWithApproval(false, session);
    expect(calls[0]?.capabilities).toEqual({});
    expect(first).toMatchObject({ error: { code: RpcCode.QuestionUnrelayable } });
  });
});
