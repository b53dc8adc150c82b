// The pure pieces of the send path: recipient parsing (no header injection), the composed MIME read back by the fake's parser and by postal-mime, filename sanitising, the attachment URL rule and base64 decoding.
import PostalMime from "postal-mime";
import { describe, expect, it } from "vitest";
import { attachmentUrlPrefixes, checkAttachmentUrl, decodeBase64, MAX_FILENAME_CHARS, materialize, sanitizeFilename } from "../../../bundles/google/google.attachments";
import { buildMime, displayNameProblem, encodeWords, InputError, MAX_DISPLAY_NAME_CHARS, parseAddress } from "../../../bundles/google/google.mime";
import { addresses, bytesToBinary, decodeWords, header, type MimePart, parseMime, walk } from "../../fakes/gmail/mime";

const read = (bytes: Uint8Array) => parseMime(bytesToBinary(bytes));

describe("recipients", () => {
  it.each([
    ["ada@example.com", { email: "ada@example.com" }],
    ["  Ada Lovelace <ada@example.com> ", { name: "Ada Lovelace", email: "ada@example.com" }],
    ['"Lovelace, Ada" <ada@example.com>', { name: "Lovelace, Ada", email: "ada@example.com" }],
    ["o'brien+tag@mail.example.co.uk", { email: "o'brien+tag@mail.example.co.uk" }],
  ])("accepts %j", (input, expected) => {
    expect(parseAddress(input)).toEqual(expected);
  });

  it.each([
    "ada@example.com\r\nBcc: eve@example.com",
    "ada@example.com\nSubject: x",
    "Ada <ada@example.com>, eve@example.com",
    "ada@example.com, eve@example.com",
    "ada",
    "ada@localhost",
    "ada@@example.com",
    ".ada@example.com",
    "Ada <ada@example.com> <eve@example.com>",
    "Ad<a <ada@example.com>",
    "ada@exa mple.com",
    "\u202eada@example.com",
  ])("refuses %j", (input) => {
    expect(() => parseAddress(input)).toThrow();
  });
});

describe("issue 13 #1: display names", () => {
  it.each([
    `"Jane Doe ‹jane.doe@company.example›${" ".repeat(170)}…" <exfil@attacker.example>`,
    "Jane <jane@company.example> <exfil@attacker.example>",
    '"jane@company.example" <exfil@attacker.example>',
    "Jane ＜jane＞ <exfil@attacker.example>",
    "Jane ﹤jane﹥ <exfil@attacker.example>",
    "Jane ‹jane› <exfil@attacker.example>",
    `${"J".repeat(MAX_DISPLAY_NAME_CHARS + 1)} <exfil@attacker.example>`,
    "Jane\u3164Doe <exfil@attacker.example>",
    "Jane\u115fDoe <exfil@attacker.example>",
    "Jane\u2003Doe <exfil@attacker.example>",
  ])("issue 13 #1: refuses the display name of %j", (input) => {
    expect(() => parseAddress(input)).toThrow(InputError);
  });

  it.each(["=?UTF-8?B?Y2VvQGJhbmsuZXhhbXBsZQ==?= <eve@example.com>", '"=?utf-8?q?ceo=40bank.example?=" <eve@example.com>', "CEO =?iso-8859-1?Q?=3Cceo=40bank.example=3E?= <eve@example.com>"])(
    "R-PROMPT-10: refuses the display name of %j: an RFC 2047 encoded word, which clients show decoded",
    (input) => {
      expect(() => parseAddress(input)).toThrow(/the display name given for eve@example\.com holds an RFC 2047 encoded word/);
    },
  );

  it("R-PROMPT-10: keeps a name that only looks a little like an encoded word", () => {
    expect(parseAddress("Q =? B ?= <m@example.com>")).toEqual({ name: "Q =? B ?=", email: "m@example.com" });
  });

  it("issue 13 #1: keeps a plain name up to the limit", () => {
    expect(MAX_DISPLAY_NAME_CHARS).toBe(64);
    const name = "Dr. Maria-Theresa von Hohenberg-Castellanos";
    expect(parseAddress(`${name} <m@example.com>`)).toEqual({ name, email: "m@example.com" });
    expect(parseAddress(`"${"n".repeat(64)}" <m@example.com>`)).toEqual({ name: "n".repeat(64), email: "m@example.com" });
    expect(displayNameProblem("Zoë Ångström")).toBeUndefined();
  });
});

