// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the Google bundle: tools, annotations, no credential-shaped argument, send_email alone confirmed and refusing without a channel.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import google from "../../../bundles/google/google.app";
import { CONFIRMED_TOOLS, gmailServer } from "../../../bundles/google/google.tools";
import { bundleContract } from "../kit/contract";

const env = {
  GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: "contract-client",
  GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: "contract-secret",
  GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: "contract-refresh",
  GMAIL_AGENT__GMAIL_CLIENT_ID: "contract-client",
  GMAIL_AGENT__GMAIL_CLIENT_SECRET: "contract-secret",
  GMAIL_AGENT__GMAIL_REFRESH_TOKEN: "contract-refresh",
};

bundleContract({
  bundle: "google",
  handler: google,
  factory: gmailServer,
  mounts: ["gmail-rw-external", "gmail-agent"],
  registry: CONFIRMED_TOOLS,
  env,
  tools: {
    search_messages: { asks: "never", args: { query: "lunch" } },
    get_message: { asks: "never", args: { message_id: "msg-person-1" } },
    get_thread: { asks: "never", args: { thread_id: "thread-person-1" } },
    list_drafts: { asks: "never", args: {} },
    get_draft: { asks: "never", args: { draft_id: "draft-person-1" } },
    create_draft: { asks: "never", args: { to: ["ada@example.com"], subject: "contract", text: "hi" } },
    send_email: { asks: "always", args: { to: ["ada@example.com"], subject: "contract", text: "hi", attachments: [{ filename: "a.txt", content_base64: "aGk=" }] } },
  },
});

describe("the Google bundle's declarations", () => {
  it("confirms send_email and nothing else", () => {
    expect([...CONFIRMED_TOOLS]).toEqual(["send_email"]);
  });

  it("reaches Gmail's write endpoints only through the gate: no module of the send path calls fetch itself", () => {
    for (const file of ["google.send.ts", "google.mailbox.ts", "google.tools.ts"]) {
      const source = readFileSync(new URL(`../../../bundles/google/${file}`, import.meta.url), "utf8");
      expect(source, file).not.toMatch(/(^|[^.\w])fetch\s*\(/m);
    }
    const mailbox = readFileSync(new URL("../../../bundles/google/google.mailbox.ts", import.meta.url), "utf8");
    expect(mailbox).toMatch(/await this\.write\(/);
    // The client's own requests are the token mint and GETs; it has no way to POST to the API.
    const client = readFileSync(new URL("../../../bundles/google/google.client.ts", import.meta.url), "utf8");
    expect(client.match(/method: "POST"/g)).toHaveLength(1);
    expect(client).toMatch(/this\.doFetch\(this\.endpoints\.tokenUrl, \{\s*method: "POST"/);
  });
});
