// The mailbox tools against a real Dovecot (test/servers/dovecot/), driven in Node through the bundle's handler as
// the gateway drives it, with an approval service that answers on cue: each row of the table of what asks (asks, token,
// never) with accept, decline and expiry; an approval bound to the exact UID set, the UIDVALIDITY and both mailboxes
// (R-MAIL-2); move and copy as different keys; \Deleted refused (R-MAIL-3); a prompt of counts, UIDs and folder
// names only (R-MAIL-4); rename on the two-call token only, within its parent, INBOX never, counting every child
// (R-MAIL-11); caps refused whole (R-MAIL-9); one connection per call (R-MAIL-8); ELICITATION's three cases.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fingerprint } from "../../../bundles/kit/fingerprint";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import handler from "../../../bundles/mailbox/mailbox.app";
import { transferFingerprint } from "../../../bundles/mailbox/mailbox.guard";
import { MAX_ATTACHMENT_BYTES, MAX_MESSAGE_BYTES } from "../../../bundles/mailbox/mailbox.mime";
import { useConnector } from "../../../bundles/mailbox/mailbox.session";
// @ts-expect-error: plain ESM helper without types
import { HOSTILE_BODY, HOSTILE_SUBJECT } from "../../servers/dovecot/dovecot.mjs";
// @ts-expect-error: plain ESM helper without types
import { message } from "../../servers/dovecot/imap-admin.mjs";
import { callBundle } from "../kit/helpers/bundle";
import { HostileServer } from "../kit/helpers/hostile-server";
import { CALL, fakeRegistry } from "../pads/helpers";
import { accountEnv, type Dovecot, nodeConnector, startTestDovecot } from "./helpers";

let dovecot: Dovecot;
let approvals: HostileServer;
let restore: () => void;
const connector = nodeConnector();

// Starting Dovecot (and making its TLS certificates) takes about a second here; 60 s allows a slow CI machine.
beforeAll(async () => {
  dovecot = await startTestDovecot();
  approvals = await new HostileServer().start();
  restore = useConnector(connector);
}, 60_000);
afterAll(async () => {
  restore?.();
  await approvals?.stop();
  await dovecot?.stop();
});
beforeEach(() => resetSwitchLog());

let boxes = 0;
/** A fresh mailbox of `n` messages for one test, in carol's account; returns its name. */
async function freshMailbox(n = 3, name = `T${++boxes}-${Date.now().toString(36)}`): Promise<string> {
  const admin = await dovecot.admin("carol");
  try {
    await admin.create(name);
    for (let i = 1; i <= n; i++) await admin.append(name, message({ subject: i === 1 ? HOSTILE_SUBJECT : `Message ${i}`, text: `${HOSTILE_BODY}\r\n` }));
  } finally {
    await admin.close();
  }
  return name;
}
async function uidsIn(name: string): Promise<number[]> {
  const admin = await dovecot.admin("carol");
  try {
    return (await admin.messages(name)).map((m) => m.uid);
  } catch {
    return [];
  } finally {
    await admin.close();
  }
}
async function mailboxes(): Promise<string[]> {
  const admin = await dovecot.admin("carol");
  try {
    return await admin.mailboxes();
  } finally {
    await admin.close();
  }
}

type Answer = "accept" | "decline" | "expired";
const POLL: Record<Answer, unknown> = { accept: { action: "accept", content: { confirm: true } }, decline: { action: "decline", content: null }, expired: { action: "expired", content: null } };
let routes = 0;
/** An approval route answering `answer`, after `before` runs (the world changing while the person reads). */
function route(answer: Answer, before?: () => Promise<void>): { url: string; prompts: () => string[] } {
  const name = `r${++routes}`;
  const url = approvals.route(name, {
    poll: async () => {
      await before?.();
      return { body: POLL[answer] };
    },
  });
  const prompts = () => approvals.requests.filter((r) => r.method === "POST" && r.path.includes(`/${name}`)).map((r) => (JSON.parse(r.body) as { message: string }).message);
  return { url, prompts };
}

