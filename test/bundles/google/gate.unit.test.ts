// The send path's guarantees against the Gmail fake: the gate on the send and upload URLs, the mailbox's refusals, dropped calls, late approvals, second deliveries, the waived mailbox beside a person's, and a bundle without the gateway.
import { describe, expect, it } from "vitest";
import { Mailbox, UPLOAD_THRESHOLD_BYTES } from "../../../bundles/google/google.mailbox";
import { type ComposeTarget, composeMime, sendFingerprint } from "../../../bundles/google/google.send";
import { waivedLine } from "../../../bundles/kit/confirm";
import { fingerprint } from "../../../bundles/kit/fingerprint";
import { type GatedWrite, gatedWrite } from "../../../bundles/kit/gate";
import { callStateFor, runInScope } from "../../../bundles/kit/scope";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import { fileBytes } from "../../fakes/gmail/gmail.fake";
import { askChannel } from "../kit/helpers/bundle";
import type { Plan } from "../kit/helpers/hostile-server";
import { ACCEPT, AGENT, callRef, harness, PENDING, PERSON, requestsTo } from "./helpers";

const h = harness();
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inlineSends = () => requestsTo(h.fake, "/gmail/v1/users/me/messages/send").filter((r) => !r.path.includes("/upload/"));
const uploads = () => requestsTo(h.fake, "/upload/gmail/v1/users/me/messages/send");
const file = (bytes: number) => ({ url: `${h.fake.base}/_fake/files/big.bin?bytes=${bytes}` });

async function waitFor(probe: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await settle(10);
  }
}

