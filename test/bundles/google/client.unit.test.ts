// The Gmail client and the read tools against the fake: token exchange cached per mount until expiry, each mount's own credentials only, endpoints, and what search, message, thread and draft reads answer.
import { describe, expect, it } from "vitest";
import { credentialsFor, DEFAULT_API_BASE, DEFAULT_TOKEN_URL, endpointsFor, forgetTokens, GmailClient } from "../../../bundles/google/google.client";
import { SECRET_MARKER } from "../../fakes/gmail/gmail.fake";
import { AGENT, harness, PERSON, requestsTo } from "./helpers";

const h = harness();
const read = (tool: string, args: Record<string, unknown>, over: { mount?: string; env?: Record<string, unknown> } = {}) => h.call({ tool, args, channel: "none", ...over });
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;
const tokenRequests = () => requestsTo(h.fake, "/token");

describe("access tokens", () => {
  it("are minted once per mount, each from the mount's own client, and reused until they expire", async () => {
    await read("get_message", { message_id: "msg-person-1" });
    await read("get_thread", { thread_id: "thread-person-1" });
    await read("get_message", { message_id: "msg-agent-1" }, { mount: AGENT.mount });
    await read("list_drafts", {}, { mount: AGENT.mount });
    expect(tokenRequests().map((r) => [r.clientId, r.account, r.status])).toEqual([
      [PERSON.clientId, PERSON.email, 200],
      [AGENT.clientId, AGENT.email, 200],
    ]);
    // Every Gmail request was made with the token of the mailbox its mount names.
    const reads = h.fake.store.requests.filter((r) => r.method === "GET");
    expect(reads.filter((r) => r.path.includes("msg-person") || r.path.includes("thread-person")).map((r) => r.account)).toEqual([PERSON.email, PERSON.email]);
    expect(reads.filter((r) => r.path.includes("msg-agent") || r.path.endsWith("/drafts")).map((r) => r.account)).toEqual([AGENT.email, AGENT.email]);
  });

  it("are minted afresh once the cached one has expired", async () => {
    h.fake.store.expiresIn = 1;
    await read("get_message", { message_id: "msg-person-1" });
    await read("get_message", { message_id: "msg-person-1" });
    expect(tokenRequests()).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 600));
    await read("get_message", { message_id: "msg-person-1" });
    expect(tokenRequests()).toHaveLength(2);
  });

  it("are replaced once when Gmail refuses the cached one, and the read is retried", async () => {
    await read("get_message", { message_id: "msg-person-1" });
    h.fake.store.tokens.clear();
    const { answer } = await read("get_message", { message_id: "msg-person-1" });
    expect(answer.isError, answer.text).toBe(false);
    expect(tokenRequests()).toHaveLength(2);
    h.fake.store.faults.push({ method: "GET", path: "/messages/msg-person-1", status: 401 });
    const refused = await read("get_message", { message_id: "msg-person-1" });
    expect(refused.answer.text).toBe("Not done: Gmail answered HTTP 401.");
  });

  it("are not reused after the mount's credentials change", async () => {
    await read("get_message", { message_id: "msg-person-1" });
    const rotated = { GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: AGENT.clientId, GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: AGENT.secret, GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: AGENT.refresh };
    const { answer } = await read("get_message", { message_id: "msg-agent-1" }, { env: rotated });
    expect(answer.isError, answer.text).toBe(false);
    expect(tokenRequests().map((r) => r.clientId)).toEqual([PERSON.clientId, AGENT.clientId]);
  });

  it("are minted afresh when any one of the token URL, client id, client secret or refresh token changes, and only then", async () => {
    forgetTokens();
    const minted: string[] = [];
    const doFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      if (url.endsWith("/token")) {
        minted.push(`${url} ${String(init?.body)}`);
        return Response.json({ access_token: `token-${minted.length}`, expires_in: 3600 });
      }
      return Response.json({ emailAddress: "x@example.com" });
    };
    const base = { clientId: "id", clientSecret: "secret", refreshToken: "refresh" };
    const endpoints = { apiBase: "https://gmail.example", tokenUrl: "https://oauth.example/token" };
    const tokenOf = (credentials: typeof base, at = endpoints) => new GmailClient("gmail-a", credentials, at, doFetch).accessToken(new AbortController().signal);
    expect(await tokenOf(base)).toBe("token-1");
    // The same values in other strings (as a new env object holds them) are the same credentials.
    expect(await tokenOf({ clientId: ["i", "d"].join(""), clientSecret: `${"sec"}ret`, refreshToken: "refresh".slice(0) })).toBe("token-1");
    let expected = 1;
    // Each change is made from the credentials just used, so only the one field differs from the cached token's.
    const changes: [typeof base, typeof endpoints][] = [
      [{ ...base, clientId: "id2" }, endpoints],
      [base, endpoints],
      [{ ...base, clientSecret: "secret2" }, endpoints],
      [base, endpoints],
      [{ ...base, refreshToken: "refresh2" }, endpoints],
      [base, endpoints],
      [base, { ...endpoints, tokenUrl: "https://oauth2.example/token" }],
      [base, endpoints],
      // Fields that would join to the same text are still other credentials.
      [{ clientId: "a\nb", clientSecret: "c", refreshToken: "r" }, endpoints],
      [{ clientId: "a", clientSecret: "b\nc", refreshToken: "r" }, endpoints],
    ];
    for (const [credentials, at] of changes) {
      expect(await tokenOf(credentials, at), JSON.stringify([credentials, at])).toBe(`token-${++expected}`);
      expect(await tokenOf(credentials, at)).toBe(`token-${expected}`);
    }
    expect(minted).toHaveLength(expected);
    forgetTokens();
  });

  it("fail naming the token endpoint's status and none of its body", async () => {
    const { answer } = await read("get_message", { message_id: "msg-person-1" }, { env: { GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: "wrong" } });
    expect(answer.text).toBe("Not done: the Gmail token endpoint answered HTTP 401.");
    const revoked = await read("get_message", { message_id: "msg-person-1" }, { env: { GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: "revoked" } });
    expect(revoked.answer.text).toBe("Not done: the Gmail token endpoint answered HTTP 400.");
    expect(JSON.stringify([answer.result, revoked.answer.result])).not.toContain(SECRET_MARKER);
  });
});

