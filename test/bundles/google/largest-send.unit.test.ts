// Issue 15 #3 through the Google bundle against the Gmail fake: the largest legal send_email (every limit at
// its maximum: 50 recipients with names, a 900-character subject, a reply, 10 named attachments) is asked,
// shown whole, and on accept sent once with exactly what was shown (docs/rules.md R-LIMIT-1).
import { describe, expect, it } from "vitest";
import { MAX_PROMPT_BYTES } from "../../../contract/elicitation";
import { fileBytes } from "../../fakes/gmail/gmail.fake";
import { harness, PERSON, requestsTo, sha256Hex } from "./helpers";
import { largestSend, largestSendArgs } from "./largest-send";

const h = harness();

describe("issue 15 #3: the largest legal send through the bundle", () => {
  it("asks the largest legal send_email whole, within the approval service's cap, and on accept sends it once as shown", async () => {
    const send = largestSend();
    const args = largestSendArgs(send, (i) => `${h.fake.base}/_fake/files/f${i}.bin?bytes=${send.attachmentBytes}`, "msg-person-2");
    const { answer, prompts } = await h.call({ args });
    expect(answer.isError, answer.text).toBe(false);
    expect(prompts).toHaveLength(1);
    const prompt = prompts[0] as string[];
    const bytes = new TextEncoder().encode(prompt.join("\n")).byteLength;
    expect(bytes).toBeGreaterThan(4096);
    expect(bytes).toBeLessThanOrEqual(MAX_PROMPT_BYTES);
    expect(prompt.join("\n")).not.toContain("[cut:");
    const shown = (label: string) => prompt.filter((l) => l.startsWith(`  ${label}: `)).map((l) => l.slice(label.length + 4));
    const asShown = (entry: string) => {
      const [, name, email] = /^(.*)<(.*)>$/.exec(entry) as RegExpExecArray;
      return `${email} (name: ${name})`;
    };
    expect(shown("To")).toEqual([asShown(send.entries[0] as string)]);
    expect(shown("Bcc")).toEqual(send.entries.slice(1).map(asShown));
    expect(shown("Subject")).toEqual([send.subject]);
    expect(shown("In reply to message")).toEqual(["msg-person-2"]);
    expect(shown("Text body")).toEqual(["23 B"]);
    expect(shown("Attachment")).toEqual(send.filenames.map((f) => `${f} (application/octet-stream, 1024.0 KB)`));

    const [sent, ...more] = h.fake.store.outbox;
    expect(more).toEqual([]);
    expect(sent?.to).toEqual(shown("To").map((v) => v.split(" (name: ")[0]));
    expect(sent?.bcc).toEqual(shown("Bcc").map((v) => v.split(" (name: ")[0]));
    expect(sent?.subject).toBe(send.subject);
    expect(sent?.via).toBe("upload-multipart");
    const hash = await sha256Hex(fileBytes(send.attachmentBytes));
    expect(sent?.attachments.map((a) => [a.filename, a.size, a.sha256])).toEqual(send.filenames.map((f) => [f, send.attachmentBytes, hash]));
    expect(requestsTo(h.fake, "/upload/gmail/v1/users/me/messages/send")).toHaveLength(1);
    // Reads, encodes and uploads 10 MiB of attachments in this process: about 3 s on a quiet machine, 10-30 s beside
    // a loaded suite on 2 cores, where vitest's 5 s default failed it (and left its send to the tests after it).
  }, 90_000);

  const draft = (headers: string[], parts: string[] = []) => {
    const head = ["From: person@example.com", ...headers, "MIME-Version: 1.0"];
    if (parts.length === 0) return [...head, "Content-Type: text/plain; charset=UTF-8", "", "body"].join("\r\n");
    const files = parts.map((name) => [`--b1`, `Content-Type: text/plain; name="${name}"`, `Content-Disposition: attachment; filename="${name}"`, "", "x"].join("\r\n"));
    return [...head, 'Content-Type: multipart/mixed; boundary="b1"', "", "--b1", "Content-Type: text/plain", "", "body", ...files, "--b1--", ""].join("\r\n");
  };
  const addresses = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@example.com`).join(", ");

  it.each([
    ["51 recipients", draft([`To: ${addresses(30)}`, `Bcc: ${addresses(21)}`, "Subject: s"]), /it has 51 recipients, more than the 50 send_email sends/],
    ["a subject of 901 characters", draft(["To: ada@example.com", `Subject: ${"s".repeat(901)}`]), /its subject is longer than 900 characters/],
    [
      "11 attachments",
      draft(
        ["To: ada@example.com", "Subject: s"],
        Array.from({ length: 11 }, (_, i) => `f${i}.txt`),
      ),
      /it has 11 attachments, more than the 10 send_email sends/,
    ],
  ])("refuses a draft over send_email's own limits (%s) before anyone is asked, and sends nothing", async (_what, raw, reason) => {
    const account = h.fake.store.accounts.get(PERSON.email);
    if (account === undefined) throw new Error("no person mailbox in the fake");
    const stored = h.fake.store.storeDraft(account, raw, undefined);
    const { answer, prompts } = await h.call({ args: { from_draft_id: stored.id } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the draft cannot be sent as it stands: /);
    expect(answer.text).toMatch(reason);
    expect(prompts).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });
});
