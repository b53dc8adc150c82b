// The tools that change messages: delete_messages and move_messages always ask (a move and a copy under different
// keys), set_message_flags and save_draft never do, and \Deleted is refused outright (docs/rules.md R-MAIL-2,
// R-MAIL-3). Each resolves the exact UIDs the call names, every one of them there, in a mailbox opened for writing;
// one that asked looks again, on the connection it writes over, before it writes (mailbox.call.ts).
import type { CallToolResult } from "@modelcontextprotocol/server";
import * as z from "zod";
import { hasUnsafe } from "../../contract/text";
import type { FingerprintInput } from "../kit/fingerprint";
import { always, type Guard, never, refusal, runGuarded } from "../kit/guard";
import { twoCallTokenShape } from "../kit/token";
import { jsonSchemaOnce } from "../kit/tools";
import { changedSince, failed, notDone, plural, through } from "./mailbox.call";
import type { ImapClient } from "./mailbox.client";
import { MailError } from "./mailbox.errors";
import { deleteFingerprint, deletePrompt, describeMessages, describeTransfer, type MessagesTarget, type TransferTarget, transferFingerprint, transferPrompt } from "./mailbox.guard";
import { buildDraft } from "./mailbox.mime";
import { DELETES, DRAFTS, FLAGS, flag, KEYWORD, MOVES, mailboxName, SYSTEM_FLAGS, uids } from "./mailbox.schema";
import type { MailSession } from "./mailbox.session";
import { canonicalUids } from "./mailbox.uids";

/** A mailbox that can hold messages: not a \Noselect or \NonExistent name in the hierarchy. */
const selectable = (flags: readonly string[]) => !flags.some((f) => ["\\noselect", "\\nonexistent"].includes(f.toLowerCase()));

/**
 * The folders a person may pick as a move's destination (R-MAIL-12): those that can hold messages, never the source,
 * and only names a person reads unambiguously: a name the server lists with a control, bidi, invisible or
 * space-padding character (a shared folder "\u202Eevihcra" that shows as "archive") is left out, not cleaned.
 */
const offered = (boxes: readonly { name: string; flags: readonly string[] }[], source: string) =>
  boxes.filter((b) => selectable(b.flags) && b.name !== source && !hasUnsafe(b.name)).map((b) => b.name);

/** The messages a call names, in a mailbox opened for writing on `client`; every UID must be there, or nobody is asked. */
async function selectMessages(client: ImapClient, mount: string, mailbox: string, list: readonly number[]): Promise<MessagesTarget> {
  const sorted = canonicalUids(list);
  const box = await client.open(mailbox, false);
  const present = await client.existing(sorted);
  const missing = sorted.filter((u) => !present.includes(u));
  if (missing.length > 0) throw new MailError(`mailbox "${mailbox}" (UIDVALIDITY ${box.uidValidity}) holds no message with UID ${missing.join(", ")}`);
  return { mount, mailbox, uidValidity: box.uidValidity, uids: sorted, present };
}

/** A guarded look at the messages: on a connection of its own, closed before anyone is asked (R-MAIL-8). */
const messagesTarget = (session: MailSession, mailbox: string, list: readonly number[]) => session.look((client) => selectMessages(client, session.mount, mailbox, list));

// ---- delete_messages: always asks ----
export const deleteGuard = (session: MailSession): Guard<{ mailbox: string; uids: number[] }, MessagesTarget> => ({
  rule: always,
  fallback: "token",
  resolve: (a) => messagesTarget(session, a.mailbox, a.uids),
  fingerprint: deleteFingerprint,
  prompt: deletePrompt,
  describe: describeMessages,
  act: async (t, write) => {
    try {
      const client = await session.client();
      const changed = await changedSince(t, await selectMessages(client, session.mount, t.mailbox, t.uids), deleteFingerprint, describeMessages);
      if (changed !== undefined) return notDone(changed);
      await through(write, session.mount, "expunge", { binds: deleteFingerprint(t), needsApproval: true }, () => client.expunge(t.uids));
      return { content: [{ type: "text", text: `Deleted ${plural(t.uids.length, "message")} from "${t.mailbox}" (UIDs ${t.uids.join(", ")}).` }] };
    } catch (error) {
      return failed(error);
    }
  },
});
export const DELETE_MESSAGES = {
  description:
    "Deletes messages by UID, permanently (expunged, not moved to a trash folder). Always asks a person first, shown the mailbox, the count and the UIDs, never a subject or sender; where this server cannot ask, it answers a two-call token instead.",
  inputSchema: jsonSchemaOnce(z.object({ mailbox: mailboxName("The mailbox holding the messages."), uids, ...twoCallTokenShape })),
  annotations: DELETES,
};

