// Covers what a mailbox approval binds, against a real Dovecot (test/servers/dovecot/): a person's yes given through a
// stand-in approval service is the fingerprint of the exact UID set and both mailboxes, and the send gate lets no other
// target through under it; a destination recreated between the question and the action stops a move; an expired
// two-call token renames nothing (docs/rules.md R-MAIL-2).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { AuditLine } from "../../../bundles/kit/audit";
import { type FingerprintInput, fingerprint } from "../../../bundles/kit/fingerprint";
import { GateRefusal, gatedWrite } from "../../../bundles/kit/gate";
import { type CallScope, runInScope } from "../../../bundles/kit/scope";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import handler from "../../../bundles/mailbox/mailbox.app";
import { deleteFingerprint, type MessagesTarget, type TransferTarget, transferFingerprint } from "../../../bundles/mailbox/mailbox.guard";
import { TOKEN_TTL_MS } from "../../../contract/call-registry";
// @ts-expect-error: plain ESM helper without types
import { message } from "../../servers/dovecot/imap-admin.mjs";
import { callBundle, fakeCalls } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { CALL, fakeRegistry } from "../pads/helpers";
import { accountEnv, useTestDovecot } from "./helpers";

let approvals: HostileServer;
let log: MockInstance<typeof console.log>;
const mail = useTestDovecot();
const dovecot = mail.dovecot;
const admin = mail.admin;
beforeAll(async () => {
  approvals = await new HostileServer().start();
});
afterAll(async () => {
  await approvals?.stop();
});
beforeEach(() => {
  resetSwitchLog();
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => log.mockRestore());

let boxes = 0;
/** A fresh mailbox of `n` messages in carol's account; its name. */
async function freshMailbox(n: number, name = `A${++boxes}-${Date.now().toString(36)}`): Promise<string> {
  await admin(async (a) => {
    await a.create(name);
    for (let i = 1; i <= n; i++) await a.append(name, message({ subject: `Message ${i}`, text: "Body.\r\n" }));
  });
  return name;
}
const uidsIn = (name: string) => admin(async (a) => (await a.messages(name)).map((m) => m.uid));
const validityOf = (name: string) => admin(async (a) => (await a.status(name)).uidValidity);

let routes = 0;
/** An approval route answering accept, after `before` runs (the world changing while the person reads). */
function accepting(before?: () => Promise<void>): string {
  return approvals.route(`p${++routes}`, {
    poll: async () => {
      await before?.();
      return { body: { action: "accept", content: { confirm: true } } };
    },
  });
}

const env = (registry: ReturnType<typeof fakeRegistry>) => ({ ...accountEnv("mailbox", dovecot(), "carol"), STRAD_POLL_INTERVAL_MS: "20", CALLS: registry.ns });
const askChannel = (url: string) => ({ slug: "mailbox", url, ttlMs: 10_000, headers: {}, call: CALL, caller: "dev-session" });

async function call(name: string, args: Record<string, unknown>, channel: Record<string, unknown>, registry = fakeRegistry()) {
  registry.live(CALL.scope, CALL.key);
  return callBundle(handler, { mount: "mailbox", name, args, channel, env: env(registry) });
}

const audits = (): AuditLine[] =>
  log.mock.calls
    .map((a) => String(a[0]))
    .filter((l) => l.includes('"event":"audit"'))
    .map((l) => JSON.parse(l) as AuditLine);

/** The fingerprint the person's yes was given for, from the call's `approved` audit line. */
function approvedFingerprint(): string {
  const approved = audits().find((l) => l.outcome === "approved");
  expect(approved?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  return approved?.fingerprint as string;
}

/**
 * What the send gate answers, in a call holding a yes for `approved`, to writes bound to each of `targets` in turn:
 * the refusal's code, or "written". The call is live in its registry, so the first write the gate lets through wins
 * the claim.
 */
async function gateAnswers(approved: string, targets: FingerprintInput[]): Promise<{ answers: string[]; written: number }> {
  const calls = fakeCalls();
  calls.live("c", "k");
  const scope: CallScope = {
    mount: "mailbox",
    signal: new AbortController().signal,
    waitUntil: () => {},
    env: { CALLS: calls.ns },
    call: {
      requestId: 1,
      toolName: "move_messages",
      channel: { kind: "ask", channel: { slug: "mailbox", url: "http://127.0.0.1:9/", ttlMs: 1000, headers: {}, call: { scope: "c", key: "k", nonce: "test-nonce-0123456789" } } },
      deadline: undefined,
      progressToken: undefined,
      notify: async () => {},
      approval: { fingerprint: approved, approved: true },
    },
  };
  let written = 0;
  const door = async () => {
    written++;
    return new Response(null, { status: 204 });
  };
  const answers: string[] = [];
  for (const binds of targets) {
    try {
      await runInScope(scope, () => gatedWrite("imap://mailbox/op", { method: "POST" }, { binds, needsApproval: true, fetch: door }));
      answers.push("written");
    } catch (error) {
      answers.push(error instanceof GateRefusal ? error.code : `other: ${String(error)}`);
    }
  }
  return { answers, written };
}

describe("a person's yes binds the exact UID set and both mailboxes", () => {
  it("a yes for a copy of [1] into Archive is the fingerprint of that copy, and the gate lets neither [1, 2] nor Public/Shared through under it", async () => {
    const box = await freshMailbox(2);
    const archived = (await uidsIn("Archive")).length;
    const result = await call("move_messages", { mailbox: box, uids: [1], destination: "Archive", mode: "copy" }, askChannel(accepting()));
    expect(result.text).toMatch(new RegExp(`^Copied 1 message from "${box}" to "Archive" \\(UIDs 1\\)\\.`));
    expect((await uidsIn("Archive")).length).toBe(archived + 1);
    const approved = approvedFingerprint();
    // The target the tool resolved, from what Dovecot says: the yes is its fingerprint, not only the arguments'.
    const exact: TransferTarget = {
      mount: "mailbox",
      mailbox: box,
      uidValidity: await validityOf(box),
      uids: [1],
      present: [1],
      mode: "copy",
      destination: "Archive",
      destinationValidity: await validityOf("Archive"),
    };
    expect(await fingerprint(transferFingerprint(exact))).toBe(approved);
    const publicValidity = await validityOf("Public/Shared");
    const { answers, written } = await gateAnswers(approved, [
      transferFingerprint({ ...exact, uids: [1, 2], present: [1, 2] }),
      transferFingerprint({ ...exact, destination: "Public/Shared", destinationValidity: publicValidity }),
      // Another folder may have the same UIDVALIDITY (it is per mailbox): the name is bound, not the number alone.
      transferFingerprint({ ...exact, destination: "Public/Shared" }),
      transferFingerprint({ ...exact, mode: "move" }),
      transferFingerprint(exact),
    ]);
    expect(answers).toEqual(["TARGET_MISMATCH", "TARGET_MISMATCH", "TARGET_MISMATCH", "TARGET_MISMATCH", "written"]);
    expect(written).toBe(1);
  });

  it("a yes for deleting [1] is the fingerprint of that delete, and the gate lets neither [1, 2] nor the same UID in another mailbox through under it", async () => {
    const box = await freshMailbox(2);
    const other = await freshMailbox(2);
    const uidValidity = await validityOf(box);
    const result = await call("delete_messages", { mailbox: box, uids: [1] }, askChannel(accepting()));
    expect(result.text).toBe(`Deleted 1 message from "${box}" (UIDs 1).`);
    expect(await uidsIn(box)).toEqual([2]);
    const approved = approvedFingerprint();
    const exact: MessagesTarget = { mount: "mailbox", mailbox: box, uidValidity, uids: [1], present: [1] };
    expect(await fingerprint(deleteFingerprint(exact))).toBe(approved);
    const { answers, written } = await gateAnswers(approved, [
      deleteFingerprint({ ...exact, uids: [1, 2], present: [1, 2] }),
      deleteFingerprint({ ...exact, mailbox: other }),
      deleteFingerprint({ ...exact, mailbox: other, uidValidity: await validityOf(other) }),
      deleteFingerprint(exact),
    ]);
    expect(answers).toEqual(["TARGET_MISMATCH", "TARGET_MISMATCH", "TARGET_MISMATCH", "written"]);
    expect(written).toBe(1);
  });

  it("moves nothing when the destination is recreated (a new UIDVALIDITY, the same name) between the question and the action, and says so", async () => {
    const box = await freshMailbox(2);
    const destination = await freshMailbox(0);
    const before = await validityOf(destination);
    const url = accepting(async () => {
      await dovecot().recreate("carol", destination, { messages: 0 });
    });
    const result = await call("move_messages", { mailbox: box, uids: [1, 2], destination }, askChannel(url));
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Not done: the target changed after it was approved \(.*\), so the approval does not cover it\. Nothing was written\.$/);
    const after = await validityOf(destination);
    expect(after).not.toBe(before);
    // The answer names what changed: the destination's UIDVALIDITY, approved and now.
    expect(result.text).toContain(`into "${destination}" at UIDVALIDITY ${before}; now:`);
    expect(result.text).toContain(`into "${destination}" at UIDVALIDITY ${after}), so`);
    expect(await uidsIn(box)).toEqual([1, 2]);
    expect(await uidsIn(destination)).toEqual([]);
    expect(audits().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["approved", null],
      ["refused", "target_changed"],
    ]);
  });
});

describe("manage_mailbox rename on the two-call token", () => {
  it("acts on nothing with an expired token: the mailbox keeps its name and its messages", async () => {
    const box = await freshMailbox(2);
    const to = `${box}-renamed`;
    const registry = fakeRegistry();
    const url = accepting();
    const args = { action: "rename", mailbox: box, new_name: to };
    const first = await call("manage_mailbox", args, askChannel(url), registry);
    const token = /^[A-Za-z0-9_-]{43}$/m.exec(first.text)?.[0] as string;
    expect(token).toBeDefined();
    registry.clock.offset = TOKEN_TTL_MS.max + 1;
    const second = await call("manage_mailbox", { ...args, two_call_token: token }, askChannel(url), registry);
    expect(second.isError).toBe(true);
    expect(second.text).toBe("Not done: the two_call_token expired; call again without it for a new one. Nothing was written.");
    const names = await admin((a) => a.mailboxes());
    expect(names).toContain(box);
    expect(names).not.toContain(to);
    expect(await uidsIn(box)).toEqual([1, 2]);
  });
});
