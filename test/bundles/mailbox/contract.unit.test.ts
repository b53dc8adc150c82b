// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the mailbox bundle on both dev slugs: the reads, set_message_flags and save_draft answer without a channel; delete_messages, move_messages and manage_mailbox are its registry of confirmed tools and each refuses without a usable channel before it reaches IMAP; writes leave only through the gate; annotations are all four and truthful, get_attachments' computed from the R2 binding.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import handler from "../../../bundles/mailbox/mailbox.app";
import { annotationsFor, CONFIRMED_TOOLS, mailboxServer } from "../../../bundles/mailbox/mailbox.tools";
import { bundleContract } from "../kit/contract";
import { listBundle } from "../kit/helpers/bundle";

const mounts = ["mailbox", "mailbox-token"];
/** Accounts on a port nothing listens on: a tool that reached IMAP would fail, and the contract's refusals come first. */
const env = Object.fromEntries(
  mounts.flatMap((m) => {
    const ns = `${m.toUpperCase().replace(/-/g, "_")}__`;
    return [
      [`${ns}IMAP_HOST`, "127.0.0.1"],
      [`${ns}IMAP_PORT`, "9"],
      [`${ns}IMAP_SECURITY`, "plain"],
      [`${ns}IMAP_USER`, "contract"],
      [`${ns}IMAP_PASSWORD`, "contract-password"],
    ];
  }),
);

bundleContract({
  bundle: "mailbox",
  handler,
  factory: mailboxServer,
  mounts,
  registry: CONFIRMED_TOOLS,
  env,
  allowProperties: { two_call_token: "the two-call token this server handed out on the call's first try: this server's own, not a credential of the caller's" },
  tools: {
    list_mailboxes: { asks: "never", args: {} },
    list_messages: { asks: "never", args: { mailbox: "INBOX" } },
    search_messages: { asks: "never", args: { mailbox: "INBOX", subject: "x" } },
    get_message: { asks: "never", args: { mailbox: "INBOX", uid: 1 } },
    get_attachments: { asks: "never", args: { mailbox: "INBOX", uid: 1 } },
    delete_messages: { asks: "always", args: { mailbox: "INBOX", uids: [1] } },
    move_messages: { asks: "always", args: { mailbox: "INBOX", uids: [1], destination: "Archive", mode: "copy" } },
    manage_mailbox: { asks: "when", args: { action: "delete", mailbox: "Archive" } },
    set_message_flags: { asks: "never", args: { mailbox: "INBOX", uids: [1], add: ["\\Seen"] } },
    save_draft: { asks: "never", args: { to: ["a@example.com"], subject: "s", body: "b" } },
  },
});

describe("the mailbox bundle's declarations", () => {
  it("confirms delete_messages, move_messages and manage_mailbox, and nothing else", () => {
    expect([...CONFIRMED_TOOLS].sort()).toEqual(["delete_messages", "manage_mailbox", "move_messages"]);
  });

  it("declares all four annotations truthfully on every tool, as listed", async () => {
    const listed = Object.fromEntries((await listBundle(handler, "mailbox", env)).map((t) => [t.name, t.annotations]));
    const R = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
    expect(listed).toEqual({
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
  });

  it("marks get_attachments read-only unless the mount binds an R2 bucket to save into, and then not", async () => {
    const bucket = { put: async () => ({}) };
    expect(annotationsFor("mailbox", env).get_attachments?.readOnlyHint).toBe(true);
    expect(annotationsFor("mailbox", { ...env, MAILBOX__ATTACHMENTS_BUCKET: bucket }).get_attachments?.readOnlyHint).toBe(false);
    // Another slug's bucket is not this mount's.
    expect(annotationsFor("mailbox", { ...env, MAILBOX_TOKEN__ATTACHMENTS_BUCKET: bucket }).get_attachments?.readOnlyHint).toBe(true);
    // A binding that is not a bucket (a var) does not count.
    expect(annotationsFor("mailbox", { ...env, MAILBOX__ATTACHMENTS_BUCKET: "bucket-name" }).get_attachments?.readOnlyHint).toBe(true);
    const listed = await listBundle(handler, "mailbox", { ...env, MAILBOX__ATTACHMENTS_BUCKET: bucket });
    expect(listed.find((t) => t.name === "get_attachments")?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true });
  });

  it("changes a mailbox only through the gate: the tools make no fetch and send no IMAP write of their own outside a door", () => {
    const tools = ["tools", "schema", "call", "messages", "manage"].map((m) => readFileSync(new URL(`../../../bundles/mailbox/mailbox.${m}.ts`, import.meta.url), "utf8")).join("\n");
    expect(tools).not.toMatch(/(^|[^.\w])fetch\s*\(/m);
    // Every mutating client call sits inside the door `through` hands the gate.
    for (const call of ["expunge", "transfer", "createMailbox", "deleteMailbox", "renameMailbox", "store", "append"]) {
      const uses = tools.match(new RegExp(`client\\.${call}\\(`, "g")) ?? [];
      const inDoor = tools.match(new RegExp(`\\(\\) => client\\.${call}\\(`, "g")) ?? [];
      expect(uses.length, call).toBeGreaterThan(0);
      expect(inDoor.length, call).toBe(uses.length);
    }
  });
});