const env = (extra: Record<string, unknown> = {}) => ({ ...accountEnv("mailbox", dovecot, "carol"), ...accountEnv("mailbox-token", dovecot, "carol"), STRAD_POLL_INTERVAL_MS: "20", ...extra });

async function call(
  name: string,
  args: Record<string, unknown>,
  options: { channel?: Record<string, unknown>; mount?: string; extra?: Record<string, unknown>; registry?: ReturnType<typeof fakeRegistry> } = {},
) {
  const registry = options.registry ?? fakeRegistry();
  registry.live(CALL.scope, CALL.key);
  return callBundle(handler, { mount: options.mount ?? "mailbox", name, args, channel: options.channel, env: { ...env(options.extra), CALLS: registry.ns } });
}
const ask = (url: string) => ({ slug: "mailbox", url, ttlMs: 10_000, headers: {}, call: CALL, caller: "dev-session" });
const fallback = () => ({ slug: "mailbox-token", fallback: "token", reason: "no approval address came with this call", ttlMs: 10_000, call: CALL, caller: "dev-session" });
const tokenOf = (text: string) => /^[A-Za-z0-9_-]{43}$/m.exec(text)?.[0] as string;

describe("delete_messages (always asks)", () => {
  it.each(["accept", "decline", "expired"] as const)("on %s: expunges exactly the named UIDs only after a yes", async (answer) => {
    const box = await freshMailbox(3);
    const r = route(answer);
    const result = await call("delete_messages", { mailbox: box, uids: [2, 1] }, { channel: ask(r.url) });
    expect(r.prompts()).toEqual([
      [
        "mailbox: This will delete 2 message(s) permanently.",
        "",
        "The messages are expunged at once, not moved to a trash folder, and cannot be",
        "restored.",
        "",
        "Values below are supplied by the caller, not by this server:",
        `  Mailbox: ${box}`,
        "  UIDs: 1, 2",
      ].join("\n"),
    ]);
    if (answer === "accept") {
      expect(result.text).toBe(`Deleted 2 messages from "${box}" (UIDs 1, 2).`);
      expect(await uidsIn(box)).toEqual([3]);
    } else {
      expect(result.text).toMatch(answer === "decline" ? /^Not done: the person declined/ : /^Not done: the approval expired/);
      expect(await uidsIn(box)).toEqual([1, 2, 3]);
    }
  });

  it("asks nobody and touches nothing when a named UID is not in the mailbox", async () => {
    const box = await freshMailbox(2);
    const r = route("accept");
    const result = await call("delete_messages", { mailbox: box, uids: [1, 9] }, { channel: ask(r.url) });
    expect(result.text).toBe(`Not done: mailbox "${box}" (UIDVALIDITY ${(await (await dovecot.admin("carol")).status(box)).uidValidity}) holds no message with UID 9. Nothing was changed.`);
    expect(r.prompts()).toEqual([]);
    expect(await uidsIn(box)).toEqual([1, 2]);
  });

  it("does nothing when the mailbox is recreated (a new UIDVALIDITY, the same UIDs) between the question and the action, and says so", async () => {
    const box = await freshMailbox(3);
    const r = route("accept", async () => {
      await dovecot.recreate("carol", box, { messages: 3 });
    });
    const result = await call("delete_messages", { mailbox: box, uids: [1, 2] }, { channel: ask(r.url) });
    expect(result.text).toMatch(
      /^Not done: the target changed after it was approved \(approved: 2 of 2 UID\(s\) present in ".*" at UIDVALIDITY (\d+); now: 2 of 2 UID\(s\) present in ".*" at UIDVALIDITY (?!\1)\d+\), so the approval does not cover it\. Nothing was written\.$/,
    );
    expect(await uidsIn(box)).toEqual([1, 2, 3]);
  });
});

