// manage_mailbox: create never asks; delete always asks, and only for a mailbox with none under it; rename is
// reversible, so it takes the two-call token only, even where a person could be asked, and stays within its parent
// (docs/rules.md R-MAIL-2, R-MAIL-11, R-MAIL-14). INBOX is never renamed.
import type { CallToolResult } from "@modelcontextprotocol/server";
import * as z from "zod";
import { callRefOf } from "../kit/confirm";
import { fingerprint as digest } from "../kit/fingerprint";
import { gatedWrite } from "../kit/gate";
import { always, type Guard, never, refusal } from "../kit/guard";
import { buildPrompt, PromptRefusal } from "../kit/prompt";
import { currentScope } from "../kit/scope";
import { actedOnTokenLine, tokenStep, twoCallTokenShape } from "../kit/token";
import { jsonSchemaOnce } from "../kit/tools";
import { changedSince, failed, notDone, plural, through } from "./mailbox.call";
import type { ImapClient } from "./mailbox.client";
import { MailError } from "./mailbox.errors";
import { deleteMailboxFingerprint, deleteMailboxPrompt, describeMailbox, type MailboxTarget, type RenameTarget, renameFingerprint, renamePrompt } from "./mailbox.guard";
import { MANAGES, mailboxName } from "./mailbox.schema";
import type { MailSession } from "./mailbox.session";

// ---- manage_mailbox: create never, delete always, rename on the two-call token only ----
type ManageArgs = { action: "create" | "delete" | "rename"; mailbox: string; new_name?: string; two_call_token?: string };
async function statusTarget(client: ImapClient, mount: string, name: string): Promise<MailboxTarget> {
  const status = await client.status(name).catch(() => {
    throw new MailError(`there is no mailbox "${name}"`);
  });
  return { mount, mailbox: name, uidValidity: status.uidValidity, messages: status.messages };
}

/**
 * A mailbox to delete: one with no mailboxes under it. The card counts its own messages only, and some servers delete
 * what sits under a mailbox with it, so one with children is refused before anyone is asked, and again before the
 * write should one appear meanwhile (R-MAIL-14).
 */
async function deleteTarget(client: ImapClient, mount: string, name: string): Promise<MailboxTarget> {
  const target = await statusTarget(client, mount, name);
  const delimiter = await client.delimiter();
  const under = delimiter === undefined ? [] : await client.childNames(name, delimiter);
  if (under.length > 0)
    throw new MailError(
      `mailbox "${name}" has ${under.length} mailbox${under.length === 1 ? "" : "es"} under it; delete or move those first: this tool deletes one mailbox and the messages in it, nothing else`,
    );
  return target;
}
export const createGuard = (session: MailSession): Guard<ManageArgs, { mailbox: string }> => ({
  rule: never,
  resolve: (a) => ({ mailbox: a.mailbox }),
  fingerprint: (t) => ({ operation: "create_mailbox", target: { mount: session.mount, mailbox: t.mailbox } }),
  prompt: () => ({ heading: "", consequence: "", values: [] }),
  act: async (t, write) => {
    try {
      const client = await session.client();
      const binds = { operation: "create_mailbox", target: { mount: session.mount, mailbox: t.mailbox } };
      await through(write, session.mount, "create", { binds, needsApproval: false }, () => client.createMailbox(t.mailbox));
      return { content: [{ type: "text", text: `Created mailbox "${t.mailbox}".` }] };
    } catch (error) {
      return failed(error);
    }
  },
});
export const deleteMailboxGuard = (session: MailSession): Guard<ManageArgs, MailboxTarget> => ({
  rule: always,
  fallback: "token",
  resolve: (a) => session.look((client) => deleteTarget(client, session.mount, a.mailbox)),
  fingerprint: deleteMailboxFingerprint,
  prompt: deleteMailboxPrompt,
  describe: describeMailbox,
  act: async (t, write) => {
    try {
      const client = await session.client();
      const changed = await changedSince(t, await deleteTarget(client, session.mount, t.mailbox), deleteMailboxFingerprint, describeMailbox);
      if (changed !== undefined) return notDone(changed);
      await through(write, session.mount, "delete-mailbox", { binds: deleteMailboxFingerprint(t), needsApproval: true }, () => client.deleteMailbox(t.mailbox));
      return { content: [{ type: "text", text: `Deleted mailbox "${t.mailbox}" and the ${plural(t.messages, "message")} in it.` }] };
    } catch (error) {
      return failed(error);
    }
  },
});
export const MANAGE_MAILBOX = {
  description:
    "Creates, deletes or renames a mailbox. create never asks. delete always asks a person first (shown the mailbox and how many messages it holds); where this server cannot ask, it answers a two-call token instead. rename is reversible, so it never asks a person: it always answers a two-call token first (counting the messages of the mailbox and of every mailbox under it, which go with it), and renames on a second call with the same arguments quoting it. A rename changes only the last part of the name, within the same parent; one into another hierarchy is refused (use move_messages, which asks a person), and INBOX is never renamed.",
  inputSchema: jsonSchemaOnce(
    z.object({
      action: z.enum(["create", "delete", "rename"]).describe("create, delete or rename."),
      mailbox: mailboxName("The mailbox to create, delete or rename."),
      new_name: mailboxName("rename only: the mailbox's new name, under the same parent (only the last part of the name changes).").optional(),
      ...twoCallTokenShape,
    }),
  ),
  annotations: MANAGES,
};

