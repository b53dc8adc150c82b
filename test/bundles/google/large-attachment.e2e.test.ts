// Issue 15 #4 end to end: a 6 MB attachment goes out through Gmail's upload URI (a message over 5 MB) after a
// person's approval on the real approval service, and the Gmail fake receives exactly those bytes, once, on the
// upload endpoint: as media for a new message, as multipart for a reply. The file comes by URL from the fake's
// files, under the dev GMAIL_ATTACHMENT_URL_PREFIXES (docs/deploy.md), the path for a file larger than a
// slug's request cap lets through inline (docs/rules.md R-LIMIT-5).
import { beforeEach, describe, expect, it } from "vitest";
import { decidePrompt, mintSession, waitForPendingPrompt } from "../../../approvals/dev-api.mjs";
import { bearer, connectModern, FAKES, TOKENS, textOf } from "../../e2e/helpers";
import { fileBytes } from "../../fakes/gmail/gmail.fake";
import type { OutboxEntry, RecordedGmailRequest } from "../../fakes/gmail/store";
import { sha256Hex } from "./helpers";

const SIZE = 6_000_000;
const UPLOAD = "/gmail/upload/gmail/v1/users/me/messages/send";
const INLINE = "/gmail/gmail/v1/users/me/messages/send";

const fake = {
  async get<T>(path: string): Promise<T> {
    return (await (await fetch(`${FAKES}/gmail/_fake/${path}`)).json()) as T;
  },
  async reset(): Promise<void> {
    await (await fetch(`${FAKES}/gmail/_fake/reset`, { method: "POST" })).body?.cancel();
  },
};

beforeEach(async () => {
  await fake.reset();
});

describe("issue 15 #4: a 6 MB attachment through the upload path", () => {
  it.each([
    ["a new message", undefined, "upload-media", "media"],
    ["a reply", "msg-person-2", "upload-multipart", "multipart"],
  ])("sends %s with a 6 MB attachment through the upload URI after approval: the exact bytes, once", async (_what, replyTo, via, uploadType) => {
    const session = await mintSession();
    const subject = `Six megabytes ${via} ${Date.now()}`;
    const name = `six-mb-${via}.bin`;
    const client = await connectModern("gmail-rw-external", { ...bearer(TOKENS.session), "x-elicitation-url": session.elicitationUrl });
    const call = client
      .callTool(
        "send_email",
        {
          to: ["ada@example.com"],
          subject,
          text: "The file.",
          ...(replyTo === undefined ? {} : { reply_to_message_id: replyTo }),
          attachments: [{ url: `${FAKES}/gmail/_fake/files/${name}?bytes=${SIZE}` }],
        },
        { timeout: 110_000 },
      )
      .finally(() => client.close());
    call.catch(() => {});
    const prompt = await waitForPendingPrompt(session.sessionId, { timeoutMs: 60_000 });
    expect(prompt.message).toContain(`  Text body: 9 B\n  Attachment: ${name} (application/octet-stream, 5.7 MB)`);
    // Nothing reached Gmail's send endpoints while the person had not decided.
    expect((await fake.get<RecordedGmailRequest[]>("requests")).filter((r) => r.method === "POST" && (r.path === UPLOAD || r.path === INLINE))).toEqual([]);
    await decidePrompt(session.sessionId, prompt.requestId, "accept");
    const result = await call;
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(textOf(result)).toMatch(/^Sent from person@example\.com: /);

    const sends = (await fake.get<RecordedGmailRequest[]>("requests")).filter((r) => r.method === "POST" && (r.path === UPLOAD || r.path === INLINE));
    expect(sends.map((r) => [r.path, r.query.uploadType, r.status])).toEqual([[UPLOAD, uploadType, 200]]);
    expect(sends[0]?.bytes).toBeGreaterThan(SIZE);
    const sent = (await fake.get<OutboxEntry[]>("outbox")).filter((m) => m.subject === subject);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.via).toBe(via);
    expect(sent[0]?.attachments).toEqual([{ filename: name, mimeType: "application/octet-stream", size: SIZE, sha256: await sha256Hex(fileBytes(SIZE)) }]);
    // The file was fetched once, before the person was asked: the bytes approved are the bytes sent.
    expect((await fake.get<{ path: string }[]>("file-requests")).filter((r) => r.path.endsWith(`/${name}`))).toHaveLength(1);
  });
});
