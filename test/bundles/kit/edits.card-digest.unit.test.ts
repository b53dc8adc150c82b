// Covers R-EDIT-6 in Approval Flow (bundles/approval-flow), which asks through its own create and poll rather than the kit's askPerson: every audit line of a request from `asked` on, across request_approval, await_approval and apply, carries the digest of the card exactly as the approval service received it, never null.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { approvalFlowServer } from "../../../bundles/approval-flow/approval-flow.tools";
import manifest from "../../../bundles/approval-flow/bundle.json";
import { type AuditLine, cardDigest } from "../../../bundles/kit/audit";
import { serveBundle } from "../../../bundles/kit/mount";
import { memoryFlows } from "../approval-flow/helpers";
import { askChannel, callBundle, fakeCalls } from "./helpers/bundle";
import { HostileServer } from "./helpers/hostile-server";

const handler = serveBundle({ manifest, server: approvalFlowServer });
let approvals: HostileServer;
let log: MockInstance<typeof console.log>;
beforeAll(async () => {
  approvals = await new HostileServer().start();
});
afterAll(async () => {
  await approvals.stop();
});
beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => log.mockRestore());

const audits = (): AuditLine[] =>
  log.mock.calls
    .map((a) => String(a[0]))
    .filter((l) => l.includes('"event":"audit"'))
    .map((l) => JSON.parse(l) as AuditLine);

describe("Approval Flow's audit lines", () => {
  it.each([
    ["accept", { action: "accept", content: { confirm: true }, _meta: { "dev.strad/approver": "ada@example.com" } }, ["asked", "approved", "claimed", "written"]],
    ["decline", { action: "decline", content: null }, ["asked", "declined", "refused"]],
  ])("carry the digest of the card the service received on every line from asked on (%s)", async (_label, answer, outcomes) => {
    let created: { message: string; requestedSchema: Record<string, unknown> } | undefined;
    const url = approvals.route(`card-${_label}`, {
      create: (req) => {
        created = JSON.parse(req.body);
        return { status: 201, body: { requestId: JSON.parse(req.body)._meta["com.pulsemcp/request-id"] } };
      },
      poll: () => ({ body: answer }),
    });
    const flows = memoryFlows();
    const calls = fakeCalls();
    let key = 0;
    const call = async (tool: string, args: Record<string, unknown>) => {
      const ref = { scope: "dev-session", key: `n:${++key}`, nonce: "test-nonce-0123456789" };
      calls.live(ref.scope, ref.key);
      const channel = askChannel(url, { slug: "approval-flow", call: ref, caller: "dev-session" });
      const done = await callBundle(handler, { mount: "approval-flow", name: tool, args, channel, env: { FLOWS: flows.ns, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30" } });
      return JSON.parse(done.text) as Record<string, unknown>;
    };
    const asked = await call("request_approval", { purpose: "ship the release", payload: { version: "1.2.3" } });
    await call("await_approval", { elicitationId: asked.elicitationId, timeoutSeconds: 5 });
    await call("apply", { elicitationId: asked.elicitationId });
    const card = await cardDigest(created?.message ?? "", created?.requestedSchema ?? {});
    const lines = audits();
    expect(lines.map((l) => l.outcome)).toEqual(outcomes);
    expect(lines.map((l) => l.card)).toEqual(outcomes.map(() => card));
    expect(card).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a request the approval service refused carries no card: nobody was shown one", async () => {
    const url = approvals.route("card-refused", { create: () => ({ status: 500, body: {} }) });
    const flows = memoryFlows();
    const calls = fakeCalls();
    calls.live("dev-session", "n:x");
    const channel = askChannel(url, { slug: "approval-flow", call: { scope: "dev-session", key: "n:x", nonce: "test-nonce-0123456789" }, caller: "dev-session" });
    await callBundle(handler, { mount: "approval-flow", name: "request_approval", args: { purpose: "p", payload: 1 }, channel, env: { FLOWS: flows.ns, CALLS: calls.ns } });
    expect(audits().map((l) => [l.outcome, l.card])).toEqual([["refused", null]]);
  });
});
