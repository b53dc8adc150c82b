// Covers the kit's client question (bundles/kit/confirm.ts askAtClient, bundles/kit/mount.ts, docs/rules.md R-SEAL-1..3) on echo's demo_write, driven as the gateway drives a bundle: the question and its seal, the retry that acts once, a missing seal key, a previous key after a rotation, a store that fails, and the audit lines saying the person answered at the client.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import echo from "../../../bundles/echo/echo.app";
import { CLIENT_QUESTION_KEY } from "../../../bundles/kit/confirm";
import type { FingerprintInput } from "../../../bundles/kit/fingerprint";
import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import { always, type Guard, runGuarded } from "../../../bundles/kit/guard";
import { callStateFor, runInScope } from "../../../bundles/kit/scope";
import { MIN_SEAL_KEY_CHARS } from "../../../bundles/kit/seal";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import type { ServerEntry } from "../../../worker/roster";
import { callUpstream } from "../../../worker/upstream";
import { fakeCalls } from "./helpers/bundle";
import { startSink } from "./helpers/hostile-server";

const KEY = "c".repeat(MIN_SEAL_KEY_CHARS);
const OLD_KEY = "o".repeat(MIN_SEAL_KEY_CHARS);
const FORM = { elicitation: { form: {} } };
const SERVER = { slug: "echo-confirmed", kind: "bundle", bundle: "ECHO", path: "/echo-confirmed" } as unknown as ServerEntry;

