// The Gmail fake's accounts and starting mailboxes. Values are for 127.0.0.1 only; they match the dev vars in
// bundles/google/.dev.vars.example. A mailbox may be opened by more than one client: the read-only mount
// (gmail-ro) reads the person's mailbox with an OAuth client and refresh token of its own.

export interface FakeClient {
  secret: string;
}

export interface FakeGrant {
  clientId: string;
  email: string;
}

export const CLIENTS: Record<string, FakeClient> = {
  "dev-gmail-client-person": { secret: "dev-gmail-secret-person-0123456789abcdef0123456789abcdef" },
  "dev-gmail-client-agent": { secret: "dev-gmail-secret-agent-0123456789abcdef0123456789abcdef" },
  "dev-gmail-client-reader": { secret: "dev-gmail-secret-reader-0123456789abcdef0123456789abcdef" },
};

/** Refresh token -> the client it was issued to and the mailbox it opens. */
export const GRANTS: Record<string, FakeGrant> = {
  "dev-gmail-refresh-person-0123456789abcdef0123456789abcdef": { clientId: "dev-gmail-client-person", email: "person@example.com" },
  "dev-gmail-refresh-agent-0123456789abcdef0123456789abcdef": { clientId: "dev-gmail-client-agent", email: "agent@example.com" },
  "dev-gmail-refresh-reader-0123456789abcdef0123456789abcdef": { clientId: "dev-gmail-client-reader", email: "person@example.com" },
};

export interface SeedMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  raw: string;
}

export interface SeedDraft {
  id: string;
  message: SeedMessage;
}

const PDF = btoa("%PDF-1.4 fake pdf bytes for the gmail fake\n");

function lines(...l: string[]): string {
  return l.join("\r\n");
}

/** Three messages (two in one thread, one with an attachment) and one draft, per account. */
export function seedMailbox(email: string): { messages: SeedMessage[]; drafts: SeedDraft[] } {
  const tag = email.split("@")[0] as string;
  const thread = `thread-${tag}-1`;
  const messages: SeedMessage[] = [
    {
      id: `msg-${tag}-1`,
      threadId: thread,
      labelIds: ["INBOX"],
      raw: lines(
        "From: Carol Example <carol@example.com>",
        `To: ${email}`,
        "Subject: Quarterly numbers",
        "Date: Mon, 02 Mar 2026 09:00:00 +0000",
        `Message-ID: <q1-${tag}@mail.example.com>`,
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="UTF-8"',
        "",
        "Hi, the quarterly numbers are attached to the shared folder. Can you check the totals?",
      ),
    },
    {
      id: `msg-${tag}-2`,
      threadId: thread,
      labelIds: ["INBOX", "UNREAD"],
      raw: lines(
        "From: Carol Example <carol@example.com>",
        `To: ${email}`,
        "Subject: Re: Quarterly numbers",
        "Date: Mon, 02 Mar 2026 10:00:00 +0000",
        `Message-ID: <q2-${tag}@mail.example.com>`,
        `In-Reply-To: <q1-${tag}@mail.example.com>`,
        `References: <q1-${tag}@mail.example.com>`,
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="UTF-8"',
        "",
        "Following up: the totals for March look off by one.",
      ),
    },
    {
      id: `msg-${tag}-3`,
      threadId: `thread-${tag}-3`,
      labelIds: ["INBOX"],
      raw: lines(
        "From: Dave Example <dave@example.com>",
        `To: ${email}`,
        "Subject: Lunch on Friday?",
        "Date: Tue, 03 Mar 2026 12:00:00 +0000",
        `Message-ID: <lunch-${tag}@mail.example.com>`,
        "MIME-Version: 1.0",
        'Content-Type: multipart/mixed; boundary="b1"',
        "",
        "--b1",
        'Content-Type: text/plain; charset="UTF-8"',
        "",
        "Are you free for lunch on Friday? Menu attached.",
        "--b1",
        'Content-Type: application/pdf; name="menu.pdf"',
        'Content-Disposition: attachment; filename="menu.pdf"',
        "Content-Transfer-Encoding: base64",
        "",
        PDF,
        "--b1--",
        "",
      ),
    },
  ];
  const drafts: SeedDraft[] = [
    {
      id: `draft-${tag}-1`,
      message: {
        id: `msg-${tag}-draft-1`,
        threadId: `thread-${tag}-draft-1`,
        labelIds: ["DRAFT"],
        raw: lines(
          `From: ${email}`,
          "To: Erin Example <erin@example.com>",
          "Cc: frank@example.com",
          "Bcc: audit@example.com",
          "Subject: Proposal for the spring project",
          "MIME-Version: 1.0",
          'Content-Type: multipart/mixed; boundary="d1"',
          "",
          "--d1",
          'Content-Type: text/plain; charset="UTF-8"',
          "",
          "Please find the proposal attached.",
          "--d1",
          'Content-Type: application/pdf; name="proposal.pdf"',
          'Content-Disposition: attachment; filename="proposal.pdf"',
          "Content-Transfer-Encoding: base64",
          "",
          PDF,
          "--d1--",
          "",
        ),
      },
    },
  ];
  return { messages, drafts };
}