describe("move_messages (always asks, move and copy alike)", () => {
  it.each(["accept", "decline", "expired"] as const)("a copy into Public/Shared on %s: asks with both folders and the UIDs, never a subject or body", async (answer) => {
    const box = await freshMailbox(2);
    const before = await uidsIn("Public/Shared");
    const r = route(answer);
    const result = await call("move_messages", { mailbox: box, uids: [1], destination: "Public/Shared", mode: "copy" }, { channel: ask(r.url) });
    const [prompt] = r.prompts();
    expect(prompt?.split("\n")).toEqual([
      "mailbox: This will copy 1 message(s) between mailboxes.",
      "",
      "Copies are new messages in the destination: whoever can read that mailbox can",
      "read them, and the source mailbox keeps no trace of the copy.",
      "",
      "Values below are supplied by the caller, not by this server:",
      `  From: ${box}`,
      "  To: Public/Shared",
      "  UIDs: 1",
    ]);
    expect(prompt).not.toContain(HOSTILE_SUBJECT);
    expect(prompt).not.toContain("IGNORE");
    expect(prompt).not.toContain("example.com");
    const after = await uidsIn("Public/Shared");
    if (answer === "accept") {
      expect(result.text).toMatch(new RegExp(`^Copied 1 message from "${box}" to "Public/Shared" \\(UIDs 1\\)\\. Their UIDs in "Public/Shared": \\d+ \\(UIDVALIDITY \\d+\\)\\.$`));
      expect(after.length).toBe(before.length + 1);
      expect(await uidsIn(box)).toEqual([1, 2]);
    } else expect(after).toEqual(before);
  });

  it("moves with the seed's wording, and the messages leave the source", async () => {
    const box = await freshMailbox(3);
    const r = route("accept");
    const result = await call("move_messages", { mailbox: box, uids: [1, 3], destination: "Archive" }, { channel: ask(r.url) });
    expect(r.prompts()[0]?.split("\n").slice(0, 4)).toEqual([
      "mailbox: This will move 2 message(s) between mailboxes.",
      "",
      "The messages keep their content but get new UIDs, so the current ones stop",
      "working.",
    ]);
    expect(result.text).toMatch(/^Moved 2 messages from ".*" to "Archive" \(UIDs 1, 3\)\./);
    expect(await uidsIn(box)).toEqual([2]);
  });

  it("binds the exact UID set, both folders and the mode: [1] is not [1, 2], Archive is not Public/Shared, move is not copy", async () => {
    const base = { mount: "mailbox", mailbox: "INBOX", uidValidity: 7, uids: [1], present: [1], mode: "move" as const, destination: "Archive", destinationValidity: 9 };
    const key = async (over: Partial<typeof base>) => fingerprint(transferFingerprint({ ...base, ...over } as never));
    const one = await key({});
    expect(await key({ uids: [1, 2], present: [1, 2] })).not.toBe(one);
    expect(await key({ destination: "Public/Shared" })).not.toBe(one);
    expect(await key({ mode: "copy" as never })).not.toBe(one);
    expect(await key({ uidValidity: 8 })).not.toBe(one);
    expect(await key({ destinationValidity: 10 })).not.toBe(one);
    expect(await key({ mailbox: "Archive", destination: "INBOX" })).not.toBe(one);
    // The same set in another order is the same approval.
    expect(await key({ uids: [2, 1], present: [1, 2] })).toBe(await key({ uids: [1, 2], present: [2, 1] }));
  });

  it("refuses a destination that does not exist before anyone is asked", async () => {
    const box = await freshMailbox(1);
    const r = route("accept");
    const result = await call("move_messages", { mailbox: box, uids: [1], destination: "Nowhere" }, { channel: ask(r.url) });
    expect(result.text).toBe('Not done: there is no mailbox "Nowhere" to move into. Nothing was changed.');
    expect(r.prompts()).toEqual([]);
  });
});

