// The e2e run's log scan (test/e2e/secrets.ts) knows every Worker's dev secrets, the mailbox's IMAP passwords among
// them, and counts only plainly public values (short ones, client ids, bare http(s) URLs) as not secret.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { devSecrets, plainlyPublic, secretsIn } from "../../e2e/secrets";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const mailboxVars = Object.fromEntries(
  readFileSync(join(ROOT, "bundles/mailbox/.dev.vars.example"), "utf8")
    .split("\n")
    .map((l) => /^([A-Z0-9_]+)="(.*)"$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1] as string, m[2] as string]),
);

describe("the e2e log scan", () => {
  it("finds each mailbox mount's IMAP password in a log, named by its Worker and variable and never by its value", () => {
    const alice = mailboxVars.MAILBOX__IMAP_PASSWORD as string;
    const bob = mailboxVars.MAILBOX_TOKEN__IMAP_PASSWORD as string;
    expect(alice).toMatch(/^dev-imap-alice-/);
    expect(secretsIn(`[gateway] LOGIN "alice" "${alice}"`)).toEqual(["bundles/mailbox MAILBOX__IMAP_PASSWORD"]);
    const both = secretsIn(`[dovecot] ${bob} ${alice}`);
    expect(both.sort()).toEqual(["bundles/mailbox MAILBOX_TOKEN__IMAP_PASSWORD", "bundles/mailbox MAILBOX__IMAP_PASSWORD"]);
    expect(both.join(" ")).not.toContain(alice);
  });

  it("reads every Worker's .dev.vars.example: the gateway's, the approval service's and each bundle's secrets", () => {
    const names = Object.keys(devSecrets());
    expect(names).toContain("STRAD_TOKEN_DEV_SESSION");
    expect(names).toContain("approvals SESSION_SECRET");
    expect(names).toContain("bundles/onepassword OP_CONNECT_TOKEN");
    expect(names).toContain("bundles/google GMAIL_AGENT__GMAIL_REFRESH_TOKEN");
    expect(names.filter((n) => n.startsWith("bundles/mailbox "))).toEqual(["bundles/mailbox MAILBOX__IMAP_PASSWORD", "bundles/mailbox MAILBOX_TOKEN__IMAP_PASSWORD"]);
  });

  it("passes a log naming the mailbox's host, port, user and security, and the bundles' upstream URLs", () => {
    const log = [
      `[gateway] imap ${mailboxVars.MAILBOX__IMAP_HOST}:${mailboxVars.MAILBOX__IMAP_PORT} ${mailboxVars.MAILBOX__IMAP_USER} ${mailboxVars.MAILBOX__IMAP_SECURITY}`,
      "[gateway] fetch http://127.0.0.1:8789/onepassword failed; http://127.0.0.1:8791 and http://127.0.0.1:8789/gmail/_fake/files/",
      "[gateway] client dev-gmail-client-person",
    ].join("\n");
    expect(secretsIn(log)).toEqual([]);
  });

  it.each([
    ["a 15-character value", true, "X", "a".repeat(15)],
    ["a 16-character value", false, "X", "a".repeat(16)],
    ["a client id", true, "GMAIL_CLIENT_ID", "dev-gmail-client-person-0123456789"],
    ["a bare http URL", true, "X", "http://127.0.0.1:8789/recorder"],
    ["a bare https URL", true, "X", "https://connect.example.com/v1/"],
    ["a URL with a password", false, "X", "https://user:dev-pass-0123456789@example.com/"],
    ["a URL with a user name", false, "X", "https://token0123456789@example.com/"],
    ["a URL with a query", false, "X", "https://example.com/hook?token=0123456789abcdef"],
    ["a URL with a fragment", false, "X", "https://example.com/#access_token=0123456789"],
    ["another scheme", false, "X", "imaps://mail.example.com:993/"],
    ["a password", false, "MAILBOX__IMAP_PASSWORD", "dev-imap-alice-7c1d2e9f0a3b4c5d"],
  ])("judges %s plainly public: %s", (_what, expected, name, value) => {
    expect(plainlyPublic(name, value)).toBe(expected);
  });
});