let recorder: Awaited<ReturnType<typeof startSink>>;
let logs: MockInstance;
beforeAll(async () => {
  recorder = await startSink();
});
afterAll(async () => {
  await recorder.stop();
});
beforeEach(() => {
  recorder.requests.length = 0;
  logs = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => {
  logs.mockRestore();
});

let calls = 0;
/** One round: a fresh record the gateway holds live, the client channel, and the retry's members if any. */
async function round(env: Record<string, unknown>, registry: ReturnType<typeof registryOf>, note: string, retry: Record<string, unknown> = {}) {
  const call = { scope: "dev-person", key: `c:${++calls}`, nonce: `nonce-${calls}-0123456789abcdef` };
  registry.calls.live(call.scope, call.key);
  const channel = { slug: "echo-client", ask: "client", ttlMs: 10_000, call, caller: "dev-person" };
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;
  const answer = await callUpstream({
    server: SERVER,
    method: "tools/call",
    params: { name: "demo_write", arguments: { note }, ...retry },
    meta: { [CHANNEL_META_KEY]: channel },
    capabilities: FORM,
    headers: {},
    signal: new AbortController().signal,
    fetcher: (url, init) => Promise.resolve((echo.fetch as NonNullable<typeof echo.fetch>)(new Request(url, init) as never, env, ctx)),
  });
  if (!answer.ok) throw new Error(`the bundle failed: ${answer.error.code}`);
  return answer.result;
}

/** The fakes' claim, and a seal store with the real one's rule (once per nonce) or one that fails. */
function registryOf(store: "works" | "fails" = "works") {
  const calls = fakeCalls();
  const spent = new Set<string>();
  const ns = {
    idFromName: (name: string) => name,
    get: (scope: string) => ({
      ...calls.ns.get(scope),
      spendSeal: async (nonce: string) => {
        if (store === "fails") throw new Error("registry down");
        if (spent.has(`${scope}/${nonce}`)) return false;
        spent.add(`${scope}/${nonce}`);
        return true;
      },
    }),
  };
  return { ns, calls };
}

const envOf = (registry: ReturnType<typeof registryOf>, keys: Record<string, string> = { STRAD_SEAL_KEY: KEY }) => ({ RECORDER_URL: recorder.base, CALLS: registry.ns, ...keys });
const writes = () => recorder.requests.filter((r) => r.method === "POST").length;
const lines = () => logs.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>).filter((l) => l.event === "audit");
const text = (result: Record<string, unknown>) => ((result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? "").join("");

function questionOf(result: Record<string, unknown>): { state: string; message: string; schema: unknown } {
  expect(result.resultType).toBe("input_required");
  const asked = (result.inputRequests as Record<string, { method: string; params: { mode?: string; message: string; requestedSchema: unknown } }>)[CLIENT_QUESTION_KEY];
  expect(asked?.method).toBe("elicitation/create");
  return { state: result.requestState as string, message: asked?.params.message ?? "", schema: asked?.params.requestedSchema };
}

const accept = { [CLIENT_QUESTION_KEY]: { action: "accept", content: { confirm: true } } };

describe("the client question in the kit", () => {
  it("asks with the approval service's card and a seal, writes nothing, and the retry with an accept writes once, its lines saying where it was answered", async () => {
    const registry = registryOf();
    const env = envOf(registry);
    const first = await round(env, registry, "one note");
    const q = questionOf(first);
    expect(q.message.startsWith("echo-client:")).toBe(true);
    expect(q.message).toContain("one note");
    expect(q.schema).toMatchObject({ properties: { confirm: { type: "boolean" } } });
    expect(writes()).toBe(0);
    const done = await round(env, registry, "one note", { inputResponses: accept, requestState: q.state });
    expect(text(done)).toBe("Recorded.");
    expect(writes()).toBe(1);
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", "client_question"],
      ["approved", "answered_at_client"],
      ["claimed", null],
      ["written", null],
    ]);
    // Every line of both calls names the caller and the card; none holds the seal, the key or the note.
    for (const line of lines()) {
      expect(line.caller).toBe("dev-person");
      expect(typeof line.card).toBe("string");
      expect(JSON.stringify(line)).not.toContain(q.state);
      expect(JSON.stringify(line)).not.toContain(KEY);
      expect(JSON.stringify(line)).not.toContain("one note");
    }
  });

  it("refuses without a seal key, naming STRAD_SEAL_KEY and no value, and never answers an unsealed question", async () => {
    const registry = registryOf();
    const short = "s".repeat(MIN_SEAL_KEY_CHARS - 1);
    for (const keys of [{}, { STRAD_SEAL_KEY: short }] as Record<string, string>[]) {
      const result = await round(envOf(registry, keys), registry, "no key");
      expect(result.resultType).not.toBe("input_required");
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("STRAD_SEAL_KEY");
      expect(text(result)).not.toContain(short);
    }
    expect(writes()).toBe(0);
    expect(lines().map((l) => l.reason)).toEqual(["seal_key_missing", "seal_key_missing"]);
  });

  it("opens a question sealed before a rotation with STRAD_SEAL_KEY_PREVIOUS, and not once the previous key is gone", async () => {
    const registry = registryOf();
    const before = questionOf(await round(envOf(registry, { STRAD_SEAL_KEY: OLD_KEY }), registry, "rotated"));
    const gone = await round(envOf(registry, { STRAD_SEAL_KEY: KEY }), registry, "rotated", { inputResponses: accept, requestState: before.state });
    questionOf(gone);
    expect(writes()).toBe(0);
    const done = await round(envOf(registry, { STRAD_SEAL_KEY: KEY, STRAD_SEAL_KEY_PREVIOUS: OLD_KEY }), registry, "rotated", { inputResponses: accept, requestState: before.state });
    expect(text(done)).toBe("Recorded.");
    expect(writes()).toBe(1);
    expect(lines().map((l) => [l.outcome, l.reason])).toContainEqual(["asked", "seal_unopened"]);
  });

  it("fails without acting when the seal's nonce cannot be spent, naming no value", async () => {
    const working = registryOf();
    const q = questionOf(await round(envOf(working), working, "store down"));
    const failing = registryOf("fails");
    const result = await round(envOf(failing), failing, "store down", { inputResponses: accept, requestState: q.state });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("nothing acted");
    expect(writes()).toBe(0);
    expect(lines().map((l) => l.reason)).toContain("seal_store_failed");
  });

  it.each([
    ["a decline", { action: "decline" }, "declined", "answered_at_client"],
    ["a cancel", { action: "cancel" }, "cancelled", "answered_at_client"],
    ["an accept with the box unticked", { action: "accept", content: { confirm: false } }, "declined", "confirm_unticked"],
  ])("%s writes nothing and says so in its line", async (_label, reply, outcome, reason) => {
    const registry = registryOf();
    const env = envOf(registry);
    const q = questionOf(await round(env, registry, "declined note"));
    const result = await round(env, registry, "declined note", { inputResponses: { [CLIENT_QUESTION_KEY]: reply }, requestState: q.state });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("Nothing was written");
    expect(writes()).toBe(0);
    expect(lines().at(-1)).toMatchObject({ outcome, reason });
  });

  it("an answer under another key, or none, gets the question again", async () => {
    const registry = registryOf();
    const env = envOf(registry);
    const q = questionOf(await round(env, registry, "keyed"));
    for (const inputResponses of [{ other: accept[CLIENT_QUESTION_KEY] }, {}]) {
      questionOf(await round(env, registry, "keyed", { inputResponses, requestState: q.state }));
    }
    expect(writes()).toBe(0);
  });
});

