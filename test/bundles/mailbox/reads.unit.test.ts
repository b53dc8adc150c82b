// Covers the mailbox's read tools against a real Dovecot (test/servers/dovecot/): get_attachments saves into a bound R2
// bucket (what makes its readOnlyHint false) all or none, under a key naming the mailbox (against a scripted server too,
// fake-imap.ts, for two mailboxes sharing a UIDVALIDITY), the message text cap (R-MAIL-9), search paged through the
// tool with its offset, and reads that leave \Seen unset, peeking on a mailbox opened read-only (R-MAIL-5).
import { beforeEach, describe, expect, it } from "vitest";
import { resetSwitchLog } from "../../../bundles/kit/switch";
import handler from "../../../bundles/mailbox/mailbox.app";
import type { Connector } from "../../../bundles/mailbox/mailbox.connection";
import { MAX_ATTACHMENT_BYTES, MAX_TEXT_CHARS } from "../../../bundles/mailbox/mailbox.mime";
import { attachmentKey } from "../../../bundles/mailbox/mailbox.read";
import { useConnector } from "../../../bundles/mailbox/mailbox.session";
// @ts-expect-error: plain ESM helper without types
import { message } from "../../servers/dovecot/imap-admin.mjs";
import { callBundle } from "../kit/helpers/bundle";
import { CALL, fakeRegistry } from "../pads/helpers";
import { FakeImap, fakeAccountEnv } from "./fake-imap";
import { accountEnv, nodeConnector, useTestDovecot } from "./helpers";

/** Node's sockets, with every command the bundle sends kept as text (the wire is where EXAMINE and PEEK show). */
function recordingConnector(): Connector & { sent: string[] } {
  const base = nodeConnector();
  const sent: string[] = [];
  const connector = (async (address, options) => {
    const socket = await base(address, options);
    const out = socket.writable.getWriter();
    const decoder = new TextDecoder();
    const writable = new WritableStream<Uint8Array>({
      write: (chunk) => {
        sent.push(decoder.decode(chunk));
        return out.write(chunk);
      },
      close: () => out.close(),
      abort: (reason) => out.abort(reason),
    });
    return { ...socket, writable };
  }) as Connector & { sent: string[] };
  connector.sent = sent;
  return connector;
}
const connector = recordingConnector();
const mail = useTestDovecot(connector);
const dovecot = mail.dovecot;
const admin = mail.admin;
beforeEach(() => resetSwitchLog());

let boxes = 0;
const freshName = () => `R${++boxes}-${Date.now().toString(36)}`;
/** A fresh mailbox holding `raws`, appended in order with `flags`; its name. */
async function mailboxOf(raws: string[], flags: string[] = []): Promise<string> {
  const name = freshName();
  await admin(async (a) => {
    await a.create(name);
    for (const raw of raws) await a.append(name, raw, flags);
  });
  return name;
}
/** Each message's flags by UID, without \Recent (the server's mark for a session that first sees a message, not one a read sets). */
const flagsIn = (name: string) => admin(async (a) => Object.fromEntries((await a.messages(name)).map((m) => [m.uid, m.flags.filter((f) => f !== "\\Recent")])));

/** A stand-in for an R2 bucket that keeps what is put into it. */
function recordingBucket() {
  const puts: { key: string; bytes: Buffer; contentType: string | undefined }[] = [];
  return {
    puts,
    put: async (key: string, value: Uint8Array, options?: { httpMetadata?: { contentType?: string } }) => {
      puts.push({ key, bytes: Buffer.from(value), contentType: options?.httpMetadata?.contentType });
      return { key };
    },
  };
}

async function call(name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const registry = fakeRegistry();
  registry.live(CALL.scope, CALL.key);
  return callBundle(handler, { mount: "mailbox", name, args, env: { ...accountEnv("mailbox", dovecot(), "carol"), CALLS: registry.ns, ...extra } });
}

const REPORT = message({
  subject: "Report with attachments",
  text: "Two files attached.",
  attachments: [
    { name: "report.pdf", type: "application/pdf", content: Buffer.from("%PDF-1.4 strad test file\n") },
    { name: "Übersicht 日本.txt", type: "text/plain; charset=utf-8", content: "Zeile eins\nZeile zwei\n" },
  ],
});

