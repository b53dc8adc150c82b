// The mailbox bundle end to end: both official MCP client generations through the gateway to the bundle, its TCP
// connection (cloudflare:sockets on workerd) to the stack's Dovecot on 8793, and the approval service on 8788
// deciding as a person would. The table of what asks (docs/rules.md R-MAIL-2) row by row: what asks, with accept,
// decline and expiry; what takes the token; what never asks. The binding of an approval to the UID set, both folders,
// the mode and the UIDVALIDITY, and prompts free of any subject or body. Each test works on mailboxes of its own, so
// none depends on another's order.
import { describe, expect, it } from "vitest";
import { decidePrompt, listPrompts, mintSession, waitForPendingPrompt } from "../../../approvals/dev-api.mjs";
import { bearer, connectLegacy, connectModern, TOKENS, textOf } from "../../e2e/helpers";
// @ts-expect-error: plain ESM helper without types
import { DEV_USERS, DOVECOT_PORT, HOSTILE_BODY, HOSTILE_SUBJECT, PUBLIC_FOLDER, recreateMailbox } from "../../servers/dovecot/dovecot.mjs";
// @ts-expect-error: plain ESM helper without types
import { ImapAdmin, message } from "../../servers/dovecot/imap-admin.mjs";

type User = "alice" | "bob";
type Connect = typeof connectModern;

async function admin(user: User) {
  return ImapAdmin.login({ port: DOVECOT_PORT, user, password: DEV_USERS[user] });
}

/** A mailbox name no other test uses. */
const unique = (what = "E2E") => `${what}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/** A fresh mailbox of `n` messages from Mallory: the first's subject tells the approver what to do, every body too. */
async function freshMailbox(user: User, n: number, name = unique()): Promise<string> {
  const a = await admin(user);
  try {
    await a.create(name);
    for (let i = 1; i <= n; i++) await a.append(name, message({ from: "Mallory <mallory@example.com>", subject: i === 1 ? HOSTILE_SUBJECT : `Mallory's note ${i}`, text: `${HOSTILE_BODY}\r\n` }));
  } finally {
    await a.close();
  }
  return name;
}

async function uidsIn(user: User, name: string): Promise<number[]> {
  const a = await admin(user);
  try {
    return (await a.messages(name)).map((m: { uid: number }) => m.uid);
  } finally {
    await a.close();
  }
}

async function flagsIn(user: User, name: string): Promise<Record<number, string[]>> {
  const a = await admin(user);
  try {
    return Object.fromEntries((await a.messages(name)).map((m: { uid: number; flags: string[] }) => [m.uid, m.flags.filter((f) => f !== "\\Recent").sort()]));
  } finally {
    await a.close();
  }
}

async function mailboxes(user: User): Promise<string[]> {
  const a = await admin(user);
  try {
    return await a.mailboxes();
  } finally {
    await a.close();
  }
}

async function callThrough(slug: string, tool: string, args: Record<string, unknown>, approvalUrl?: string, connect: Connect = connectModern) {
  const client = await connect(slug, { ...bearer(TOKENS.session), ...(approvalUrl === undefined ? {} : { "x-elicitation-url": approvalUrl }) });
  try {
    const result = await client.callTool(tool, args);
    return { result, text: textOf(result) };
  } finally {
    await client.close();
  }
}

/** Starts a call that should ask, and waits for its question; fails at once, with the answer, if it answers unasked. */
async function question(slug: string, tool: string, args: Record<string, unknown>, connect: Connect = connectModern) {
  const session = await mintSession();
  const call = callThrough(slug, tool, args, session.elicitationUrl, connect);
  const prompt = await Promise.race([
    waitForPendingPrompt(session.sessionId),
    call.then(({ text }) => {
      throw new Error(`${tool} answered without asking: ${text}`);
    }),
  ]);
  return { session, prompt, call };
}

