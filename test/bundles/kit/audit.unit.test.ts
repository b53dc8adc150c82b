// Covers bundles/kit/audit.ts and the kit modules that write its lines: every decision about a guarded call is one
// JSON line of one shape (docs/audit.md), driven here outcome by outcome through the kit's test bundle, a stand-in
// approval service and call registry, and the send gate; no line holds a value, a URL, a header or a secret.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { approverFrom, MAX_APPROVER_CHARS } from "../../../bundles/kit/approval-client";
import { AUDIT_OUTCOMES, AUDIT_REASONS, type AuditLine } from "../../../bundles/kit/audit";
import { waivedLine } from "../../../bundles/kit/confirm";
import { type FingerprintInput, fingerprint } from "../../../bundles/kit/fingerprint";
import { gatedWrite } from "../../../bundles/kit/gate";
import { always, runGuarded } from "../../../bundles/kit/guard";
import { type CallScope, type CallState, runInScope } from "../../../bundles/kit/scope";
import { installConfirmSeam } from "../../../bundles/kit/seam";
import { MAX_PROMPT_BYTES } from "../../../contract/elicitation";
import { askChannel, callBundle, fakeCalls } from "./helpers/bundle";
import { HostileServer, startSink } from "./helpers/hostile-server";
import { kitBundle, store } from "./helpers/test-bundle";

const KEYS = ["approver", "caller", "card", "edited", "event", "fingerprint", "mount", "outcome", "proposed", "reason", "request", "slug", "status", "time", "tool"];
const NONCE = "test-nonce-0123456789";
const EDGE_SECRET = "edge-secret-0123";
const CALLER = "dev-session";
const approverMeta = (approver: unknown) => ({ "dev.strad/approver": approver });
const ACCEPT_BY = (approver: unknown) => ({ body: { action: "accept", content: { confirm: true }, _meta: approverMeta(approver) } });

let hostile: HostileServer;
let recorder: Awaited<ReturnType<typeof startSink>>;
/** An upstream that answers /fail/* with 503 and holds /hang/* open until its client leaves. */
let upstream: { server: Server; base: string; seen: string[] };
let calls: ReturnType<typeof fakeCalls>;
let env: Record<string, unknown>;
let log: MockInstance<typeof console.log>;
let n = 0;
const route = () => `a${++n}`;

