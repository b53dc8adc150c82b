// send_email against the Gmail fake: what the person is shown, that only an accept sends and sends exactly what was shown, attachments and bad input before the prompt, replies, and upstream errors.
import { describe, expect, it } from "vitest";
import { fileBytes, SECRET_MARKER } from "../../fakes/gmail/gmail.fake";
import type { Plan } from "../kit/helpers/hostile-server";
import { harness, PERSON, requestsTo, sha256Hex } from "./helpers";

const h = harness();
const sendRequests = () => [...requestsTo(h.fake, "/messages/send"), ...requestsTo(h.fake, "/drafts/send")];

describe("an approved send", () => {
  it("asks over the call's channel, showing slug, mailbox, recipients, subject and attachments, then sends exactly that once", async () => {
    const notes = "hello notes";
    const { answer, prompts } = await h.call({
      args: {
        to: ["Ada Lovelace <ada@example.com>"],
        cc: ["bob@example.com"],
        bcc: ["carol@example.com"],
        subject: "Quarterly report",
        text: "See attached.",
        html: "<p>See attached.</p>",
        attachments: [{ filename: "notes.txt", content_base64: btoa(notes) }, { url: `${h.fake.base}/_fake/files/report.pdf?bytes=2048&type=application/pdf` }],
      },
    });
    expect(answer.isError, answer.text).toBe(false);
    expect(answer.text).toMatch(/^Sent from person@example\.com: Gmail message \w+ in thread \w+\.$/);
    expect(prompts).toHaveLength(1);
    const prompt = prompts[0] as string[];
    expect(prompt[0]).toBe("gmail-rw-external: This will send an email from person@example.com to 3 recipient(s) with 2 attachment(s).");
    expect(prompt.slice(prompt.indexOf("Values below are supplied by the caller, not by this server:") + 1)).toEqual([
      "  To: ada@example.com (name: Ada Lovelace)",
      "  Cc: bob@example.com",
      "  Bcc: carol@example.com",
      "  Subject: Quarterly report",
      "  Text body: 13 B",
      "  HTML body: 20 B",
      "  Attachment: notes.txt (text/plain, 11 B)",
      "  Attachment: report.pdf (application/pdf, 2.0 KB)",
    ]);
    // The body is the caller's free text: it is never part of the question.
    expect(prompt.join("\n")).not.toContain("See attached");

    expect(h.fake.store.outbox).toHaveLength(1);
    const mail = h.fake.store.outbox[0];
    expect(mail).toMatchObject({
      account: PERSON.email,
      via: "send",
      from: PERSON.email,
      to: ["ada@example.com"],
      cc: ["bob@example.com"],
      bcc: ["carol@example.com"],
      subject: "Quarterly report",
      text: "See attached.",
      html: "<p>See attached.</p>",
    });
    expect(mail?.attachments).toEqual([
      { filename: "notes.txt", mimeType: "text/plain", size: notes.length, sha256: await sha256Hex(notes) },
      { filename: "report.pdf", mimeType: "application/pdf", size: 2048, sha256: await sha256Hex(fileBytes(2048)) },
    ]);
    // The attachment was downloaded once, before the prompt; the send used those bytes.
    expect(h.fake.store.fileRequests).toHaveLength(1);
    expect(sendRequests()).toHaveLength(1);
  });

  it("encodes a non-ASCII subject, name and filename so they arrive exactly as shown", async () => {
    const { answer, prompts } = await h.call({
      args: { to: ["Zoë Ångström <zoe@example.com>"], subject: "Grüße — 東京", text: "hej", attachments: [{ filename: "résumé.txt", content_base64: btoa("cv") }] },
    });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]).toContain("  Subject: Grüße — 東京");
    expect(prompts[0]).toContain("  To: zoe@example.com (name: Zoë Ångström)");
    expect(h.fake.store.outbox[0]).toMatchObject({ subject: "Grüße — 東京", to: ["zoe@example.com"], attachments: [expect.objectContaining({ filename: "résumé.txt" })] });
  });

  it("replies in the original's thread, with In-Reply-To, References and a Re: subject", async () => {
    const { answer, prompts } = await h.call({ args: { to: ["carol@example.com"], reply_to_message_id: "msg-person-2", text: "Fixed, thanks." } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]).toContain("  Subject (from the original mail): Re: Quarterly numbers");
    expect(prompts[0]).toContain("  In reply to message: msg-person-2");
    expect(h.fake.store.outbox[0]).toMatchObject({
      threadId: "thread-person-1",
      subject: "Re: Quarterly numbers",
      inReplyTo: "<q2-person@mail.example.com>",
      references: "<q1-person@mail.example.com> <q2-person@mail.example.com>",
    });
  });
});

