// Issue 15 #5: the names the kit owns on an approval request (the ones it sets, and the framing ones) are one
// list in contract/, which the roster refuses (test/worker/roster.test.ts) and the approval client drops: a
// channel header of that name never reaches the wire, in any case, on the create or on a poll (docs/rules.md R-CONF-4).
import { describe, expect, it } from "vitest";
import { requestApproval } from "../../../bundles/kit/approval-client";
import { APPROVAL_CLIENT_HEADERS, FRAMING_HEADERS, RESERVED_CHANNEL_HEADERS } from "../../../contract/elicitation";

const MARK = "from-the-channel";
const EDGE = { "CF-Access-Client-Id": "edge-id.access" };

/** Every request the client makes for one approval, with the headers it would put on the wire. */
async function sentHeaders(channel: Record<string, string>): Promise<{ method: string; headers: Headers }[]> {
  const seen: { method: string; headers: Headers }[] = [];
  await requestApproval({
    url: "https://approvals.example/s/",
    headers: channel,
    message: "demo: This will record a note.",
    toolName: "demo_write",
    deadline: Date.now() + 5_000,
    signal: new AbortController().signal,
    pollIntervalMs: 20,
    fetch: async (_url, init) => {
      seen.push({ method: String(init.method), headers: new Headers(init.headers) });
      return init.method === "POST" ? Response.json({}, { status: 201 }) : Response.json({ action: seen.length < 3 ? "pending" : "decline" });
    },
  });
  return seen;
}

const titled = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash}${c.toUpperCase()}`);

describe("issue 15 #5: channel headers the bundle owns", () => {
  it("the list is the names the client sets itself and the framing ones", () => {
    expect([...RESERVED_CHANNEL_HEADERS]).toEqual([...APPROVAL_CLIENT_HEADERS, ...FRAMING_HEADERS]);
    expect([...RESERVED_CHANNEL_HEADERS].sort()).toEqual(["accept", "connection", "content-length", "content-type", "host", "prefer", "transfer-encoding"]);
  });

  it.each(RESERVED_CHANNEL_HEADERS.flatMap((name) => [name, name.toUpperCase(), titled(name)]))("drops a channel header named %s on the create and on every poll", async (name) => {
    const requests = await sentHeaders({ ...EDGE, [name]: MARK });
    expect(requests.map((r) => r.method)).toEqual(["POST", "GET", "GET"]);
    for (const { headers } of requests) {
      // The edge credential still travels; the owned name carries the client's own value or none, never the channel's.
      expect(headers.get("cf-access-client-id")).toBe(EDGE["CF-Access-Client-Id"]);
      expect(headers.get(name)).not.toBe(MARK);
      for (const [, value] of headers) expect(value).not.toContain(MARK);
    }
    expect(requests[0]?.headers.get("content-type")).toBe("application/json");
    for (const poll of requests.slice(1)) expect(poll.headers.get("prefer")).toMatch(/^wait=\d+$/);
  });
});