describe("get_attachments with an R2 bucket bound", () => {
  it("puts each attachment into the bucket under the mount, UIDVALIDITY and UID, and returns the keys instead of the files", async () => {
    const box = await mailboxOf([REPORT]);
    const uidValidity = await admin(async (a) => (await a.status(box)).uidValidity);
    const bucket = recordingBucket();
    const result = await call("get_attachments", { mailbox: box, uid: 1 }, { MAILBOX__ATTACHMENTS_BUCKET: bucket });
    expect(result.isError, result.text).toBe(false);
    expect(bucket.puts.map((p) => [p.key, p.bytes.toString(), p.contentType])).toEqual([
      [`mailbox/${box}/${uidValidity}/1/0-report.pdf`, "%PDF-1.4 strad test file\n", "application/pdf"],
      [`mailbox/${box}/${uidValidity}/1/1-Übersicht 日本.txt`, "Zeile eins\nZeile zwei\n", "text/plain"],
    ]);
    const content = result.result.content as { type: string }[];
    expect(content.map((c) => c.type)).toEqual(["text"]);
    expect(JSON.parse(result.text).saved).toEqual([
      { index: 0, filename: "report.pdf", mime_type: "application/pdf", size: 25, key: `mailbox/${box}/${uidValidity}/1/0-report.pdf` },
      { index: 1, filename: "Übersicht 日本.txt", mime_type: "text/plain", size: 22, key: `mailbox/${box}/${uidValidity}/1/1-Übersicht 日本.txt` },
    ]);
  });

  it("keys the attachments of two mailboxes with the same UIDVALIDITY, UID, index and file name apart, by the mailbox's name", async () => {
    // RFC 3501 makes a UIDVALIDITY unique only within its mailbox: a scripted server gives both mailboxes 7.
    const imap = new FakeImap().add("INBOX", { count: 1, uidValidity: 7, raw: REPORT }).add("Archive", { count: 1, uidValidity: 7, raw: REPORT });
    const bucket = recordingBucket();
    const registry = fakeRegistry();
    registry.live(CALL.scope, CALL.key);
    const restore = useConnector(imap.connector());
    try {
      for (const box of ["INBOX", "Archive"]) {
        const result = await callBundle(handler, {
          mount: "mailbox",
          name: "get_attachments",
          args: { mailbox: box, uid: 1, indexes: [0] },
          env: { ...fakeAccountEnv("mailbox"), CALLS: registry.ns, MAILBOX__ATTACHMENTS_BUCKET: bucket },
        });
        expect(result.isError, result.text).toBe(false);
      }
    } finally {
      restore();
    }
    expect(bucket.puts.map((p) => p.key)).toEqual(["mailbox/INBOX/7/1/0-report.pdf", "mailbox/Archive/7/1/0-report.pdf"]);
  });

  it("puts the mailbox's name in the key as one path segment, percent-encoded: no two names give one key, and none reads as another segment, . or ..", () => {
    const names = ["Archive", "Archive/2025", "Archive%2F2025", "Archive 2025", ".", "..", "a.b", "Entwürfe/Größe & Maß", "日本語"];
    const keys = names.map((n) => attachmentKey("mailbox", n, 7, 1, 0, "report.pdf"));
    expect(new Set(keys).size).toBe(names.length);
    for (const key of keys) {
      const segments = key.split("/");
      expect(segments).toHaveLength(5);
      expect(segments.every((part) => part !== "." && part !== ".." && part !== "")).toBe(true);
    }
    expect(keys.slice(0, 7)).toEqual([
      "mailbox/Archive/7/1/0-report.pdf",
      "mailbox/Archive%2F2025/7/1/0-report.pdf",
      "mailbox/Archive%252F2025/7/1/0-report.pdf",
      "mailbox/Archive%202025/7/1/0-report.pdf",
      "mailbox/%2E/7/1/0-report.pdf",
      "mailbox/%2E%2E/7/1/0-report.pdf",
      "mailbox/a%2Eb/7/1/0-report.pdf",
    ]);
  });

  it("puts only the attachments asked for by index", async () => {
    const box = await mailboxOf([REPORT]);
    const bucket = recordingBucket();
    const result = await call("get_attachments", { mailbox: box, uid: 1, indexes: [1] }, { MAILBOX__ATTACHMENTS_BUCKET: bucket });
    expect(result.isError, result.text).toBe(false);
    expect(bucket.puts.map((p) => p.key)).toEqual([expect.stringMatching(/\/1\/1-Übersicht 日本\.txt$/)]);
  });

  it("puts nothing when one attachment of the message is over its cap: all or none", async () => {
    const raw = message({
      subject: "one small, one over the cap",
      text: "x",
      attachments: [
        { name: "small.txt", type: "text/plain", content: "small" },
        { name: "big.bin", type: "application/octet-stream", content: Buffer.alloc(MAX_ATTACHMENT_BYTES + 1, 1) },
      ],
    });
    const box = await mailboxOf([raw]);
    const bucket = recordingBucket();
    const result = await call("get_attachments", { mailbox: box, uid: 1 }, { MAILBOX__ATTACHMENTS_BUCKET: bucket });
    expect(result.text).toBe(
      `Not done: attachment 1 is ${MAX_ATTACHMENT_BYTES + 1} bytes, more than the ${MAX_ATTACHMENT_BYTES} this server returns; no attachment was returned, and none is cut short. Nothing was changed.`,
    );
    expect(bucket.puts).toEqual([]);
  }, 30_000);
});