beforeAll(async () => {
  hostile = await new HostileServer().start();
  recorder = await startSink();
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    if ((req.url ?? "").startsWith("/hang/")) return;
    req.resume();
    res.writeHead(503, { "content-type": "application/json" }).end('{"error":"upstream secret-body-xyz"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream = { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
});
afterAll(async () => {
  await hostile.stop();
  await recorder.stop();
  upstream.server.closeAllConnections();
  await new Promise((resolve) => upstream.server.close(resolve));
});
beforeEach(() => {
  recorder.requests.length = 0;
  calls = fakeCalls();
  env = { RECORDER_URL: recorder.base, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30", STRAD_KEEPALIVE_MS: "40" };
  store.messages = new Map([
    [1, "invoice march"],
    [2, "lunch"],
    [3, "invoice april"],
  ]);
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => {
  log.mockRestore();
});

/** Every audit line written so far in this test: each one console.log call with one JSON string, of one shape. */
function lines(): AuditLine[] {
  const out: AuditLine[] = [];
  for (const args of log.mock.calls) {
    const [first] = args;
    if (typeof first !== "string" || !first.includes('"event":"audit"')) continue;
    expect(args, "one audit line is one console.log call with one argument").toHaveLength(1);
    const line = JSON.parse(first) as AuditLine;
    expect(Object.keys(line).sort(), "every line has the same fields").toEqual(KEYS);
    expect(line.event).toBe("audit");
    expect(AUDIT_OUTCOMES).toContain(line.outcome);
    if (line.reason !== null) expect(Object.keys(AUDIT_REASONS)).toContain(line.reason);
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(line.time) - Date.now())).toBeLessThan(60_000);
    out.push(line);
  }
  return out;
}

/** The raw text of every audit line: what must never appear in any of them. */
function expectNoLeak(...values: string[]): void {
  const raw = log.mock.calls
    .map((args) => String(args[0]))
    .filter((text) => text.includes('"event":"audit"'))
    .join("\n");
  expect(raw).not.toMatch(/https?:\/\//);
  for (const value of [NONCE, EDGE_SECRET, "edge-id.access", "secret-body", ...values]) expect(raw).not.toContain(value);
}

/**
 * What varies by test: everything but the time, and but the card digest and the edit fields (docs/rules.md R-EDIT-6),
 * which test/bundles/kit/edits.unit.test.ts holds line by line.
 */
const shape = (l: AuditLine) => {
  const { time: _time, event: _event, card: _card, proposed: _proposed, edited: _edited, ...rest } = l;
  return rest;
};

/** A live call in the fake registry, with an ask channel naming its caller. */
function live(key: string, url: string, over: Record<string, unknown> = {}) {
  calls.live(CALLER, key);
  return askChannel(url, { call: { scope: CALLER, key, nonce: NONCE }, caller: CALLER, ...over });
}

const deleteInvoices = { mount: "kit", name: "delete_matching", args: { contains: "invoice" } } as const;
const invoicesFingerprint = () => fingerprint({ operation: "delete", target: { uids: { set: [1, 3] } } });
const base = { slug: "kit-test", mount: "kit", tool: "delete_matching", caller: CALLER } as const;

async function waitForLine(outcome: string): Promise<void> {
  for (let i = 0; i < 200 && !lines().some((l) => l.outcome === outcome); i++) await new Promise((r) => setTimeout(r, 10));
}

describe("a confirmed call that writes", () => {
  it("writes asked, approved, claimed and written, each naming the slug, tool, caller, request, approver and fingerprint", async () => {
    const name = route();
    const url = hostile.route(name, { poll: (_r, i) => (i < 2 ? { body: { action: "pending" } } : ACCEPT_BY("ada@example.com")) });
    const answer = await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env });
    expect(answer.text).toBe("deleted 2");
    const fp = await invoicesFingerprint();
    const common = { ...base, request: `req-${name}`, fingerprint: fp, reason: null, status: null };
    expect(lines().map(shape)).toEqual([
      { ...common, outcome: "asked", approver: null },
      { ...common, outcome: "approved", approver: "ada@example.com" },
      { ...common, outcome: "claimed", approver: "ada@example.com" },
      { ...common, outcome: "written", approver: "ada@example.com", status: 200 },
    ]);
    expectNoLeak(url, recorder.base, "invoice", "This will delete", "1, 3");
  });

  it("logs an approver the answer does not name as null, never a guess", async () => {
    const url = hostile.route(route(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env });
    expect(lines().map((l) => [l.outcome, l.approver])).toEqual([
      ["asked", null],
      ["approved", null],
      ["claimed", null],
      ["written", null],
    ]);
  });

  it("writes the same lines for an upstream tree's elicitation through the seam, bound to the question it asked", async () => {
    const name = route();
    const url = hostile.route(name, { poll: () => ACCEPT_BY("ada@example.com") });
    const answer = await callBundle(kitBundle, { mount: "kit", name: "vendored_send", args: { to: "bob@example.com" }, channel: live("n:1", url, { slug: "gmail-rw" }), env });
    expect(answer.text).toBe("sent");
    const fp = await fingerprint({ operation: "elicit:vendored_send", target: { message: "gmail-rw:\nSend mail to bob@example.com?\nSubject: hello" } });
    const common = { slug: "gmail-rw", mount: "kit", tool: "vendored_send", caller: CALLER, request: `req-${name}`, fingerprint: fp, reason: null, status: null };
    expect(lines().map(shape)).toEqual([
      { ...common, outcome: "asked", approver: null },
      { ...common, outcome: "approved", approver: "ada@example.com" },
      { ...common, outcome: "claimed", approver: "ada@example.com" },
      { ...common, outcome: "written", approver: "ada@example.com", status: 200 },
    ]);
    expectNoLeak(url, "bob@example.com", "Send mail");
  });

  it("writes approved with reason waived on a waived slug, where nobody is asked", async () => {
    calls.live(CALLER, "n:9");
    const channel = { slug: "agent-own", skip: true, ttlMs: 5_000, call: { scope: CALLER, key: "n:9", nonce: NONCE }, caller: CALLER };
    // The answer says nobody was asked (docs/rules.md R-CHAN-14).
    expect((await callBundle(kitBundle, { mount: "kit", name: "delete_matching", args: { contains: "lunch" }, channel, env })).text).toBe(`deleted 1${waivedLine("agent-own")}`);
    const fp = await fingerprint({ operation: "delete", target: { uids: { set: [2] } } });
    const common = { ...base, slug: "agent-own", request: null, approver: null, fingerprint: fp, status: null };
    expect(lines().map(shape)).toEqual([
      { ...common, outcome: "approved", reason: "waived" },
      { ...common, outcome: "claimed", reason: null },
      { ...common, outcome: "written", reason: null, status: 200 },
    ]);
  });
});

