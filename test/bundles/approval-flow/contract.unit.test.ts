// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the Approval Flow bundle: all four tools
// rest on the approval channel and refuse without a usable one, before anything is read or written. Then the flow
// against a stand-in approval service and an in-memory store: what the prompt shows, the TTL clamp, who may see a
// request, the review link only where the slug opts in, apply handing out the stored payload once, and a yes that
// lasts only until the expiry the person was shown (the e2e suite runs it through the real stack).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildFlowPrompt, checkPayload, formatPayload, MAX_PAYLOAD_BYTES, safeString } from "../../../bundles/approval-flow/approval-flow.prompt";
import { REVIEW_URL_SETTING, reviewUrlFrom } from "../../../bundles/approval-flow/approval-flow.review";
import type { FlowRecord } from "../../../bundles/approval-flow/approval-flow.store";
import { approvalFlowServer, CONFIRMED_TOOLS, TTL_SECONDS, ttlSeconds } from "../../../bundles/approval-flow/approval-flow.tools";
import { OTHER_SESSION, UNKNOWN_ID, WAIVER_REASON } from "../../../bundles/approval-flow/approval-flow.watch";
import manifest from "../../../bundles/approval-flow/bundle.json";
import { serveBundle } from "../../../bundles/kit/mount";
import { CALLER_VALUES_HEADING, PromptRefusal } from "../../../bundles/kit/prompt";
import { DECIDED_AT_META_KEY } from "../../../contract/channel";
import { META_REVIEW_URL } from "../../../contract/elicitation";
import { bundleContract } from "../kit/contract";
import { askChannel, callBundle, fakeCalls } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { memoryFlows } from "./helpers";

// The entry (approval-flow.app.ts) also exports the store's Durable Object class, which only workerd can load: the
// same handler, built here from the same manifest and factory.
const handler = serveBundle({ manifest, server: approvalFlowServer });
const mounts = manifest.mounts.map((path) => path.slice(1));
const ID = "00000000-0000-4000-8000-000000000000";

bundleContract({
  bundle: "approval-flow",
  handler,
  factory: approvalFlowServer,
  mounts,
  registry: CONFIRMED_TOOLS,
  tools: {
    request_approval: { asks: "always", args: { purpose: "contract", payload: { a: 1 } } },
    await_approval: { asks: "always", args: { elicitationId: ID } },
    check_status: { asks: "always", args: { elicitationId: ID } },
    apply: { asks: "always", args: { elicitationId: ID } },
  },
});

