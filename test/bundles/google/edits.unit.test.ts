// send_email edited by the person against the Gmail fake: the card's form (recipients to untick, subject and bodies to rewrite), the Gmail fake receiving exactly the edited message, a widened or changed recipient list and an edit that breaks the tool's own rules sending nothing, a plain accept sending the original, and the attachments' bytes downloaded once.
import { describe, expect, it } from "vitest";
import type { Plan } from "../kit/helpers/hostile-server";
import { harness, requestsTo } from "./helpers";

const h = harness();
const accept = (content: Record<string, unknown>): Plan => ({ body: { action: "accept", content: { confirm: true, ...content } } });
const ARGS = { to: ["Ada Lovelace <ada@example.com>", "bob@example.com"], cc: ["carol@example.com"], subject: "Quarterly report", text: "Hello,\nsee the numbers." };

/** The form the approval service received for the call's question. */
function formOf(route: string): Record<string, Record<string, unknown>> {
  const post = h.approver.requestsTo(route).find((r) => r.method === "POST");
  return (JSON.parse(post?.body ?? "{}") as { requestedSchema: { properties: Record<string, Record<string, unknown>> } }).requestedSchema.properties;
}

describe("a send the person edited", () => {
  it("offers the recipients to untick and the subject and body to rewrite, with the model's values", async () => {
    const { route } = await h.call({ args: { ...ARGS, html: "<p>Hello</p>" }, poll: { body: { action: "decline", content: null } } });
    const form = formOf(route);
    expect(Object.keys(form)).toEqual(["to", "cc", "subject", "text", "html", "confirm"]);
    expect(form.to).toMatchObject({ type: "array", items: { type: "string", enum: ARGS.to }, default: ARGS.to, maxItems: 2 });
    expect(form.cc).toMatchObject({ type: "array", default: ["carol@example.com"] });
    expect(form.subject).toMatchObject({ type: "string", title: "Subject", maxLength: 900, default: "Quarterly report" });
    expect(form.text).toMatchObject({ type: "string", title: "Body (plain text)", default: ARGS.text });
    expect(form.html).toMatchObject({ type: "string", title: "Body (HTML)", default: "<p>Hello</p>" });
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("sends exactly the edited message: a new subject and body, one recipient fewer; the answer says what ran", async () => {
    const { answer } = await h.call({ args: ARGS, poll: accept({ to: ["Ada Lovelace <ada@example.com>"], subject: "Q3 report (final)", text: "Hello Ada,\nsee the final numbers." }) });
    expect(answer.isError, answer.text).toBe(false);
    expect(h.fake.store.outbox).toHaveLength(1);
    expect(h.fake.store.outbox[0]).toMatchObject({ to: ["ada@example.com"], cc: ["carol@example.com"], bcc: [], subject: "Q3 report (final)", text: "Hello Ada,\nsee the final numbers." });
    expect(answer.text).toMatch(/^Sent from person@example\.com: Gmail message \w+ in thread \w+\./);
    expect(answer.text).toContain(
      'The person edited this call before approving it, and what ran is their version, not the one proposed: to lost "bob@example.com" and is now ["Ada Lovelace <ada@example.com>"]; subject is now "Q3 report (final)"; text is now "Hello Ada,\\nsee the final numbers.".',
    );
  });

  it("a plain accept sends the message as proposed", async () => {
    const { answer } = await h.call({ args: ARGS });
    expect(answer.isError, answer.text).toBe(false);
    expect(answer.text).not.toContain("edited");
    expect(h.fake.store.outbox[0]).toMatchObject({ to: ["ada@example.com", "bob@example.com"], cc: ["carol@example.com"], subject: "Quarterly report", text: ARGS.text });
  });

  it.each([
    ["a recipient added to To", { to: [...ARGS.to, "mallory@attacker.example"] }, /"to" may only lose entries/],
    ["a recipient changed in Cc", { cc: ["carol@attacker.example"] }, /"cc" may only lose entries/],
    ["a Bcc the card did not offer", { bcc: ["mallory@attacker.example"] }, /"bcc", which the card did not offer/],
    ["a reply target the card did not offer", { reply_to_message_id: "msg-person-2" }, /"reply_to_message_id", which the card did not offer/],
    ["no recipient left in To", { to: [] }, /at least one recipient in to is needed/],
    ["a subject with a line break", { subject: "Hi\nBcc: mallory@attacker.example" }, /the subject contains a line break or control character/],
    ["a subject past the schema's 900 characters", { subject: "x".repeat(901) }, /input schema at "subject"/],
  ])("sends nothing for %s, and says why", async (_label, content, why) => {
    const { answer } = await h.call({ args: ARGS, poll: accept(content) });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the person's answer was refused before anything ran: /);
    expect(answer.text).toMatch(why);
    expect(h.fake.store.outbox).toEqual([]);
    expect([...requestsTo(h.fake, "/messages/send"), ...requestsTo(h.fake, "/drafts/send")]).toEqual([]);
  });

  it("an edited send with attachments goes out with the bytes downloaded once, before the question", async () => {
    const { answer } = await h.call({
      args: { ...ARGS, attachments: [{ url: `${h.fake.base}/_fake/files/report.pdf?bytes=1024&type=application/pdf` }] },
      poll: accept({ subject: "Q3 with the report" }),
    });
    expect(answer.isError, answer.text).toBe(false);
    expect(h.fake.store.fileRequests).toHaveLength(1);
    expect(h.fake.store.outbox[0]).toMatchObject({ subject: "Q3 with the report", attachments: [expect.objectContaining({ filename: "report.pdf", size: 1024 })] });
  });

  it("a send whose recipients carry names and whose files come inline offers the form and sends as proposed on a plain accept", async () => {
    const args = {
      to: ["Ada Lovelace <ada@example.com>", "Grace Hopper <grace.hopper@navy.example.com>"],
      cc: ['"Lovelace, Byron" <byron@example.com>'],
      subject: "Contract — final version",
      text: "The signed copy and the annex are attached.",
      attachments: [
        { filename: "contract-final.pdf", content_base64: btoa("%PDF-1.4 contract") },
        { filename: "annex A.txt", content_base64: btoa("annex") },
      ],
    };
    const { answer, route } = await h.call({ args });
    expect(answer.isError, answer.text).toBe(false);
    expect(formOf(route).cc).toMatchObject({ default: ['"Lovelace, Byron" <byron@example.com>'] });
    expect(h.fake.store.outbox[0]).toMatchObject({ to: ["ada@example.com", "grace.hopper@navy.example.com"], cc: ["byron@example.com"] });
  });

  it("a draft send offers nothing to edit: its question is the confirm box alone", async () => {
    const { route } = await h.call({ args: { from_draft_id: "draft-person-1" }, poll: { body: { action: "decline", content: null } } });
    expect(Object.keys(formOf(route))).toEqual(["confirm"]);
  });
});
