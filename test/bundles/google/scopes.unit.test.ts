// Covers bundles/google/google.scopes.ts (docs/rules.md R-GMAIL-6): each tool's declared Gmail API methods are exactly the ones it calls on the Gmail fake, each group gets the fewest, narrowest scopes that allow them, and docs/deploy.md lists exactly those per group.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import manifest from "../../../bundles/google/bundle.json";
import { GMAIL_SCOPE, type GmailMethod, gmailScopesFor, TOOL_METHODS } from "../../../bundles/google/google.scopes";
import { harness } from "./helpers";

const h = harness();
const groups = manifest.toolGroups.groups as Record<string, string[]>;

/** The Gmail API method a request the fake recorded was, by its path and verb; undefined for the token endpoint. */
function methodOf(verb: string, path: string): GmailMethod | undefined {
  const p = path.replace(/^.*\/gmail\/v1\/users\/me/, "");
  if (path.endsWith("/token")) return undefined;
  const table: [string, RegExp, GmailMethod][] = [
    ["GET", /^\/profile$/, "users.getProfile"],
    ["GET", /^\/messages$/, "users.messages.list"],
    ["GET", /^\/messages\/[^/]+$/, "users.messages.get"],
    ["GET", /^\/threads\/[^/]+$/, "users.threads.get"],
    ["GET", /^\/drafts$/, "users.drafts.list"],
    ["GET", /^\/drafts\/[^/]+$/, "users.drafts.get"],
    ["POST", /^\/drafts$/, "users.drafts.create"],
    ["POST", /^\/drafts\/send$/, "users.drafts.send"],
    ["POST", /^\/messages\/send$/, "users.messages.send"],
  ];
  const found = table.find(([v, re]) => v === verb && re.test(p));
  if (found === undefined) throw new Error(`a Gmail request this test does not know: ${verb} ${path}`);
  return found[2];
}

describe("what each tool calls", () => {
  it("declares every tool of every group, and nothing else", () => {
    expect(Object.keys(TOOL_METHODS).sort()).toEqual([...new Set(Object.values(groups).flat())].sort());
  });

  // Calls that between them take every path of each tool: a reply reads the original, a draft send reads the draft.
  const calls: [string, Record<string, unknown>][] = [
    ["search_messages", { query: "numbers" }],
    ["get_message", { message_id: "msg-person-1" }],
    ["get_thread", { thread_id: "thread-person-1" }],
    ["list_drafts", {}],
    ["get_draft", { draft_id: "draft-person-1" }],
    ["create_draft", { to: ["ada@example.com"], text: "d", reply_to_message_id: "msg-person-1" }],
    ["send_email", { to: ["ada@example.com"], text: "s", reply_to_message_id: "msg-person-1" }],
    ["send_email", { from_draft_id: "draft-person-1" }],
  ];

  it("calls exactly the Gmail API methods its declaration lists, as the Gmail fake records them", async () => {
    const seen = new Map<string, Set<GmailMethod>>();
    for (const [tool, args] of calls) {
      const before = h.fake.store.requests.length;
      const { answer } = await h.call({ tool, args });
      expect(answer.isError, `${tool}: ${answer.text}`).toBe(false);
      const methods = seen.get(tool) ?? new Set<GmailMethod>();
      for (const r of h.fake.store.requests.slice(before)) {
        const method = methodOf(r.method, r.path);
        if (method !== undefined) methods.add(method);
      }
      seen.set(tool, methods);
    }
    for (const [tool, methods] of seen) expect([...methods].sort(), tool).toEqual([...(TOOL_METHODS[tool] ?? [])].sort());
  });
});

describe("the scopes each group needs", () => {
  it("are gmail.readonly to read, and gmail.readonly with gmail.compose once drafts are written or sent", () => {
    expect(gmailScopesFor(groups.readonly ?? [])).toEqual([GMAIL_SCOPE.readonly]);
    expect(gmailScopesFor(groups.readwrite ?? [])).toEqual([GMAIL_SCOPE.readonly, GMAIL_SCOPE.compose]);
    expect(gmailScopesFor(groups.readwrite_external ?? [])).toEqual([GMAIL_SCOPE.readonly, GMAIL_SCOPE.compose]);
  });

  it("take the narrowest that serves: a send alone needs gmail.send, a draft alone gmail.compose, nothing needs gmail.modify", () => {
    expect(gmailScopesFor(["get_message"])).toEqual([GMAIL_SCOPE.readonly]);
    // Sending a composed message or a draft: drafts.send takes gmail.compose (gmail.send does not cover it).
    expect(gmailScopesFor(["send_email"])).toEqual([GMAIL_SCOPE.readonly, GMAIL_SCOPE.compose]);
    expect(gmailScopesFor([])).toEqual([]);
    for (const tools of Object.values(groups)) expect(gmailScopesFor(tools)).not.toContain(GMAIL_SCOPE.modify);
  });

  it("refuses a tool it has no declaration for, so a new tool cannot go unlisted", () => {
    expect(() => gmailScopesFor(["delete_message"])).toThrow('tool "delete_message" has no Gmail methods declared');
  });

  it("are what docs/deploy.md lists for each group, and no group is left out", () => {
    const doc = readFileSync(fileURLToPath(new URL("../../../docs/deploy.md", import.meta.url)), "utf8");
    // The table's rows: | `group` | `scope` `scope` | …
    const rows = new Map([...doc.matchAll(/^\| `([a-z_]+)` \| ((?:`[^`]+` ?)+) \|/gm)].map((m) => [m[1] as string, [...(m[2] as string).matchAll(/`([^`]+)`/g)].map((s) => s[1])]));
    expect([...rows.keys()].sort()).toEqual(Object.keys(groups).sort());
    for (const [group, tools] of Object.entries(groups)) expect(rows.get(group), group).toEqual(gmailScopesFor(tools));
  });
});
