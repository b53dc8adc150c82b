// send_email's card against the Gmail fake: a body is always on it with its size (and said to be missing from the form when too large for it), each attachment shows its MIME type, and an RFC 2047 encoded word in a subject or display name is refused before anyone is asked.
import { describe, expect, it } from "vitest";
import { harness, PERSON, requestsTo } from "./helpers";

const h = harness();
const sendRequests = () => [...requestsTo(h.fake, "/messages/send"), ...requestsTo(h.fake, "/drafts/send")];
const HEADING = "Values below are supplied by the caller, not by this server:";
const valuesOf = (prompt: string[] | undefined) => prompt?.slice(prompt.indexOf(HEADING) + 1);
/** The properties of the form the bundle sent with its question, in order. */
const formOf = (route: string) => {
  const post = h.approver.requestsTo(route).find((r) => r.method === "POST");
  return Object.keys((JSON.parse(post?.body ?? "{}") as { requestedSchema?: { properties?: object } }).requestedSchema?.properties ?? {});
};
/** Text of exactly `bytes` UTF-8 bytes, starting with `lead`. */
const padded = (lead: string, bytes: number) => `${lead}${"x".repeat(bytes - new TextEncoder().encode(lead).byteLength)}`;

describe("a body the form cannot offer is still on the card", () => {
  // 43,100 bytes: over the form's 32 KiB, shown as 42.1 KB.
  const bigHtml = padded("<p>Wire the funds to IBAN XX00 0000 0000</p><!--", 43_100);
  const bigText = padded("Wire the funds to IBAN XX00 0000 0000. ", 43_100);
  it.each([
    ["an HTML body", { text: "Lunch on Friday?", html: bigHtml }, ["  Text body: 16 B", "  HTML body: 42.1 KB, not shown in the form"], ["to", "subject", "text", "confirm"]],
    ["a text body", { text: bigText, html: "<p>Lunch on Friday?</p>" }, ["  Text body: 42.1 KB, not shown in the form", "  HTML body: 23 B"], ["to", "subject", "html", "confirm"]],
  ])("R-PROMPT-2: %s too large for the form is shown on the card with its size and as not shown in the form, and goes out as counted", async (_label, bodies, lines, form) => {
    const { answer, prompts, route } = await h.call({ args: { to: ["ada@example.com"], subject: "Lunch", ...bodies } });
    expect(answer.isError, answer.text).toBe(false);
    expect(valuesOf(prompts[0])).toEqual(["  To: ada@example.com", "  Subject: Lunch", ...lines]);
    // The card's word is the kit's form: the body said to be left out is the one the form does not hold.
    expect(formOf(route)).toEqual(form);
    expect(h.fake.store.outbox).toHaveLength(1);
    expect(h.fake.store.outbox[0]).toMatchObject({ text: bodies.text, html: bodies.html });
  });

  it("R-PROMPT-2: bodies that fit the form are each shown with their size, and the form holds both", async () => {
    const { answer, prompts, route } = await h.call({ args: { to: ["ada@example.com"], subject: "Lunch", text: "Lunch on Friday?", html: "<p>Lunch on Friday? Zoë</p>" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(valuesOf(prompts[0])).toEqual(["  To: ada@example.com", "  Subject: Lunch", "  Text body: 16 B", "  HTML body: 28 B"]);
    expect(formOf(route)).toEqual(["to", "subject", "text", "html", "confirm"]);
  });
});

describe("an attachment's MIME type is on its line", () => {
  it("R-PROMPT-4: shows each attachment's MIME type beside its name and size, and sends that type", async () => {
    const attachments = [
      { filename: "invoice.pdf", content_base64: btoa("<b>pay</b>"), mime_type: "text/html" },
      { filename: "receipt.pdf", content_base64: btoa("Subject: x"), mime_type: "message/rfc822" },
      { filename: "notes.txt", content_base64: btoa("hello notes") },
    ];
    const { answer, prompts } = await h.call({ args: { to: ["ada@example.com"], subject: "Files", attachments } });
    expect(answer.isError, answer.text).toBe(false);
    expect(valuesOf(prompts[0])).toEqual([
      "  To: ada@example.com",
      "  Subject: Files",
      "  Attachment: invoice.pdf (text/html, 10 B)",
      "  Attachment: receipt.pdf (message/rfc822, 10 B)",
      "  Attachment: notes.txt (text/plain, 11 B)",
    ]);
    expect(h.fake.store.outbox[0]?.attachments.map((a) => [a.filename, a.mimeType])).toEqual([
      ["invoice.pdf", "text/html"],
      ["receipt.pdf", "message/rfc822"],
      ["notes.txt", "text/plain"],
    ]);
  });
});

describe("an RFC 2047 encoded word is refused before anyone is asked", () => {
  const refused = async (args: Record<string, unknown>, says: RegExp, hidden: string) => {
    const { answer, prompts } = await h.call({ args });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: .*\. Nothing was sent\.$/);
    expect(answer.text).toMatch(says);
    expect(answer.text).not.toContain(hidden);
    expect(prompts).toEqual([]);
    expect(h.approver.requests).toEqual([]);
    expect(sendRequests()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  };

  it.each([
    ["a base64 word", "=?UTF-8?B?VXJnZW50OiB3aXJlIGZ1bmRz?="],
    ["a quoted-printable word in lower case", "Re: =?utf-8?q?Urgent=3A_wire_funds?="],
    ["a word inside other text", "Lunch =?ISO-8859-1?B?V2lyZSBmdW5kcw==?= on Friday"],
  ])("R-PROMPT-6: refuses a subject holding %s, naming the subject, and sends nothing", async (_label, subject) => {
    await refused({ to: ["ada@example.com"], subject, text: "t" }, /^Not done: the subject holds an RFC 2047 encoded word/, subject);
  });

  it("R-PROMPT-10: refuses a display name holding an encoded word that decodes to an address, naming the address, and sends nothing", async () => {
    const name = "=?UTF-8?B?Y2VvQGJhbmsuZXhhbXBsZQ==?=";
    await refused({ to: [`${name} <eve@example.com>`], subject: "s", text: "t" }, /^Not done: the display name given for eve@example\.com holds an RFC 2047 encoded word/, name);
  });

  it("R-PROMPT-4: refuses an attachment whose file name holds an encoded word before anything is downloaded, and sends nothing", async () => {
    const word = "=?UTF-8?B?aW52b2ljZS5wZGYuZXhl?=";
    const attachments = [{ url: `${h.fake.base}/_fake/files/report.pdf?bytes=16&type=application/pdf` }, { filename: word, content_base64: btoa("b") }];
    await refused({ to: ["ada@example.com"], subject: "s", text: "t", attachments }, /^Not done: attachment 2's file name holds an RFC 2047 encoded word/, word);
    expect(h.fake.store.fileRequests).toEqual([]);
  });

  it("R-PROMPT-11: refuses a reply whose default subject, from the original mail, holds an encoded word; the caller's own subject is sent", async () => {
    const original = h.fake.store.accounts.get(PERSON.email)?.messages.get("msg-person-2");
    if (original === undefined) throw new Error("the seed has no msg-person-2");
    // Encoded twice: Gmail decodes it once, and the API gives the encoded word itself as the subject.
    const word = "=?UTF-8?B?VXJnZW50OiB3aXJlIGZ1bmRz?=";
    original.raw = original.raw.replace("Subject: Re: Quarterly numbers", `Subject: =?UTF-8?B?${btoa(word)}?=`);
    await refused(
      { to: ["carol@example.com"], reply_to_message_id: "msg-person-2", text: "ok" },
      /^Not done: the original mail's subject, the reply's default, holds an RFC 2047 encoded word.*; give a subject\./,
      word,
    );
    const { answer, prompts } = await h.call({ args: { to: ["carol@example.com"], reply_to_message_id: "msg-person-2", subject: "Re: your mail", text: "ok" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]?.filter((l) => l.includes("Subject"))).toEqual(["  Subject: Re: your mail"]);
    expect(h.fake.store.outbox[0]?.subject).toBe("Re: your mail");
  });
});