describe("get_message's text cap", () => {
  // The text is counted in characters, not bytes: "ü" is two bytes in UTF-8 and one character. The body's closing line
  // break is part of the text, so MAX_TEXT_CHARS - 1 of them make a text of exactly MAX_TEXT_CHARS.
  it("serves a text of exactly the cap whole, and refuses one a character over it with the cap named", async () => {
    const box = await mailboxOf([message({ subject: "at the cap", text: "ü".repeat(MAX_TEXT_CHARS - 1) }), message({ subject: "over the cap", text: "ü".repeat(MAX_TEXT_CHARS) })]);
    const at = await call("get_message", { mailbox: box, uid: 1 });
    expect(at.isError, at.text.slice(0, 200)).toBe(false);
    const served = JSON.parse(at.text) as { subject: string; text: string };
    expect(served.subject).toBe("at the cap");
    expect(served.text).toBe(`${"ü".repeat(MAX_TEXT_CHARS - 1)}\n`);
    expect(served.text).toHaveLength(MAX_TEXT_CHARS);
    const over = await call("get_message", { mailbox: box, uid: 2 });
    expect(over.isError).toBe(true);
    expect(over.text).toBe(`Not done: the message's text is ${MAX_TEXT_CHARS + 1} characters, more than the ${MAX_TEXT_CHARS} this server returns; it is not returned cut short. Nothing was changed.`);
  });
});

describe("search_messages, paged through the tool", () => {
  it("pages the matches newest first with next_offset: two pages, no overlap, nothing missed, no other message", async () => {
    // Eight messages, five of them matching (UIDs 1, 3, 4, 6, 8), the others between them.
    const matching = [1, 3, 4, 6, 8];
    const box = await mailboxOf(Array.from({ length: 8 }, (_, i) => message({ subject: matching.includes(i + 1) ? `Invoice ${i + 1}` : `Newsletter ${i + 1}`, text: "Body." })));
    const page1 = JSON.parse((await call("search_messages", { mailbox: box, subject: "Invoice", limit: 3 })).text);
    expect(page1).toMatchObject({ total: 5, offset: 0, next_offset: 3 });
    const page2 = JSON.parse((await call("search_messages", { mailbox: box, subject: "Invoice", limit: 3, offset: page1.next_offset })).text);
    expect(page2).toMatchObject({ total: 5, offset: 3, next_offset: null });
    const first = page1.messages.map((m: { uid: number }) => m.uid);
    const second = page2.messages.map((m: { uid: number }) => m.uid);
    expect(first).toEqual([8, 6, 4]);
    expect(second).toEqual([3, 1]);
    expect([...first, ...second]).toEqual([...matching].reverse());
    expect([...page1.messages, ...page2.messages].map((m: { subject: string }) => m.subject)).toEqual(["Invoice 8", "Invoice 6", "Invoice 4", "Invoice 3", "Invoice 1"]);
  });
});

describe("reads leave \\Seen unset", () => {
  it("get_message, get_attachments, list_messages and search_messages open the mailbox with EXAMINE, fetch with BODY.PEEK, and no message becomes \\Seen", async () => {
    // Message 3 is \Seen from the start, so the check below sees the flag where it is set.
    const box = await mailboxOf([message({ subject: "plain", text: "Hello." }), REPORT]);
    await admin((a) => a.append(box, message({ subject: "read before", text: "Old." }), ["\\Seen"]));
    expect(await flagsIn(box)).toEqual({ 1: [], 2: [], 3: ["\\Seen"] });
    const from = connector.sent.length;
    expect((await call("get_message", { mailbox: box, uid: 1 })).isError).toBe(false);
    expect((await call("get_message", { mailbox: box, uid: 2 })).isError).toBe(false);
    expect((await call("get_attachments", { mailbox: box, uid: 2 })).isError).toBe(false);
    expect((await call("list_messages", { mailbox: box })).isError).toBe(false);
    expect((await call("search_messages", { mailbox: box, text: "Hello" })).isError).toBe(false);
    expect(await flagsIn(box)).toEqual({ 1: [], 2: [], 3: ["\\Seen"] });
    const commands = connector.sent
      .slice(from)
      .join("")
      .split("\r\n")
      .map((line) => line.replace(/^\S+ /, ""));
    // Both safeguards, each on its own: a SELECT with BODY.PEEK, or BODY[] on an EXAMINE, would also leave it unset.
    expect(commands.filter((c) => /^EXAMINE /.test(c))).toHaveLength(5);
    expect(commands.filter((c) => /^SELECT /.test(c))).toEqual([]);
    const fetches = commands.filter((c) => /^UID FETCH /.test(c) || /^FETCH /.test(c));
    expect(fetches.filter((c) => c.includes("BODY.PEEK[]"))).toHaveLength(3);
    expect(fetches.filter((c) => /BODY\[/.test(c.replaceAll("BODY.PEEK[", "")))).toEqual([]);
    expect(fetches.filter((c) => /\bRFC822(?:\.TEXT|\.HEADER)?\b(?!\.SIZE)/.test(c))).toEqual([]);
  });
});