// Multi-megabyte messages are composed, encoded and parsed in plain JS on both sides: give them time.
describe("the size of a message decides its URL, and the gate covers both", { timeout: 60_000 }, () => {
  it("sends a message up to 5 MB as inline JSON to the send URL", async () => {
    const { answer } = await h.call({ args: { to: ["ada@example.com"], text: "t", attachments: [file(3_000_000)] } });
    expect(answer.isError, answer.text).toBe(false);
    expect(inlineSends()).toHaveLength(1);
    expect(uploads()).toEqual([]);
    expect(h.fake.store.outbox.map((m) => m.via)).toEqual(["send"]);
  });

  it("sends a message over 5 MB to the upload URI, as media, or as multipart with the thread when it is a reply", async () => {
    const big = await h.call({ args: { to: ["ada@example.com"], text: "t", attachments: [file(4_000_000)] } });
    expect(big.answer.isError, big.answer.text).toBe(false);
    const reply = await h.call({ args: { to: ["carol@example.com"], reply_to_message_id: "msg-person-1", text: "t", attachments: [file(4_000_000)] } });
    expect(reply.answer.isError, reply.answer.text).toBe(false);
    expect(inlineSends()).toEqual([]);
    expect(uploads().map((r) => r.query.uploadType)).toEqual(["media", "multipart"]);
    expect(h.fake.store.outbox.map((m) => [m.via, m.rawBytes > UPLOAD_THRESHOLD_BYTES])).toEqual([
      ["upload-media", true],
      ["upload-multipart", true],
    ]);
    expect(h.fake.store.outbox[1]?.threadId).toBe("thread-person-1");
    expect(h.fake.store.outbox[0]?.attachments[0]?.size).toBe(4_000_000);
  });

  it("gate on the send URL: an approved small send whose call is no longer live never reaches the send URL", async () => {
    const { answer } = await h.call({ args: { to: ["ada@example.com"], text: "t" }, live: false });
    expect(answer.text).toBe("Not done: the call is no longer live or was already used for a send; nothing was sent.");
    expect(inlineSends()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("gate on the upload URL: an approved large send whose call is no longer live never reaches the upload URL", async () => {
    const { answer } = await h.call({ args: { to: ["ada@example.com"], text: "t", attachments: [file(6_000_000)] }, live: false });
    expect(answer.text).toBe("Not done: the call is no longer live or was already used for a send; nothing was sent.");
    expect(uploads()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });
});

describe("a caller that leaves", () => {
  it("gets nothing sent when it leaves while the person decides, even when the person then approves", async () => {
    let decision: Plan = PENDING;
    const drop = new AbortController();
    const pending = h.call({ args: { to: ["ada@example.com"], text: "t" }, poll: () => decision, signal: drop.signal });
    await waitFor(() => h.approver.requests.some((r) => r.method === "GET"));
    drop.abort();
    const { answer } = await pending;
    expect(answer.ok).toBe(false);
    await settle(200);
    const asked = h.approver.requests.length;
    decision = ACCEPT;
    await settle(400);
    // The bundle stopped asking when the caller left: the late approval reaches no one and sends nothing.
    expect(h.approver.requests.length).toBe(asked);
    expect(inlineSends()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("gets nothing sent when the approval is read just as the caller leaves", async () => {
    const drop = new AbortController();
    const { answer } = await h.call({
      args: { to: ["ada@example.com"], text: "t" },
      signal: drop.signal,
      poll: () => {
        drop.abort();
        return { ...ACCEPT, delayMs: 20 };
      },
    });
    expect(answer.ok).toBe(false);
    await settle(300);
    expect(h.fake.store.outbox).toEqual([]);
  });

  it("gets nothing sent when the approval lands after the gateway ended the call", async () => {
    let key = "";
    const { answer } = await h.call({
      key: "n:late",
      args: { to: ["ada@example.com"], text: "t" },
      poll: () => {
        key = "n:late";
        h.calls.end("dev-session", key);
        return ACCEPT;
      },
    });
    expect(key).toBe("n:late");
    expect(answer.text).toBe("Not done: the call is no longer live or was already used for a send; nothing was sent.");
    expect(requestsTo(h.fake, "/token")).toHaveLength(1);
    expect(inlineSends()).toEqual([]);
  });
});

describe("one approval, two deliveries", () => {
  it("sends once when the same approved call reaches the bundle twice", async () => {
    const args = { to: ["ada@example.com"], subject: "twice", text: "t" };
    const [a, b] = await Promise.all([h.call({ key: "n:twice", args }), h.call({ key: "n:twice", args })]);
    const texts = [a.answer.text, b.answer.text];
    expect(texts.filter((t) => t.startsWith("Sent from "))).toHaveLength(1);
    expect(texts.find((t) => !t.startsWith("Sent from "))).toBe("Not done: the call is no longer live or was already used for a send; nothing was sent.");
    expect(h.fake.store.outbox).toHaveLength(1);
    expect(inlineSends()).toHaveLength(1);
  });
});

describe("the agent's own mailbox beside a person's", () => {
  it("sends from the waived mount without asking, while the person's mount in the same bundle asks and is declined", async () => {
    const [agent, person] = await Promise.all([
      h.call({ mount: AGENT.mount, channel: "skip", args: { to: ["ada@example.com"], subject: "from the agent", text: "t" } }),
      h.call({ mount: PERSON.mount, args: { to: ["ada@example.com"], subject: "from the person", text: "t" }, poll: { body: { action: "decline" } } }),
    ]);
    expect(agent.answer.text).toMatch(/^Sent from agent@example\.com: /);
    expect(agent.prompts).toEqual([]);
    expect(h.approver.requestsTo(agent.route)).toEqual([]);
    expect(person.prompts).toHaveLength(1);
    expect(person.answer.text).toMatch(/^Not done: the person declined/);
    expect(h.fake.store.outbox.map((m) => [m.account, m.subject])).toEqual([["agent@example.com", "from the agent"]]);
  });

  it("refuses on the person's mount when no channel reaches the call, while the waived mount still sends", async () => {
    const person = await h.call({ mount: PERSON.mount, channel: "none", args: { to: ["ada@example.com"], text: "t" } });
    expect(person.answer.text).toMatch(/^Refused: no approval channel reached this call/);
    const agent = await h.call({ mount: AGENT.mount, channel: "skip", args: { to: ["ada@example.com"], text: "t" } });
    expect(agent.answer.text).toMatch(/^Sent from agent@example\.com/);
    expect(h.fake.store.outbox.map((m) => m.account)).toEqual(["agent@example.com"]);
  });
});

describe("the bundle without the gateway", () => {
  it("refuses send_email when no channel arrives, before reading or minting anything", async () => {
    for (const mount of [PERSON.mount, AGENT.mount]) {
      const { answer } = await h.call({ mount, channel: "none", args: { to: ["ada@example.com"], text: "t" } });
      expect(answer.text).toMatch(/^Refused: no approval channel reached this call/);
    }
    expect(h.fake.store.requests).toEqual([]);
  });

  it("sends nothing on a channel a client wrote itself: without the gateway's registry there is no call to claim", async () => {
    const skip = await h.call({ mount: AGENT.mount, channel: "skip", args: { to: ["ada@example.com"], text: "t" }, env: { CALLS: undefined } });
    // A waived call says nobody was asked, sent or not (docs/rules.md R-CHAN-14).
    expect(skip.answer.text).toBe(`Not done: the call is no longer live or was already used for a send; nothing was sent.${waivedLine(AGENT.mount)}`);
    const unref = await h.call({ mount: AGENT.mount, channel: { slug: AGENT.mount, skip: true }, args: { to: ["ada@example.com"], text: "t" } });
    expect(unref.answer.text).toBe(`Not done: the call carries no record to claim, so it cannot send safely; nothing was sent.${waivedLine(AGENT.mount)}`);
    const asked = await h.call({ args: { to: ["ada@example.com"], text: "t" }, env: { CALLS: undefined } });
    expect(asked.prompts).toHaveLength(1);
    expect(asked.answer.text).toBe("Not done: the call is no longer live or was already used for a send; nothing was sent.");
    expect(inlineSends()).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
  });
});

describe("the mailbox handed to the tools", { timeout: 60_000 }, () => {
  const target = (): ComposeTarget => ({
    kind: "compose",
    mount: PERSON.mount,
    from: PERSON.email,
    to: [{ email: "ada@example.com" }],
    cc: [],
    bcc: [],
    subject: "direct",
    subjectFrom: "caller",
    text: "t",
    inForm: { text: true, html: false },
    bodySha256: "x",
    attachments: [],
  });
  const big = (): ComposeTarget => ({ ...target(), attachments: [{ filename: "big.bin", mimeType: "application/octet-stream", bytes: fileBytes(UPLOAD_THRESHOLD_BYTES), sha256: "y" }] });

  /** Runs `fn` as the tool would, in a call whose channel names a registry record; `approve` sets what the guard would. */
  async function inCall<T>(opts: { approved?: ComposeTarget | "unapproved"; live?: boolean; aborted?: boolean; write?: GatedWrite }, fn: (mailbox: Mailbox) => Promise<T>): Promise<T> {
    const key = `n:direct-${Math.random()}`;
    if (opts.live !== false) h.calls.live("dev-session", key);
    const call = callStateFor(1, { name: "send_email", _meta: { [CHANNEL_META_KEY]: askChannel(`${h.approver.base}/scripted/x/`, { call: callRef(key) }) } });
    if (opts.approved === "unapproved") call.approval = { fingerprint: await fingerprint(sendFingerprint(target())), approved: false };
    else if (opts.approved !== undefined) call.approval = { fingerprint: await fingerprint(sendFingerprint(opts.approved)), approved: true };
    const controller = new AbortController();
    if (opts.aborted) controller.abort();
    return runInScope({ mount: PERSON.mount, signal: controller.signal, waitUntil: () => {}, env: h.env(), call }, () => fn(Mailbox.forCurrentCall(opts.write)));
  }
  const send = (m: Mailbox, t: ComposeTarget) => m.sendMessage(composeMime(t), undefined, sendFingerprint(t));

  it.each([
    ["no approval", {}, /no approval covers this send/],
    ["an approval the guard did not give (a never-asking tool's)", { approved: "unapproved" as const }, /no approval covers this send/],
    ["an approval for a different message", { approved: { ...target(), subject: "other" } }, /the approval covers a different message/],
    ["a dropped call", { approved: target(), aborted: true }, /the call was dropped/],
    ["a call the gateway no longer holds live", { approved: target(), live: false }, /no longer live/],
  ])("refuses sendMessage and sendDraft with %s, before any request", async (_label, opts, says) => {
    await expect(inCall(opts, (m) => send(m, target()))).rejects.toThrow(says);
    await expect(inCall(opts, (m) => m.sendDraft("draft-person-1", sendFingerprint(target())))).rejects.toThrow(says);
    expect(h.fake.store.requests).toEqual([]);
  });

  it("sends once per approved call: a second send in the same call is refused", async () => {
    await inCall({ approved: target() }, async (m) => {
      await expect(send(m, target())).resolves.toMatchObject({ id: expect.any(String) });
      await expect(send(m, target())).rejects.toThrow(/already sent once/);
      await expect(m.sendDraft("draft-person-1", sendFingerprint(target()))).rejects.toThrow(/different message|already sent once/);
    });
    expect(h.fake.store.outbox).toHaveLength(1);
  });

  it("creates only the draft its call resolved: an approval for a send does not cover a draft, before any request", async () => {
    await expect(inCall({ approved: "unapproved" }, (m) => m.createDraft(composeMime(target()), undefined, { ...sendFingerprint(target()), operation: "create_draft" }))).rejects.toThrow(
      "the approval covers a different target; nothing was written",
    );
    expect(h.fake.store.requests).toEqual([]);
  });

  it("hands both the send URL and the upload URL to the gate it was given", async () => {
    const seen: string[] = [];
    const write: GatedWrite = (input, init, options) => {
      seen.push(String(input));
      return gatedWrite(input, init, options);
    };
    await inCall({ approved: target(), write }, (m) => send(m, target()));
    await inCall({ approved: big(), write }, (m) => send(m, big()));
    expect(seen).toEqual([`${h.fake.base}/gmail/v1/users/me/messages/send`, `${h.fake.base}/upload/gmail/v1/users/me/messages/send?uploadType=media`]);
    expect(h.fake.store.outbox.map((m) => m.via)).toEqual(["send", "upload-media"]);
  });
});