// ---- move_messages: always asks, move and copy under different keys ----
export const MOVE_MESSAGES = {
  description:
    "Moves (default) or copies messages by UID into another mailbox. Always asks a person first, for a move and for a copy alike: on a shared or public folder either one discloses the messages to everyone who can read it. The person is shown both mailboxes, the count and the UIDs, never a subject or sender; where this server cannot ask, it answers a two-call token instead.",
  inputSchema: jsonSchemaOnce(
    z.object({
      mailbox: mailboxName("The mailbox holding the messages."),
      uids,
      destination: mailboxName("The mailbox to move or copy them into; it must exist."),
      mode: z.enum(["move", "copy"]).optional().describe("move (default) takes them out of the source; copy leaves them there too."),
      ...twoCallTokenShape,
    }),
  ),
  annotations: MOVES,
};
type TransferArgs = { mailbox: string; uids: number[]; destination: string; mode?: "move" | "copy" };
/** A move's or copy's target on `client`: the messages, and the destination, which must exist (a move never creates the folder it hands messages to). */
async function selectTransfer(client: ImapClient, mount: string, a: TransferArgs): Promise<TransferTarget> {
  if (a.destination === a.mailbox) throw new MailError("the destination is the mailbox the messages are in");
  const target = await selectMessages(client, mount, a.mailbox, a.uids);
  const dest = await client.status(a.destination).catch(() => {
    throw new MailError(`there is no mailbox "${a.destination}" to ${a.mode ?? "move"} into`);
  });
  return { ...target, mode: a.mode ?? "move", destination: a.destination, destinationValidity: dest.uidValidity };
}
export const transferGuard = (session: MailSession): Guard<TransferArgs, TransferTarget> => {
  // The folders the person may pick instead of the model's destination (docs/rules.md R-MAIL-12), listed by the
  // call's first resolve, which runs before the form is built; the person's pick is resolved and bound like a model's.
  let folders: string[] | undefined;
  return {
    rule: always,
    fallback: "token",
    editable: { destination: { mode: "pick", label: "Into mailbox", choices: () => folders } },
    resolve: (a) =>
      session.look(async (client) => {
        const target = await selectTransfer(client, session.mount, a);
        folders ??= offered(await client.listMailboxes(), a.mailbox);
        return target;
      }),
    fingerprint: transferFingerprint,
    prompt: transferPrompt,
    describe: describeTransfer,
    act: async (t, write) => {
      try {
        const client = await session.client();
        const changed = await changedSince(t, await selectTransfer(client, session.mount, t), transferFingerprint, describeTransfer);
        if (changed !== undefined) return notDone(changed);
        const moved = await through(write, session.mount, t.mode, { binds: transferFingerprint(t), needsApproval: true }, () => client.transfer(t.mode, t.uids, t.destination));
        const done = t.mode === "move" ? "Moved" : "Copied";
        const uidsNow =
          moved === undefined ? "" : ` Their UIDs in "${t.destination}": ${moved.destination.map(([a, b]) => (a === b ? `${a}` : `${a}:${b}`)).join(",")} (UIDVALIDITY ${moved.uidValidity}).`;
        return { content: [{ type: "text", text: `${done} ${plural(t.uids.length, "message")} from "${t.mailbox}" to "${t.destination}" (UIDs ${t.uids.join(", ")}).${uidsNow}` }] };
      } catch (error) {
        return failed(error);
      }
    },
  };
};