describe("refusals beyond the contract", () => {
  it("refuses every tool on a waived slug, and where the gateway named no caller, before the store or the approval service is touched", async () => {
    const outbound = vi.spyOn(globalThis, "fetch");
    const flows = memoryFlows();
    const ref = { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" };
    const channels = [
      { channel: { slug: "approval-flow", skip: true, ttlMs: 5_000, call: ref, caller: "dev-session" }, says: WAIVER_REASON },
      { channel: askChannel("http://127.0.0.1:9/approvals/", { slug: "approval-flow", call: ref }), says: "the gateway named no caller" },
    ];
    for (const { channel, says } of channels) {
      for (const [name, args] of [
        ["request_approval", { purpose: "p", payload: 1 }],
        ["await_approval", { elicitationId: ID }],
        ["check_status", { elicitationId: ID }],
        ["apply", { elicitationId: ID }],
      ] as const) {
        const answer = await callBundle(handler, { mount: "approval-flow", name, args, channel, env: { FLOWS: flows.ns } });
        expect(answer.isError).toBe(true);
        expect(answer.text).toMatch(/^Refused: /);
        expect(answer.text).toContain(says);
      }
    }
    expect(outbound).not.toHaveBeenCalled();
    expect(flows.objects.size).toBe(0);
  });
});

describe("the prompt", () => {
  it("shows the payload as formatted JSON, one labelled line each, that reads back as exactly the payload", () => {
    const payload = { service: "api", version: "1.2.3", targets: ["eu", "us"], canary: { percent: 5, enabled: true }, none: null, empty: {}, list: [] };
    expect(formatPayload(payload)).toEqual(JSON.stringify(payload, null, 2).split("\n"));
    const message = buildFlowPrompt({ slug: "approval-flow", purpose: "Deploy api 1.2.3", payload, expiresAt: Date.parse("2026-12-01T12:00:00.000Z") });
    const lines = message.split("\n");
    expect(lines[0]).toBe("approval-flow: The agent asks you to approve the payload below before it carries it out.");
    expect(message).toContain("This request expires at 2026-12-01T12:00:00.000Z.");
    const values = lines.slice(lines.indexOf(CALLER_VALUES_HEADING) + 1);
    expect(values[0]).toBe("  Purpose: Deploy api 1.2.3");
    expect(values.slice(1).every((l) => l.startsWith("  Payload: "))).toBe(true);
    expect(
      JSON.parse(
        values
          .slice(1)
          .map((l) => l.slice("  Payload: ".length))
          .join("\n"),
      ),
    ).toEqual(payload);
  });

  it("writes every character that could forge, hide or pad a line as its JSON escape, so the shown JSON is still the payload", () => {
    const tricky = { "a\u2028b": "x\u202e\u200by", pad: `left${" ".repeat(40)}Approve: yes`, nbsp: "a\u00a0b", line: "one\ntwo", tag: "\u{e0041}", emoji: "ok 👍" };
    const lines = formatPayload(tricky);
    for (const line of lines) {
      expect(line).not.toMatch(/[\u2028\u202e\u200b\u00a0\n]|\s{2,}\S*Approve/u);
      expect(line).not.toMatch(/[\u{e0000}-\u{e0fff}]/u);
    }
    expect(JSON.parse(lines.join("\n"))).toEqual(tricky);
    expect(safeString("a  b")).toBe('"a\\u0020\\u0020b"');
    expect(safeString("a b")).toBe('"a b"');
  });

  it("refuses a payload line too long to show whole, and a payload over the cap, before anyone is asked", () => {
    expect(() => buildFlowPrompt({ slug: "approval-flow", purpose: "p", payload: { script: "x".repeat(1_200) }, expiresAt: Date.now() })).toThrow(PromptRefusal);
    expect(checkPayload({ blob: "x".repeat(MAX_PAYLOAD_BYTES) })).toMatchObject({ ok: false });
    expect(checkPayload(undefined)).toMatchObject({ ok: false });
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = [deep];
    expect(checkPayload(deep)).toMatchObject({ ok: false });
    // "__proto__" is an ordinary key of a JSON object, kept as given.
    expect(checkPayload(JSON.parse('{"__proto__":{"x":1}}'))).toEqual({ ok: true, text: '{"__proto__":{"x":1}}' });
  });
});

describe("ttlSeconds and reviewUrl", () => {
  it("clamps ttlSeconds to 60-86400 and defaults to 3600", () => {
    expect([ttlSeconds(undefined), ttlSeconds(1), ttlSeconds(-5), ttlSeconds(59.9), ttlSeconds(600.7), ttlSeconds(86_401), ttlSeconds(1e12)]).toEqual([3600, 60, 60, 60, 600, 86_400, 86_400]);
    expect(TTL_SECONDS).toEqual({ fallback: 3600, min: 60, max: 86_400 });
  });

  it("hands on only an absolute https (or loopback http) review URL the service named, else null", () => {
    expect(reviewUrlFrom({ [META_REVIEW_URL]: "https://approvals.example.com/prompt/r/k" })).toBe("https://approvals.example.com/prompt/r/k");
    expect(reviewUrlFrom({ [META_REVIEW_URL]: "http://127.0.0.1:8788/prompt/r/k" })).toBe("http://127.0.0.1:8788/prompt/r/k");
    for (const bad of ["http://approvals.example.com/x", "javascript:alert(1)", "/prompt/r/k", "https://user:pw@approvals.example.com/x", `https://a.example/${"x".repeat(3000)}`, 42, undefined]) {
      expect(reviewUrlFrom({ [META_REVIEW_URL]: bad })).toBeNull();
    }
  });
});

describe("the flow against a stand-in approval service", () => {
  let approvals: HostileServer;
  beforeAll(async () => {
    approvals = await new HostileServer().start();
  });
  afterAll(async () => {
    await approvals.stop();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  /** The slug's opt-in to the review link (R-FLOW-9), as the roster renders `env: { REVIEW_URL_TO_AGENT: "true" }`. */
  const REVIEW_URL_ON = { [`APPROVAL_FLOW__${REVIEW_URL_SETTING}`]: "true" };

  let n = 0;
  function harness(poll: () => Record<string, unknown>, extraEnv: Record<string, unknown> = {}) {
    const name = `flow-${++n}`;
    const url = approvals.route(name, {
      create: (req) => ({ status: 201, body: { requestId: JSON.parse(req.body)._meta["com.pulsemcp/request-id"], _meta: { [META_REVIEW_URL]: `http://127.0.0.1:8788/prompt/${name}/key` } } }),
      poll: () => ({ body: poll() }),
    });
    const flows = memoryFlows();
    const calls = fakeCalls();
    let key = 0;
    const call = async (tool: string, args: Record<string, unknown>, over: { caller?: string; url?: string; slug?: string } = {}) => {
      const ref = { scope: over.caller ?? "dev-session", key: `n:${++key}`, nonce: "test-nonce-0123456789" };
      calls.live(ref.scope, ref.key);
      const channel = askChannel(over.url ?? url, { slug: over.slug ?? "approval-flow", call: ref, caller: over.caller ?? "dev-session" });
      const answer = await callBundle(handler, { mount: "approval-flow", name: tool, args, channel, env: { FLOWS: flows.ns, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30", ...extraEnv } });
      return {
        ...answer,
        json: (() => {
          try {
            return JSON.parse(answer.text) as Record<string, unknown>;
          } catch {
            return undefined;
          }
        })(),
      };
    };
    const stored = (id: string): FlowRecord | undefined => flows.objects.get("caller:dev-session")?.rows.get(id);
    return { name, url, call, flows, calls, stored };
  }

  it("request_approval answers pending with a review URL and the clamped expiry, and the prompt carries that expiry", async () => {
    const h = harness(() => ({ action: "pending" }), REVIEW_URL_ON);
    const before = Date.now();
    const r = await h.call("request_approval", { purpose: "Deploy", payload: { v: 1 }, ttlSeconds: 5 });
    expect(r.isError, r.text).toBe(false);
    expect(Object.keys(r.json ?? {})).toEqual(["elicitationId", "status", "reviewUrl", "expiresAt", "elicitationDelivered"]);
    expect(r.json).toMatchObject({ status: "pending", reviewUrl: `http://127.0.0.1:8788/prompt/${h.name}/key`, elicitationDelivered: false });
    const expiresAt = Date.parse(String(r.json?.expiresAt));
    expect(expiresAt - before).toBeGreaterThanOrEqual(60_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(60_000);
    const create = JSON.parse(approvals.requestsTo(h.name)[0]?.body ?? "{}");
    expect(create._meta["com.pulsemcp/expires-at"]).toBe(r.json?.expiresAt);
    expect(create._meta[META_REVIEW_URL]).toBe(true);
    expect(create.message).toContain('  Payload:   "v": 1');
  });

  it("apply hands out the stored payload once the person approved, once; a second apply says it was already applied", async () => {
    let answer: Record<string, unknown> = { action: "pending" };
    const h = harness(() => answer);
    const payload = { deploy: "api", version: "1.2.3", __note: "as given" };
    const { json } = await h.call("request_approval", { purpose: "Deploy", payload });
    const id = json?.elicitationId as string;
    expect((await h.call("apply", { elicitationId: id })).json).toMatchObject({ status: "pending" });
    answer = { action: "accept", content: { confirm: true }, _meta: { "dev.strad/approver": "ada@example.com" } };
    expect((await h.call("await_approval", { elicitationId: id })).json).toEqual({ status: "approved" });
    const first = await h.call("apply", { elicitationId: id });
    expect(first.text).toBe(`{"status":"applied","payload":${JSON.stringify(payload)}}`);
    const second = await h.call("apply", { elicitationId: id });
    expect(second.json).toMatchObject({ status: "applied" });
    expect(second.json).not.toHaveProperty("payload");
    expect(String(second.json?.message)).toMatch(/already applied/i);
    expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status: "applied" });
    // One claim per apply that reached the gate.
    expect(h.calls.claims.filter((c) => c.won)).toHaveLength(1);
  });

  it("a decline is rejected and cannot be applied; an unticked accept is rejected too", async () => {
    for (const answer of [{ action: "decline" }, { action: "accept", content: { confirm: false } }, { action: "cancel" }]) {
      const h = harness(() => answer);
      const id = (await h.call("request_approval", { purpose: "Deploy", payload: [1] })).json?.elicitationId as string;
      expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status: "rejected" });
      const applied = await h.call("apply", { elicitationId: id });
      expect(applied.isError).toBe(true);
      expect(applied.json).toMatchObject({ status: "rejected" });
    }
  });

  it("follows no redirect and names only the status of a failure, on the create and on a poll; a refused create keeps nothing", async () => {
    const flows = memoryFlows();
    const calls = fakeCalls();
    const env = { FLOWS: flows.ns, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30" };
    const redirect = approvals.route("redirect-create", { create: () => ({ status: 302, headers: { location: "http://127.0.0.1:9/steal" }, body: "secret-body-1" }) });
    const refused = await callBundle(handler, { mount: "approval-flow", name: "request_approval", args: { purpose: "p", payload: 1 }, channel: askChannel(redirect, { caller: "dev-session" }), env });
    expect(refused.text).toBe("Not done: the approval service answered with a redirect (HTTP 302), which is never followed. No approval request was made.");
    expect([...(flows.objects.get("caller:dev-session")?.rows.values() ?? [])]).toEqual([]);
    const failing = approvals.route("failing-poll", { poll: () => ({ status: 500, body: "secret-body-2" }) });
    const made = await callBundle(handler, { mount: "approval-flow", name: "request_approval", args: { purpose: "p", payload: 1 }, channel: askChannel(failing, { caller: "dev-session" }), env });
    const id = (JSON.parse(made.text) as { elicitationId: string }).elicitationId;
    const checked = await callBundle(handler, { mount: "approval-flow", name: "check_status", args: { elicitationId: id }, channel: askChannel(failing, { caller: "dev-session" }), env });
    expect(checked.isError).toBe(true);
    expect(checked.text).toBe("Not done: the approval service answered HTTP 500. The request's status is unknown for now; nothing was applied.");
  });

  it("another caller's id reads exactly as an unknown id, and another approval session is refused", async () => {
    const h = harness(() => ({ action: "accept", content: { confirm: true } }));
    const id = (await h.call("request_approval", { purpose: "Deploy", payload: { a: 1 } })).json?.elicitationId as string;
    for (const tool of ["await_approval", "check_status", "apply"]) {
      const other = await h.call(tool, { elicitationId: id }, { caller: "dev-session-2" });
      const unknown = await h.call(tool, { elicitationId: ID });
      expect(other.text).toBe(UNKNOWN_ID);
      expect(unknown.text).toBe(UNKNOWN_ID);
      const elsewhere = await h.call(tool, { elicitationId: id }, { url: approvals.route(`elsewhere-${tool}`, {}) });
      expect(elsewhere.text).toBe(`Refused: ${OTHER_SESSION}. Nothing was read or written.`);
    }
    // Nothing was decided for it meanwhile: the owner still applies it.
    expect((await h.call("apply", { elicitationId: id })).json).toMatchObject({ status: "applied", payload: { a: 1 } });
  });

  it("a request asked under one slug of the mount reads as unknown under another slug of it, for the same caller over the same approval session", async () => {
    const h = harness(() => ({ action: "accept", content: { confirm: true } }));
    const id = (await h.call("request_approval", { purpose: "Deploy", payload: { a: 1 } })).json?.elicitationId as string;
    expect(h.stored(id)?.slug).toBe("approval-flow");
    for (const tool of ["await_approval", "check_status", "apply"]) {
      const other = await h.call(tool, { elicitationId: id }, { slug: "approval-flow-brief" });
      expect(other.text, tool).toBe(UNKNOWN_ID);
    }
    // Nothing was decided or spent for it meanwhile: under its own slug it is applied, once.
    expect((await h.call("apply", { elicitationId: id })).json).toMatchObject({ status: "applied", payload: { a: 1 } });
  });

  it("issue 26: hands the agent the review link only where the slug opts in with its own REVIEW_URL_TO_AGENT, exactly true; otherwise reviewUrl is null and the service is never asked for one", async () => {
    const cases: [Record<string, unknown>, boolean][] = [
      [REVIEW_URL_ON, true],
      [{}, false],
      // A bare name is the bundle's, set by any slug of it: never read.
      [{ [REVIEW_URL_SETTING]: "true" }, false],
      [{ [`APPROVAL_FLOW_BRIEF__${REVIEW_URL_SETTING}`]: "true" }, false],
      [{ [`APPROVAL_FLOW__${REVIEW_URL_SETTING}`]: "TRUE" }, false],
      [{ [`APPROVAL_FLOW__${REVIEW_URL_SETTING}`]: "1" }, false],
      [{ [`APPROVAL_FLOW__${REVIEW_URL_SETTING}`]: " true" }, false],
    ];
    for (const [env, on] of cases) {
      const h = harness(() => ({ action: "pending" }), env);
      const r = await h.call("request_approval", { purpose: "Deploy", payload: { v: 1 } });
      expect(r.isError, r.text).toBe(false);
      expect(r.json?.reviewUrl, JSON.stringify(env)).toBe(on ? `http://127.0.0.1:8788/prompt/${h.name}/key` : null);
      const create = JSON.parse(approvals.requestsTo(h.name)[0]?.body ?? "{}");
      expect(Object.hasOwn(create._meta, META_REVIEW_URL), JSON.stringify(env)).toBe(on);
    }
  });

  describe("issue 26: a yes lasts only as long as the person was told", () => {
    const T = Date.parse("2026-12-01T12:00:00.000Z");
    const accept = (decidedAt?: number) => ({
      action: "accept",
      content: { confirm: true },
      _meta: { "dev.strad/approver": "ada@example.com", ...(decidedAt === undefined ? {} : { [DECIDED_AT_META_KEY]: new Date(decidedAt).toISOString() }) },
    });
    /** A request made at T (ttlSeconds 60), with the clock then set by `at`: only Date is faked, timers run. */
    async function requested(poll: () => Record<string, unknown>) {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(T);
      const h = harness(poll);
      const asked = await h.call("request_approval", { purpose: "Deploy", payload: { v: 1 }, ttlSeconds: 60 });
      const expiresAt = Date.parse(String(asked.json?.expiresAt));
      expect(expiresAt).toBe(T + 60_000);
      const create = JSON.parse(approvals.requestsTo(h.name)[0]?.body ?? "{}");
      expect(create.message).toContain(`This request expires at ${new Date(expiresAt).toISOString()}. Your approval lasts until then: the agent cannot carry the payload out after it.`);
      return { h, id: asked.json?.elicitationId as string, expiresAt, at: (ms: number) => vi.setSystemTime(ms) };
    }

    it.each([
      [-1, "hands the payload out"],
      [0, "is refused: the approval ran out"],
      [1, "is refused: the approval ran out"],
    ])("issue 26: apply %i ms from expiresAt, of an approval read in time, %s", async (offset, outcome) => {
      const handed = outcome === "hands the payload out";
      const { h, id, expiresAt, at } = await requested(() => accept());
      expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status: "approved" });
      at(expiresAt + offset);
      const applied = await h.call("apply", { elicitationId: id });
      if (handed) {
        expect(applied.text).toBe('{"status":"applied","payload":{"v":1}}');
        expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status: "applied" });
        return;
      }
      expect(applied.isError).toBe(true);
      expect(applied.json).toEqual({
        status: "expired",
        message: `Not applied: the approval ran out at ${new Date(expiresAt).toISOString()}, the expiry the person was shown, before it was applied. Nothing is handed out for it; ask for approval again.`,
      });
      // Refused before the gate: no claim was spent, the store still holds it approved and unapplied, and it reads as expired.
      expect(h.calls.claims).toEqual([]);
      expect(h.stored(id)).toMatchObject({ status: "approved", appliedAt: null });
      expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status: "expired" });
      expect((await h.call("await_approval", { elicitationId: id })).json).toEqual({ status: "expired" });
    });

    it.each([
      [-1, "approved"],
      [0, "expired"],
      [1, "expired"],
    ])("issue 26: an accept first read %i ms from expiresAt, with no decided-at from the service, is %s", async (offset, status) => {
      const { h, id, expiresAt, at } = await requested(() => accept());
      at(expiresAt + offset);
      expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status });
      expect(h.stored(id)?.status).toBe(status);
      const applied = await h.call("apply", { elicitationId: id });
      if (status === "approved") expect(applied.json).toEqual({ status: "applied", payload: { v: 1 } });
      else expect(applied.json).toMatchObject({ status: "expired", message: expect.stringMatching(/^Not applied: the request expired before anyone approved it/) });
    });

    it.each([
      [-1, "approved"],
      [0, "expired"],
      [1, "expired"],
    ])("issue 26: an accept read after expiresAt whose decided-at is %i ms from it was decided in time only before it: recorded %s, and never applied", async (offset, recorded) => {
      const { h, id, expiresAt, at } = await requested(() => accept(expiresAt + offset));
      at(expiresAt + 5_000);
      // Whatever was decided, the window has closed: the agent is told expired, and nothing is handed out.
      expect((await h.call("check_status", { elicitationId: id })).json).toEqual({ status: "expired" });
      expect(h.stored(id)).toMatchObject({ status: recorded, approver: recorded === "approved" ? "ada@example.com" : null });
      const applied = await h.call("apply", { elicitationId: id });
      expect(applied.isError).toBe(true);
      expect(applied.json).toMatchObject({
        status: "expired",
        message: recorded === "approved" ? expect.stringMatching(/^Not applied: the approval ran out at /) : expect.stringMatching(/^Not applied: the request expired before anyone approved it/),
      });
      expect(applied.text).not.toContain('"payload"');
    });
  });
});