/** A call that should ask, answered with `action`: the question's text and the call's answer. */
async function answered(slug: string, tool: string, args: Record<string, unknown>, action: "accept" | "decline", connect: Connect = connectModern) {
  const { session, prompt, call } = await question(slug, tool, args, connect);
  await decidePrompt(session.sessionId, prompt.requestId, action);
  return { prompt: prompt.message, text: (await call).text };
}

/** A call that brings an approval address and must not use it: its answer, and no question was raised. */
async function unasked(slug: string, tool: string, args: Record<string, unknown>, connect: Connect = connectModern) {
  const session = await mintSession();
  const { text } = await callThrough(slug, tool, args, session.elicitationUrl, connect);
  // The call has answered, so any question it raised is on record by now.
  expect(await listPrompts(session.sessionId)).toEqual([]);
  return text;
}

/** The question holds no word of any message: not the hostile subject, not the sender, not the body (R-MAIL-4). */
function expectNoMessageContent(prompt: string): void {
  for (const word of ["APPROVER", "Accept now", "administrator", "IGNORE", "approve every", "Mallory", "mallory", "Mallory's note"]) expect(prompt).not.toContain(word);
}

const promptOf = (slug: string, heading: string, consequence: string[], values: [string, string][]) =>
  [`${slug}: ${heading}`, "", ...consequence, "", "Values below are supplied by the caller, not by this server:", ...values.map(([k, v]) => `  ${k}: ${v}`)].join("\n");

const MOVE_WORDS = ["The messages keep their content but get new UIDs, so the current ones stop", "working."];
const COPY_WORDS = ["Copies are new messages in the destination: whoever can read that mailbox can", "read them, and the source mailbox keeps no trace of the copy."];
const TOKEN = /^[A-Za-z0-9_-]{43}$/m;

describe("the mailbox tools through the gateway", () => {
  it("are listed with all four annotations, get_attachments read-only with no bucket bound", async () => {
    const client = await connectLegacy("mailbox", bearer(TOKENS.session));
    try {
      const { tools } = await client.listTools();
      const R = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
      expect(Object.fromEntries(tools.map((t) => [t.name, t.annotations]))).toEqual({
        list_mailboxes: R,
        list_messages: R,
        search_messages: R,
        get_message: R,
        get_attachments: R,
        delete_messages: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        move_messages: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        manage_mailbox: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        set_message_flags: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        save_draft: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      });
    } finally {
      await client.close();
    }
  });

  it("reads over TCP from the Worker: a search and a message with a non-ASCII subject", async () => {
    const found = JSON.parse((await callThrough("mailbox", "search_messages", { mailbox: "INBOX", subject: "Grüße" })).text);
    expect(found.total).toBe(1);
    const got = JSON.parse((await callThrough("mailbox", "get_message", { mailbox: "INBOX", uid: found.messages[0].uid }, undefined, connectLegacy)).text);
    expect(got.subject).toBe("Grüße aus Köln");
  });
});

describe("delete_messages: always asks", () => {
  it("delete asks a person with counts, UIDs and folder names only: a decline deletes nothing, an accept deletes exactly those UIDs", async () => {
    const box = await freshMailbox("alice", 3);
    for (const action of ["decline", "accept"] as const) {
      const { prompt, text } = await answered("mailbox", "delete_messages", { mailbox: box, uids: [2, 1] }, action);
      expect(prompt).toBe(
        promptOf(
          "mailbox",
          "This will delete 2 message(s) permanently.",
          ["The messages are expunged at once, not moved to a trash folder, and cannot be", "restored."],
          [
            ["Mailbox", box],
            ["UIDs", "1, 2"],
          ],
        ),
      );
      expectNoMessageContent(prompt);
      if (action === "decline") {
        expect(text).toMatch(/^Not done: the person declined/);
        expect(await uidsIn("alice", box)).toEqual([1, 2, 3]);
      } else {
        expect(text).toBe(`Deleted 2 messages from "${box}" (UIDs 1, 2).`);
        expect(await uidsIn("alice", box)).toEqual([3]);
      }
    }
  });
});

