// Covers move_messages' editable destination against a real Dovecot (test/servers/dovecot/): the question offers the folders the mailbox has as a pick-one list, a folder the person picked is where the messages go (bound, fingerprinted and named in the answer and audit line), and one not on the list is refused before anything moves; against a scripted server (fake-imap.ts), a folder name a person cannot read unambiguously is never offered.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { AuditLine } from "../../../bundles/kit/audit";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import handler from "../../../bundles/mailbox/mailbox.app";
import { useConnector } from "../../../bundles/mailbox/mailbox.session";
import { encodeMailboxName } from "../../../bundles/mailbox/mailbox.utf7";
// @ts-expect-error: plain ESM helper without types
import { message } from "../../servers/dovecot/imap-admin.mjs";
import { callBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { CALL, fakeRegistry } from "../pads/helpers";
import { FakeImap, fakeAccountEnv } from "./fake-imap";
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
/** A fresh mailbox of `n` messages, and two fresh folders to move into; their names. */
async function world(n = 2): Promise<{ box: string; proposed: string; picked: string }> {
  const tag = `${++boxes}-${Date.now().toString(36)}`;
  const names = { box: `E${tag}`, proposed: `Proposed${tag}`, picked: `Picked${tag}` };
  await admin(async (a) => {
    for (const name of Object.values(names)) await a.create(name);
    for (let i = 1; i <= n; i++) await a.append(names.box, message({ subject: `Message ${i}`, text: "Body.\r\n" }));
  });
  return names;
}
const uidsIn = (name: string) => admin(async (a) => (await a.messages(name)).map((m) => m.uid));

let routes = 0;
/** An approval route that records the create and answers an accept with `content`. */
function accepting(content: Record<string, unknown>) {
  const name = `m${++routes}`;
  let created: { message: string; requestedSchema: { properties: Record<string, Record<string, unknown>> } } | undefined;
  const url = approvals.route(name, {
    create: (r) => {
      created = JSON.parse(r.body);
      return { status: 201, body: { requestId: `req-${name}` } };
    },
    poll: () => ({ body: { action: "accept", content: { confirm: true, ...content }, _meta: { "dev.strad/approver": "ada@example.com" } } }),
  });
  return { url, created: () => created };
}

async function move(args: Record<string, unknown>, url: string) {
  const registry = fakeRegistry();
  registry.live(CALL.scope, CALL.key);
  const channel = { slug: "mailbox", url, ttlMs: 10_000, headers: {}, call: CALL, caller: "dev-session" };
  return callBundle(handler, { mount: "mailbox", name: "move_messages", args, channel, env: { ...accountEnv("mailbox", dovecot(), "carol"), STRAD_POLL_INTERVAL_MS: "20", CALLS: registry.ns } });
}

const audits = (): AuditLine[] =>
  log.mock.calls
    .map((a) => String(a[0]))
    .filter((l) => l.includes('"event":"audit"'))
    .map((l) => JSON.parse(l) as AuditLine);

describe("move_messages' destination, picked by the person", () => {
  it("offers the mailbox's folders as a pick-one list, never the source, with the model's destination as its default", async () => {
    const w = await world(1);
    const r = accepting({});
    const result = await move({ mailbox: w.box, uids: [1], destination: w.proposed }, r.url);
    expect(result.isError, result.text).toBe(false);
    const destination = r.created()?.requestedSchema.properties.destination;
    expect(destination).toMatchObject({ type: "string", title: "Into mailbox", default: w.proposed });
    const offered = destination?.enum as string[];
    // Every folder that can hold messages, by its decoded name, but the source: "Public" and "Entwürfe" are \Noselect
    // parents in this account, so a move into them could not run and they are not offered.
    const created = (await admin((a) => a.mailboxes())).filter((n) => /^(E|Proposed|Picked)\d/.test(n) && n !== w.box);
    expect([...offered].sort()).toEqual(["Archive", "Drafts", "Entwürfe/Größe & Maß", "INBOX", "Public/Shared", "Trash", "日本語", ...created].sort());
    // A plain accept moves where the model proposed.
    expect(await uidsIn(w.proposed)).toHaveLength(1);
  });

  it("moves into the folder the person picked, and nowhere else; the answer and the audit lines name the change", async () => {
    const w = await world(2);
    const r = accepting({ destination: w.picked });
    const result = await move({ mailbox: w.box, uids: [1, 2], destination: w.proposed }, r.url);
    expect(result.isError, result.text).toBe(false);
    expect(result.text).toMatch(new RegExp(`^Moved 2 messages from "${w.box}" to "${w.picked}" \\(UIDs 1, 2\\)\\.`));
    expect(result.text).toContain(`The person edited this call before approving it, and what ran is their version, not the one proposed: destination is now "${w.picked}".`);
    expect(await uidsIn(w.box)).toEqual([]);
    expect(await uidsIn(w.picked)).toHaveLength(2);
    expect(await uidsIn(w.proposed)).toEqual([]);
    const lines = audits();
    const approved = lines.find((l) => l.outcome === "approved");
    expect(approved).toMatchObject({ edited: ["destination"], approver: "ada@example.com" });
    expect(approved?.proposed).toMatch(/^[0-9a-f]{64}$/);
    expect(approved?.proposed).not.toBe(approved?.fingerprint);
    expect(lines.map((l) => l.outcome)).toEqual(["asked", "approved", "claimed", "written"]);
  });

  it("moves into a picked folder whose name is not ASCII, named on the wire in modified UTF-7", async () => {
    const w = await world(1);
    const before = (await uidsIn("Entwürfe/Größe & Maß")).length;
    const r = accepting({ destination: "Entwürfe/Größe & Maß" });
    const result = await move({ mailbox: w.box, uids: [1], destination: w.proposed }, r.url);
    expect(result.isError, result.text).toBe(false);
    expect(result.text).toMatch(/^Moved 1 message from ".*" to "Entwürfe\/Größe & Maß"/);
    expect(await uidsIn("Entwürfe/Größe & Maß")).toHaveLength(before + 1);
    expect(await uidsIn(w.proposed)).toEqual([]);
  });

  it.each([
    ["the source mailbox itself (it exists, but is not offered)", (w: { box: string }) => w.box],
    ["a folder the mailbox does not have", () => "Nowhere"],
    ["a name one character off a listed folder", (w: { picked: string }) => `${w.picked} `],
  ])("refuses %s before anything moves", async (_label, pick) => {
    const w = await world(2);
    const r = accepting({ destination: pick(w) });
    const result = await move({ mailbox: w.box, uids: [1, 2], destination: w.proposed }, r.url);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /^Not done: the person's answer was refused before anything ran: the answer sets "destination" to a value that is not one of the choices the card offered\. Nothing was written\.$/,
    );
    expect(await uidsIn(w.box)).toEqual([1, 2]);
    expect(await uidsIn(w.proposed)).toEqual([]);
    expect(await uidsIn(w.picked)).toEqual([]);
    expect(audits().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["refused", "edit_not_offered"],
    ]);
  });
});