describe("the two-call token (mailbox-token, fallback: token)", () => {
  it("acts once, on the second identical call: an approval for [1] does not execute [1, 2], nor Archive Public/Shared, nor move a copy", async () => {
    const box = await freshMailbox(3);
    const registry = fakeRegistry();
    const args = { mailbox: box, uids: [1], destination: "Archive", mode: "copy" };
    const first = await call("move_messages", args, { mount: "mailbox-token", channel: fallback(), registry });
    expect(first.text).toMatch(/^Not done yet: mailbox-token did not ask a person about this call \(no approval address came with this call\), so nothing was written\./);
    expect(first.text).toContain("mailbox-token: This will copy 1 message(s) between mailboxes.");
    expect(first.text).not.toContain(HOSTILE_SUBJECT);
    const token = tokenOf(first.text);
    for (const wider of [{ uids: [1, 2] }, { destination: "Public/Shared" }, { mode: "move" }]) {
      const other = await call("move_messages", { ...args, ...wider, two_call_token: token }, { mount: "mailbox-token", channel: fallback(), registry });
      expect(other.text).toMatch(/^Not done: the two_call_token was issued for other arguments/);
    }
    const archived = (await uidsIn("Archive")).length;
    const second = await call("move_messages", { ...args, two_call_token: token }, { mount: "mailbox-token", channel: fallback(), registry });
    expect(second.text).toMatch(
      /^Copied 1 message .*Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: mailbox-token did not ask a person\.$/,
    );
    expect((await uidsIn("Archive")).length).toBe(archived + 1);
    const again = await call("move_messages", { ...args, two_call_token: token }, { mount: "mailbox-token", channel: fallback(), registry });
    expect(again.text).toMatch(/^Not done: the two_call_token was already used once/);
    expect((await uidsIn("Archive")).length).toBe(archived + 1);
  });

  it("refuses on a token whose mailbox was recreated in between (a new UIDVALIDITY)", async () => {
    const box = await freshMailbox(2);
    const registry = fakeRegistry();
    const args = { mailbox: box, uids: [1, 2] };
    const token = tokenOf((await call("delete_messages", args, { mount: "mailbox-token", channel: fallback(), registry })).text);
    await dovecot.recreate("carol", box, { messages: 2 });
    const second = await call("delete_messages", { ...args, two_call_token: token }, { mount: "mailbox-token", channel: fallback(), registry });
    expect(second.text).toMatch(/^Not done: what this call would act on changed since the two_call_token was issued/);
    expect(await uidsIn(box)).toEqual([1, 2]);
  });
});