describe("no yes", () => {
  it.each<[string, Record<string, unknown>, string, string | null, string | null]>([
    ["a decline", { action: "decline", _meta: approverMeta("bob@example.com") }, "declined", null, "bob@example.com"],
    ["an accept without the confirm box", { action: "accept", content: { confirm: false }, _meta: approverMeta("bob@example.com") }, "declined", "confirm_unticked", "bob@example.com"],
    ["an action the protocol does not define", { action: "maybe", _meta: approverMeta("bob@example.com") }, "declined", "unrecognised_answer", null],
    ["a cancel (a person dismissed the prompt)", { action: "cancel", _meta: approverMeta("carol@example.com") }, "cancelled", "approval_cancelled", "carol@example.com"],
    ["an expiry, which nobody decides", { action: "expired", _meta: approverMeta("mallory@example.com") }, "expired", "approval_expired", null],
  ])("writes asked, then one line for %s, and nothing after it", async (_label, body, outcome, reason, approver) => {
    const name = route();
    const url = hostile.route(name, { poll: () => ({ body }) });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env });
    const common = { ...base, request: `req-${name}`, fingerprint: await invoicesFingerprint(), status: null };
    expect(lines().map(shape)).toEqual([
      { ...common, outcome: "asked", approver: null, reason: null },
      { ...common, outcome, approver, reason },
    ]);
    expect(recorder.requests).toEqual([]);
    expectNoLeak(url, "mallory");
  });

  it("writes expired with reason deadline when nobody answers before the channel's deadline", async () => {
    const name = route();
    const url = hostile.route(name, {});
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url, { ttlMs: 300 }), env });
    expect(lines().map((l) => [l.outcome, l.reason, l.request])).toEqual([
      ["asked", null, `req-${name}`],
      ["expired", "deadline", `req-${name}`],
    ]);
  });

  it("writes cancelled with reason caller_left when the caller leaves while the person decides", async () => {
    const name = route();
    const drop = new AbortController();
    const url = hostile.route(name, {
      poll: (_r, i) => {
        if (i === 2) drop.abort();
        return { body: { action: "pending" } };
      },
    });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env, signal: drop.signal });
    await waitForLine("cancelled");
    expect(lines().map((l) => [l.outcome, l.reason, l.request, l.caller])).toEqual([
      ["asked", null, `req-${name}`, CALLER],
      ["cancelled", "caller_left", `req-${name}`, CALLER],
    ]);
    expect(recorder.requests).toEqual([]);
  });
});

