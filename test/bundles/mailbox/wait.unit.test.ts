// Covers R-MAIL-8's "no socket waits on a person" against a scripted IMAP server (fake-imap.ts): each guarded tool's look closes its connection before the question goes out, no connection is open while the question is pending, and an accept still writes, on a connection of the write's own that looks at the target again first.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import handler from "../../../bundles/mailbox/mailbox.app";
import { useConnector } from "../../../bundles/mailbox/mailbox.session";
import { callBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { CALL, fakeRegistry } from "../pads/helpers";
import { FakeImap, fakeAccountEnv } from "./fake-imap";

let approvals: HostileServer;
beforeAll(async () => {
  approvals = await new HostileServer().start();
});
afterAll(async () => {
  await approvals?.stop();
});
// The audit lines are not what these tests read.
beforeEach(() => void vi.spyOn(console, "log").mockImplementation(() => {}));
afterEach(() => vi.restoreAllMocks());

let routes = 0;
/** An approval route that records how many IMAP connections are open at the question and at each poll, and answers `answer` on the third poll. */
function watching(imap: FakeImap, answer: "accept" | "decline") {
  const open: number[] = [];
  const url = approvals.route(`w${++routes}`, {
    create: () => {
      open.push(imap.open);
      return { status: 201, body: { requestId: `req-w${routes}` } };
    },
    poll: (_request, count) => {
      open.push(imap.open);
      if (count < 3) return { body: { action: "pending", content: null } };
      return { body: answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline", content: null } };
    },
  });
  return { url, open };
}

async function call(imap: FakeImap, name: string, args: Record<string, unknown>, url: string) {
  resetSwitchLog();
  const registry = fakeRegistry();
  registry.live(CALL.scope, CALL.key);
  const restore = useConnector(imap.connector());
  try {
    const channel = { slug: "mailbox", url, ttlMs: 10_000, headers: {}, call: CALL, caller: "dev-session" };
    return await callBundle(handler, { mount: "mailbox", name, args, channel, env: { ...fakeAccountEnv("mailbox"), STRAD_POLL_INTERVAL_MS: "20", CALLS: registry.ns } });
  } finally {
    restore();
  }
}

const world = () => new FakeImap().add("INBOX", { count: 3, uidValidity: 7 }).add("Archive", { count: 1, uidValidity: 8 });

const CASES = [
  {
    tool: "delete_messages",
    args: { mailbox: "INBOX", uids: [1, 2] },
    write: /^UID EXPUNGE 1:2$/,
    done: 'Deleted 2 messages from "INBOX" (UIDs 1, 2).',
    after: (imap: FakeImap) => expect(imap.state("INBOX")).toEqual({ 3: [] }),
  },
  {
    tool: "move_messages",
    args: { mailbox: "INBOX", uids: [1], destination: "Archive" },
    write: /^UID MOVE 1 "Archive"$/,
    done: 'Moved 1 message from "INBOX" to "Archive" (UIDs 1). Their UIDs in "Archive": 2 (UIDVALIDITY 8).',
    after: (imap: FakeImap) =>
      expect([imap.state("INBOX"), imap.state("Archive")]).toEqual([
        { 2: [], 3: [] },
        { 1: [], 2: [] },
      ]),
  },
  {
    tool: "manage_mailbox",
    args: { action: "delete", mailbox: "Archive" },
    write: /^DELETE "Archive"$/,
    done: 'Deleted mailbox "Archive" and the 1 message in it.',
    after: (imap: FakeImap) => expect(imap.state("Archive")).toBeUndefined(),
  },
];

describe("no IMAP connection while a person decides (R-MAIL-8)", () => {
  it.each(CASES)("$tool: no IMAP connection is open from the question to the answer, and an accept writes on a connection of its own that looks again first", async (c) => {
    const imap = world();
    const r = watching(imap, "accept");
    const result = await call(imap, c.tool, c.args, r.url);
    expect(result.text).toBe(c.done);
    // The question, and each of the three polls: not one connection open, logged in, while the person decides.
    expect(r.open).toEqual([0, 0, 0, 0]);
    expect(imap.open).toBe(0);
    // The look that built the card, the kit's look after the answer, and the write's own: each a connection of its own.
    expect(imap.connections).toBe(3);
    const third = imap.log.filter((l) => l.startsWith("#3 ")).map((l) => l.slice(3));
    const written = third.findIndex((l) => c.write.test(l));
    expect(written, third.join("\n")).toBeGreaterThan(0);
    // The write's connection looked at the target (SELECT or STATUS) before it wrote.
    expect(third.slice(0, written).some((l) => /^(SELECT|STATUS) /.test(l))).toBe(true);
    c.after(imap);
  });

  it.each(CASES)("$tool: a decline leaves no connection open and writes nothing", async (c) => {
    const imap = world();
    const r = watching(imap, "decline");
    const result = await call(imap, c.tool, c.args, r.url);
    expect(result.text).toBe("Not done: the person declined. Nothing was written.");
    expect(r.open).toEqual([0, 0, 0, 0]);
    expect(imap.open).toBe(0);
    expect(imap.connections).toBe(1);
    expect(imap.log.some((l) => c.write.test(l.slice(3)))).toBe(false);
    expect([imap.state("INBOX"), imap.state("Archive")]).toEqual([{ 1: [], 2: [], 3: [] }, { 1: [] }]);
  });
});