describe("the composed message", () => {
  const attachment = { filename: "résumé 東京.pdf", mimeType: "application/pdf", bytes: new Uint8Array([0, 1, 2, 250, 255]) };
  const input = {
    from: "person@example.com",
    to: [{ name: "Lovelace, Ada", email: "ada@example.com" }, { email: "bob@example.com" }],
    cc: [{ name: "Zoë", email: "zoe@example.com" }],
    bcc: [{ email: "audit@example.com" }],
    subject: "Grüße aus 東京 — a subject long enough to need more than one encoded word in its header line",
    text: "plain ✓",
    html: "<p>html ✓</p>",
    inReplyTo: "<q1@mail.example.com>",
    references: "<q0@mail.example.com> <q1@mail.example.com>",
    attachments: [attachment],
  };
  const mime = () => buildMime(input);

  it("reads back with the same recipients, subject, bodies, thread headers and attachment bytes", () => {
    const parsed = read(mime());
    expect(addresses(header(parsed, "To"))).toEqual(["ada@example.com", "bob@example.com"]);
    expect(addresses(header(parsed, "Cc"))).toEqual(["zoe@example.com"]);
    expect(addresses(header(parsed, "Bcc"))).toEqual(["audit@example.com"]);
    expect(decodeWords(header(parsed, "Subject") ?? "")).toBe("Grüße aus 東京 — a subject long enough to need more than one encoded word in its header line");
    expect(header(parsed, "In-Reply-To")).toBe("<q1@mail.example.com>");
    expect(header(parsed, "References")).toBe("<q0@mail.example.com> <q1@mail.example.com>");
    const leaves: MimePart[] = [];
    walk(parsed, (p) => {
      if (p.parts.length === 0) leaves.push(p);
    });
    expect(leaves.map((p) => [p.mimeType, p.filename])).toEqual([
      ["text/plain", ""],
      ["text/html", ""],
      ["application/pdf", "résumé 東京.pdf"],
    ]);
    expect(new TextDecoder().decode(leaves[0]?.body)).toBe("plain ✓");
    expect([...(leaves[2]?.body ?? [])]).toEqual([0, 1, 2, 250, 255]);
  });

  it("reads back the same through postal-mime, a parser written apart from the builder", async () => {
    const quoted = { filename: 'say "hi".txt', mimeType: "text/plain", bytes: new TextEncoder().encode("hi") };
    const raw = buildMime({ ...input, attachments: [attachment, quoted] });
    const email = await PostalMime.parse(raw);
    expect(email.from).toEqual({ name: "", address: "person@example.com" });
    expect(email.to).toEqual([
      { name: "Lovelace, Ada", address: "ada@example.com" },
      { name: "", address: "bob@example.com" },
    ]);
    expect(email.cc).toEqual([{ name: "Zoë", address: "zoe@example.com" }]);
    expect(email.bcc).toEqual([{ name: "", address: "audit@example.com" }]);
    expect(email.subject).toBe(input.subject);
    expect([email.inReplyTo, email.references]).toEqual([input.inReplyTo, input.references]);
    expect([email.text, email.html]).toEqual(["plain ✓", "<p>html ✓</p>"]);
    expect(email.attachments.map((a) => [a.filename, a.mimeType, a.disposition, [...new Uint8Array(a.content as ArrayBuffer)]])).toEqual([
      ["résumé 東京.pdf", "application/pdf", "attachment", [0, 1, 2, 250, 255]],
      ['say "hi".txt', "text/plain", "attachment", [104, 105]],
    ]);
    expect(email.headers.map((h) => h.key)).toEqual(["from", "to", "cc", "bcc", "subject", "in-reply-to", "references", "mime-version", "content-type"]);
  });

  it("keeps every header line within 998 characters and every encoded word within 75", () => {
    const text = new TextDecoder().decode(mime());
    const head = text.slice(0, text.indexOf("\r\n\r\n"));
    for (const line of head.split("\r\n")) expect(line.length).toBeLessThanOrEqual(998);
    for (const word of head.match(/=\?UTF-8\?B\?[^?]*\?=/g) ?? []) expect(word.length).toBeLessThanOrEqual(75);
    expect(encodeWords("plain ascii")).toBe("plain ascii");
  });

  it("refuses a subject that would add a header", () => {
    expect(() => buildMime({ from: "a@example.com", to: [{ email: "b@example.com" }], cc: [], bcc: [], subject: "hi\r\nBcc: eve@example.com", attachments: [] })).toThrow(/line break/);
  });

  it.each(["=?UTF-8?B?VXJnZW50OiB3aXJlIGZ1bmRz?=", "x =?utf-8?q?Urgent?= y"])("R-PROMPT-6: refuses the subject %j: an RFC 2047 encoded word would reach recipients decoded", (subject) => {
    expect(() => buildMime({ from: "a@example.com", to: [{ email: "b@example.com" }], cc: [], bcc: [], subject, attachments: [] })).toThrow(/the subject holds an RFC 2047 encoded word/);
  });

  it("R-PROMPT-6: encodes a subject of its own as encoded words, which the check does not refuse", () => {
    const mime = new TextDecoder().decode(buildMime({ from: "a@example.com", to: [{ email: "b@example.com" }], cc: [], bcc: [], subject: "Grüße", attachments: [] }));
    expect(mime).toContain("Subject: =?UTF-8?B?");
  });
});

