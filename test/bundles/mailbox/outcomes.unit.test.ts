// Covers what a mailbox write says when it did not complete, against a scripted IMAP server (fake-imap.ts) that refuses, or never answers, on cue: "Nothing was changed" only where the server's own answer says so; a refused expunge takes the \Deleted mark off exactly the UIDs the call marked, and says what is left when that fails too; a timeout or a write done in part says what may have changed; never the server's text or the password.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import handler from "../../../bundles/mailbox/mailbox.app";
import { COMMAND_TIMEOUT_MS } from "../../../bundles/mailbox/mailbox.connection";
import { useConnector } from "../../../bundles/mailbox/mailbox.session";
import { callBundle } from "../kit/helpers/bundle";
import { CALL, fakeRegistry } from "../pads/helpers";
import { FAKE_PASSWORD, FakeImap, fakeAccountEnv, SERVER_TEXT } from "./fake-imap";

beforeEach(() => {
  resetSwitchLog();
  vi.spyOn(console, "log").mockImplementation(() => {});
  // The client's command timeout is a real 20 s: a command the server never answers moves the clock past it, at once.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"], shouldAdvanceTime: true });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** INBOX with three messages (UIDVALIDITY 7), Archive with one, and a \Drafts mailbox. */
function world(flags: (uid: number) => string[] = () => []): FakeImap {
  const imap = new FakeImap()
    .add("INBOX", { count: 3, uidValidity: 7, flags })
    .add("Archive", { count: 1, uidValidity: 8 })
    .add("Drafts", { listFlags: ["\\Drafts"] });
  imap.onHang = () => setImmediate(() => vi.advanceTimersByTime(COMMAND_TIMEOUT_MS));
  return imap;
}

/** The waiver's channel: the kit answers for nobody, so a guarded tool acts without a question. */
const WAIVED = { slug: "mailbox", skip: true, ttlMs: 120_000, call: CALL, caller: "dev-session" };

async function call(imap: FakeImap, name: string, args: Record<string, unknown>, options: { channel?: unknown; registry?: ReturnType<typeof fakeRegistry> } = {}) {
  const registry = options.registry ?? fakeRegistry();
  registry.live(CALL.scope, CALL.key);
  const restore = useConnector(imap.connector());
  try {
    const answer = await callBundle(handler, { mount: "mailbox", name, args, channel: options.channel, env: { ...fakeAccountEnv("mailbox"), CALLS: registry.ns } });
    // No answer echoes the server's text or holds the password, and every connection is closed.
    expect(answer.text).not.toContain(SERVER_TEXT);
    expect(answer.text).not.toContain(FAKE_PASSWORD);
    expect(imap.open).toBe(0);
    const first = (answer.result.content as { text: string }[] | undefined)?.[0]?.text;
    return { ...answer, first };
  } finally {
    restore();
  }
}
const commands = (imap: FakeImap) => imap.log.map((l) => l.replace(/^#\d+ /, ""));

describe("delete_messages when the expunge fails", () => {
  it("takes the \\Deleted mark off exactly the UIDs it marked when UID EXPUNGE is refused, and says nothing was changed", async () => {
    // UID 2 was marked \Deleted by another client before the call: it keeps its mark.
    const imap = world((uid) => (uid === 2 ? ["\\Deleted"] : [])).fault({ when: /^UID EXPUNGE/, answer: "no" });
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    expect(r.isError).toBe(true);
    expect(r.first).toBe("Not done: the IMAP server refused UID EXPUNGE [SERVERBUG]; the \\Deleted mark set for it was taken off again. Nothing was changed.");
    expect(imap.state("INBOX")).toEqual({ 1: [], 2: ["\\Deleted"], 3: [] });
    expect(commands(imap).filter((c) => c.startsWith("UID STORE"))).toEqual(["UID STORE 1 +FLAGS.SILENT (\\Deleted)", "UID STORE 1 -FLAGS.SILENT (\\Deleted)"]);
  });

  it("says the messages stay marked \\Deleted when taking the mark off is refused too", async () => {
    const imap = world()
      .fault({ when: /^UID EXPUNGE/, answer: "no" })
      .fault({ when: /-FLAGS/, answer: "no" });
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    expect(r.first).toBe(
      'Not done: the IMAP server refused UID EXPUNGE [SERVERBUG]. The mailbox was changed: UIDs 1, 2 in "INBOX" are still marked \\Deleted (taking the mark off failed too: the IMAP server refused UID STORE [SERVERBUG]), and another client\'s expunge would delete them.',
    );
    expect(imap.state("INBOX")).toEqual({ 1: ["\\Deleted"], 2: ["\\Deleted"], 3: [] });
  });

  it("says which messages are gone when the server expunged some before it refused", async () => {
    const imap = world().fault({ when: /^UID EXPUNGE/, answer: "no", ran: true });
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    expect(r.first).toBe(
      'Not done: the IMAP server refused UID EXPUNGE [SERVERBUG]; the \\Deleted mark set for it was taken off again. The mailbox was changed: UIDs 1, 2 in "INBOX" were expunged before the server refused.',
    );
    expect(imap.state("INBOX")).toEqual({ 3: [] });
  });

  it.each([
    ["ran", true, { 3: [] }],
    ["did not run", false, { 1: ["\\Deleted"], 2: ["\\Deleted"], 3: [] }],
  ] as const)("says the messages may have been expunged, or keep the mark, when UID EXPUNGE is never answered (it %s)", async (_label, ran, after) => {
    const imap = world().fault({ when: /^UID EXPUNGE/, answer: "hang", ran });
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    expect(r.first).toBe(
      'Not done: the IMAP server did not answer in time (UID EXPUNGE). The mailbox may have been changed: UIDs 1, 2 in "INBOX" were marked \\Deleted and may have been expunged; any still there keep the mark, and another client\'s expunge would delete them.',
    );
    expect(imap.state("INBOX")).toEqual(after);
  });

  it("says the messages may be marked \\Deleted when the mark's UID STORE is never answered, and expunges nothing", async () => {
    const imap = world().fault({ when: /\+FLAGS\.SILENT \(\\Deleted\)/, answer: "hang" });
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    expect(r.first).toBe(
      'Not done: the IMAP server did not answer in time (UID STORE). The mailbox may have been changed: UIDs 1, 2 in "INBOX" may now be marked \\Deleted, and another client\'s expunge would delete them.',
    );
    expect(imap.state("INBOX")).toEqual({ 1: ["\\Deleted"], 2: ["\\Deleted"], 3: [] });
    expect(commands(imap).some((c) => c.startsWith("UID EXPUNGE"))).toBe(false);
  });

  it("says nothing was changed when the mark itself is refused", async () => {
    const imap = world().fault({ when: /\+FLAGS\.SILENT \(\\Deleted\)/, answer: "no" });
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    expect(r.first).toBe("Not done: the IMAP server refused UID STORE [SERVERBUG]. Nothing was changed.");
    expect(imap.state("INBOX")).toEqual({ 1: [], 2: [], 3: [] });
  });
});

describe("move_messages when the move or copy does not complete", () => {
  it.each([
    ["move", "moved", { 3: [] }, { 1: [], 2: [], 3: [] }],
    ["copy", "copied", { 1: [], 2: [], 3: [] }, { 1: [], 2: [], 3: [] }],
  ] as const)("a %s never answered says the messages may have been %s", async (mode, verb, inbox, archive) => {
    const imap = world().fault({ when: /^UID (MOVE|COPY)/, answer: "hang" });
    const r = await call(imap, "move_messages", { mailbox: "INBOX", uids: [1, 2], destination: "Archive", mode }, { channel: WAIVED });
    expect(r.first).toBe(`Not done: the IMAP server did not answer in time (UID ${mode.toUpperCase()}). The mailbox may have been changed: UIDs 1, 2 in "INBOX" may have been ${verb} into "Archive".`);
    expect([imap.state("INBOX"), imap.state("Archive")]).toEqual([inbox, archive]);
  });

  it("a refused UID MOVE may still have moved some messages (RFC 6851), and says so; a refused UID COPY changed nothing", async () => {
    const moving = world().fault({ when: /^UID MOVE/, answer: "no" });
    const move = await call(moving, "move_messages", { mailbox: "INBOX", uids: [1, 2], destination: "Archive" }, { channel: WAIVED });
    expect(move.first).toBe(
      'Not done: the IMAP server refused UID MOVE [SERVERBUG]. The mailbox may have been changed: some of UIDs 1, 2 in "INBOX" may have been moved into "Archive" before the server refused.',
    );
    const copying = world().fault({ when: /^UID COPY/, answer: "no" });
    const copy = await call(copying, "move_messages", { mailbox: "INBOX", uids: [1, 2], destination: "Archive", mode: "copy" }, { channel: WAIVED });
    expect(copy.first).toBe("Not done: the IMAP server refused UID COPY [SERVERBUG]. Nothing was changed.");
    expect([copying.state("INBOX"), copying.state("Archive")]).toEqual([{ 1: [], 2: [], 3: [] }, { 1: [] }]);
  });

  it("a connection that drops after UID MOVE ran says the messages may have been moved", async () => {
    const imap = world().fault({ when: /^UID MOVE/, answer: "drop" });
    const r = await call(imap, "move_messages", { mailbox: "INBOX", uids: [1], destination: "Archive" }, { channel: WAIVED });
    expect(r.first).toBe('Not done: the IMAP server closed the connection. The mailbox may have been changed: UID 1 in "INBOX" may have been moved into "Archive".');
    expect(imap.state("INBOX")).toEqual({ 2: [], 3: [] });
  });
});

describe("set_message_flags when the addition or the removal does not complete", () => {
  it("says the flags were added, and not removed, when the removal is refused", async () => {
    const imap = world((uid) => (uid < 3 ? ["\\Flagged"] : [])).fault({ when: /-FLAGS/, answer: "no" });
    const r = await call(imap, "set_message_flags", { mailbox: "INBOX", uids: [1, 2], add: ["\\Seen"], remove: ["\\Flagged"] });
    expect(r.first).toBe('Not done: the IMAP server refused UID STORE [SERVERBUG]. The mailbox was changed: \\Seen was added to UIDs 1, 2 in "INBOX"; \\Flagged was not removed.');
    expect(imap.state("INBOX")).toEqual({ 1: ["\\Flagged", "\\Seen"], 2: ["\\Flagged", "\\Seen"], 3: [] });
  });

  it("says the removal may or may not have happened when it is never answered", async () => {
    const imap = world((uid) => (uid < 3 ? ["\\Flagged"] : [])).fault({ when: /-FLAGS/, answer: "hang", ran: false });
    const r = await call(imap, "set_message_flags", { mailbox: "INBOX", uids: [1, 2], add: ["\\Seen"], remove: ["\\Flagged"] });
    expect(r.first).toBe(
      'Not done: the IMAP server did not answer in time (UID STORE). The mailbox was changed: \\Seen was added to UIDs 1, 2 in "INBOX"; \\Flagged may or may not have been removed.',
    );
    expect(imap.state("INBOX")).toEqual({ 1: ["\\Flagged", "\\Seen"], 2: ["\\Flagged", "\\Seen"], 3: [] });
  });

  it("says the flags may have been added when the addition is never answered, and removes nothing", async () => {
    const imap = world((uid) => (uid < 3 ? ["\\Flagged"] : [])).fault({ when: /\+FLAGS/, answer: "hang" });
    const r = await call(imap, "set_message_flags", { mailbox: "INBOX", uids: [1, 2], add: ["\\Seen"], remove: ["\\Flagged"] });
    expect(r.first).toBe(
      'Not done: the IMAP server did not answer in time (UID STORE). The mailbox may have been changed: \\Seen may have been added to UIDs 1, 2 in "INBOX", and nothing was removed.',
    );
    expect(imap.state("INBOX")).toEqual({ 1: ["\\Flagged", "\\Seen"], 2: ["\\Flagged", "\\Seen"], 3: [] });
  });
});

describe("save_draft and manage_mailbox when the write is never answered", () => {
  it("save_draft says the message may have been saved in the drafts mailbox", async () => {
    const imap = world().fault({ when: /^APPEND/, answer: "hang" });
    const r = await call(imap, "save_draft", { to: ["ada@example.com"], subject: "Hello", body: "Text." });
    expect(r.first).toBe('Not done: the IMAP server did not answer in time (APPEND). The mailbox may have been changed: the message may have been saved in "Drafts".');
    expect(Object.keys(imap.state("Drafts") ?? {})).toEqual(["1"]);
  });

  it("create says the mailbox may have been created", async () => {
    const imap = world().fault({ when: /^CREATE/, answer: "hang" });
    const r = await call(imap, "manage_mailbox", { action: "create", mailbox: "Projects" });
    expect(r.first).toBe('Not done: the IMAP server did not answer in time (CREATE). The mailbox may have been changed: mailbox "Projects" may have been created.');
    expect(imap.state("Projects")).toEqual({});
  });

  it("delete says the mailbox and its messages may have been deleted", async () => {
    const imap = world().fault({ when: /^DELETE/, answer: "hang" });
    const r = await call(imap, "manage_mailbox", { action: "delete", mailbox: "Archive" }, { channel: WAIVED });
    expect(r.first).toBe('Not done: the IMAP server did not answer in time (DELETE). The mailbox may have been changed: mailbox "Archive" and the messages in it may have been deleted.');
    expect(imap.state("Archive")).toBeUndefined();
  });

  it("rename, on the token's second call, says the mailbox may have been renamed", async () => {
    const imap = world().fault({ when: /^RENAME/, answer: "hang" });
    const registry = fakeRegistry();
    const args = { action: "rename", mailbox: "Archive", new_name: "Archive 2025" };
    const first = await call(imap, "manage_mailbox", args, { channel: WAIVED, registry });
    const token = /^[A-Za-z0-9_-]{43}$/m.exec(first.text)?.[0];
    expect(token, first.text).toBeDefined();
    const r = await call(imap, "manage_mailbox", { ...args, two_call_token: token }, { channel: WAIVED, registry });
    expect(r.first).toBe(
      'Not done: the IMAP server did not answer in time (RENAME). The mailbox may have been changed: mailbox "Archive" (and every mailbox under it) may have been renamed to "Archive 2025".',
    );
    expect([imap.state("Archive"), imap.state("Archive 2025")]).toEqual([undefined, { 1: [] }]);
  });
});

describe("manage_mailbox delete of a mailbox with mailboxes under it", () => {
  it("is refused before anyone is asked or anything is deleted, naming how many sit under it; one without any is deleted", async () => {
    const imap = world().add("Archive/2024", { count: 2 }).add("Archive/2025");
    const r = await call(imap, "manage_mailbox", { action: "delete", mailbox: "Archive" }, { channel: WAIVED });
    expect(r.first).toBe('Not done: mailbox "Archive" has 2 mailboxes under it; delete or move those first: this tool deletes one mailbox and the messages in it, nothing else. Nothing was changed.');
    expect(commands(imap).some((c) => /^s\d+ DELETE/.test(c))).toBe(false);
    expect(imap.state("Archive")).toBeDefined();
    // A sibling whose name only starts the same is not under it.
    const sibling = world().add("Archived");
    const done = await call(sibling, "manage_mailbox", { action: "delete", mailbox: "Archive" }, { channel: WAIVED });
    expect(done.first).toBe('Deleted mailbox "Archive" and the 1 message in it.');
    expect(sibling.state("Archive")).toBeUndefined();
    expect(sibling.state("Archived")).toBeDefined();
  });
});

describe("the write's own look", () => {
  it("acts on nothing when the mailbox changed between the look after the answer and the write's own, and says so on the call's trail", async () => {
    const imap = world();
    // The third SELECT of INBOX is the write's own look: the mailbox is recreated just before it.
    let selects = 0;
    imap.beforeCommand = (line) => {
      if (/^SELECT "?INBOX"?/i.test(line) && ++selects === 3) {
        const box = imap.mailboxes.get("INBOX");
        if (box !== undefined) box.uidValidity = 99;
      }
    };
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    const r = await call(imap, "delete_messages", { mailbox: "INBOX", uids: [1, 2] }, { channel: WAIVED });
    const lines = logs.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"event":"audit"'));
    logs.mockRestore();
    expect(selects).toBe(3);
    expect(r.first).toMatch(/^Not done: the target changed after it was approved \(.*UIDVALIDITY 7.*UIDVALIDITY 99.*\), so the approval does not cover it\. Nothing was changed\.$/);
    expect(commands(imap).some((c) => /STORE|EXPUNGE/.test(c))).toBe(false);
    expect(lines.some((l) => l.includes('"outcome":"refused"') && l.includes('"reason":"target_changed"'))).toBe(true);
  });
});