describe("manage_mailbox", () => {
  it("create never asks, even with nobody to ask", async () => {
    const name = `Neu ${++boxes}/Ärger`;
    const result = await call("manage_mailbox", { action: "create", mailbox: name });
    expect(result.text).toBe(`Created mailbox "${name}".`);
    expect(await mailboxes()).toContain(`Neu ${boxes}/&AMQ-rger`);
  });

  it.each(["accept", "decline", "expired"] as const)("delete asks, showing the message count, and deletes only on %s = accept", async (answer) => {
    const box = await freshMailbox(2);
    const r = route(answer);
    const result = await call("manage_mailbox", { action: "delete", mailbox: box }, { channel: ask(r.url) });
    expect(r.prompts()[0]).toBe(
      [
        "mailbox: This will delete a mailbox and the 2 message(s) in it.",
        "",
        "A deleted mailbox and its messages cannot be restored.",
        "",
        "Values below are supplied by the caller, not by this server:",
        `  Mailbox: ${box}`,
      ].join("\n"),
    );
    expect((await mailboxes()).includes(box)).toBe(answer !== "accept");
    if (answer === "accept") expect(result.text).toBe(`Deleted mailbox "${box}" and the 2 messages in it.`);
  });

  it("rename takes the two-call token only, even when a person could be asked, and renames once on the second call", async () => {
    const box = await freshMailbox(1);
    const to = `${box}-renamed`;
    const r = route("accept");
    const registry = fakeRegistry();
    const first = await call("manage_mailbox", { action: "rename", mailbox: box, new_name: to }, { channel: ask(r.url), registry });
    expect(r.prompts()).toEqual([]);
    expect(first.text).toMatch(/^Not done yet: mailbox did not ask a person about this call \(a rename is reversible, so this server takes the two-call token for it instead of asking a person\)/);
    expect(first.text).toContain("mailbox: This will rename a mailbox and the 1 message(s) in it.");
    expect(await mailboxes()).toContain(box);
    const second = await call("manage_mailbox", { action: "rename", mailbox: box, new_name: to, two_call_token: tokenOf(first.text) }, { channel: ask(r.url), registry });
    expect(second.text).toBe(
      `Renamed mailbox "${box}" to "${to}".Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: mailbox did not ask a person.`,
    );
    expect(await mailboxes()).toContain(to);
    expect(await mailboxes()).not.toContain(box);
  });

  /** A fresh mailbox of `n` messages with `children` under it, each child's name relative to the box and its count. */
  async function freshTree(n: number, children: [string, number][]): Promise<string> {
    const box = await freshMailbox(n);
    for (const [child, count] of children) await freshMailbox(count, `${box}/${child}`);
    return box;
  }

  // Security review: RENAME "Private" to "Public/Shared/Private" succeeds on Dovecot and carries Private/Sub along into the
  // shared-looking hierarchy. A rename keeps its parent; anything else is refused before any token or IMAP write (R-MAIL-11).
  it.each([
    ["into another hierarchy, children and all", (b: string) => b, (b: string) => `Public/Shared/${b}`],
    ["one level down, under a new parent", (b: string) => b, (b: string) => `${b}-x/${b}`],
    ["under itself", (b: string) => b, (b: string) => `${b}/${b}`],
    ["out of its parent to the top level", (b: string) => `${b}/Sub`, () => `Sub-${boxes}`],
    ["into a sibling's hierarchy", (b: string) => `${b}/Sub`, (b: string) => `${b}/Deep/Sub`],
    ["to a name ending in the delimiter", (b: string) => b, (b: string) => `${b}/`],
  ])("rename refuses a move %s, before any token is issued or IMAP acts, and points at move_messages", async (_, from, to) => {
    const box = await freshTree(2, [
      ["Sub", 1],
      ["Deep", 0],
    ]);
    const before = await mailboxes();
    const r = route("accept");
    const args = { action: "rename", mailbox: from(box), new_name: to(box) };
    const first = await call("manage_mailbox", args, { channel: ask(r.url) });
    expect(first.isError).toBe(true);
    expect(first.text).toMatch(
      /^Not done: a rename changes only the last part of the name and keeps the mailbox (at the top level|under ".+"); ".+" would move it \(and every mailbox under it\) into another hierarchy, which may be shared\. To move messages elsewhere, use move_messages, which asks a person\. Nothing was changed\.$/,
    );
    expect(tokenOf(first.text)).toBeUndefined();
    expect(r.prompts()).toEqual([]);
    // Even a made-up token does not get it through.
    const forged = await call("manage_mailbox", { ...args, two_call_token: "A".repeat(43) }, { channel: ask(r.url) });
    expect(forged.text).toBe(first.text);
    expect(await mailboxes()).toEqual(before);
  });

  it("rename within the same parent is still on the token: a child mailbox takes a new last name", async () => {
    const box = await freshTree(0, [["Sub", 2]]);
    const registry = fakeRegistry();
    const args = { action: "rename", mailbox: `${box}/Sub`, new_name: `${box}/Sub2` };
    const first = await call("manage_mailbox", args, { channel: fallback(), mount: "mailbox-token", registry });
    expect(first.text).toContain("mailbox-token: This will rename a mailbox and the 2 message(s) in it.");
    const second = await call("manage_mailbox", { ...args, two_call_token: tokenOf(first.text) }, { channel: fallback(), mount: "mailbox-token", registry });
    expect(second.text).toMatch(new RegExp(`^Renamed mailbox "${box}/Sub" to "${box}/Sub2"\\.`));
    expect(await uidsIn(`${box}/Sub2`)).toEqual([1, 2]);
  });

  it.each([
    ["INBOX", "Old-inbox"],
    ["inbox", "Old-inbox"],
    ["InBox", "Old-inbox"],
  ])("rename refuses INBOX (%j) with a clear error, before any token", async (mailbox, newName) => {
    const first = await call("manage_mailbox", { action: "rename", mailbox, new_name: newName }, { channel: fallback(), mount: "mailbox-token" });
    expect(first.isError).toBe(true);
    expect(first.text).toContain("INBOX is never renamed, nor is anything renamed to INBOX: to move its messages elsewhere, use move_messages, which asks a person");
    expect(tokenOf(first.text)).toBeUndefined();
    expect(await mailboxes()).not.toContain(newName);
  });

  it("rename refuses a mailbox renamed to INBOX, in any case", async () => {
    const box = await freshMailbox(1);
    for (const name of ["INBOX", "Inbox"]) {
      const first = await call("manage_mailbox", { action: "rename", mailbox: box, new_name: name }, { channel: fallback(), mount: "mailbox-token" });
      expect(first.text).toContain("INBOX is never renamed, nor is anything renamed to INBOX");
    }
    expect(await uidsIn(box)).toEqual([1]);
  });

  it("the rename's token text counts the messages of the mailbox and of every child it carries, names the children, and claims no way back", async () => {
    const box = await freshTree(2, [
      ["Sub", 1],
      ["Sub/Deep", 3],
      ["Empty", 0],
    ]);
    // A sibling whose name starts with the box's is not under it, and is neither counted nor moved.
    await freshMailbox(4, `${box}x`);
    const registry = fakeRegistry();
    const args = { action: "rename", mailbox: box, new_name: `${box}-renamed` };
    const first = await call("manage_mailbox", args, { channel: fallback(), mount: "mailbox-token", registry });
    expect(first.text).toContain(
      [
        "mailbox-token: This will rename a mailbox, the 3 mailbox(es) under it and the 6 message(s) in them.",
        "",
        "The mailboxes under it and all the messages go with the new name.",
        "Whatever refers to the old name (a filter, a subscription, another client)",
        "stops finding it.",
      ].join("\n"),
    );
    expect(first.text).not.toMatch(/renaming it back|reversible: renaming|restores/);
    const second = await call("manage_mailbox", { ...args, two_call_token: tokenOf(first.text) }, { channel: fallback(), mount: "mailbox-token", registry });
    expect(second.text).toMatch(/^Renamed mailbox/);
    const after = await mailboxes();
    for (const name of ["", "/Sub", "/Sub/Deep", "/Empty"]) {
      expect(after).toContain(`${box}-renamed${name}`);
      expect(after).not.toContain(`${box}${name}`);
    }
    expect(await uidsIn(`${box}-renamed/Sub/Deep`)).toEqual([1, 2, 3]);
    expect(after).toContain(`${box}x`);
  });

  it("a child made between the two calls is not carried along on the first call's token", async () => {
    const box = await freshTree(1, [["Sub", 1]]);
    const registry = fakeRegistry();
    const args = { action: "rename", mailbox: box, new_name: `${box}-renamed` };
    const first = await call("manage_mailbox", args, { channel: fallback(), mount: "mailbox-token", registry });
    expect(first.text).toContain("the 1 mailbox(es) under it and the 2 message(s) in them");
    await freshMailbox(1, `${box}/Late`);
    const second = await call("manage_mailbox", { ...args, two_call_token: tokenOf(first.text) }, { channel: fallback(), mount: "mailbox-token", registry });
    expect(second.text).toMatch(/^Not done: what this call would act on changed since the two_call_token was issued/);
    expect(await mailboxes()).toContain(`${box}/Late`);
    expect(await mailboxes()).not.toContain(`${box}-renamed`);
  });
});

