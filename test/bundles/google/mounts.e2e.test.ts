// Issue 15 #1, #2 and #6 end to end, through the gateway to the Google bundle and the Gmail fake, with the dev roster: the read-only slug gmail-ro (no tool groups declared) lists no write and refuses send_email as an unknown tool, while gmail-rw-external lists it; a roster slug whose mount has no credentials (gmail-unseeded) answers which variables are missing; each mount's Gmail requests carry the token minted from its own credentials.
import { beforeEach, describe, expect, it } from "vitest";
import { bearer, connectLegacy, connectModern, FAKES, rawPost, TOKENS, textOf } from "../../e2e/helpers";
import type { RecordedGmailRequest } from "../../fakes/gmail/store";
import { PERSON, READER } from "./helpers";

const WRITES = ["create_draft", "send_email"];
const READS = ["get_draft", "get_message", "get_thread", "list_drafts", "search_messages"];
const auth = { ...bearer(TOKENS.session), "mcp-protocol-version": "2025-11-25" };

const gmail = {
  async requests(): Promise<RecordedGmailRequest[]> {
    return (await (await fetch(`${FAKES}/gmail/_fake/requests`)).json()) as RecordedGmailRequest[];
  },
  async outbox(): Promise<unknown[]> {
    return (await (await fetch(`${FAKES}/gmail/_fake/outbox`)).json()) as unknown[];
  },
  async reset(): Promise<void> {
    await (await fetch(`${FAKES}/gmail/_fake/reset`, { method: "POST" })).body?.cancel();
  },
};

beforeEach(async () => {
  await gmail.reset();
});

describe.each([
  ["2026-07-28 (@modelcontextprotocol/client 2.x)", connectModern],
  ["2025-11-25 (@modelcontextprotocol/sdk 1.x)", connectLegacy],
] as const)("a %s caller", (_label, connect) => {
  it("gets no write from the read-only slug gmail-ro: tools/list holds none, and send_email is refused as an unknown tool", async () => {
    const ro = await connect("gmail-ro", bearer(TOKENS.session));
    try {
      const names = (await ro.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(READS);
      for (const tool of WRITES) {
        await expect(ro.callTool(tool, { to: ["ada@example.com"], subject: "no", text: "no" })).rejects.toThrow(new RegExp(`Tool ${tool} not found`));
      }
      const read = await ro.callTool("get_message", { message_id: "msg-person-1" });
      expect(textOf(read)).toContain('"subject": "Quarterly numbers"');
    } finally {
      await ro.close();
    }
    expect(await gmail.outbox()).toEqual([]);
    const person = await connect("gmail-rw-external", bearer(TOKENS.session));
    try {
      expect((await person.listTools()).tools.map((t) => t.name).sort()).toEqual([...READS, ...WRITES].sort());
    } finally {
      await person.close();
    }
  });
});

describe("the gateway's answer for a tool outside a slug's groups", () => {
  it("names the slug and the unknown tool, and no request reaches Gmail", async () => {
    const r = await rawPost({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "send_email", arguments: { to: ["ada@example.com"], text: "no" } } }, auth, "gmail-ro");
    expect(r.json).toMatchObject({ jsonrpc: "2.0", id: 11, error: { message: 'server "gmail-ro": Tool send_email not found' } });
    expect(await gmail.requests()).toEqual([]);
  });
});

describe("a roster path the bundle does not serve", () => {
  it("gmail-unseeded, whose mount has no credentials, answers every request naming the variables it lacks, and nothing reaches Gmail", async () => {
    const missing = "GMAIL_UNSEEDED__GMAIL_CLIENT_ID, GMAIL_UNSEEDED__GMAIL_CLIENT_SECRET, GMAIL_UNSEEDED__GMAIL_REFRESH_TOKEN are not set";
    const call = await rawPost({ jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "search_messages", arguments: {} } }, auth, "gmail-unseeded");
    expect(call.json).toMatchObject({
      jsonrpc: "2.0",
      id: 12,
      error: { code: -32603, message: `server "gmail-unseeded": no mount at /gmail-unseeded: a mount is served at /<slug> for a slug with credentials of its own, and ${missing}` },
    });
    const list = await rawPost({ jsonrpc: "2.0", id: 13, method: "tools/list" }, auth, "gmail-unseeded");
    expect((list.json as { error: { message: string } }).error.message).toContain(missing);
    // Beside a mount that answers, it hides nothing of the other's tools.
    const both = await rawPost({ jsonrpc: "2.0", id: 14, method: "tools/list" }, auth, "gmail-ro,gmail-unseeded");
    expect(((both.json as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name) ?? []).sort()).toEqual(READS.map((t) => `gmail-ro__${t}`));
    expect(await gmail.requests()).toEqual([]);
  });
});

describe("access tokens, mount by mount", () => {
  it("each mount's Gmail requests carry the token minted from its own client, never another mount's", async () => {
    const clientOf: Record<string, string> = { "gmail-ro": READER.clientId, "gmail-rw-external": PERSON.clientId, "gmail-scripted": PERSON.clientId };
    const minted = new Map<string, string | undefined>();
    let seen = 0;
    for (const slug of ["gmail-ro", "gmail-rw-external", "gmail-ro", "gmail-scripted", "gmail-rw-external", "gmail-ro"]) {
      const r = await rawPost({ jsonrpc: "2.0", id: 20 + seen, method: "tools/call", params: { name: "search_messages", arguments: { max_results: 1 } } }, auth, slug);
      expect((r.json as { result?: { isError?: boolean } }).result?.isError, slug).not.toBe(true);
      // What this one call made Gmail see: both mounts read the person's mailbox, so the client that minted a
      // request's bearer is what says whose token it was.
      const recorded = await gmail.requests();
      const mine = recorded.slice(seen);
      seen = recorded.length;
      for (const t of mine) if (t.path.endsWith("/token") && t.minted !== undefined) minted.set(t.minted, t.clientId);
      const api = mine.filter((t) => !t.path.endsWith("/token"));
      // The isolate may still hold a token minted before this test's reset, which the fake now refuses (401, no
      // mailbox): it is dropped and the read retried with a fresh one.
      for (const t of api.filter((t) => t.status !== 200)) expect([t.status, t.account]).toEqual([401, null]);
      const served = api.filter((t) => t.status === 200);
      expect(served.length, slug).toBeGreaterThan(0);
      for (const t of served) expect(minted.get(t.bearer ?? ""), `${slug}: ${t.path}`).toBe(clientOf[slug]);
    }
    expect(new Set(minted.values())).toEqual(new Set([READER.clientId, PERSON.clientId]));
  });
});
