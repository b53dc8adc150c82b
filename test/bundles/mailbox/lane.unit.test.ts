// Covers the mailbox bundle on the kit's lane (bundles/kit/lane.ts), against a real Dovecot: every call, valid and
// invalid, is answered byte for byte as the SDK's path answers it; the reads with good arguments are taken without an
// SDK server, and the writes, the guarded tools, a refused argument and a get_attachments that saves into a bucket are
// the SDK's; no call opens more IMAP connections on the lane than on the SDK's path; and every tool's schema is built
// once per isolate.
import type { McpServer } from "@modelcontextprotocol/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { serveBundle } from "../../../bundles/kit/mount";
import manifest from "../../../bundles/mailbox/bundle.json";
import type { Connector } from "../../../bundles/mailbox/mailbox.connection";
import { MAX_PAGE } from "../../../bundles/mailbox/mailbox.read";
import { mailboxServer } from "../../../bundles/mailbox/mailbox.tools";
import { answer, both, call, list, onGatedHop, type Raw } from "../kit/helpers/lane";
import { accountEnv, nodeConnector, useTestDovecot } from "./helpers";

afterEach(() => vi.restoreAllMocks());

// Each IMAP connection the bundle opens, counted per answer (both() clears the map before each side).
const runs = new Map<string, number>();
const base = nodeConnector();
const counting: Connector = (address, options) => {
  runs.set("connections", (runs.get("connections") ?? 0) + 1);
  return base(address, options);
};
const mail = useTestDovecot(counting);

const options = { manifest, server: mailboxServer, elicitationSwitch: { bundle: "mailbox" } };
const lanes = { on: serveBundle(options), off: serveBundle(options, { fastLane: false }) };

/** A stand-in for an R2 bucket, which takes every put. */
const bucket = { put: async (key: string) => ({ key }) };

// `/mailbox` is alice's seeded account (INBOX: five messages, UID 2 with two attachments, UID 4 already \Seen); `/dead`
// is an account on a closed loopback port, where every call that reaches IMAP fails at once, the same way on both paths.
let env: Record<string, unknown>;
let saving: Record<string, unknown>;
beforeAll(() => {
  const dead = { DEAD__IMAP_HOST: "127.0.0.1", DEAD__IMAP_PORT: "9", DEAD__IMAP_SECURITY: "plain", DEAD__IMAP_USER: "lane", DEAD__IMAP_PASSWORD: "lane-password" };
  env = { ...accountEnv("mailbox", mail.dovecot(), "alice"), ...dead };
  saving = { ...env, MAILBOX__ATTACHMENTS_BUCKET: bucket };
});

/**
 * The mailboxes a list_mailboxes answer names, each with its counts and flags but \Marked and \UnMarked: Dovecot works
 * those out from the state of its own files for the mailbox, which a listing itself can change for the next one.
 */
function mailboxesIn(text: string): { name: string; flags: string[] }[] {
  const body = JSON.parse(text.slice(text.indexOf("\n") + 1)) as { result: { content: { text: string }[] } };
  const listed = JSON.parse(body.result.content[0]?.text ?? "{}") as { mailboxes: { name: string; flags: string[] }[] };
  return listed.mailboxes.map((m) => ({ ...m, flags: m.flags.filter((f) => f !== "\\Marked" && f !== "\\UnMarked") }));
}

// list_mailboxes on Dovecot is held to the SDK's answer on its own, below: Dovecot's listing changes as the account is read.
const CALLS: Raw[] = [
  call("/mailbox", "list_messages", { mailbox: "INBOX" }),
  call("/mailbox", "list_messages", { mailbox: "INBOX", offset: 1, limit: 2 }),
  call("/mailbox", "list_messages", { mailbox: "No such folder" }),
  call("/mailbox", "list_messages", { mailbox: "INBOX", limit: MAX_PAGE + 1 }),
  call("/mailbox", "list_messages", { mailbox: "IN\u0001BOX" }),
  call("/mailbox", "search_messages", { mailbox: "INBOX", subject: "Lunch" }),
  call("/mailbox", "search_messages", { mailbox: "INBOX", text: "Grüße", seen: true }),
  call("/mailbox", "search_messages", { mailbox: "" }),
  call("/mailbox", "get_message", { mailbox: "INBOX", uid: 2 }),
  call("/mailbox", "get_message", { mailbox: "INBOX", uid: 999 }),
  call("/mailbox", "get_message", { mailbox: "INBOX", uid: 0 }),
  call("/mailbox", "get_attachments", { mailbox: "INBOX", uid: 1 }),
  call("/mailbox", "get_attachments", { mailbox: "INBOX", uid: 2, indexes: [7] }),
  // Files are embedded as resource blocks, a result the lane does not encode itself: it hands the SDK what the tool gave.
  call("/mailbox", "get_attachments", { mailbox: "INBOX", uid: 2, indexes: [1] }),
  call("/mailbox", "get_attachments", { mailbox: "INBOX", uid: 2, indexes: [] }),
  call("/mailbox", "delete_messages", { mailbox: "INBOX", uids: [1] }),
  call("/mailbox", "move_messages", { mailbox: "INBOX", uids: [1], destination: "Archive", mode: "copy" }),
  call("/mailbox", "manage_mailbox", { action: "delete", mailbox: "Archive" }),
  call("/mailbox", "manage_mailbox", { action: "rename", mailbox: "Archive", new_name: "Old" }),
  call("/mailbox", "set_message_flags", { mailbox: "INBOX", uids: [1], add: ["\\Deleted"] }),
  // UID 4 is \Seen already: the store changes nothing, so both paths answer alike.
  call("/mailbox", "set_message_flags", { mailbox: "INBOX", uids: [4], add: ["\\Seen"] }),
  call("/mailbox", "nope", {}),
  call("/dead", "list_mailboxes", {}),
  call("/dead", "get_message", { mailbox: "INBOX", uid: 1 }),
  call("/dead", "manage_mailbox", { action: "create", mailbox: "New" }),
  call("/dead", "save_draft", { to: ["ada@example.com"], subject: "s", body: "b" }),
];
/** The calls the lane answers without an SDK server: the reads with good arguments whose result is text. */
const TAKEN = [0, 1, 2, 5, 6, 8, 9, 11, 12, 22, 23];