describe("set_message_flags and save_draft (never ask)", () => {
  it("sets and clears flags with nobody to ask", async () => {
    const box = await freshMailbox(2);
    expect((await call("set_message_flags", { mailbox: box, uids: [2], add: ["\\Flagged", "$Project"] })).text).toBe(
      `Flags changed on 1 message in "${box}" (UIDs 2): added \\Flagged $Project; removed none.`,
    );
    const admin = await dovecot.admin("carol");
    expect((await admin.messages(box)).find((m) => m.uid === 2)?.flags).toEqual(expect.arrayContaining(["\\Flagged", "$Project"]));
    await admin.close();
  });

  it.each([["\\Deleted"], ["\\deleted"], ["\\DELETED"]])("refuses %s outright, adding or removing, before IMAP is reached", async (flag) => {
    const box = await freshMailbox(1);
    const opened = connector.opened;
    for (const args of [{ add: [flag] }, { remove: [flag] }, { add: ["\\Seen", flag] }]) {
      const result = await call("set_message_flags", { mailbox: box, uids: [1], ...args });
      expect(result.text).toMatch(/^Refused: set_message_flags never sets or clears \\Deleted/);
    }
    expect(connector.opened).toBe(opened);
    const admin = await dovecot.admin("carol");
    expect((await admin.messages(box))[0]?.flags).not.toContain("\\Deleted");
    await admin.close();
  });

  it("saves a draft into the \\Drafts mailbox, marked \\Draft, with nobody to ask", async () => {
    const result = await call("save_draft", { to: ["ann@example.com"], subject: "Grüße", body: "Hallo" });
    expect(result.text).toMatch(/^Saved the draft in "Drafts" as UID \d+\. Nothing was sent\.$/);
  });

  it("refuses a header value with a line break (no header of the caller's own)", async () => {
    const result = await call("save_draft", { to: ["ann@example.com"], subject: "hi\r\nBcc: x@example.com", body: "b" });
    expect(result.text).toBe("Not done: the draft's subject holds a line break or control character. Nothing was changed.");
  });
});