describe("move_messages: always asks, for a move and for a copy", () => {
  it("a move asks with both folders and the UIDs only: a decline moves nothing, an accept moves exactly those UIDs", async () => {
    const box = await freshMailbox("alice", 3);
    const dest = await freshMailbox("alice", 0, unique("E2E-dest"));
    for (const action of ["decline", "accept"] as const) {
      const { prompt, text } = await answered("mailbox", "move_messages", { mailbox: box, uids: [1, 3], destination: dest, mode: "move" }, action, connectLegacy);
      expect(prompt).toBe(
        promptOf("mailbox", "This will move 2 message(s) between mailboxes.", MOVE_WORDS, [
          ["From", box],
          ["To", dest],
          ["UIDs", "1, 3"],
        ]),
      );
      expectNoMessageContent(prompt);
      if (action === "decline") {
        expect(text).toMatch(/^Not done: the person declined/);
        expect(await uidsIn("alice", box)).toEqual([1, 2, 3]);
        expect(await uidsIn("alice", dest)).toEqual([]);
      } else {
        expect(text).toMatch(new RegExp(`^Moved 2 messages from "${box}" to "${dest}" \\(UIDs 1, 3\\)\\. Their UIDs in "${dest}": 1:2 \\(UIDVALIDITY \\d+\\)\\.$`));
        expect(await uidsIn("alice", box)).toEqual([2]);
        expect(await uidsIn("alice", dest)).toEqual([1, 2]);
      }
    }
  });

  it("a copy into Public/Shared asks too, in its own words: a decline copies nothing, an accept copies exactly those UIDs and keeps the source", async () => {
    const box = await freshMailbox("alice", 2);
    const shared = await uidsIn("alice", PUBLIC_FOLDER);
    for (const action of ["decline", "accept"] as const) {
      const { prompt, text } = await answered("mailbox", "move_messages", { mailbox: box, uids: [1, 2], destination: PUBLIC_FOLDER, mode: "copy" }, action);
      expect(prompt).toBe(
        promptOf("mailbox", "This will copy 2 message(s) between mailboxes.", COPY_WORDS, [
          ["From", box],
          ["To", PUBLIC_FOLDER],
          ["UIDs", "1, 2"],
        ]),
      );
      expectNoMessageContent(prompt);
      const after = await uidsIn("alice", PUBLIC_FOLDER);
      if (action === "decline") {
        expect(text).toMatch(/^Not done: the person declined/);
        expect(after).toEqual(shared);
      } else {
        expect(text).toMatch(new RegExp(`^Copied 2 messages from "${box}" to "${PUBLIC_FOLDER}" \\(UIDs 1, 2\\)\\.`));
        expect(after.slice(0, shared.length)).toEqual(shared);
        expect(after).toHaveLength(shared.length + 2);
      }
      expect(await uidsIn("alice", box)).toEqual([1, 2]);
    }
  });

  it("does nothing when the mailbox is recreated between the question and the action (a new UIDVALIDITY, the same UIDs), and says so", async () => {
    const box = await freshMailbox("alice", 2);
    const dest = await freshMailbox("alice", 0, unique("E2E-dest"));
    const { session, prompt, call } = await question("mailbox", "move_messages", { mailbox: box, uids: [1, 2], destination: dest, mode: "move" });
    const a = await admin("alice");
    const destValidity = (await a.status(dest)).uidValidity;
    const { before, after } = await recreateMailbox(a, box, { messages: 3 });
    await decidePrompt(session.sessionId, prompt.requestId, "accept");
    expect((await call).text).toBe(
      `Not done: the target changed after it was approved (approved: 2 of 2 UID(s) present in "${box}" at UIDVALIDITY ${before}, into "${dest}" at UIDVALIDITY ${destValidity}; now: 2 of 2 UID(s) present in "${box}" at UIDVALIDITY ${after}, into "${dest}" at UIDVALIDITY ${destValidity}), so the approval does not cover it. Nothing was written.`,
    );
    expect(await uidsIn("alice", box)).toEqual([1, 2, 3]);
    expect(await uidsIn("alice", dest)).toEqual([]);
  });
});

