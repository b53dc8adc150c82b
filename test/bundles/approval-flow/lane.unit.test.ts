// Covers the Approval Flow bundle beside the kit's lane (bundles/kit/lane.ts): every tool is a confirmed one; the lane
// takes check_status calls whose arguments check (it asks nobody and sends no notification) and no other tool's, with
// or without a channel, valid or invalid; the bundle answers each call byte for byte as the SDK's path does, a request
// pending, approved, rejected or made on another session included; and every tool's schema is built once per isolate.
import type { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { approvalFlowServer } from "../../../bundles/approval-flow/approval-flow.tools";
import manifest from "../../../bundles/approval-flow/bundle.json";
import { serveBundle } from "../../../bundles/kit/mount";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import { askChannel } from "../kit/helpers/bundle";
import { answer, both, call, envelope, list, params, type Raw, withBody } from "../kit/helpers/lane";
import { memoryFlows } from "./helpers";

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

const lanes = { on: serveBundle({ manifest, server: approvalFlowServer }), off: serveBundle({ manifest, server: approvalFlowServer }, { fastLane: false }) };
const ID = "00000000-0000-4000-8000-000000000000";
// A store that holds nothing (so every id is unknown), and an approval service on a closed loopback port: a call that
// reaches it fails at once, the same way on both paths, and nothing leaves the machine.
const env: Record<string, unknown> = { FLOWS: memoryFlows().ns };
const ref = { scope: "dev-session", key: "n:1", nonce: "test-nonce-0123456789" };
const ASK = askChannel("http://127.0.0.1:9/approvals/", { slug: "approval-flow", call: ref, caller: "dev-session" });
const SKIP = { slug: "approval-flow", skip: true, ttlMs: 5_000, call: ref, caller: "dev-session" };
/** The call as the gateway sends it to a gated mount: with the approval channel in its _meta. */
const onChannel = (raw: Raw, channel: Record<string, unknown>, label: string): Raw =>
  withBody(raw, (b) => ({ ...b, params: { ...params(b), _meta: envelope({ [CHANNEL_META_KEY]: channel }) } }), `${raw.label} ${label}`);

const PATH = "/approval-flow";
const CALLS: Raw[] = [
  call(PATH, "request_approval", { purpose: "Deploy", payload: { v: 1 } }),
  call(PATH, "request_approval", { purpose: "", payload: 1 }),
  call(PATH, "request_approval", { payload: 1 }),
  call(PATH, "await_approval", { elicitationId: ID }),
  call(PATH, "await_approval", {}),
  call(PATH, "check_status", { elicitationId: ID }),
  call(PATH, "check_status", { elicitationId: "x".repeat(129) }),
  call(PATH, "apply", { elicitationId: ID }),
  call(PATH, "apply", { elicitationId: 1 }),
  call(PATH, "nope", {}),
  onChannel(call(PATH, "request_approval", { purpose: "Deploy", payload: { v: 1 } }), ASK, "on an ask channel"),
  onChannel(call(PATH, "await_approval", { elicitationId: ID }), ASK, "on an ask channel"),
  onChannel(call(PATH, "check_status", { elicitationId: ID }), ASK, "on an ask channel"),
  onChannel(call(PATH, "apply", { elicitationId: ID }), SKIP, "on a waived slug"),
];

describe("the Approval Flow bundle beside the lane", () => {
  it("answers every call as the SDK does, and the lane takes only check_status calls whose arguments check", async () => {
    await answer(lanes.on, list(PATH), env);
    const taken: string[] = [];
    for (const raw of CALLS) {
      const { on, off } = await both(raw, lanes, env);
      expect(on.text, raw.label).toBe(off.text);
      expect(off.servers, raw.label).toBe(1);
      if (on.servers === 0) taken.push(raw.label);
    }
    expect(taken).toEqual([(CALLS[5] as Raw).label, (CALLS[12] as Raw).label]);
    // The calls ran their tools: refused without a channel, and an unknown id on one.
    expect((await both(CALLS[0] as Raw, lanes, env)).on.text).toContain("Refused: ");
    expect((await both(CALLS[12] as Raw, lanes, env)).on.text).toContain("Not found: ");
  });

  it("builds each tool's schema once per isolate: two requests' servers hold the same schema objects", () => {
    const tools = (server: McpServer) => (server as unknown as { _registeredTools: Record<string, { inputSchema: unknown }> })._registeredTools;
    const [a, b] = [approvalFlowServer("approval-flow", env), approvalFlowServer("approval-flow", env)];
    expect(Object.keys(tools(a))).toEqual(["request_approval", "await_approval", "check_status", "apply"]);
    for (const name of Object.keys(tools(a))) {
      expect(tools(a)[name]?.inputSchema, name).toBeDefined();
      expect(tools(a)[name]?.inputSchema, name).toBe(tools(b)[name]?.inputSchema);
    }
  });

  it("answers check_status of a request pending, approved, rejected or made on another session as the SDK does, on the lane", async () => {
    // An approval service that takes every prompt and answers each poll as `decisions` says for its request.
    const SERVICE = "https://approvals.test/s/session-1/";
    const decisions = new Map<string, Record<string, unknown>>();
    const polls: string[] = [];
    vi.stubGlobal("fetch", async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!url.startsWith("https://approvals.test/")) throw new TypeError(`unexpected fetch ${url}`);
      if ((init?.method ?? "GET") === "POST") return Response.json({});
      polls.push(url);
      return Response.json(decisions.get(url.slice(url.lastIndexOf("/") + 1)) ?? { action: "pending", content: null });
    });
    const channel = askChannel(SERVICE, { slug: "approval-flow", call: ref, caller: "dev-session" });
    const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf("\n") + 1)) as { result: { content: { text: string }[] } };
    /** Asks for approval on the SDK's path (the lane never takes it) and returns the elicitationId and the request id it polls. */
    const requested = async (): Promise<{ id: string; requestId: string }> => {
      const before = polls.length;
      const made = await answer(lanes.off, onChannel(call(PATH, "request_approval", { purpose: "Deploy", payload: { v: 1 } }), channel, "on the service"), env);
      const id = (JSON.parse(bodyOf(made).result.content[0]?.text as string) as { elicitationId: string }).elicitationId;
      // The first check_status polls the request by the id the prompt was made under.
      const first = await both(onChannel(call(PATH, "check_status", { elicitationId: id }), channel, "pending"), lanes, env);
      expect(first.on.text).toBe(first.off.text);
      expect(first.on.servers).toBe(0);
      expect(JSON.parse(bodyOf(first.on.text).result.content[0]?.text as string)).toEqual({ status: "pending" });
      const polled = polls.slice(before);
      expect(polled).toHaveLength(2);
      return { id, requestId: (polled[0] as string).slice((polled[0] as string).lastIndexOf("/") + 1) };
    };
    const statusOf = async (id: string, over: Record<string, unknown> = channel) => {
      const { on, off } = await both(onChannel(call(PATH, "check_status", { elicitationId: id }), over, "settled"), lanes, env);
      expect(on.text).toBe(off.text);
      expect(on.servers).toBe(0);
      return bodyOf(on.text).result.content[0]?.text as string;
    };
    const yes = await requested();
    decisions.set(yes.requestId, { action: "accept", content: { confirm: true } });
    expect(JSON.parse(await statusOf(yes.id))).toEqual({ status: "approved" });
    const no = await requested();
    decisions.set(no.requestId, { action: "decline", content: null });
    expect(JSON.parse(await statusOf(no.id))).toEqual({ status: "rejected" });
    // The same caller's request, asked after over another approval session: refused on both paths alike.
    expect(await statusOf(yes.id, askChannel("https://approvals.test/s/session-2/", { slug: "approval-flow", call: ref, caller: "dev-session" }))).toMatch(/^Refused: /);
  });
});
