// Issue 15 #6: an access token is minted from a mount's own refresh token and cached for that mount only. Every request the bundle makes is tagged with the mount whose call made it, and each Gmail request must carry a token minted for that mount (the fake records the bearer each request carried and the token each grant minted): across reads and writes, after an expiry and a refused token, concurrently, and for two mounts holding the very same credentials.
import { afterEach, describe, expect, it, vi } from "vitest";
import { activeScope } from "../../../bundles/kit/scope";
import { AGENT, harness, PERSON, READER, requestsTo } from "./helpers";

const h = harness();
afterEach(() => {
  h.fake.store.expiresIn = 3600;
});

interface Seen {
  mount: string;
  url: string;
  /** On a token request: the access token it was answered with. */
  minted?: string;
  /** On a Gmail request: the bearer token it carried. */
  bearer?: string;
}

/** Wraps the test's fetch: every outbound request, with the mount whose call scope made it. */
function tagByMount(): Seen[] {
  const seen: Seen[] = [];
  const inner = globalThis.fetch;
  vi.stubGlobal("fetch", async (input: string | URL | Request, init?: RequestInit) => {
    const mount = activeScope()?.mount ?? "(outside any call)";
    const url = input instanceof Request ? input.url : String(input);
    const response = await inner(input, init);
    if (new URL(url).pathname.endsWith("/token")) {
      const body = (await response.clone().json()) as { access_token?: string };
      seen.push({ mount, url, ...(body.access_token === undefined ? {} : { minted: body.access_token }) });
    } else {
      const auth = new Headers(init?.headers).get("authorization") ?? "";
      seen.push({ mount, url, bearer: auth.replace(/^Bearer /, "") });
    }
    return response;
  });
  return seen;
}

/** Each token is minted once, for one mount, and every Gmail request carries one minted for its own mount. */
function expectOwnTokensOnly(seen: Seen[]): void {
  const mintedFor = new Map<string, string>();
  for (const s of seen) {
    if (s.minted === undefined) continue;
    expect(mintedFor.has(s.minted), "a token minted twice").toBe(false);
    mintedFor.set(s.minted, s.mount);
  }
  const gmail = seen.filter((s) => s.bearer !== undefined);
  expect(gmail.length).toBeGreaterThan(0);
  for (const s of gmail) expect(mintedFor.get(s.bearer as string), `${s.mount}: ${s.url}`).toBe(s.mount);
  // The fake saw the same bearers: what it recorded is what each request carried.
  const recorded = h.fake.store.requests.filter((r) => !r.path.endsWith("/token")).map((r) => r.bearer);
  expect(recorded.sort()).toEqual(gmail.map((s) => s.bearer).sort());
  for (const r of requestsTo(h.fake, "/token")) expect(r.minted === undefined || mintedFor.has(r.minted)).toBe(true);
}

const read = (mount: string, n: number, env: Record<string, unknown> = {}) =>
  h.call({ mount, tool: n % 2 === 0 ? "search_messages" : "list_drafts", args: n % 2 === 0 ? { max_results: 2 } : {}, channel: "none", env });
const MOUNTS = [PERSON.mount, AGENT.mount, READER.mount];

describe("a token minted for one mount is never used for another", () => {
  it("across reads, a draft and a waived send, after Gmail refused the cached token and after an expiry", async () => {
    const seen = tagByMount();
    for (const mount of MOUNTS) expect((await read(mount, 0)).answer.isError).toBe(false);
    const draft = await h.call({ tool: "create_draft", args: { to: ["ada@example.com"], text: "d" }, channel: "none" });
    expect(draft.answer.text).toMatch(/^Draft /);
    const sent = await h.call({ mount: AGENT.mount, args: { to: ["ada@example.com"], text: "s" }, channel: "skip" });
    expect(sent.answer.text).toMatch(/^Sent from agent@example\.com/);
    // Refused: every cached token stops working at once; each mount drops its own and mints again (now short-lived).
    h.fake.store.expiresIn = 1;
    h.fake.store.tokens.clear();
    for (const mount of MOUNTS) expect((await read(mount, 1)).answer.isError).toBe(false);
    // Expiry: each mount mints afresh, from its own client.
    await new Promise((r) => setTimeout(r, 600));
    for (const mount of MOUNTS) expect((await read(mount, 0)).answer.isError).toBe(false);
    expectOwnTokensOnly(seen);
    const clients = requestsTo(h.fake, "/token").map((r) => r.clientId);
    expect(new Set(clients)).toEqual(new Set([PERSON.clientId, AGENT.clientId, READER.clientId]));
    expect(clients).toHaveLength(9);
  });

  it("with calls to three mounts in flight at once, before and after every cached token is refused", async () => {
    const seen = tagByMount();
    const burst = () => Promise.all(MOUNTS.flatMap((mount) => [0, 1, 2, 3].map((n) => read(mount, n))));
    for (const { answer } of await burst()) expect(answer.isError, answer.text).toBe(false);
    h.fake.store.tokens.clear();
    for (const { answer } of await burst()) expect(answer.isError, answer.text).toBe(false);
    expectOwnTokensOnly(seen);
  });

  it("even for two mounts holding the very same client and refresh token: each mints and keeps its own", async () => {
    const twin = {
      GMAIL_TWIN__GMAIL_CLIENT_ID: PERSON.clientId,
      GMAIL_TWIN__GMAIL_CLIENT_SECRET: PERSON.secret,
      GMAIL_TWIN__GMAIL_REFRESH_TOKEN: PERSON.refresh,
    };
    const seen = tagByMount();
    await read(PERSON.mount, 0, twin);
    await read("gmail-twin", 0, twin);
    const mixed = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => read(n % 2 === 0 ? PERSON.mount : "gmail-twin", n, twin)));
    for (const { answer } of mixed) expect(answer.isError, answer.text).toBe(false);
    expectOwnTokensOnly(seen);
    expect(requestsTo(h.fake, "/token").map((r) => r.clientId)).toEqual([PERSON.clientId, PERSON.clientId]);
    const bearers = (mount: string) => new Set(seen.filter((s) => s.mount === mount && s.bearer !== undefined).map((s) => s.bearer));
    expect([...bearers(PERSON.mount)].filter((b) => bearers("gmail-twin").has(b))).toEqual([]);
  });
});
