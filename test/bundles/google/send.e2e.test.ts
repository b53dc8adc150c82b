// send_email end to end: MCP clients through the gateway to the Google bundle and the Gmail fake, a scripted approval service on 8790 deciding; the fake's outbox is the ground truth.
import { readFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { LOG_FILE } from "../../e2e/global-setup";
import { bearer, type Connected, connectLegacy, connectModern, DEV_VARS, FAKES, LATE_APPROVAL_MS, logsCaughtUp, nothingMore, quiet, TOKENS, textOf, waitFor } from "../../e2e/helpers";
import { SECRET_MARKER } from "../../fakes/gmail/gmail.fake";
import type { OutboxEntry } from "../../fakes/gmail/store";
import { type Plan, useScriptedApprover } from "../kit/helpers/hostile-server";
import { AGENT, PERSON } from "./helpers";

const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };
const PENDING: Plan = { body: { action: "pending", content: null } };

const scripted = useScriptedApprover();
let run = 0;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++run}`;

const gmail = {
  async outbox(subject?: string): Promise<OutboxEntry[]> {
    const all = (await (await fetch(`${FAKES}/gmail/_fake/outbox`)).json()) as OutboxEntry[];
    return subject === undefined ? all : all.filter((m) => m.subject === subject);
  },
  async reset(): Promise<void> {
    await (await fetch(`${FAKES}/gmail/_fake/reset`, { method: "POST" })).body?.cancel();
  },
};

beforeEach(async () => {
  scripted.requests.length = 0;
  await gmail.reset();
});

const clients = [
  ["2026-07-28 (@modelcontextprotocol/client 2.x)", connectModern],
  ["2025-11-25 (@modelcontextprotocol/sdk 1.x)", connectLegacy],
] as const;

function connectTo(connect: (typeof clients)[number][1], slug: string, approvalUrl?: string): Promise<Connected> {
  return connect(slug, { ...bearer(TOKENS.session), ...(approvalUrl === undefined ? {} : { "x-elicitation-url": approvalUrl }) });
}

async function sendThrough(slug: string, args: Record<string, unknown>, approvalUrl?: string, connect: (typeof clients)[number][1] = connectModern) {
  const client = await connectTo(connect, slug, approvalUrl);
  try {
    return await client.callTool("send_email", args);
  } finally {
    await client.close();
  }
}

describe.each(clients)("a %s caller", (_label, connect) => {
  it("gets exactly one message out, to the recipients the person approved", async () => {
    const name = unique("approve");
    const url = scripted.route(name, { poll: (_r, i) => (i < 2 ? PENDING : ACCEPT) });
    const subject = unique("Quarterly report");
    const args = {
      to: ["Ada Lovelace <ada@example.com>"],
      cc: ["bob@example.com"],
      bcc: ["carol@example.com"],
      subject,
      text: "See attached.",
      attachments: [{ filename: "notes.txt", content_base64: btoa("notes") }],
    };
    const result = await sendThrough("gmail-scripted", args, url, connect);
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(textOf(result)).toMatch(/^Sent from person@example\.com: /);

    const prompts = scripted.requestsTo(name).filter((r) => r.method === "POST");
    expect(prompts).toHaveLength(1);
    const prompt = (JSON.parse(prompts[0]?.body ?? "{}") as { message: string }).message.split("\n");
    expect(prompt[0]).toBe("gmail-scripted: This will send an email from person@example.com to 3 recipient(s) with 1 attachment(s).");
    expect(prompt.slice(-6)).toEqual([
      "  To: ada@example.com (name: Ada Lovelace)",
      "  Cc: bob@example.com",
      "  Bcc: carol@example.com",
      `  Subject: ${subject}`,
      "  Text body: 13 B",
      "  Attachment: notes.txt (text/plain, 5 B)",
    ]);
    for (const r of scripted.requestsTo(name)) {
      expect(r.headers["cf-access-client-id"]).toBe(DEV_VARS.SCRIPTED_CF_ACCESS_CLIENT_ID);
      expect(r.headers.authorization).toBeUndefined();
    }

    const sent = await gmail.outbox(subject);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      account: "person@example.com",
      via: "send",
      to: ["ada@example.com"],
      cc: ["bob@example.com"],
      bcc: ["carol@example.com"],
      attachments: [expect.objectContaining({ filename: "notes.txt", size: 5 })],
    });
  });

  it.each(["decline", "expired", "cancel"])("gets nothing sent when the answer is %s", async (action) => {
    const url = scripted.route(unique(action), { poll: () => ({ body: { action } }) });
    const subject = unique(action);
    const result = await sendThrough("gmail-scripted", { to: ["ada@example.com"], subject, text: "t" }, url, connect);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Not done: .*Nothing was written\.$/);
    await nothingMore();
    expect(await gmail.outbox(subject)).toEqual([]);
  });
});

describe("calls that end without an approval in time", () => {
  it("sends nothing when nobody answers before the deadline", async () => {
    const url = scripted.route(unique("silent"), { poll: () => PENDING });
    const subject = unique("silent");
    const result = await sendThrough("gmail-brief", { to: ["ada@example.com"], subject, text: "t" }, url);
    expect(textOf(result)).toMatch(/^Not done: the approval expired before anyone answered/);
    await nothingMore();
    expect(await gmail.outbox(subject)).toEqual([]);
  });

  it("sends nothing when the approval arrives after the deadline", async () => {
    const route = unique("late");
    const url = scripted.route(route, { poll: () => ({ ...ACCEPT, delayMs: 7_000 }) });
    const subject = unique("late");
    const result = await sendThrough("gmail-brief", { to: ["ada@example.com"], subject, text: "t" }, url);
    expect(textOf(result)).toMatch(/^Not done: the approval expired/);
    // Until every poll's accept has either gone out or been left by the bundle, it could still arrive.
    await waitFor(async () => (scripted.settled(route) ? true : undefined), 10_000);
    await nothingMore();
    expect(await gmail.outbox(subject)).toEqual([]);
  });

  it("sends nothing when the caller leaves while the person decides, even when the person then approves", async () => {
    const name = unique("drop");
    let decision: Plan = PENDING;
    const url = scripted.route(name, { poll: () => decision });
    const subject = unique("drop");
    const client = await connectTo(connectModern, "gmail-scripted", url);
    const drop = new AbortController();
    try {
      const call = client.callTool("send_email", { to: ["ada@example.com"], subject, text: "t" }, { signal: drop.signal });
      call.catch(() => {});
      await waitFor(async () => (scripted.requestsTo(name).some((r) => r.method === "GET") ? true : undefined));
      drop.abort();
      await expect(call).rejects.toThrow();
      // The gateway has torn the call down (and aborted the bundle's request), and a poll already under way is over.
      await nothingMore();
      const asked = scripted.requestsTo(name).length;
      decision = ACCEPT;
      await quiet(LATE_APPROVAL_MS);
      expect(scripted.requestsTo(name).length).toBe(asked);
      expect(await gmail.outbox(subject)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe("one approval delivered twice", () => {
  it("sends one message when the same call reaches the bundle twice and both are approved", async () => {
    const url = scripted.route(unique("twice"), { poll: () => ACCEPT });
    const subject = unique("twice");
    // Two fresh 2025 clients on one caller, in one session (each sends the same Mcp-Session-Id, as a replaying proxy
    // would), give their first tools/call the same JSON-RPC id: one call key (docs/rules.md R-CALL-12).
    const session = { ...bearer(TOKENS.session), "x-elicitation-url": url, "mcp-session-id": unique("one-session") };
    const [a, b] = await Promise.all([connectLegacy("gmail-scripted", session), connectLegacy("gmail-scripted", session)]);
    try {
      const args = { to: ["ada@example.com"], subject, text: "t" };
      const results = await Promise.allSettled([a.callTool("send_email", args), b.callTool("send_email", args)]);
      const outcomes = results.map((r) => (r.status === "fulfilled" ? textOf(r.value) : String(r.reason)));
      expect(outcomes.filter((o) => o.startsWith("Sent from "))).toHaveLength(1);
      expect(outcomes.find((o) => !o.startsWith("Sent from "))).toMatch(/already in flight|already used for a send/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    await nothingMore();
    expect(await gmail.outbox(subject)).toHaveLength(1);
  });
});

describe("mailboxes side by side in one bundle", () => {
  it("sends from the agent's own mailbox without asking anyone, whatever approval URL the caller sends", async () => {
    const name = unique("waived");
    const url = scripted.route(name, { poll: () => ({ body: { action: "decline" } }) });
    const subject = unique("waived");
    const result = await sendThrough("gmail-agent", { to: ["ada@example.com"], subject, text: "t" }, url);
    expect(textOf(result)).toMatch(/^Sent from agent@example\.com: /);
    expect(scripted.requestsTo(name)).toEqual([]);
    expect(await gmail.outbox(subject)).toEqual([expect.objectContaining({ account: "agent@example.com", to: ["ada@example.com"] })]);
  });

  it("refuses on the person's mailbox when the caller names no approval URL, and reads still work", async () => {
    const subject = unique("nourl");
    const client = await connectTo(connectModern, "gmail-rw-external");
    try {
      const result = await client.callTool("send_email", { to: ["ada@example.com"], subject, text: "t" });
      expect(textOf(result)).toMatch(/^Refused: the gateway refused the approval channel: /);
      const read = await client.callTool("search_messages", { query: "lunch" });
      expect(textOf(read)).toContain("Lunch on Friday?");
    } finally {
      await client.close();
    }
    expect(await gmail.outbox(subject)).toEqual([]);
  });
});

describe("drafts and large messages", () => {
  it("sends a saved draft after showing its recipients, and a message over 5 MB through the upload URI", async () => {
    const subject = unique("draft");
    const name = unique("draft");
    const url = scripted.route(name, { poll: () => ACCEPT });
    const client = await connectTo(connectModern, "gmail-scripted", url);
    try {
      const created = await client.callTool("create_draft", { to: ["erin@example.com"], subject, text: "t", attachments: [{ filename: "plan.txt", content_base64: btoa("plan") }] });
      const draftId = /^Draft (\S+) created/.exec(textOf(created))?.[1];
      expect(draftId, textOf(created)).toBeDefined();
      const sent = await client.callTool("send_email", { from_draft_id: draftId });
      expect(textOf(sent)).toMatch(/^Sent from person@example\.com/);
      const prompt = (JSON.parse(scripted.requestsTo(name).find((r) => r.method === "POST")?.body ?? "{}") as { message: string }).message;
      expect(prompt).toContain(`  Draft: ${draftId}\n  To: erin@example.com\n  Subject: ${subject}\n  Attachment: plan.txt`);

      const big = unique("big");
      const large = await client.callTool("send_email", { to: ["ada@example.com"], subject: big, text: "t", attachments: [{ url: `${FAKES}/gmail/_fake/files/big.bin?bytes=6000000` }] });
      expect(textOf(large)).toMatch(/^Sent from person@example\.com/);
      expect(await gmail.outbox(big)).toEqual([expect.objectContaining({ via: "upload-media", attachments: [expect.objectContaining({ filename: "big.bin", size: 6_000_000 })] })]);
    } finally {
      await client.close();
    }
    expect(await gmail.outbox(subject)).toEqual([expect.objectContaining({ via: "draft", to: ["erin@example.com"] })]);
  });
});

describe("the stack's logs", () => {
  it("hold no Gmail credential, access token or upstream error body after all of the above", async () => {
    await logsCaughtUp();
    const log = readFileSync(LOG_FILE, "utf8");
    // Wrangler prints a var's first 40 characters at start-up; the dev secrets are longer, so none appears whole.
    for (const secret of [PERSON.secret, PERSON.refresh, AGENT.secret, AGENT.refresh]) expect(log.includes(secret)).toBe(false);
    expect(log).not.toMatch(/fake-access-[0-9a-f]{8}/);
    expect(log).not.toContain(SECRET_MARKER);
  });
});