describe("per-slug credentials", () => {
  const only = (keep: Record<string, string>) => ({
    GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: undefined,
    GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: undefined,
    GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: undefined,
    ...keep,
  });

  it("a mount never falls back to bare names or to another slug's, and says which of its own is missing", async () => {
    // The kit answers first (a mount is served only for a slug with credentials of its own, R-GMAIL-3) ...
    const noMount = (missing: string) => `no mount at /gmail-rw-external: a mount is served at /<slug> for a slug with credentials of its own, and ${missing}`;
    const bare = { GMAIL_CLIENT_ID: PERSON.clientId, GMAIL_CLIENT_SECRET: PERSON.secret, GMAIL_REFRESH_TOKEN: PERSON.refresh };
    const { answer } = await read("search_messages", {}, { env: only({ ...bare, GMAIL_AGENT__GMAIL_CLIENT_ID: PERSON.clientId }) });
    expect(answer.error).toMatchObject({
      code: "UPSTREAM_RPC",
      message: noMount("GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID, GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET, GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN are not set"),
    });
    const partial = await read("search_messages", {}, { env: only({ GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: PERSON.clientId, GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: PERSON.secret }) });
    expect(partial.answer.error).toMatchObject({ message: noMount("GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN is not set") });
    const send = await h.call({ env: only({}), args: { to: ["ada@example.com"], text: "t" } });
    expect(send.answer.error).toMatchObject({ message: noMount("GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID, GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET, GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN are not set") });
    expect(send.prompts).toEqual([]);
    expect(h.fake.store.requests).toEqual([]);
    // ... and the mailbox reads only the mount's own names besides, whatever reaches it.
    expect(credentialsFor("gmail-rw-external", bare)).toEqual({ ok: false, missing: "GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID" });
    expect(credentialsFor("gmail-rw-external", { ...bare, GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: "id", GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: "s" })).toEqual({
      ok: false,
      missing: "GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN",
    });
  });

  it("a mount uses its own credentials even when bare ones are also set", async () => {
    await read("get_message", { message_id: "msg-person-1" }, { env: { GMAIL_CLIENT_ID: AGENT.clientId, GMAIL_CLIENT_SECRET: AGENT.secret, GMAIL_REFRESH_TOKEN: AGENT.refresh } });
    expect(tokenRequests().map((r) => r.clientId)).toEqual([PERSON.clientId]);
  });
});

describe("endpoints", () => {
  it("default to Google's", () => {
    expect(endpointsFor({})).toEqual({ apiBase: DEFAULT_API_BASE, tokenUrl: DEFAULT_TOKEN_URL });
    expect([DEFAULT_API_BASE, DEFAULT_TOKEN_URL]).toEqual(["https://gmail.googleapis.com", "https://oauth2.googleapis.com/token"]);
  });

  it.each([
    ["plain http on a public host", { GMAIL_TOKEN_URL: "http://oauth.example.com/token" }, /GMAIL_TOKEN_URL must be https/],
    ["not a URL", { GMAIL_API_BASE_URL: "gmail" }, /GMAIL_API_BASE_URL is not an absolute URL/],
    ["a query", { GMAIL_API_BASE_URL: "https://gmail.example.com/?x=1" }, /no userinfo, query or fragment/],
  ])("refuse %s before any request", async (_label, env, says) => {
    const { answer } = await read("get_message", { message_id: "msg-person-1" }, { env });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(says);
    expect(h.fake.store.requests).toEqual([]);
  });
});