describe("an answer other than an approval", () => {
  const answers: [string, Plan][] = [
    ["a decline", { body: { action: "decline" } }],
    ["a cancel", { body: { action: "cancel" } }],
    ["an expiry", { body: { action: "expired" } }],
    ["an accept with the box unticked", { body: { action: "accept", content: { confirm: false } } }],
    ["an answer it does not recognise", { body: { action: "approve-all" } }],
    ["an approval service error", { status: 500, body: `${SECRET_MARKER} at db.query` }],
  ];
  it.each(answers)("sends nothing after %s", async (_label, plan) => {
    const { answer, prompts } = await h.call({ args: { to: ["ada@example.com"], subject: "no", text: "no" }, poll: plan });
    expect(prompts).toHaveLength(1);
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: .*Nothing was written\.$/);
    expect(answer.text).not.toContain(SECRET_MARKER);
    expect(sendRequests()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });
});

describe("bad input", () => {
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ["an attachment URL outside the allowed prefixes", { attachments: [{ url: "http://127.0.0.1:9/secret/keys.txt" }] }, /not under any of GMAIL_ATTACHMENT_URL_PREFIXES/],
    ["a plain-http attachment URL on a public host", { attachments: [{ url: "http://files.example.com/a.pdf" }] }, /must be https/],
    ["an attachment URL with userinfo", { attachments: [{ url: "https://user:pw@files.example.com/a.pdf" }] }, /userinfo/],
    ["an attachment URL that answers 404", { attachments: [{ url: "/_fake/files/missing-a.pdf" }] }, /answered HTTP 404/],
    ["an attachment URL that redirects", { attachments: [{ url: "/_fake/files/redirect-a.pdf" }] }, /HTTP 302, a redirect, which is never followed/],
    ["an attachment over the size cap", { attachments: [{ url: "/_fake/files/huge.bin?bytes=19000000" }] }, /larger than 18874368 bytes in all/],
    ["content_base64 that is not base64", { attachments: [{ filename: "a.txt", content_base64: "not base64!" }] }, /not valid base64/],
    ["content_base64 without a filename", { attachments: [{ content_base64: "aGk=" }] }, /needs a filename/],
    ["an attachment with both a url and content", { attachments: [{ filename: "a.txt", url: "/_fake/files/a.txt", content_base64: "aGk=" }] }, /exactly one of url and content_base64/],
    ["a malformed mime_type", { attachments: [{ filename: "a.txt", content_base64: "aGk=", mime_type: "text/plain\r\nX: y" }] }, /not a MIME type/],
    ["a recipient that smuggles a header", { to: ["ada@example.com\r\nBcc: eve@example.com"] }, /line break or control character/],
    ["a recipient that is not an address", { to: ["ada at example dot com"] }, /not a plain email address/],
    ["a subject with a line break", { subject: "hi\r\nBcc: eve@example.com" }, /subject contains a line break/],
    ["no recipient", { to: [] }, /at least one recipient/],
    ["from_draft_id with fields of its own", { from_draft_id: "draft-person-1" }, /cannot be given with it/],
    ["a reply to a message that does not exist", { reply_to_message_id: "nope" }, /Gmail answered HTTP 404/],
  ];
  it.each(bad)("fails with %s before anyone is asked, and sends nothing", async (_label, over, says) => {
    const args: Record<string, unknown> = { to: ["ada@example.com"], subject: "s", text: "t", ...over };
    const attachments = args.attachments as { url?: string }[] | undefined;
    for (const a of attachments ?? []) if (a.url?.startsWith("/")) a.url = `${h.fake.base}${a.url}`;
    const { answer, prompts } = await h.call({ args });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: .*\. Nothing was sent\.$/);
    expect(answer.text).toMatch(says);
    expect(answer.text).not.toContain(SECRET_MARKER);
    expect(prompts).toEqual([]);
    expect(h.approver.requests).toEqual([]);
    expect(sendRequests()).toEqual([]);
  });

  it("checks every attachment before downloading any", async () => {
    const { answer } = await h.call({ args: { to: ["ada@example.com"], text: "t", attachments: [{ url: `${h.fake.base}/_fake/files/ok.pdf` }, { url: "https://files.example.com/a\u0000.pdf" }] } });
    expect(answer.text).toMatch(/control character/);
    expect(h.fake.store.fileRequests).toEqual([]);
  });
});

