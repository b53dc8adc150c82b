// What the mailbox tools declare, shared by every file that defines one: their annotations, each a truthful hint
// (docs/rules.md R-MAIL-5), and the arguments several of them take (a mailbox name, UIDs, a page, a flag), each
// checked by its schema before the server is reached. Which tool asks, and how, is mailbox.tools.ts's registry.
import * as z from "zod";
import type { DeclaredAnnotations } from "../kit/guard";
import { MAX_UIDS } from "./mailbox.guard";
import { DEFAULT_PAGE, MAX_PAGE } from "./mailbox.read";
import { MAX_UID } from "./mailbox.uids";

// Truthful hints (docs/rules.md R-MAIL-5). Reads peek and change no flag. A delete cannot be undone, and again
// deletes nothing more; a move takes messages out of a folder and a copy adds more each time; a mailbox delete
// loses its messages; flags come back off and setting them twice ends where once does; a draft is a new message
// each time. Every tool talks to an IMAP server outside strad.
export const READS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
export const SAVES_ATTACHMENTS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
export const DELETES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };
export const MOVES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
export const MANAGES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
export const FLAGS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
export const DRAFTS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** A mailbox name as the caller gives it: text, no control character, at most 200 characters. */
export const mailboxName = (what: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .refine((n) => !/[\u0000-\u001f\u007f]/.test(n), "a mailbox name holds no control character")
    .describe(what);
export const uid = z.number().int().min(1).max(MAX_UID);
export const uids = z.array(uid).min(1).max(MAX_UIDS).describe(`The messages' UIDs in the mailbox (at most ${MAX_UIDS}), from list_messages or search_messages.`);
export const offset = z.number().int().min(0).max(10_000_000).optional().describe("How many messages (newest first) to skip: the previous page's next_offset.");
export const limit = z.number().int().min(1).max(MAX_PAGE).optional().describe(`How many messages to return (default ${DEFAULT_PAGE}, at most ${MAX_PAGE}).`);

/** System flags a caller may set or clear. \Deleted is not one of them (R-MAIL-3); \Recent is the server's. */
export const SYSTEM_FLAGS = new Set(["\\Seen", "\\Answered", "\\Flagged", "\\Draft"]);
export const KEYWORD = /^[A-Za-z0-9$_.-]{1,64}$/;
export const flag = z.string().min(1).max(64).describe("A system flag (\\Seen, \\Answered, \\Flagged, \\Draft) or a keyword ($Important, project-x). \\Deleted is refused.");