describe("refused before anyone is asked", () => {
  it.each<[string, unknown, Record<string, unknown>, string, { slug: string | null; caller: string | null }, string[]]>([
    ["no channel", undefined, {}, "no_channel", { slug: null, caller: null }, []],
    [
      "a channel the gateway refused",
      { slug: "echo-unseeded", refused: "confirmationHeaders need secret UNSEEDED_ACCESS_ID, which is not seeded", caller: CALLER },
      {},
      "channel_refused",
      { slug: "echo-unseeded", caller: CALLER },
      ["UNSEEDED_ACCESS_ID", "not seeded"],
    ],
    ["a malformed channel", { slug: "forged\nslug", url: 5, caller: CALLER }, {}, "malformed_channel", { slug: null, caller: null }, ["forged"]],
    ["ELICITATION_ENABLED=false", "ask", { ELICITATION_ENABLED: "false" }, "elicitation_disabled", { slug: "kit-test", caller: CALLER }, []],
    [
      "a container-wide ELICITATION_REQUEST_URL",
      "ask",
      { ELICITATION_REQUEST_URL: "http://127.0.0.1:1/container/tok-S3CRET/" },
      "container_elicitation_url",
      { slug: "kit-test", caller: CALLER },
      ["S3CRET"],
    ],
    ["a container-wide ELICITATION_POLL_URL", "ask", { ELICITATION_POLL_URL: "http://127.0.0.1:1/poll/tok-S3CRET/" }, "container_elicitation_url", { slug: "kit-test", caller: CALLER }, ["S3CRET"]],
  ])("with %s: one refused line with a reason from the fixed list, the gateway's words never copied", async (_label, channel, extraEnv, reason, who, leaks) => {
    const name = route();
    const url = hostile.route(name, { poll: () => ACCEPT_BY("ada@example.com") });
    const answer = await callBundle(kitBundle, { ...deleteInvoices, channel: channel === "ask" ? live("n:1", url) : channel, env: { ...env, ...extraEnv } });
    expect(answer.text).toMatch(/^Refused: /);
    expect(lines().map(shape)).toEqual([{ ...who, mount: "kit", tool: "delete_matching", outcome: "refused", reason, request: null, approver: null, fingerprint: null, status: null }]);
    expect(hostile.requestsTo(name)).toEqual([]);
    expectNoLeak(url, ...leaks);
  });

  it.each<[string, string, number[], string]>([
    ["a value that binds and is too long to show whole", "x".repeat(1001), [1], "prompt_value_too_long"],
    // Each line within its limits; together over the cap the kit and the approval service share (contract/elicitation.ts).
    ["a prompt larger than the approval service takes", "😀".repeat(1000), Array.from({ length: Math.ceil(MAX_PROMPT_BYTES / 8) }, (_, i) => 10_000 + i), "prompt_too_large"],
  ])("with %s: refused, with the fingerprint of what would have been asked, never the value", async (_label, to, uids, reason) => {
    const name = route();
    const url = hostile.route(name, {});
    const answer = await callBundle(kitBundle, { mount: "kit", name: "move_items", args: { uids, to, mode: "move" }, channel: live("n:1", url), env });
    expect(answer.text).toMatch(/no one was asked/);
    const fp = await fingerprint({ operation: "move", target: { uids: { set: uids }, from: "INBOX", to } });
    expect(lines().map(shape)).toEqual([{ ...base, tool: "move_items", outcome: "refused", reason, request: null, approver: null, fingerprint: fp, status: null }]);
    expectNoLeak(url, to.slice(0, 20), "INBOX");
  });

  it.each<[string, Parameters<HostileServer["route"]>[1], string, boolean]>([
    ["an HTTP error on the create", { create: () => ({ status: 502, body: "upstream secret-body-xyz" }) }, "approval_service_http", false],
    ["a redirect on the create", { create: () => ({ status: 307, headers: { location: "http://127.0.0.1:9/elsewhere" } }) }, "approval_service_redirect", false],
    ["an answer that is not JSON", { poll: () => ({ body: "not json secret-body-xyz" }) }, "approval_service_protocol", true],
  ])("when the approval service gives %s: refused with its reason, after asked only if the request was created", async (_label, handlers, reason, created) => {
    const name = route();
    const url = hostile.route(name, handlers);
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env });
    const request = created ? `req-${name}` : null;
    const common = { ...base, request, approver: null, fingerprint: await invoicesFingerprint(), status: null };
    expect(lines().map(shape)).toEqual([...(created ? [{ ...common, outcome: "asked", reason: null }] : []), { ...common, outcome: "refused", reason }]);
    expectNoLeak(url);
  });

  it("when the approval service cannot be reached: refused approval_service_unreachable, nobody asked", async () => {
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", "http://127.0.0.1:9/approvals/"), env });
    expect(lines().map((l) => [l.outcome, l.reason, l.request])).toEqual([["refused", "approval_service_unreachable", null]]);
  });
});