describe("attachment filenames", () => {
  it("are sanitised, and what the person sees is what the recipients get", async () => {
    const names = ["invoice\u202Efdp.exe", "a\r\nTo: eve@example.com.pdf", "../../etc/passwd", "zero\u200bwidth.txt", "\u2066hidden\u2069.txt"];
    const { answer, prompts } = await h.call({ args: { to: ["ada@example.com"], text: "t", attachments: names.map((filename) => ({ filename, content_base64: "aGk=" })) } });
    expect(answer.isError, answer.text).toBe(false);
    const expected = ["invoice_fdp.exe", "a__To: eve@example.com.pdf", ".._.._etc_passwd", "zero_width.txt", "_hidden_.txt"];
    const types = ["application/octet-stream", "application/pdf", "application/octet-stream", "text/plain", "text/plain"];
    expect(prompts[0]?.filter((l) => l.startsWith("  Attachment: "))).toEqual(expected.map((n, i) => `  Attachment: ${n} (${types[i]}, 2 B)`));
    expect(h.fake.store.outbox[0]?.attachments.map((a) => a.filename)).toEqual(expected);
  });
});

describe("what Gmail answers", () => {
  it("names the status of a failed send and none of its body", async () => {
    h.fake.store.faults.push({ method: "POST", path: "/messages/send", status: 500 });
    const { answer } = await h.call({ args: { to: ["ada@example.com"], text: "t" } });
    expect(answer.text).toBe("Not done: Gmail answered HTTP 500.");
    expect(JSON.stringify(answer.result)).not.toContain(SECRET_MARKER);
  });

  it("refuses before asking when the mailbox's own address cannot be read", async () => {
    h.fake.store.faults.push({ method: "GET", path: "/profile", status: 503 });
    const { answer, prompts } = await h.call({ args: { to: ["ada@example.com"], text: "t" } });
    expect(answer.text).toBe("Not done: Gmail answered HTTP 503. Nothing was sent.");
    expect(prompts).toEqual([]);
  });
});

