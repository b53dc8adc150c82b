// Drafts against the Gmail fake: create_draft writes without asking, and send_email with from_draft_id shows the draft as Gmail holds it, says so when it cannot be read, and sends nothing if it changed after approval.
import { describe, expect, it } from "vitest";
import { SECRET_MARKER } from "../../fakes/gmail/gmail.fake";
import { ACCEPT, AGENT, harness, PERSON, requestsTo } from "./helpers";

const h = harness();
const valuesOf = (prompt: string[] | undefined) => (prompt ?? []).slice((prompt ?? []).indexOf("Values below are supplied by the caller, not by this server:") + 1);

describe("send_email with from_draft_id", () => {
  it("shows the draft's recipients, subject and attachment names read from Gmail, then sends that draft", async () => {
    const { answer, prompts } = await h.call({ args: { from_draft_id: "draft-person-1" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]?.[0]).toBe("gmail-rw-external: This will send a saved draft from person@example.com to 3 recipient(s).");
    expect(prompts[0]?.join("\n")).toContain("were read from the draft in Gmail just now");
    expect(valuesOf(prompts[0])).toEqual([
      "  Draft: draft-person-1",
      "  To: erin@example.com (name: Erin Example)",
      "  Cc: frank@example.com",
      "  Bcc: audit@example.com",
      "  Subject: Proposal for the spring project",
      "  Attachment: proposal.pdf",
    ]);
    expect(h.fake.store.outbox).toEqual([
      expect.objectContaining({ via: "draft", account: PERSON.email, to: ["erin@example.com"], cc: ["frank@example.com"], bcc: ["audit@example.com"], subject: "Proposal for the spring project" }),
    ]);
    expect(h.fake.store.outbox[0]?.attachments.map((a) => a.filename)).toEqual(["proposal.pdf"]);
    expect(h.fake.store.accounts.get(PERSON.email)?.drafts.has("draft-person-1")).toBe(false);
  });

  it("says when the draft cannot be read and advises declining; a decline sends nothing", async () => {
    const { answer, prompts } = await h.call({ args: { from_draft_id: "draft-gone" }, poll: { body: { action: "decline" } } });
    const prompt = prompts[0] ?? [];
    expect(prompt[0]).toBe("gmail-rw-external: This will send a saved draft from person@example.com.");
    expect(prompt).toContain("The draft could not be read (Gmail answered HTTP 404), so its recipients, subject and attachments cannot be shown.");
    expect(prompt).toContain("Decline unless you already know exactly what this draft holds. A sent email cannot be recalled.");
    expect(valuesOf(prompt)).toEqual(["  Draft: draft-gone"]);
    expect(prompt.join("\n")).not.toContain(SECRET_MARKER);
    expect(answer.text).toMatch(/^Not done: the person declined/);
    expect(requestsTo(h.fake, "/drafts/send")).toEqual([]);
  });

  it("sends nothing when the draft changed between the prompt and the approval", async () => {
    const draft = () => h.fake.store.accounts.get(PERSON.email)?.drafts.get("draft-person-1");
    const { answer, prompts } = await h.call({
      args: { from_draft_id: "draft-person-1" },
      poll: () => {
        const d = draft();
        if (d !== undefined) d.raw = d.raw.replace("To: Erin Example <erin@example.com>", "To: eve@example.com");
        return ACCEPT;
      },
    });
    expect(prompts[0]).toContain("  To: erin@example.com (name: Erin Example)");
    expect(answer.text).toBe("Not done: the target changed after it was approved, so the approval does not cover it. Nothing was written.");
    expect(requestsTo(h.fake, "/drafts/send")).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("refuses before asking when the draft id is not a Gmail id", async () => {
    const { answer, prompts } = await h.call({ args: { from_draft_id: "../drafts/send" } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/Input validation error/);
    expect(prompts).toEqual([]);
    expect(h.fake.store.requests).toEqual([]);
  });
});

describe("create_draft", () => {
  it("saves a draft without asking anyone, in the mount's own mailbox, which send_email can then send as shown", async () => {
    const created = await h.call({
      tool: "create_draft",
      channel: "none",
      args: { to: ["ada@example.com"], bcc: ["bob@example.com"], subject: "Saved for later", text: "body", attachments: [{ filename: "plan.txt", content_base64: btoa("plan") }] },
    });
    expect(created.answer.text).toMatch(/^Draft r\w+ created in person@example\.com \(message \w+\)\. Nothing was sent; /);
    expect(created.prompts).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
    const draftId = /^Draft (\S+) /.exec(created.answer.text)?.[1] as string;
    expect(h.fake.store.accounts.get(PERSON.email)?.drafts.has(draftId)).toBe(true);

    const { answer, prompts } = await h.call({ args: { from_draft_id: draftId } });
    expect(answer.isError, answer.text).toBe(false);
    expect(valuesOf(prompts[0])).toEqual([`  Draft: ${draftId}`, "  To: ada@example.com", "  Bcc: bob@example.com", "  Subject: Saved for later", "  Attachment: plan.txt"]);
    expect(h.fake.store.outbox).toEqual([expect.objectContaining({ via: "draft", to: ["ada@example.com"], bcc: ["bob@example.com"], subject: "Saved for later" })]);
  });

  it("writes through the gate on a confirmed mount too, and into the agent's mailbox on the agent's mount", async () => {
    const onPerson = await h.call({ tool: "create_draft", args: { to: ["ada@example.com"], text: "a" } });
    expect(onPerson.answer.isError, onPerson.answer.text).toBe(false);
    expect(onPerson.prompts).toEqual([]);
    // The write won the call's claim: a gated write for a call the gateway no longer holds would not.
    expect(h.calls.claims).toEqual([{ scope: "dev-session", key: onPerson.key, won: true }]);
    const onAgent = await h.call({ mount: AGENT.mount, tool: "create_draft", channel: "none", args: { to: ["ada@example.com"], text: "b" } });
    expect(onAgent.answer.text).toMatch(/created in agent@example\.com/);
    expect(h.fake.store.accounts.get(AGENT.email)?.drafts.size).toBe(2);
  });

  it("creates nothing for a call the gateway no longer holds live", async () => {
    const { answer } = await h.call({ tool: "create_draft", args: { to: ["ada@example.com"], text: "a" }, live: false });
    expect(answer.text).toBe("Not done: the call is no longer live or was already used for a write; nothing was written.");
    expect(requestsTo(h.fake, "/drafts")).toEqual([]);
  });

  it("refuses bad input without writing", async () => {
    const { answer } = await h.call({ tool: "create_draft", channel: "none", args: { to: ["not an address"], text: "a" } });
    expect(answer.text).toMatch(/^Not done: a recipient is not a plain email address/);
    expect(requestsTo(h.fake, "/drafts")).toEqual([]);
  });
});

describe("issue 13 #1: a draft's recipients follow the same rules", () => {
  const ATTACK = `"Jane Doe ‹jane.doe@company.example›${" ".repeat(170)}…" <exfil@attacker.example>`;

  it("issue 13 #1: create_draft refuses the look-alike display-name attack, so no such draft is saved", async () => {
    const { answer } = await h.call({ tool: "create_draft", channel: "none", args: { to: [ATTACK], text: "a" } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the display name given for exfil@attacker\.example contains @, < or >/);
    expect(requestsTo(h.fake, "/drafts")).toEqual([]);
  });

  it("sending a saved draft whose subject holds an RFC 2047 encoded word fails naming why, before anyone is asked; nothing is sent", async () => {
    const draft = h.fake.store.accounts.get(PERSON.email)?.drafts.get("draft-person-1");
    if (draft === undefined) throw new Error("the seed has no draft-person-1");
    // Encoded twice: Gmail decodes it once, and the API gives the encoded word itself as the subject.
    const word = "=?UTF-8?B?VXJnZW50OiB3aXJlIGZ1bmRz?=";
    draft.raw = draft.raw.replace("Subject: Proposal for the spring project", `Subject: =?UTF-8?B?${btoa(word)}?=`);
    const { answer, prompts } = await h.call({ args: { from_draft_id: "draft-person-1" } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the draft cannot be sent as it stands: its subject holds an RFC 2047 encoded word.*\. Nothing was sent\.$/);
    expect(prompts).toEqual([]);
    expect(requestsTo(h.fake, "/drafts/send")).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("issue 13 #1: sending a saved draft whose recipient is the attack fails naming why, before anyone is asked; nothing is sent", async () => {
    const draft = h.fake.store.accounts.get(PERSON.email)?.drafts.get("draft-person-1");
    if (draft === undefined) throw new Error("the seed has no draft-person-1");
    draft.raw = draft.raw.replace("To: Erin Example <erin@example.com>", `To: ${ATTACK}`);
    const { answer, prompts } = await h.call({ args: { from_draft_id: "draft-person-1" } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toBe(
      "Not done: the draft cannot be sent as it stands: the display name given for exfil@attacker.example contains @, < or > or a character that looks like one, so it could pose as an address; give the address alone or a plain name. Nothing was sent.",
    );
    expect(prompts).toEqual([]);
    expect(h.approver.requests).toEqual([]);
    expect(requestsTo(h.fake, "/drafts/send")).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("issue 13 #1: shows a saved draft's recipients address first, then name", async () => {
    const { answer, prompts } = await h.call({ args: { from_draft_id: "draft-person-1" }, poll: { body: { action: "decline" } } });
    expect(answer.text).toMatch(/^Not done: the person declined/);
    expect(valuesOf(prompts[0]).filter((l) => l.startsWith("  To: "))).toEqual(["  To: erin@example.com (name: Erin Example)"]);
  });
});