describe("refused after a yes", () => {
  it("writes refused target_changed when the target grew between the approval and the write", async () => {
    const name = route();
    const url = hostile.route(name, {
      poll: () => {
        store.messages.set(4, "invoice may");
        return ACCEPT_BY("ada@example.com");
      },
    });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env });
    expect(lines().map((l) => [l.outcome, l.reason, l.approver, l.fingerprint])).toEqual([
      ["asked", null, null, await invoicesFingerprint()],
      ["approved", null, "ada@example.com", await invoicesFingerprint()],
      ["refused", "target_changed", "ada@example.com", await invoicesFingerprint()],
    ]);
    expect(recorder.requests).toEqual([]);
  });

  it("writes refused claim_failed when the gateway has already ended the call", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com") });
    const channel = live("n:1", url);
    calls.end(CALLER, "n:1");
    await callBundle(kitBundle, { ...deleteInvoices, channel, env });
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["approved", null],
      ["refused", "claim_failed"],
    ]);
  });

  it("writes claimed once and refused claim_failed once when one call's approval reaches the bundle twice", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com") });
    const channel = live("n:5", url);
    await Promise.all([1, 2].map(() => callBundle(kitBundle, { ...deleteInvoices, channel, env })));
    const outcomes = lines().map((l) => `${l.outcome}${l.reason === null ? "" : `:${l.reason}`}`);
    expect(outcomes.filter((o) => o === "claimed")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "written")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "refused:claim_failed")).toHaveLength(1);
  });

  it("writes refused no_call_record when an approved call names no record to claim", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com") });
    await callBundle(kitBundle, { ...deleteInvoices, channel: askChannel(url, { call: undefined, caller: CALLER }), env });
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["approved", null],
      ["refused", "no_call_record"],
    ]);
  });

  it("writes refused not_approved for a write no guard declaration covers", async () => {
    await callBundle(kitBundle, { mount: "kit", name: "sneaky_write", args: {}, channel: live("n:1", "http://127.0.0.1:9/x/"), env });
    expect(lines().map(shape)).toEqual([{ ...base, tool: "sneaky_write", outcome: "refused", reason: "not_approved", request: null, approver: null, fingerprint: null, status: null }]);
  });
});

describe("a write that fails", () => {
  it("writes write_failed upstream_status with the status when the upstream answers an error", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com") });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env: { ...env, RECORDER_URL: `${upstream.base}/fail` } });
    expect(lines().map((l) => [l.outcome, l.reason, l.status])).toEqual([
      ["asked", null, null],
      ["approved", null, null],
      ["claimed", null, null],
      ["write_failed", "upstream_status", 503],
    ]);
    expectNoLeak(upstream.base);
  });

  it("writes write_failed upstream_unreachable when the write's request gets no answer", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com") });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env: { ...env, RECORDER_URL: "http://127.0.0.1:9" } });
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["approved", null],
      ["claimed", null],
      ["write_failed", "upstream_unreachable"],
    ]);
  });

  it("writes write_failed caller_left when the call drops while its write is in flight", async () => {
    const url = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com") });
    const drop = new AbortController();
    const before = upstream.seen.length;
    const answer = callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", url), env: { ...env, RECORDER_URL: `${upstream.base}/hang` }, signal: drop.signal });
    for (let i = 0; i < 200 && upstream.seen.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    drop.abort();
    await answer;
    await waitForLine("write_failed");
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["approved", null],
      ["claimed", null],
      ["write_failed", "caller_left"],
    ]);
  });
});