describe("manage_mailbox: delete asks, rename takes the token only, create never asks", () => {
  it("delete asks with the folder and its message count only: a decline keeps it, an accept deletes it", async () => {
    const box = await freshMailbox("alice", 2);
    for (const action of ["decline", "accept"] as const) {
      const { prompt, text } = await answered("mailbox", "manage_mailbox", { action: "delete", mailbox: box }, action, connectLegacy);
      expect(prompt).toBe(promptOf("mailbox", "This will delete a mailbox and the 2 message(s) in it.", ["A deleted mailbox and its messages cannot be restored."], [["Mailbox", box]]));
      expectNoMessageContent(prompt);
      if (action === "decline") {
        expect(text).toMatch(/^Not done: the person declined/);
        expect(await uidsIn("alice", box)).toEqual([1, 2]);
      } else {
        expect(text).toBe(`Deleted mailbox "${box}" and the 2 messages in it.`);
        expect(await mailboxes("alice")).not.toContain(box);
      }
    }
  });

  it("rename never asks, even with an approval address: it answers a two-call token and renames once on the second identical call", async () => {
    const box = await freshMailbox("alice", 1);
    const to = unique("E2E-renamed");
    const args = { action: "rename", mailbox: box, new_name: to };
    const first = await unasked("mailbox", "manage_mailbox", args);
    expect(first).toMatch(
      /^Not done yet: mailbox did not ask a person about this call \(a rename is reversible, so this server takes the two-call token for it instead of asking a person\), so nothing was written\./,
    );
    const token = TOKEN.exec(first)?.[0] as string;
    expect(await mailboxes("alice")).toContain(box);
    const second = await unasked("mailbox", "manage_mailbox", { ...args, two_call_token: token }, connectLegacy);
    expect(second).toBe(
      `Renamed mailbox "${box}" to "${to}".Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: mailbox did not ask a person.`,
    );
    const after = await mailboxes("alice");
    expect(after).toContain(to);
    expect(after).not.toContain(box);
    expect(await uidsIn("alice", to)).toEqual([1]);
    // Again with the same token: the mailbox it named is gone, and nothing more is renamed.
    expect(await unasked("mailbox", "manage_mailbox", { ...args, two_call_token: token })).toBe(`Not done: there is no mailbox "${box}". Nothing was changed.`);
    expect(await mailboxes("alice")).toEqual(after);
  });

  it("rename refuses to carry a mailbox and its child into Public/Shared, before any token, and a rename within its parent counts the child's messages", async () => {
    const box = await freshMailbox("alice", 2);
    await freshMailbox("alice", 1, `${box}/Sub`);
    const moved = await unasked("mailbox", "manage_mailbox", { action: "rename", mailbox: box, new_name: `Public/Shared/${box}` });
    expect(moved).toMatch(/^Not done: a rename changes only the last part of the name and keeps the mailbox at the top level; .* use move_messages, which asks a person\. Nothing was changed\.$/);
    expect(TOKEN.exec(moved)).toBeNull();
    const after = await mailboxes("alice");
    expect(after).toEqual(expect.arrayContaining([box, `${box}/Sub`]));
    expect(after).not.toContain(`Public/Shared/${box}`);
    const within = await unasked("mailbox", "manage_mailbox", { action: "rename", mailbox: box, new_name: `${box}-renamed` });
    expect(within).toContain("mailbox: This will rename a mailbox, the 1 mailbox(es) under it and the 3 message(s) in them.");
  });

  it("create never asks: with an approval address, and with none on a slug that asks", async () => {
    const withAddress = unique("E2E-made");
    expect(await unasked("mailbox", "manage_mailbox", { action: "create", mailbox: withAddress })).toBe(`Created mailbox "${withAddress}".`);
    const withNone = unique("E2E-made");
    expect((await callThrough("mailbox", "manage_mailbox", { action: "create", mailbox: withNone }, undefined, connectLegacy)).text).toBe(`Created mailbox "${withNone}".`);
    expect(await mailboxes("alice")).toEqual(expect.arrayContaining([withAddress, withNone]));
  });
});

