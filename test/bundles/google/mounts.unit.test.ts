// Issue 15 #1 and #2 against the Gmail fake: each mount serves only its tool groups (<MOUNT>__GMAIL_ENABLED_TOOLGROUPS, read-only when unset, every request refused when it names no group), and the mailboxes come from configuration: any slug with credentials of its own is a mount at /<its slug>, and a mount without them answers which variables are missing.
import { describe, expect, it } from "vitest";
import google from "../../../bundles/google/google.app";
import { MOUNT_UNAVAILABLE } from "../../../bundles/kit/mount";
import { listBundle } from "../kit/helpers/bundle";
import { AGENT, harness, PERSON, READER, requestsTo } from "./helpers";

const h = harness();
const names = async (mount: string, env: Record<string, unknown> = {}) => (await listBundle(google, mount, { ...h.env(), ...env })).map((t) => t.name);
const READS = ["get_draft", "get_message", "get_thread", "list_drafts", "search_messages"];
const SEND = { to: ["ada@example.com"], subject: "groups", text: "hi" };

describe("tool groups", () => {
  it("a mount that declares none (gmail-ro) lists the read tools only, and answers create_draft and send_email as unknown tools without a request or a prompt", async () => {
    expect((await names(READER.mount)).sort()).toEqual(READS);
    for (const tool of ["send_email", "create_draft"]) {
      for (const channel of ["ask", "skip", "none"] as const) {
        const { answer, prompts } = await h.call({ mount: READER.mount, tool, args: SEND, channel });
        expect(answer.ok, `${tool} ${channel}`).toBe(false);
        expect(answer.error).toMatchObject({ code: "UPSTREAM_RPC", message: `Tool ${tool} not found` });
        expect(prompts).toEqual([]);
      }
    }
    expect(h.fake.store.requests).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
    // Its reads work, from the person's mailbox, through its own OAuth client.
    const { answer } = await h.call({ mount: READER.mount, tool: "get_message", args: { message_id: "msg-person-1" }, channel: "none" });
    expect(answer.isError, answer.text).toBe(false);
    expect(requestsTo(h.fake, "/token").map((r) => r.clientId)).toEqual([READER.clientId]);
  });

  it("readwrite adds create_draft and not send_email; readwrite_external adds send_email", async () => {
    const env = { GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS: "readwrite" };
    expect((await names(PERSON.mount, env)).sort()).toEqual([...READS, "create_draft"].sort());
    const draft = await h.call({ tool: "create_draft", args: SEND, channel: "none", env });
    expect(draft.answer.text).toMatch(/^Draft \S+ created in person@example\.com/);
    const send = await h.call({ args: SEND, env });
    expect(send.answer.error).toMatchObject({ code: "UPSTREAM_RPC", message: "Tool send_email not found" });
    expect(send.prompts).toEqual([]);
    expect(h.fake.store.outbox).toEqual([]);
    expect((await names(PERSON.mount)).sort()).toEqual([...READS, "create_draft", "send_email"].sort());
  });

  it("a mount reads only its own setting: a bare GMAIL_ENABLED_TOOLGROUPS or another slug's gives it nothing", async () => {
    const env = { GMAIL_ENABLED_TOOLGROUPS: "readwrite_external", GMAIL_RW_EXTERNAL__GMAIL_ENABLED_TOOLGROUPS: "readwrite_external" };
    expect((await names(READER.mount, env)).sort()).toEqual(READS);
  });

  it("a setting that names no group fails the mount closed: every request answers the variable and the allowed groups", async () => {
    const env = { GMAIL_AGENT__GMAIL_ENABLED_TOOLGROUPS: "readwrite-external" };
    const reason =
      "the mount at /gmail-agent serves no tool: GMAIL_AGENT__GMAIL_ENABLED_TOOLGROUPS names something that is not a tool group; allowed: readonly, readwrite, readwrite_external (comma-separated), or unset for readonly";
    await expect(names(AGENT.mount, env)).rejects.toThrow(/tools\/list failed: UPSTREAM_RPC/);
    for (const tool of ["search_messages", "send_email"]) {
      const { answer } = await h.call({ mount: AGENT.mount, tool, args: tool === "send_email" ? SEND : {}, channel: "skip", env });
      expect(answer.error).toEqual({ code: "UPSTREAM_RPC", rpcCode: MOUNT_UNAVAILABLE, message: reason });
    }
    expect(h.fake.store.requests).toEqual([]);
    // The other mounts are untouched.
    expect((await names(PERSON.mount, env)).length).toBe(7);
  });
});

describe("mounts from configuration", () => {
  it("a slug with credentials of its own is served at /<its slug> with no code change, reading only its own", async () => {
    const env = {
      GMAIL_TEAM_INBOX__GMAIL_CLIENT_ID: AGENT.clientId,
      GMAIL_TEAM_INBOX__GMAIL_CLIENT_SECRET: AGENT.secret,
      GMAIL_TEAM_INBOX__GMAIL_REFRESH_TOKEN: AGENT.refresh,
    };
    expect((await names("gmail-team-inbox", env)).sort()).toEqual(READS);
    const { answer } = await h.call({ mount: "gmail-team-inbox", tool: "list_drafts", args: {}, channel: "none", env });
    expect(answer.isError, answer.text).toBe(false);
    expect(answer.text).toContain("draft-agent-1");
    expect(requestsTo(h.fake, "/token").map((r) => [r.clientId, r.account])).toEqual([[AGENT.clientId, AGENT.email]]);
  });

  it("a slug without its own credentials has no mount: each request answers which of its variables are missing, and nothing reaches Gmail", async () => {
    const env = { GMAIL_CLIENT_ID: PERSON.clientId, GMAIL_CLIENT_SECRET: PERSON.secret, GMAIL_REFRESH_TOKEN: PERSON.refresh, GMAIL_SPARE__GMAIL_CLIENT_ID: PERSON.clientId };
    const { answer, prompts } = await h.call({ mount: "gmail-spare", args: SEND, env });
    expect(answer.error).toEqual({
      code: "UPSTREAM_RPC",
      rpcCode: MOUNT_UNAVAILABLE,
      message: "no mount at /gmail-spare: a mount is served at /<slug> for a slug with credentials of its own, and GMAIL_SPARE__GMAIL_CLIENT_SECRET, GMAIL_SPARE__GMAIL_REFRESH_TOKEN are not set",
    });
    expect(JSON.stringify(answer)).not.toContain(PERSON.clientId);
    expect(prompts).toEqual([]);
    await expect(names("gmail-spare", env)).rejects.toThrow(/UPSTREAM_RPC/);
    expect(h.fake.store.requests).toEqual([]);
  });

  it("the paths the bundle once hard-coded are mounts only while their credentials are set", async () => {
    const without = { GMAIL_AGENT__GMAIL_CLIENT_ID: undefined, GMAIL_AGENT__GMAIL_CLIENT_SECRET: undefined, GMAIL_AGENT__GMAIL_REFRESH_TOKEN: undefined };
    const { answer } = await h.call({ mount: AGENT.mount, args: SEND, channel: "skip", env: without });
    expect(answer.error).toMatchObject({
      rpcCode: MOUNT_UNAVAILABLE,
      message: expect.stringMatching(/^no mount at \/gmail-agent: .*GMAIL_AGENT__GMAIL_CLIENT_ID, GMAIL_AGENT__GMAIL_CLIENT_SECRET, GMAIL_AGENT__GMAIL_REFRESH_TOKEN are not set$/),
    });
    expect(h.fake.store.outbox).toEqual([]);
  });
});