describe("the mailbox bundle on the lane", () => {
  it("answers every call as the SDK does, takes the reads with good arguments without an SDK server, and opens no more IMAP connections than the SDK", async () => {
    await answer(lanes.on, list("/mailbox"), env);
    await answer(lanes.on, list("/dead"), env);
    const taken: string[] = [];
    for (const raw of CALLS) {
      const { on, off } = await both(raw, lanes, env, runs);
      expect(on.text, raw.label).toBe(off.text);
      expect(on.runs, raw.label).toEqual(off.runs);
      if (on.servers === 0) taken.push(raw.label);
    }
    expect(taken).toEqual(CALLS.filter((_, i) => TAKEN.includes(i)).map((r) => r.label));
    // The reads really ran: a page of INBOX on the one path is the page on the other, and the closed port failed.
    const { on: page } = await both(CALLS[0] as Raw, lanes, env, runs);
    expect(page.text).toContain("Lunch");
    expect((await both(CALLS[22] as Raw, lanes, env, runs)).on.text).toContain("Not done: ");
  });

  it("takes the reads as a gated mount's hop sends them (the gateway's progress token and channel), answering as the SDK does", async () => {
    await answer(lanes.on, list("/mailbox"), env);
    const reads = TAKEN.filter((i) => i < 22).map((i) => onGatedHop(CALLS[i] as Raw));
    for (const raw of reads) {
      const { on, off } = await both(raw, lanes, env, runs);
      expect(on.text, raw.label).toBe(off.text);
      expect(on.runs, raw.label).toEqual(off.runs);
      expect(on.servers, raw.label).toBe(0);
    }
    expect((await both(reads[0] as Raw, lanes, env, runs)).on.text).toContain("Lunch");
  });

  it("takes list_mailboxes without an SDK server, and lists the mailboxes the SDK lists", async () => {
    await answer(lanes.on, list("/mailbox"), env);
    const listing = call("/mailbox", "list_mailboxes", {});
    // Dovecot's first listing of an account comes in another order than every later one, on either path.
    await answer(lanes.off, listing, env);
    const { on, off } = await both(listing, lanes, env, runs);
    expect(on.servers).toBe(0);
    expect(on.runs).toEqual(off.runs);
    expect(mailboxesIn(on.text)).toEqual(mailboxesIn(off.text));
    expect(mailboxesIn(on.text).map((m) => m.name)).toContain("Public/Shared");
  });

  it("leaves get_attachments to the SDK where the mount saves into its R2 bucket, and still takes the reads there", async () => {
    await answer(lanes.on, list("/mailbox"), saving);
    const save = call("/mailbox", "get_attachments", { mailbox: "INBOX", uid: 2 });
    const saved = await both(save, lanes, saving, runs);
    expect(saved.on.text).toBe(saved.off.text);
    expect(saved.on.text).toContain('\\"saved\\"');
    expect(saved.on.servers).toBeGreaterThan(0);
    const read = await both(call("/mailbox", "list_messages", { mailbox: "INBOX" }), lanes, saving, runs);
    expect(read.on.text).toBe(read.off.text);
    expect(read.on.servers).toBe(0);
  });

  it("builds each tool's schema once per isolate: two requests' servers hold the same schema objects", () => {
    const schemaOf = (server: McpServer, name: string) => (server as unknown as { _registeredTools: Record<string, { inputSchema: unknown }> })._registeredTools[name]?.inputSchema;
    const servers = [mailboxServer("mailbox", env), mailboxServer("mailbox", env), mailboxServer("dead", env), mailboxServer("mailbox", saving)];
    const [a, ...others] = servers as [McpServer, ...McpServer[]];
    const names = Object.keys((a as unknown as { _registeredTools: Record<string, unknown> })._registeredTools);
    expect(names).toEqual([
      "list_mailboxes",
      "list_messages",
      "search_messages",
      "get_message",
      "get_attachments",
      "delete_messages",
      "move_messages",
      "manage_mailbox",
      "set_message_flags",
      "save_draft",
    ]);
    for (const name of names) {
      expect(schemaOf(a, name), name).toBeDefined();
      for (const other of others) expect(schemaOf(other, name), name).toBe(schemaOf(a, name));
    }
  });
});
