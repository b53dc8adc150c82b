// What an approval of a mailbox write is bound to, and what the person is shown. The binding is the
// operation (move and copy are different keys), the mount, both mailboxes, the mailbox's UIDVALIDITY and the exact
// UID set, sorted (docs/rules.md R-MAIL-2, R-MAIL-3). The prompt holds counts, UIDs and folder names only, every
// one the caller's and labelled so: never a subject, a sender or a body, which anyone who can send mail wrote
// (R-MAIL-4).
import type { FingerprintInput } from "../kit/fingerprint";
import type { PromptSpec } from "../kit/prompt";

/** At most this many UIDs per call: each is shown on the prompt, whole, within the kit's bound-value cap. */
export const MAX_UIDS = 80;

export interface MessagesTarget {
  mount: string;
  mailbox: string;
  uidValidity: number;
  /** The caller's UIDs, sorted, without duplicates. */
  uids: number[];
  /** Of those, the ones the mailbox holds now. */
  present: number[];
}

export interface TransferTarget extends MessagesTarget {
  mode: "move" | "copy";
  destination: string;
  /** The destination's UIDVALIDITY: a folder deleted and made again under the name is another folder. */
  destinationValidity: number;
}

export interface MailboxTarget {
  mount: string;
  mailbox: string;
  uidValidity: number;
  messages: number;
}

export interface RenameTarget extends MailboxTarget {
  to: string;
  /** The mailboxes under it, which a RENAME carries along (R-MAIL-11). */
  children: number;
  /** Its messages and every child's: what the rename carries along. */
  total: number;
}

const uidList = (uids: readonly number[]) => uids.join(", ");

export const deleteFingerprint = (t: MessagesTarget): FingerprintInput => ({
  operation: "delete_messages",
  target: { mount: t.mount, mailbox: t.mailbox, uid_validity: t.uidValidity, uids: { set: t.uids }, present: { set: t.present } },
});

export const transferFingerprint = (t: TransferTarget): FingerprintInput => ({
  operation: t.mode,
  target: { mount: t.mount, from: t.mailbox, to: t.destination, to_uid_validity: t.destinationValidity, uid_validity: t.uidValidity, uids: { set: t.uids }, present: { set: t.present } },
});

export const deleteMailboxFingerprint = (t: MailboxTarget): FingerprintInput => ({
  operation: "delete_mailbox",
  target: { mount: t.mount, mailbox: t.mailbox, uid_validity: t.uidValidity, messages: t.messages },
});

export const renameFingerprint = (t: RenameTarget): FingerprintInput => ({
  operation: "rename_mailbox",
  // The children and the total are bound too: a child made between the two calls is not carried along unseen (R-MAIL-11).
  target: { mount: t.mount, from: t.mailbox, to: t.to, uid_validity: t.uidValidity, children: t.children, messages: t.total },
});

export function deletePrompt(t: MessagesTarget): PromptSpec {
  return {
    heading: `This will delete ${t.uids.length} message(s) permanently.`,
    consequence: ["The messages are expunged at once, not moved to a trash folder, and cannot be", "restored."].join("\n"),
    values: [
      { label: "Mailbox", value: t.mailbox },
      { label: "UIDs", value: uidList(t.uids) },
    ],
  };
}

export function transferPrompt(t: TransferTarget): PromptSpec {
  const consequence =
    t.mode === "move"
      ? ["The messages keep their content but get new UIDs, so the current ones stop", "working."]
      : ["Copies are new messages in the destination: whoever can read that mailbox can", "read them, and the source mailbox keeps no trace of the copy."];
  return {
    heading: `This will ${t.mode} ${t.uids.length} message(s) between mailboxes.`,
    consequence: consequence.join("\n"),
    values: [
      { label: "From", value: t.mailbox },
      { label: "To", value: t.destination },
      { label: "UIDs", value: uidList(t.uids) },
    ],
  };
}

export function deleteMailboxPrompt(t: MailboxTarget): PromptSpec {
  return {
    heading: `This will delete a mailbox and the ${t.messages} message(s) in it.`,
    consequence: "A deleted mailbox and its messages cannot be restored.",
    values: [{ label: "Mailbox", value: t.mailbox }],
  };
}

/**
 * The rename's token text counts what the RENAME carries along: the mailbox's messages and every child mailbox's,
 * and names how many children there are (R-MAIL-11). No claim that renaming back restores it: in the meantime
 * anything may have been made under the old name, and whatever refers to the old name stops finding it.
 */
export function renamePrompt(t: RenameTarget): PromptSpec {
  return {
    heading:
      t.children === 0
        ? `This will rename a mailbox and the ${t.total} message(s) in it.`
        : `This will rename a mailbox, the ${t.children} mailbox(es) under it and the ${t.total} message(s) in them.`,
    consequence: [
      t.children === 0 ? "The messages go with the new name." : "The mailboxes under it and all the messages go with the new name.",
      "Whatever refers to the old name (a filter, a subscription, another client)",
      "stops finding it.",
    ].join("\n"),
    values: [
      { label: "From", value: t.mailbox },
      { label: "To", value: t.to },
    ],
  };
}

/** The target in a few words (counts and UIDs only), for an answer saying it changed. */
export const describeMessages = (t: MessagesTarget) => `${t.present.length} of ${t.uids.length} UID(s) present in "${t.mailbox}" at UIDVALIDITY ${t.uidValidity}`;
/** A move's or copy's target: the messages, and the mailbox they go into, so a recreated destination shows as changed. */
export const describeTransfer = (t: TransferTarget) => `${describeMessages(t)}, into "${t.destination}" at UIDVALIDITY ${t.destinationValidity}`;
export const describeMailbox = (t: MailboxTarget) => `"${t.mailbox}" with ${t.messages} message(s) at UIDVALIDITY ${t.uidValidity}`;
