// Covers issue 26's unknown-tool answer (worker/selection.ts describeUnroutable, docs/rules.md R-MCP-8): a tool called by a name no selected mount takes is told how mounts are named, the same words on both revisions, with the fast lane on or off, and never a slug the caller may not use.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import echo from "../../bundles/echo/echo.app";
import { RpcCode } from "../../contract/rpc";
import type { Caller } from "../../worker/auth";
import { createGateway } from "../../worker/gateway";
import { parseRoster } from "../../worker/roster-text";
import { describeUnroutable, selectServers } from "../../worker/selection";
import { binding, executionContext } from "./helpers/gateway";
import { messageOf } from "./helpers/message";

const ALICE = "alice-token-0123456789abcdef";
const RITA = "rita-token-0123456789abcdef0";
const ROSTER = `callers:
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
  - { id: rita, kind: session, roles: [reader], tokenSecret: TOKEN_RITA }
servers:
  - { slug: echo, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user, reader] }
  - { slug: mail, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: docs, kind: bundle, bundle: ECHO, path: /echo, entitlements: [reader] }
  - { slug: secret-ops, kind: bundle, bundle: ECHO, path: /echo, entitlements: [ops] }
`;

const ECHO = binding((request) => Promise.resolve((echo.fetch as NonNullable<typeof echo.fetch>)(request as never, {}, executionContext())));
const env = { TOKEN_ALICE: ALICE, TOKEN_RITA: RITA, ECHO, CALLS: {} };

type Way = { revision: "2025-11-25" | "2026-07-28"; lane: boolean };
const WAYS: Way[] = [
  { revision: "2025-11-25", lane: true },
  { revision: "2025-11-25", lane: false },
  { revision: "2026-07-28", lane: true },
  { revision: "2026-07-28", lane: false },
];

function toolCall(way: Way, token: string, servers: string | null, name: string): Request {
  const modern = way.revision === "2026-07-28";
  const meta = modern
    ? { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "unknown-tool-test", version: "0" } }
    : undefined;
  return new Request(`https://gateway.test/mcp${servers === null ? "" : `?servers=${servers}`}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": way.revision,
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name, arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) } }),
  });
}

/** The status and JSON-RPC error of one call, whichever way it was answered (JSON or one event). */
async function errorOn(way: Way, token: string, servers: string | null, name: string): Promise<{ status: number; code?: number; message?: string }> {
  const ctx = executionContext();
  const response = await (createGateway(ROSTER, { fastLane: way.lane }).fetch as NonNullable<ExportedHandler["fetch"]>)(toolCall(way, token, servers, name) as never, env as never, ctx);
  const text = await response.text();
  await ctx.settle();
  const message = messageOf(text) as { error?: { code: number; message: string } };
  return { status: response.status, code: message.error?.code, message: message.error?.message };
}

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe("issue 26: a tool name that reaches no mount says how mounts are named", () => {
  it.each([
    [
      "a plain name without ?servers=",
      ALICE,
      null,
      "send_email",
      'unknown tool "send_email": no ?servers= was given, so every server this caller may use is selected (echo, mail), so tools are named <slug>__<tool>, e.g. "echo__send_email"; or call /mcp?servers=<slug> to use one server\'s own tool names',
    ],
    [
      "a plain name with several ?servers=",
      ALICE,
      "mail,echo",
      "send_email",
      'unknown tool "send_email": ?servers= selects several servers (mail, echo), so tools are named <slug>__<tool>, e.g. "mail__send_email"; or call /mcp?servers=<slug> to use one server\'s own tool names',
    ],
    [
      "a prefixed name whose slug is not selected",
      ALICE,
      "mail,echo",
      "docs__search",
      'unknown tool "docs__search": "docs" is not one of the selected servers (mail, echo); tools are named <slug>__<tool> after a selected server',
    ],
    [
      "a prefixed name of a slug the caller may not use, without ?servers=",
      RITA,
      null,
      "mail__send_email",
      'unknown tool "mail__send_email": "mail" is not one of the selected servers (echo, docs); tools are named <slug>__<tool> after a selected server',
    ],
  ])("%s: the same -32602 and words on both revisions, with the fast lane on or off", async (_case, token, servers, name, expected) => {
    const answers = await Promise.all(WAYS.map((way) => errorOn(way, token, servers, name)));
    expect(answers).toEqual(WAYS.map(() => ({ status: 200, code: RpcCode.InvalidParams, message: expected })));
  });

  it("never names a slug the caller may not use, whatever name it tries", async () => {
    for (const name of ["send_email", "secret-ops__run", "mail__send_email", "__x", ""]) {
      const { message } = await errorOn(WAYS[0] as Way, RITA, null, name);
      expect(message).toMatch(/^unknown tool /);
      // rita may use echo and docs: mail and secret-ops appear only where she typed them herself.
      const own = name === "" ? (message ?? "") : (message ?? "").replaceAll(name, "").replaceAll(`"${name.split("__")[0]}"`, "");
      expect(own).not.toMatch(/secret-ops|mail/);
      expect(own).toContain("(echo, docs)");
    }
  });

  it("a caller that may use no server is told so, and a long slug list and name are cut", () => {
    const roster = parseRoster(`${ROSTER}${Array.from({ length: 12 }, (_, i) => `  - { slug: s${i}, kind: bundle, bundle: ECHO, path: /echo, entitlements: [many] }\n`).join("")}`);
    if (!roster.ok) throw new Error(JSON.stringify(roster.errors));
    const caller = (roles: string[]): Caller => ({ id: "c", kind: "session", roles, tokenSecret: "T", isAdmin: false });
    const none = selectServers(roster.roster, caller(["nobody"]), null);
    if (!none.ok) throw new Error("selection failed");
    expect(describeUnroutable(none, "x")).toBe('unknown tool "x": this caller may use no server, so no tool is served here');
    const many = selectServers(roster.roster, caller(["many"]), null);
    if (!many.ok) throw new Error("selection failed");
    const long = "t".repeat(300);
    const message = describeUnroutable(many, long);
    expect(message).toContain("(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 and 2 more)");
    expect(message).not.toContain("s10");
    expect(message).toContain(`"${"t".repeat(128)}"`);
    expect(message).not.toContain("t".repeat(129));
  });
});