describe("set_message_flags and save_draft: never ask", () => {
  it("set_message_flags adds and removes flags without asking anyone", async () => {
    const box = await freshMailbox("alice", 2);
    const added = await unasked("mailbox", "set_message_flags", { mailbox: box, uids: [1, 2], add: ["\\Flagged", "$Important"] });
    expect(added).toBe(`Flags changed on 2 messages in "${box}" (UIDs 1, 2): added \\Flagged $Important; removed none.`);
    expect(await flagsIn("alice", box)).toEqual({ 1: ["$Important", "\\Flagged"], 2: ["$Important", "\\Flagged"] });
    expect(await unasked("mailbox", "set_message_flags", { mailbox: box, uids: [2], remove: ["\\Flagged"] }, connectLegacy)).toMatch(/^Flags changed on 1 message in /);
    expect(await flagsIn("alice", box)).toEqual({ 1: ["$Important", "\\Flagged"], 2: ["$Important"] });
  });

  it("\\Deleted is refused outright by set_message_flags", async () => {
    const box = await freshMailbox("alice", 1);
    for (const flags of [{ add: ["\\Deleted"] }, { remove: ["\\deleted"] }]) {
      const { text } = await callThrough("mailbox", "set_message_flags", { mailbox: box, uids: [1], ...flags });
      expect(text).toMatch(/^Refused: set_message_flags never sets or clears \\Deleted/);
    }
    expect(await flagsIn("alice", box)).toEqual({ 1: [] });
  });

  it("save_draft saves into the drafts mailbox without asking anyone, and sends nothing", async () => {
    const subject = unique("Draft");
    const text = await unasked("mailbox", "save_draft", { to: ["ann@example.com"], subject, body: "Noch nicht fertig." });
    const uid = Number(/^Saved the draft in "Drafts" as UID (\d+)\. Nothing was sent\.$/.exec(text)?.[1]);
    expect(uid).toBeGreaterThan(0);
    expect((await flagsIn("alice", "Drafts"))[uid]).toEqual(["\\Draft", "\\Seen"]);
  });
});

describe("an unanswered question (mailbox-brief: a 6 s deadline, so the question expires at 4.5 s)", () => {
  it("delete, move, copy and a mailbox delete each expire unanswered, and change nothing", async () => {
    const box = await freshMailbox("alice", 2);
    const doomed = await freshMailbox("alice", 1);
    const dest = await freshMailbox("alice", 0, unique("E2E-dest"));
    // All four at once, each with a session of its own: one deadline's wait for the lot.
    const calls = [
      ["delete_messages", { mailbox: box, uids: [1] }, "This will delete 1 message(s) permanently."],
      ["move_messages", { mailbox: box, uids: [1, 2], destination: dest, mode: "move" }, "This will move 2 message(s) between mailboxes."],
      ["move_messages", { mailbox: box, uids: [2], destination: dest, mode: "copy" }, "This will copy 1 message(s) between mailboxes."],
      ["manage_mailbox", { action: "delete", mailbox: doomed }, "This will delete a mailbox and the 1 message(s) in it."],
    ] as const;
    const asked = await Promise.all(calls.map(([tool, args]) => question("mailbox-brief", tool, args)));
    for (const [i, { prompt }] of asked.entries()) {
      expect(prompt.message.split("\n")[0]).toBe(`mailbox-brief: ${calls[i]?.[2]}`);
      expectNoMessageContent(prompt.message);
    }
    for (const { call } of asked) expect((await call).text).toMatch(/^Not done: the approval expired before anyone answered/);
    expect(await uidsIn("alice", box)).toEqual([1, 2]);
    expect(await uidsIn("alice", doomed)).toEqual([1]);
    expect(await uidsIn("alice", dest)).toEqual([]);
  });
});