describe("the send gate's own lines", () => {
  const target: FingerprintInput = { operation: "send", target: { to: { set: ["ada@example.com"] } } };
  const ask = { kind: "ask" as const, channel: { slug: "gmail-rw", url: "http://127.0.0.1:9/", ttlMs: 1000, headers: {}, call: { scope: CALLER, key: "k", nonce: NONCE }, caller: CALLER } };
  function scopeWith(call: Partial<CallState>, signal = new AbortController().signal): CallScope {
    calls.live(CALLER, "k");
    const state: CallState = { requestId: 1, toolName: "send_email", channel: ask, deadline: undefined, progressToken: undefined, notify: async () => {}, ...call };
    return { mount: "gmail", signal, waitUntil: () => {}, env: { CALLS: calls.ns }, call: state };
  }
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => "none",
      (error: Error) => error.name,
    );

  it("writes refused target_mismatch for a write bound to another target, and approval_spent for a second bound write", async () => {
    const approved = { fingerprint: await fingerprint(target), approved: true };
    const other = { ...target, target: { to: { set: ["eve@example.com"] } } };
    await runInScope(scopeWith({ approval: approved }), async () => {
      expect(await refusal(gatedWrite(`${recorder.base}/send`, { method: "POST" }, { binds: other }))).toBe("GateRefusal");
      await (await gatedWrite(`${recorder.base}/send`, { method: "POST" }, { binds: target })).text();
      expect(await refusal(gatedWrite(`${recorder.base}/send`, { method: "POST" }, { binds: target }))).toBe("GateRefusal");
    });
    const common = { slug: "gmail-rw", mount: "gmail", tool: "send_email", caller: CALLER, request: null, approver: null, fingerprint: approved.fingerprint };
    expect(lines().map(shape)).toEqual([
      { ...common, outcome: "refused", reason: "target_mismatch", status: null },
      { ...common, outcome: "claimed", reason: null, status: null },
      { ...common, outcome: "written", reason: null, status: 200 },
      { ...common, outcome: "refused", reason: "approval_spent", status: null },
    ]);
    expectNoLeak(recorder.base, "eve@example.com", "ada@example.com");
  });

  it("writes write_failed request_not_built when a lazy request cannot be built, after the claim it won", async () => {
    const approved = { fingerprint: await fingerprint(target), approved: true };
    const failing = async (): Promise<RequestInit> => {
      throw new Error("token endpoint down: refresh-token-S3CRET");
    };
    await expect(runInScope(scopeWith({ approval: approved }), () => gatedWrite(`${recorder.base}/send`, failing))).rejects.toThrow(/token endpoint/);
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["claimed", null],
      ["write_failed", "request_not_built"],
    ]);
    expect(recorder.requests).toEqual([]);
    expectNoLeak("S3CRET", "token endpoint");
  });

  it("writes cancelled caller_left when the call was dropped before its write", async () => {
    const drop = new AbortController();
    drop.abort();
    const approved = { fingerprint: await fingerprint(target), approved: true };
    expect(await refusal(runInScope(scopeWith({ approval: approved }, drop.signal), () => gatedWrite(`${recorder.base}/send`, { method: "POST" })))).toBe("GateRefusal");
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([["cancelled", "caller_left"]]);
    expect(recorder.requests).toEqual([]);
  });
});