// ---- set_message_flags: never asks; \Deleted refused ----
interface FlagsTarget extends MessagesTarget {
  add: string[];
  remove: string[];
}
const flagsFingerprint = (t: FlagsTarget): FingerprintInput => ({
  operation: "set_flags",
  target: { mount: t.mount, mailbox: t.mailbox, uid_validity: t.uidValidity, uids: { set: t.uids }, add: { set: t.add }, remove: { set: t.remove } },
});
export const SET_MESSAGE_FLAGS = {
  description:
    "Adds and removes flags (\\Seen, \\Answered, \\Flagged, \\Draft, or keywords) on messages by UID. Never asks: flags come back off. \\Deleted is refused outright: on a server that expunges automatically it is a deletion, and deleting is delete_messages, which asks.",
  inputSchema: jsonSchemaOnce(
    z.object({
      mailbox: mailboxName("The mailbox holding the messages."),
      uids,
      add: z.array(flag).max(10).optional().describe("Flags to add."),
      remove: z.array(flag).max(10).optional().describe("Flags to remove."),
    }),
  ),
  annotations: FLAGS,
};
export function setFlags(s: MailSession, a: z.infer<typeof SET_MESSAGE_FLAGS.inputSchema>): Promise<CallToolResult> {
  const add = a.add ?? [];
  const remove = a.remove ?? [];
  const all = [...add, ...remove];
  // Refused before the server is reached (R-MAIL-3).
  if (all.some((f) => f.toLowerCase() === "\\deleted"))
    return Promise.resolve(
      refusal("set_message_flags never sets or clears \\Deleted: on a server that expunges automatically that is a deletion, and deleting is delete_messages, which asks a person"),
    );
  const bad = all.find((f) => (f.startsWith("\\") ? !SYSTEM_FLAGS.has(f) : !KEYWORD.test(f)));
  if (bad !== undefined) return Promise.resolve(refusal(`"${bad.slice(0, 64)}" is not a flag this tool sets: \\Seen, \\Answered, \\Flagged, \\Draft, or a keyword of letters, digits and $_.-`));
  if (all.length === 0) return Promise.resolve(refusal("name at least one flag to add or remove"));
  return runGuarded<{ mailbox: string; uids: number[] }, FlagsTarget>(
    {
      rule: never,
      // Never asks, so its look keeps its connection for the write that follows at once.
      resolve: async (x) => ({ ...(await selectMessages(await s.client(), s.mount, x.mailbox, x.uids)), add, remove }),
      fingerprint: flagsFingerprint,
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) => {
        try {
          const client = await s.client();
          await through(write, s.mount, "store", { binds: flagsFingerprint(t), needsApproval: false }, () => client.store(t.uids, t.add, t.remove));
          return {
            content: [
              {
                type: "text",
                text: `Flags changed on ${plural(t.uids.length, "message")} in "${t.mailbox}" (UIDs ${t.uids.join(", ")}): added ${t.add.join(" ") || "none"}; removed ${t.remove.join(" ") || "none"}.`,
              },
            ],
          };
        } catch (error) {
          return failed(error);
        }
      },
    },
    a,
  );
}

// ---- save_draft: never asks ----
const address = z
  .string()
  .min(3)
  .max(254)
  .regex(/^[^\s@<>,;"]+@[^\s@<>,;"]+$/, "an address as name@example.com");
export const SAVE_DRAFT = {
  description: "Saves a plain-text draft into the account's drafts mailbox (the one marked \\Drafts, else Drafts). Never asks: nothing is sent, and a draft can be deleted.",
  inputSchema: jsonSchemaOnce(
    z.object({
      to: z.array(address).min(1).max(50).describe("Recipients' addresses."),
      cc: z.array(address).max(50).optional().describe("Copy recipients' addresses."),
      subject: z.string().max(900).describe("The subject."),
      body: z.string().max(100_000).describe("The text."),
    }),
  ),
  annotations: DRAFTS,
};
export function saveDraft(s: MailSession, a: z.infer<typeof SAVE_DRAFT.inputSchema>): Promise<CallToolResult> {
  return runGuarded<typeof a, { mailbox: string; message: Uint8Array; digest: string }>(
    {
      rule: never,
      resolve: async (x) => {
        const client = await s.client();
        const boxes = await client.listMailboxes();
        const drafts = boxes.find((b) => b.flags.some((f) => f.toLowerCase() === "\\drafts"))?.name ?? "Drafts";
        const message = buildDraft({ to: x.to, cc: x.cc ?? [], subject: x.subject, body: x.body });
        return { mailbox: drafts, message, digest: await sha256(message) };
      },
      fingerprint: (t) => ({ operation: "save_draft", target: { mount: s.mount, mailbox: t.mailbox, message_sha256: t.digest } }),
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) => {
        try {
          const client = await s.client();
          const binds = { operation: "save_draft", target: { mount: s.mount, mailbox: t.mailbox, message_sha256: t.digest } };
          const newUid = await through(write, s.mount, "append", { binds, needsApproval: false }, () => client.append(t.mailbox, t.message, ["\\Draft", "\\Seen"]));
          return { content: [{ type: "text", text: `Saved the draft in "${t.mailbox}"${newUid === undefined ? "" : ` as UID ${newUid}`}. Nothing was sent.` }] };
        } catch (error) {
          return failed(error);
        }
      },
    },
    a,
  );
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