describe("attachment filenames", () => {
  it.each([
    ["report.pdf", "report.pdf"],
    ["invoice\u202Efdp.exe", "invoice_fdp.exe"],
    ["line\r\nbreak.txt", "line__break.txt"],
    ["sep\u2028arator.txt", "sep_arator.txt"],
    ["iso\u2066late\u2069.txt", "iso_late_.txt"],
    ["zero\u200Dwidth\uFEFF.txt", "zero_width_.txt"],
    ["C:\\Windows\\evil.bat", "C:_Windows_evil.bat"],
    ["../../etc/passwd", ".._.._etc_passwd"],
    ['say "hi".txt', "say _hi_.txt"],
    ["..", "attachment"],
    ["", "attachment"],
    ["東京.txt", "東京.txt"],
  ])("%j goes out as %j", (input, expected) => {
    expect(sanitizeFilename(input)).toBe(expected);
  });

  it("cuts a long name but keeps its extension visible", () => {
    const cut = sanitizeFilename(`${"a".repeat(300)}.pdf`);
    expect([...cut].length).toBeLessThanOrEqual(MAX_FILENAME_CHARS);
    expect(cut.endsWith("….pdf")).toBe(true);
  });
});

describe("the attachment URL rule", () => {
  const prefixes = ["https://files.example.com/shared/", "http://127.0.0.1:8789/gmail/_fake/files/"];
  it.each(["https://files.example.com/shared/a.pdf", "https://files.example.com/shared/deep/a.pdf?v=2", "http://127.0.0.1:8789/gmail/_fake/files/a.bin"])("fetches %s", (url) => {
    expect(checkAttachmentUrl(url, prefixes)).toMatchObject({ ok: true });
  });

  it.each([
    ["https://files.example.com/shared/", /not under any/],
    ["https://files.example.com/sharedX/a.pdf", /not under any/],
    ["https://files.example.com/shared/../private/a.pdf", /not under any/],
    // The parser resolves %2e%2e as ".." itself; an encoded dot it leaves alone is refused outright.
    ["https://files.example.com/shared/%2e%2e/private/a.pdf", /not under any/],
    ["https://files.example.com/shared/x%2e%2e/a.pdf", /encoded dot/],
    ["https://files.example.com/shared/a%2fb.pdf", /encoded slash/],
    ["https://evil.example.com/shared/a.pdf", /not under any/],
    ["http://files.example.com/shared/a.pdf", /must be https/],
    ["https://user:pw@files.example.com/shared/a.pdf", /userinfo/],
    ["https://files.example.com@evil.example.com/shared/a.pdf", /userinfo/],
    ["file:///etc/passwd", /must be https/],
    ["https://files.example.com/shared/a.pdf#x", /fragment/],
    ["/shared/a.pdf", /not an absolute URL/],
  ])("refuses %s", (url, says) => {
    const verdict = checkAttachmentUrl(url, prefixes);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.why).toMatch(says);
  });

  it("fetches nothing when no prefix is configured, and drops prefixes that are not safe", () => {
    expect(checkAttachmentUrl("https://files.example.com/shared/a.pdf", [])).toMatchObject({ ok: false, why: expect.stringMatching(/GMAIL_ATTACHMENT_URL_PREFIXES is empty/) });
    expect(
      attachmentUrlPrefixes({
        GMAIL_ATTACHMENT_URL_PREFIXES: "https://ok.example.com/a/, http://public.example.com/b/ https://no-slash.example.com/c https://ok.example.com/?q=1\nhttp://127.0.0.1:1/f/",
      }),
    ).toEqual(["https://ok.example.com/a/", "http://127.0.0.1:1/f/"]);
    expect(attachmentUrlPrefixes({})).toEqual([]);
  });
});