/** Why a rename is on the token even where a person could be asked: it is reversible (R-MAIL-2). */
export const RENAME_WHY = "a rename is reversible, so this server takes the two-call token for it instead of asking a person";

/**
 * rename: the two-call token only, even when a channel exists (R-MAIL-2). The token is kept in the gateway's record
 * of the call, so a call that carries none (no channel at all) cannot have one and is refused.
 */
export async function renameOnToken(session: MailSession, a: { mailbox: string; new_name?: string; two_call_token?: string }): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) return refusal("this request is not a tool call");
  if (a.new_name === undefined) return refusal("a rename names the mailbox's new_name");
  if (a.new_name === a.mailbox) return refusal("the new name is the mailbox's name");
  // INBOX is not renamed: on IMAP a RENAME of INBOX moves its messages into a new mailbox and leaves INBOX in place,
  // empty, which is a move of every message and nothing a rename's token should carry (R-MAIL-11).
  if (a.mailbox.toUpperCase() === "INBOX" || a.new_name.toUpperCase() === "INBOX") {
    return refusal("INBOX is never renamed, nor is anything renamed to INBOX: to move its messages elsewhere, use move_messages, which asks a person");
  }
  const channel = call.channel;
  const ref = callRefOf(channel);
  if (ref === undefined || (channel.kind !== "ask" && channel.kind !== "skip" && channel.kind !== "fallback")) {
    const why = channel.kind === "refused" ? `the gateway refused the approval channel: ${channel.reason}` : "no approval channel reached this call";
    return refusal(`a rename takes the two-call token, which lives in the gateway's record of the call, and this call has none (${why})`);
  }
  const slug = channel.channel.slug;
  const newName = a.new_name;
  const source = await (async () => {
    const client = await session.fresh();
    // A rename changes the last part of the name only, within the same parent: a RENAME into another hierarchy
    // ("Private" to "Public/Shared/Private") moves the mailbox and every child into whatever that hierarchy is shared
    // with, which is a disclosure no token covers. Refused before IMAP acts (R-MAIL-11).
    const delimiter = await client.delimiter();
    if (delimiter !== undefined) {
      const parent = (name: string) => name.slice(0, Math.max(0, name.lastIndexOf(delimiter)));
      if (parent(a.mailbox) !== parent(newName) || newName.endsWith(delimiter)) {
        const where = parent(a.mailbox) === "" ? "at the top level" : `under "${parent(a.mailbox)}"`;
        throw new MailError(
          `a rename changes only the last part of the name and keeps the mailbox ${where}; "${newName}" would move it (and every mailbox under it) into another hierarchy, which may be shared. To move messages elsewhere, use move_messages, which asks a person`,
        );
      }
    }
    const status = await client.status(a.mailbox).catch(() => {
      throw new MailError(`there is no mailbox "${a.mailbox}"`);
    });
    const taken = await client.status(newName).then(
      () => true,
      () => false,
    );
    if (taken) throw new MailError(`a mailbox named "${newName}" already exists`);
    const children = delimiter === undefined ? [] : await client.children(a.mailbox, delimiter);
    return { ...status, children: children.length, total: children.reduce((sum, c) => sum + c.messages, status.messages) };
  })();
  const target: RenameTarget = { mount: session.mount, mailbox: a.mailbox, to: newName, uidValidity: source.uidValidity, messages: source.messages, children: source.children, total: source.total };
  const fp = await digest(renameFingerprint(target));
  let message: string;
  try {
    message = buildPrompt(slug, renamePrompt(target));
  } catch (error) {
    if (error instanceof PromptRefusal) return notDone(error.message);
    throw error;
  }
  const step = await tokenStep({ route: { kind: "token", slug, why: RENAME_WHY, ref }, args: a, target: fp, message, describe: describeMailbox(target) });
  if (step.kind !== "redeemed") return step.answer;
  call.approval = { fingerprint: fp, approved: true };
  const client = await session.client();
  await through(gatedWrite, session.mount, "rename", { binds: renameFingerprint(target), needsApproval: true }, () => client.renameMailbox(target.mailbox, target.to));
  return {
    content: [
      { type: "text", text: `Renamed mailbox "${target.mailbox}" to "${target.to}".` },
      { type: "text", text: actedOnTokenLine(slug) },
    ],
  };
}