describe("the read tools", () => {
  it("search_messages lists matches newest first with their headers, by query, by label and page by page", async () => {
    const lunch = json((await read("search_messages", { query: "lunch" })).answer.text);
    expect(lunch.messages).toEqual([
      expect.objectContaining({ id: "msg-person-3", from: "Dave Example <dave@example.com>", subject: "Lunch on Friday?", snippet: "Are you free for lunch on Friday? Menu attached." }),
    ]);
    const unread = json((await read("search_messages", { label_ids: ["UNREAD"] })).answer.text);
    expect((unread.messages as { id: string }[]).map((m) => m.id)).toEqual(["msg-person-2"]);
    const first = json((await read("search_messages", { max_results: 2 })).answer.text);
    expect((first.messages as { id: string }[]).map((m) => m.id)).toEqual(["msg-person-3", "msg-person-2"]);
    const second = json((await read("search_messages", { max_results: 2, cursor: first.next_cursor })).answer.text);
    expect((second.messages as { id: string }[]).map((m) => m.id)).toEqual(["msg-person-1"]);
    expect(second.next_cursor).toBeNull();
  });

  it("get_message answers headers, decoded body and attachment names; get_thread the conversation in order", async () => {
    const message = json((await read("get_message", { message_id: "msg-person-3" })).answer.text);
    expect(message).toMatchObject({
      id: "msg-person-3",
      subject: "Lunch on Friday?",
      text: "Are you free for lunch on Friday? Menu attached.",
      attachments: [{ filename: "menu.pdf", mimeType: "application/pdf" }],
    });
    const thread = json((await read("get_thread", { thread_id: "thread-person-1" })).answer.text);
    expect((thread.messages as { subject: string }[]).map((m) => m.subject)).toEqual(["Quarterly numbers", "Re: Quarterly numbers"]);
  });

  it("list_drafts and get_draft answer the mount's own drafts", async () => {
    const list = json((await read("list_drafts", {})).answer.text);
    expect(list.drafts).toEqual([expect.objectContaining({ draft_id: "draft-person-1", subject: "Proposal for the spring project", to: "Erin Example <erin@example.com>" })]);
    const agent = json((await read("list_drafts", {}, { mount: AGENT.mount })).answer.text);
    expect((agent.drafts as { draft_id: string }[]).map((d) => d.draft_id)).toEqual(["draft-agent-1"]);
    const draft = json((await read("get_draft", { draft_id: "draft-person-1" })).answer.text);
    expect(draft).toMatchObject({ draft_id: "draft-person-1", text: "Please find the proposal attached.", attachments: [{ filename: "proposal.pdf" }] });
  });

  it("a failed read names Gmail's status and none of its body", async () => {
    const { answer } = await read("get_message", { message_id: "msg-nope" });
    expect(answer.text).toBe("Not done: Gmail answered HTTP 404.");
    expect(JSON.stringify(answer.result)).not.toContain(SECRET_MARKER);
  });
});

describe("a read whose connection fails before any answer", () => {
  const CREDENTIALS = { clientId: "client-1", clientSecret: "secret-1", refreshToken: "refresh-1" };
  const ENDPOINTS = { apiBase: "http://127.0.0.1:9/gmail/v1/users/me", tokenUrl: "http://127.0.0.1:9/token" };
  /** A Gmail stand-in: the token endpoint answers; each GET takes the next of `gets` (throw: the connection failed). */
  function client(gets: ("throw" | "ok" | 401)[], mount = `retry-${crypto.randomUUID()}`) {
    const seen: string[] = [];
    const doFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const method = init?.method ?? "GET";
      seen.push(method);
      if (method === "POST") return Response.json({ access_token: `token-${seen.length}`, expires_in: 3600 });
      const next = gets.shift();
      if (next === "throw" || next === undefined) throw new TypeError("Network connection lost.");
      if (next === 401) return new Response("", { status: 401 });
      return Response.json({ id: "msg-1", url: String(input) });
    };
    return { gmail: new GmailClient(mount, CREDENTIALS, ENDPOINTS, doFetch), seen };
  }

  it("is tried once more, and answers", async () => {
    const { gmail, seen } = client(["throw", "ok"]);
    expect(await gmail.get("/messages/msg-1", {}, new AbortController().signal)).toMatchObject({ id: "msg-1" });
    expect(seen).toEqual(["POST", "GET", "GET"]);
  });

  it("is not tried a third time: two failures fail the read, naming Gmail and nothing else", async () => {
    const { gmail, seen } = client(["throw", "throw", "ok"]);
    await expect(gmail.get("/messages/msg-1", {}, new AbortController().signal)).rejects.toThrow(/^Gmail could not be reached$/);
    expect(seen.filter((m) => m === "GET")).toHaveLength(2);
  });

  it("keeps its one token renewal besides: a failed connection, then a refused token, then the answer", async () => {
    const { gmail, seen } = client(["throw", 401, "ok"]);
    expect(await gmail.get("/messages/msg-1", {}, new AbortController().signal)).toMatchObject({ id: "msg-1" });
    expect(seen).toEqual(["POST", "GET", "GET", "POST", "GET"]);
  });

  it("is not tried again once the call was dropped", async () => {
    const dropped = new AbortController();
    const { gmail, seen } = client(["throw", "ok"]);
    const pending = gmail.get("/messages/msg-1", {}, dropped.signal);
    dropped.abort();
    await expect(pending).rejects.toThrow(/dropped/);
    expect(seen.filter((m) => m === "GET").length).toBeLessThanOrEqual(1);
  });
});