describe("base64 content", () => {
  it("decodes the standard and URL-safe alphabets, padded or not", () => {
    expect([...decodeBase64("+/8=")]).toEqual([251, 255]);
    expect([...decodeBase64("-_8")]).toEqual([251, 255]);
    expect(new TextDecoder().decode(decodeBase64("aGVs\r\nbG8="))).toBe("hello");
  });

  it.each(["a", "aGk=x", "a$==", "===="])("refuses %j", (text) => {
    expect(() => decodeBase64(text)).toThrow(/not valid base64/);
  });
});

describe("an attachment URL's download", () => {
  const env = { GMAIL_ATTACHMENT_URL_PREFIXES: "https://files.example.com/" };
  const spec = { url: "https://files.example.com/report.pdf" };
  /** A fetch that throws before any answer for its first `failures` calls, then answers the file; counts its calls. */
  const flaky = (failures: number) => {
    const calls: string[] = [];
    const doFetch = async (input: string) => {
      calls.push(input);
      if (calls.length <= failures) throw new TypeError("Network connection lost.");
      return new Response("%PDF-1.7", { headers: { "content-type": "application/pdf", "content-length": "8" } });
    };
    return { calls, doFetch };
  };

  it("is tried once more when the connection failed before any answer (a kept-alive connection the server closed)", async () => {
    const { calls, doFetch } = flaky(1);
    const [file] = await materialize([spec], env, new AbortController().signal, doFetch);
    expect(calls).toEqual([spec.url, spec.url]);
    expect(new TextDecoder().decode(file?.bytes)).toBe("%PDF-1.7");
  });

  it("is refused, naming why, when the second try fails too, and is never tried a third time", async () => {
    const { calls, doFetch } = flaky(2);
    await expect(materialize([spec], env, new AbortController().signal, doFetch)).rejects.toThrow(new InputError("an attachment URL could not be fetched"));
    expect(calls).toHaveLength(2);
  });

  it("is not tried again once the call was dropped", async () => {
    const dropped = new AbortController();
    const calls: string[] = [];
    const doFetch = async (input: string) => {
      calls.push(input);
      dropped.abort();
      throw new TypeError("aborted");
    };
    await expect(materialize([spec], env, dropped.signal, doFetch)).rejects.toThrow("the call was dropped while an attachment was downloading");
    expect(calls).toHaveLength(1);
  });

  it("is not tried again after an answer, whatever its status", async () => {
    const calls: string[] = [];
    const doFetch = async (input: string) => {
      calls.push(input);
      return new Response("gone", { status: 503 });
    };
    await expect(materialize([spec], env, new AbortController().signal, doFetch)).rejects.toThrow("an attachment URL answered HTTP 503");
    expect(calls).toHaveLength(1);
  });
});