describe("reads", () => {
  it("pages a mailbox newest first and searches non-ASCII text, on one connection per call", async () => {
    const box = await freshMailbox(5);
    const opened = connector.opened;
    const page1 = JSON.parse((await call("list_messages", { mailbox: box, limit: 2 })).text);
    expect(page1.messages.map((m: { uid: number }) => m.uid)).toEqual([5, 4]);
    expect(page1.next_offset).toBe(2);
    const page3 = JSON.parse((await call("list_messages", { mailbox: box, limit: 2, offset: 4 })).text);
    expect(page3.messages.map((m: { uid: number }) => m.uid)).toEqual([1]);
    expect(page3.next_offset).toBeNull();
    const found = JSON.parse((await call("search_messages", { mailbox: "INBOX", subject: "Grüße" })).text);
    expect(found.total).toBe(1);
    expect(found.messages[0].subject).toBe("Grüße aus Köln");
    expect(connector.opened - opened).toBe(3);
  });

  it("reads a message's text and attachments, and reads folders with non-ASCII names", async () => {
    const got = JSON.parse((await call("get_message", { mailbox: "INBOX", uid: 2 })).text);
    expect(got.attachments).toEqual([
      { index: 0, filename: "report.pdf", mime_type: "application/pdf", size: 25 },
      { index: 1, filename: "Übersicht 日本.txt", mime_type: "text/plain", size: 22 },
    ]);
    const files = await call("get_attachments", { mailbox: "INBOX", uid: 2, indexes: [1] });
    const blob = (files.result.content as { resource?: { blob: string } }[])[1]?.resource?.blob as string;
    expect(Buffer.from(blob, "base64").toString()).toBe("Zeile eins\nZeile zwei\n");
    const listed = JSON.parse((await call("list_messages", { mailbox: "Entwürfe/Größe & Maß" })).text);
    expect(listed.messages[0].subject).toBe("Entwurf");
  });

  it("refuses an attachment one byte over its cap whole, and returns one at the cap", async () => {
    const box = await freshMailbox(0);
    const admin = await dovecot.admin("carol");
    await admin.append(box, message({ subject: "at cap", text: "x", attachments: [{ name: "a.bin", type: "application/octet-stream", content: Buffer.alloc(MAX_ATTACHMENT_BYTES, 1) }] }));
    await admin.append(box, message({ subject: "over cap", text: "x", attachments: [{ name: "b.bin", type: "application/octet-stream", content: Buffer.alloc(MAX_ATTACHMENT_BYTES + 1, 1) }] }));
    await admin.close();
    const at = await call("get_attachments", { mailbox: box, uid: 1 });
    expect(at.isError).toBe(false);
    const over = await call("get_attachments", { mailbox: box, uid: 2 });
    expect(over.text).toBe(
      `Not done: attachment 0 is ${MAX_ATTACHMENT_BYTES + 1} bytes, more than the ${MAX_ATTACHMENT_BYTES} this server returns; no attachment was returned, and none is cut short. Nothing was changed.`,
    );
  }, 30_000);

  it("refuses a message over its size cap without reading it", async () => {
    const box = await freshMailbox(0);
    const admin = await dovecot.admin("carol");
    await admin.append(box, message({ subject: "huge", text: "y".repeat(MAX_MESSAGE_BYTES) }));
    await admin.close();
    const result = await call("get_message", { mailbox: box, uid: 1 });
    expect(result.text).toMatch(new RegExp(`^Not done: the message is \\d+ bytes, more than the ${MAX_MESSAGE_BYTES} this server reads; it was not read, and nothing is cut short\\.`));
  }, 30_000);
});

