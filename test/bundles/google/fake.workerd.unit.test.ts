// The Gmail fake as the e2e stack runs it: inside the fakes Worker on workerd, mounted at /gmail/, spoken to by the bundle's own Gmail client.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GmailClient } from "../../../bundles/google/google.client";
import { base64UrlEncode, buildMime } from "../../../bundles/google/google.mime";
// @ts-expect-error: plain ESM helper without types
import { buildWorker, startRuntime } from "../../../scripts/stack.mjs";
import { PERSON } from "./helpers";

let stack: { stop: () => Promise<void>; url: string } | undefined;
let origin = "";
const dir = mkdtempSync(join(tmpdir(), "strad-fakes-"));

// Built as the e2e stack builds it (with its .dev.vars) and run on workerd through Miniflare, as the stack runs it.
beforeAll(async () => {
  stack = await startRuntime([buildWorker("test/fakes/wrangler.toml", { into: dir })]);
  origin = (stack as { url: string }).url;
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the Gmail fake in the fakes Worker", { timeout: 60_000 }, () => {
  it("mints a token, serves the profile, takes an inline and an uploaded send, and shows both in its outbox until reset", async () => {
    await fetch(`${origin}/gmail/_fake/reset`, { method: "POST" });
    const client = new GmailClient(
      PERSON.mount,
      { clientId: PERSON.clientId, clientSecret: PERSON.secret, refreshToken: PERSON.refresh },
      { apiBase: `${origin}/gmail`, tokenUrl: `${origin}/gmail/token` },
    );
    const signal = new AbortController().signal;
    expect(await client.get("/gmail/v1/users/me/profile", {}, signal)).toMatchObject({ emailAddress: PERSON.email });
    const token = await client.accessToken(signal);
    const raw = buildMime({
      from: PERSON.email,
      to: [{ email: "ada@example.com" }],
      cc: [],
      bcc: [{ email: "bob@example.com" }],
      subject: "from workerd",
      text: "hi",
      attachments: [{ filename: "a.txt", mimeType: "text/plain", bytes: new TextEncoder().encode("a") }],
    });
    const headers = { authorization: `Bearer ${token}` };
    const inline = await fetch(`${origin}/gmail/gmail/v1/users/me/messages/send`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ raw: base64UrlEncode(raw) }),
    });
    expect(inline.status).toBe(200);
    const media = await fetch(`${origin}/gmail/upload/gmail/v1/users/me/messages/send?uploadType=media`, { method: "POST", headers: { ...headers, "content-type": "message/rfc822" }, body: raw });
    expect(media.status).toBe(200);
    const outbox = (await (await fetch(`${origin}/gmail/_fake/outbox`)).json()) as Record<string, unknown>[];
    expect(outbox.map((m) => [m.via, m.account, m.to, m.bcc, m.subject])).toEqual([
      ["send", PERSON.email, ["ada@example.com"], ["bob@example.com"], "from workerd"],
      ["upload-media", PERSON.email, ["ada@example.com"], ["bob@example.com"], "from workerd"],
    ]);
    const requests = (await (await fetch(`${origin}/gmail/_fake/requests`)).json()) as { path: string; clientId?: string }[];
    expect(requests.map((r) => r.path)).toEqual(["/gmail/token", "/gmail/gmail/v1/users/me/profile", "/gmail/gmail/v1/users/me/messages/send", "/gmail/upload/gmail/v1/users/me/messages/send"]);
    expect(requests[0]?.clientId).toBe(PERSON.clientId);
    await fetch(`${origin}/gmail/_fake/outbox`, { method: "DELETE" });
    expect(await (await fetch(`${origin}/gmail/_fake/outbox`)).json()).toEqual([]);
    expect(await (await fetch(`${origin}/gmail/_fake/requests`)).json()).toEqual([]);
  });

  it("refuses a request without a valid token, and leaves the fakes Worker's other routes as they were", async () => {
    const refused = await fetch(`${origin}/gmail/gmail/v1/users/me/profile`, { headers: { authorization: "Bearer nope" } });
    expect(refused.status).toBe(401);
    await refused.body?.cancel();
    const recorder = await fetch(`${origin}/recorder/events`);
    expect(recorder.status).toBe(200);
    expect(Array.isArray(await recorder.json())).toBe(true);
    expect((await fetch(`${origin}/nowhere`)).status).toBe(404);
  });
});