describe("the client question binds the target, not only the card", () => {
  // As the mailbox's delete: the card shows the mailbox and the UIDs; the approval binds the UIDVALIDITY too.
  type Args = { mailbox: string; uids: number[] };
  type Target = Args & { uidValidity: number };
  const world = { uidValidity: 100 };
  const bindsOf = (t: Target): FingerprintInput => ({ operation: "delete", target: { mailbox: t.mailbox, uids: { set: t.uids }, uid_validity: t.uidValidity } });
  const guard: Guard<Args, Target> = {
    rule: always,
    resolve: (a) => ({ ...a, uidValidity: world.uidValidity }),
    fingerprint: bindsOf,
    prompt: (t) => ({
      heading: `This will delete ${t.uids.length} message(s).`,
      consequence: "They cannot be brought back.",
      values: [
        { label: "Mailbox", value: t.mailbox },
        { label: "UIDs", value: t.uids.join(",") },
      ],
    }),
    act: async (t, write) => {
      const response = await write(`${recorder.base}/expunge`, { method: "POST", body: JSON.stringify(t) }, { binds: bindsOf(t), needsApproval: true });
      await response.body?.cancel();
      return { content: [{ type: "text", text: "deleted" }] };
    },
  };
  let n = 0;
  async function guarded(registry: ReturnType<typeof registryOf>, args: Args, retry: Record<string, unknown> = {}) {
    const call = { scope: "dev-person", key: `g:${++n}`, nonce: `nonce-g${n}-0123456789abcdef` };
    registry.calls.live(call.scope, call.key);
    const state = callStateFor(1, { name: "delete_messages", arguments: args, ...retry, _meta: { [CHANNEL_META_KEY]: { slug: "mail", ask: "client", ttlMs: 10_000, call, caller: "dev-person" } } });
    const scope = { mount: "mail", signal: new AbortController().signal, waitUntil: () => {}, env: { CALLS: registry.ns, STRAD_SEAL_KEY: KEY }, call: state };
    const result = await runInScope(scope, () => runGuarded(guard, args));
    return { result, question: state.question as { requestState: string } | undefined };
  }

  it("a retry whose target changed since the question (same card: the mailbox recreated) is asked again and acts on nothing; the new question's yes acts once", async () => {
    const registry = registryOf();
    const args = { mailbox: "INBOX", uids: [5, 6, 7] };
    world.uidValidity = 100;
    const first = await guarded(registry, args);
    expect(first.question?.requestState).toBeTypeOf("string");
    // INBOX recreated while the person read the card: UIDs 5, 6 and 7 are other messages now, and the card reads the same.
    world.uidValidity = 200;
    const retry = await guarded(registry, args, { requestState: first.question?.requestState, inputResponses: accept });
    expect(writes()).toBe(0);
    expect(retry.question?.requestState).toBeTypeOf("string");
    expect(retry.question?.requestState).not.toBe(first.question?.requestState);
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", "client_question"],
      ["asked", "seal_other_target"],
    ]);
    // The answer to the question about the target as it is now acts, once, on that target.
    const answered = await guarded(registry, args, { requestState: retry.question?.requestState, inputResponses: accept });
    expect(text(answered.result as Record<string, unknown>)).toBe("deleted");
    expect(recorder.requests.filter((r) => r.method === "POST").map((r) => (JSON.parse(r.body) as Target).uidValidity)).toEqual([200]);
  });
});