describe("move_messages' pick list, from a server that lists names a person cannot read unambiguously", () => {
  // Each would look like another folder, or hide what it is, on the card: a bidi override ("Archive" read backwards
  // shows as "Archive"), a zero-width space, C0 and C1 controls, a line separator, an ideographic space.
  const UNSAFE: [string, string][] = [
    ["a bidi override", "\u202Eevihcra"],
    ["a zero-width space", "Arc\u200Bhive"],
    ["a C0 control", "Arch\u0007ive"],
    ["a C1 control", "Arch\u0085ive"],
    ["a line separator", "Archive\u2028Old"],
    ["an ideographic space", "Archive\u3000"],
  ];

  async function moveOnFake(imap: FakeImap, url: string) {
    const registry = fakeRegistry();
    registry.live(CALL.scope, CALL.key);
    const channel = { slug: "mailbox", url, ttlMs: 10_000, headers: {}, call: CALL, caller: "dev-session" };
    const restore = useConnector(imap.connector());
    try {
      const args = { mailbox: "INBOX", uids: [1], destination: "Archive" };
      return await callBundle(handler, { mount: "mailbox", name: "move_messages", args, channel, env: { ...fakeAccountEnv("mailbox"), STRAD_POLL_INTERVAL_MS: "20", CALLS: registry.ns } });
    } finally {
      restore();
    }
  }
  const server = () => {
    const imap = new FakeImap().add("INBOX", { count: 1 }).add("Archive").add(encodeMailboxName("Entwürfe"));
    for (const [, name] of UNSAFE) imap.add(encodeMailboxName(name));
    return imap;
  };

  it("offers only the names with no control, bidi, invisible or padding character", async () => {
    const imap = server();
    const r = accepting({});
    const result = await moveOnFake(imap, r.url);
    expect(result.isError, result.text).toBe(false);
    const offered = r.created()?.requestedSchema.properties.destination?.enum as string[];
    expect([...offered].sort()).toEqual(["Archive", "Entwürfe"]);
    expect(imap.state("Archive")).toEqual({ 1: [] });
  });

  it.each(UNSAFE)("refuses a person's pick of a name with %s, which was not offered, before anything moves", async (_label, name) => {
    const imap = server();
    const r = accepting({ destination: name });
    const result = await moveOnFake(imap, r.url);
    expect(result.text).toBe(
      'Not done: the person\'s answer was refused before anything ran: the answer sets "destination" to a value that is not one of the choices the card offered. Nothing was written.',
    );
    expect(imap.state("INBOX")).toEqual({ 1: [] });
    expect(imap.state(encodeMailboxName(name))).toEqual({});
  });
});