describe("refusals outside the guard's usual path", () => {
  it("writes refused url_elicitation when an upstream tree asks for URL-mode elicitation", async () => {
    const mcp = new McpServer({ name: "audit-test", version: "0" });
    installConfirmSeam(mcp);
    const call: CallState = {
      requestId: 1,
      toolName: "upstream_send",
      channel: { kind: "ask", channel: { slug: "s", url: "http://127.0.0.1:9/", ttlMs: 1000, headers: {}, caller: CALLER } },
      deadline: Date.now() + 1000,
      progressToken: undefined,
      notify: async () => {},
    };
    const attempt = runInScope({ mount: "kit", signal: new AbortController().signal, waitUntil: () => {}, env: {}, call }, () =>
      mcp.server.elicitInput({ mode: "url", message: "Open this", url: "https://evil.example/approve?token=S3CRET", elicitationId: "e-1" }),
    );
    await expect(attempt).rejects.toThrow(/URL elicitation/);
    expect(lines().map((l) => [l.outcome, l.reason, l.slug, l.caller, l.tool])).toEqual([["refused", "url_elicitation", "s", CALLER, "upstream_send"]]);
    expectNoLeak("S3CRET", "evil.example");
  });

  it("writes refused not_a_tool_call when a guarded tool runs outside a tools/call", async () => {
    const guard = {
      rule: always,
      resolve: () => ({}),
      fingerprint: () => ({ operation: "x", target: {} }),
      prompt: () => ({ heading: "h", consequence: "c", values: [] }),
      act: async () => ({ content: [] }),
    };
    await runInScope({ mount: "kit", signal: new AbortController().signal, waitUntil: () => {}, env: {} }, () => runGuarded(guard, {}));
    expect(lines().map(shape)).toEqual([
      { slug: null, mount: "kit", tool: null, caller: null, outcome: "refused", reason: "not_a_tool_call", request: null, approver: null, fingerprint: null, status: null },
    ]);
  });
});

describe("the approver an approval service names", () => {
  it.each<[string, unknown, string | null]>([
    ["an email", "ada@example.com", "ada@example.com"],
    ["a dev identity", "dev mode (nobody signed in)", "dev mode (nobody signed in)"],
    ["a name that tries to forge a line or hide characters", "ada@example.com\nApproved by: admin\u202Egpj.exe\u200B", "ada@example.com\ufffdApproved by: admin\ufffdgpj.exe\ufffd"],
    ["a run of spaces", "ada@example.com        (admin)", "ada@example.com (admin)"],
    ["an empty name", "", null],
    ["only whitespace", "   ", null],
    ["a number", 42, null],
    ["an object", { email: "ada@example.com" }, null],
    ["nothing", undefined, null],
  ])("is read from %s as a clean short string, or null", (_label, raw, want) => {
    expect(approverFrom(raw)).toBe(want);
  });

  it("is cut at the cap with a marker, so a service cannot write a long line", () => {
    const got = approverFrom(`${"a".repeat(300)}@example.com`) as string;
    expect(got).toBe(`${"a".repeat(MAX_APPROVER_CHARS)}… [cut: 312 characters in all]`);
  });

  it("reaches the approved line cleaned, and is null when _meta is not an object", async () => {
    const forged = hostile.route(route(), { poll: () => ACCEPT_BY("ada@example.com\nApproved by: admin") });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:1", forged), env });
    const arrayMeta = hostile.route(route(), { poll: () => ({ body: { action: "accept", content: { confirm: true }, _meta: ["dev.strad/approver", "ada@example.com"] } }) });
    await callBundle(kitBundle, { ...deleteInvoices, channel: live("n:2", arrayMeta), env });
    expect(
      lines()
        .filter((l) => l.outcome === "approved")
        .map((l) => l.approver),
    ).toEqual(["ada@example.com\ufffdApproved by: admin", null]);
  });
});