describe("the two-call token (mailbox-token, fallback: token)", () => {
  it("acts once on the second identical call, and not on a widened UID set", async () => {
    const box = await freshMailbox("bob", 3);
    const dest = await freshMailbox("bob", 0, unique("E2E-dest"));
    const args = { mailbox: box, uids: [1], destination: dest, mode: "copy" };
    const first = await callThrough("mailbox-token", "move_messages", args);
    expect(first.text).toMatch(/^Not done yet: mailbox-token did not ask a person about this call \(no approval address came with this call\), so nothing was written\./);
    expect(first.text).toContain("The token proves the call was made twice with the same arguments, and nothing more: nobody was asked, and nobody approved it.");
    expectNoMessageContent(first.text);
    const token = TOKEN.exec(first.text)?.[0] as string;
    const widened = await callThrough("mailbox-token", "move_messages", { ...args, uids: [1, 2], two_call_token: token });
    expect(widened.text).toMatch(/^Not done: the two_call_token was issued for other arguments/);
    expect(await uidsIn("bob", dest)).toEqual([]);
    const second = await callThrough("mailbox-token", "move_messages", { ...args, two_call_token: token }, undefined, connectLegacy);
    expect(second.text).toMatch(
      /^Copied 1 message from .*Done on the two-call token, which proves the call was made twice with the same arguments, and nothing more: mailbox-token did not ask a person\.$/,
    );
    expect(await uidsIn("bob", dest)).toEqual([1]);
    // The same call and token again: the source still holds UID 1, so only the token stops a second copy.
    const again = await callThrough("mailbox-token", "move_messages", { ...args, two_call_token: token });
    expect(again.text).toMatch(/^Not done: the two_call_token was already used once/);
    expect(await uidsIn("bob", dest)).toEqual([1]);
    expect(await uidsIn("bob", box)).toEqual([1, 2, 3]);
  });

  it("a token for Archive does not execute Public/Shared, and a copy's token does not execute a move", async () => {
    const box = await freshMailbox("bob", 1);
    const args = { mailbox: box, uids: [1], destination: "Archive", mode: "copy" };
    const token = TOKEN.exec((await callThrough("mailbox-token", "move_messages", args)).text)?.[0] as string;
    const archive = await uidsIn("bob", "Archive");
    const shared = await uidsIn("bob", PUBLIC_FOLDER);
    for (const other of [{ destination: PUBLIC_FOLDER }, { mode: "move" }]) {
      const { text } = await callThrough("mailbox-token", "move_messages", { ...args, ...other, two_call_token: token });
      expect(text).toMatch(/^Not done: the two_call_token was issued for other arguments/);
    }
    expect(await uidsIn("bob", box)).toEqual([1]);
    expect(await uidsIn("bob", "Archive")).toEqual(archive);
    expect(await uidsIn("bob", PUBLIC_FOLDER)).toEqual(shared);
  });

  it("refuses a token whose mailbox was recreated in between (a new UIDVALIDITY, the same UIDs)", async () => {
    const box = await freshMailbox("bob", 2);
    const args = { mailbox: box, uids: [1, 2] };
    const token = TOKEN.exec((await callThrough("mailbox-token", "delete_messages", args)).text)?.[0] as string;
    const { after } = await recreateMailbox(await admin("bob"), box, { messages: 2 });
    const { text } = await callThrough("mailbox-token", "delete_messages", { ...args, two_call_token: token }, undefined, connectLegacy);
    expect(text).toBe(
      `Not done: what this call would act on changed since the two_call_token was issued (now: 2 of 2 UID(s) present in "${box}" at UIDVALIDITY ${after}), so the token does not cover it; call again without it for a new one. Nothing was written.`,
    );
    expect(await uidsIn("bob", box)).toEqual([1, 2]);
  });
});