describe("ELICITATION", () => {
  it("false: a guarded tool takes the token on a slug that allows it, and refuses on one that does not", async () => {
    const box = await freshMailbox(1);
    const r = route("accept");
    const token = await call(
      "delete_messages",
      { mailbox: box, uids: [1] },
      { mount: "mailbox-token", channel: { ...ask(r.url), slug: "mailbox-token", fallback: "token" }, extra: { ELICITATION: "false" } },
    );
    expect(token.text).toMatch(/^Not done yet: mailbox-token did not ask a person about this call \(this server runs with ELICITATION=false/);
    const refused = await call("delete_messages", { mailbox: box, uids: [1] }, { channel: ask(r.url), extra: { ELICITATION: "false" } });
    expect(refused.text).toMatch(/^Refused: this server runs with ELICITATION=false, so it asks nobody, and slug "mailbox" does not allow the two-call token/);
    expect(r.prompts()).toEqual([]);
    expect(await uidsIn(box)).toEqual([1]);
  });

  it("true asks as usual; any other value refuses every request naming both valid values", async () => {
    const box = await freshMailbox(1);
    const r = route("decline");
    expect((await call("delete_messages", { mailbox: box, uids: [1] }, { channel: ask(r.url), extra: { ELICITATION: "true" } })).text).toMatch(/^Not done: the person declined/);
    for (const value of ["1", "off", "yes", "", "TRUE"]) {
      const result = await call("list_mailboxes", {}, { extra: { ELICITATION: value } });
      expect((result.error as { message?: string } | undefined)?.message ?? result.text).toMatch(/ELICITATION must be "true" .* or "false"/);
    }
  });
});