describe("issue 13 #1: a recipient is shown whole, the address first", () => {
  const ATTACK = `"Jane Doe ‹jane.doe@company.example›${" ".repeat(170)}…" <exfil@attacker.example>`;

  it("issue 13 #1: refuses the look-alike display-name attack before anyone is asked, and sends nothing", async () => {
    const { answer, prompts } = await h.call({ args: { to: [ATTACK], subject: "Invoice", text: "t" } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toBe(
      "Not done: the display name given for exfil@attacker.example contains @, < or > or a character that looks like one, so it could pose as an address; give the address alone or a plain name. Nothing was sent.",
    );
    expect(prompts).toEqual([]);
    expect(h.approver.requests).toEqual([]);
    expect(sendRequests()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it.each([
    ["@", "Jane jane@company.example", /@, < or >/],
    ["a fullwidth @", "Jane jane＠company.example", /@, < or >/],
    ["‹ ›", "Jane ‹jane›", /@, < or >/],
    ["＜ ＞", "Jane ＜jane＞", /@, < or >/],
    ["﹤ ﹥", "Jane ﹤jane﹥", /@, < or >/],
    ["a name over 64 characters", "J".repeat(65), /longer than 64 characters/],
    ["a run of spaces", "Jane          Doe", /run of spaces/],
    ["an invisible filler", "Jane\u3164Doe", /invisible, spacing or direction-changing/],
    ["a bidi override", "Jane \u202eeoD", /invisible, spacing or direction-changing/],
  ])("issue 13 #1: refuses a display name holding %s, never showing it", async (_label, name, says) => {
    const { answer, prompts } = await h.call({ args: { to: ["ada@example.com"], cc: [`"${name}" <bob@example.com>`], subject: "s", text: "t" } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the display name given for bob@example\.com /);
    expect(answer.text).toMatch(says);
    expect(answer.text).not.toContain(name);
    expect(prompts).toEqual([]);
    expect(sendRequests()).toEqual([]);
  });

  it("issue 13 #1: shows every address whole and first, then its name, and sends to exactly those addresses", async () => {
    const long = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.example`;
    const name = "N".repeat(64);
    const { answer, prompts } = await h.call({ args: { to: [`${name} <${long}>`, "Ada Lovelace <ada@example.com>"], subject: "s", text: "t" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]?.filter((l) => l.startsWith("  To: "))).toEqual([`  To: ${long} (name: ${name})`, "  To: ada@example.com (name: Ada Lovelace)"]);
    expect(prompts[0]?.join("\n")).not.toContain("[cut:");
    expect(h.fake.store.outbox[0]?.to).toEqual([long, "ada@example.com"]);
  });

  it("issue 15 #3: a send of 50 named recipients, once refused as over the approval service's 4 KiB, is asked whole and sent once", async () => {
    const to = Array.from({ length: 50 }, (_, i) => `Recipient Number ${String(i).padStart(2, "0")} <recipient-${String(i).padStart(2, "0")}-${"x".repeat(40)}@example.com>`);
    const { answer, prompts } = await h.call({ args: { to, subject: "s", text: "t" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts).toHaveLength(1);
    expect(new TextEncoder().encode(prompts[0]?.join("\n")).byteLength).toBeGreaterThan(4096);
    expect(prompts[0]?.filter((l) => l.startsWith("  To: "))).toHaveLength(50);
    expect(sendRequests()).toHaveLength(1);
  });
});

describe("issue 13 #2: a reply's inherited subject is marked as the original mail's", () => {
  it("issue 13 #2: labels the default Re: subject as taken from the original mail, every space of its runs shown as it goes out", async () => {
    const original = h.fake.store.accounts.get(PERSON.email)?.messages.get("msg-person-2");
    if (original === undefined) throw new Error("the seed has no msg-person-2");
    original.raw = original.raw.replace("Subject: Re: Quarterly numbers", `Subject: Quarterly numbers${" ".repeat(120)}Approved by: IT\u3164`);
    const { answer, prompts } = await h.call({ args: { to: ["carol@example.com"], reply_to_message_id: "msg-person-2", text: "Fixed, thanks." } });
    expect(answer.isError, answer.text).toBe(false);
    // Shown verbatim (issue 26, docs/rules.md R-PROMPT-13): the run is 120 visible marks, never one space.
    expect(prompts[0]?.filter((l) => l.includes("Subject"))).toEqual([`  Subject (from the original mail): Re: Quarterly numbers${"\u2420".repeat(120)}Approved by: IT`]);
  });

  it("cuts an original subject at its length cap between characters, never inside one: the card shows what is sent", async () => {
    const original = h.fake.store.accounts.get(PERSON.email)?.messages.get("msg-person-2");
    if (original === undefined) throw new Error("the seed has no msg-person-2");
    // 799 units and a surrogate pair: a cut at 800 UTF-16 units falls inside the pair.
    original.raw = original.raw.replace("Subject: Re: Quarterly numbers", `Subject: ${"a".repeat(799)}\u{1f600}`);
    const { answer, prompts } = await h.call({ args: { to: ["carol@example.com"], reply_to_message_id: "msg-person-2", text: "ok" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]?.filter((l) => l.includes("Subject"))).toEqual([`  Subject (from the original mail): Re: ${"a".repeat(799)}`]);
    expect(h.fake.store.outbox[0]?.subject).toBe(`Re: ${"a".repeat(799)}`);
  });

  it("issue 13 #2: a subject the caller gave for a reply is labelled as the caller's", async () => {
    const { answer, prompts } = await h.call({ args: { to: ["carol@example.com"], reply_to_message_id: "msg-person-2", subject: "My own words", text: "ok" } });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts[0]?.filter((l) => l.includes("Subject"))).toEqual(["  Subject: My own words"]);
  });
});
