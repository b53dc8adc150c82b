// Issue 28 through the running stack: the official v2 SDK client (2026-07-28, an elicitation handler standing in for the person) is asked a mount's question through the gateway, and its retry reaches the mount with the answer (R-FWD-8, R-FWD-9).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { bearer, connectLegacy, mcpUrl, TOKENS } from "./helpers";

interface Asked {
  message: string;
  mode: unknown;
}

/** A v2 client negotiating 2026-07-28 that declares form elicitation and answers every question with `answer`. */
async function personAt(answer: (asked: Asked) => { action: "accept" | "decline" | "cancel"; content?: Record<string, string> }): Promise<{ client: Client; asked: Asked[] }> {
  const asked: Asked[] = [];
  const client = new Client({ name: "e2e-person", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler("elicitation/create", async (request) => {
    const params = request.params as { message: string; mode?: unknown };
    const question = { message: params.message, mode: params.mode };
    asked.push(question);
    return answer(question);
  });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl("echo"), { requestInit: { headers: bearer(TOKENS.session) } }));
  return { client, asked };
}

describe("issue 28: a mount's question through the gateway", () => {
  it("the v2 client on 2026-07-28 is asked demo_ask's question and its retry reaches the mount with the answer", async () => {
    const { client, asked } = await personAt(() => ({ action: "accept", content: { reply: "ship it" } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const result = await client.callTool({ name: "demo_ask", arguments: { question: "Ship the release?" } }, { timeout: 30_000 });
      expect(asked).toEqual([{ message: "Ship the release?", mode: "form" }]);
      // The mount saw the answer on the retry, under the state it sealed for this very question.
      expect(result.structuredContent).toEqual({ question: "Ship the release?", action: "accept", content: { reply: "ship it" } });
    } finally {
      await client.close();
    }
  });

  it("a decline reaches the mount as a decline, asked once", async () => {
    const { client, asked } = await personAt(() => ({ action: "decline" }));
    try {
      const result = await client.callTool({ name: "demo_ask", arguments: { question: "Delete the branch?" } }, { timeout: 30_000 });
      expect(asked).toHaveLength(1);
      expect(result.structuredContent).toEqual({ question: "Delete the branch?", action: "decline", content: null });
    } finally {
      await client.close();
    }
  });

  it("a 2025-11-25 client gets an error naming the server, never the SDK's -32602 invalid result, and is asked nothing", async () => {
    const legacy = await connectLegacy("echo", bearer(TOKENS.session));
    try {
      const failure = await legacy.callTool("demo_ask", { question: "Anyone there?" }).then(
        (result) => ({ result }),
        (error: unknown) => ({ error: error as { code?: number; message?: string } }),
      );
      expect("error" in failure, JSON.stringify(failure)).toBe(true);
      const error = (failure as { error: { code?: number; message?: string } }).error;
      expect(error.code).not.toBe(-32602);
      expect(error.message).toContain('server "echo"');
    } finally {
      await legacy.close();
    }
  });
});
