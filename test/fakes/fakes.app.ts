// Local stand-ins for what nobody can reach from here, served on 127.0.0.1:8789 by `npm run dev`:
//   /recorder/...   records the "writes" of demo tools and events bundles report, for tests to read back
//   /remote/mcp     a third-party MCP server (remote-http) that reports what reached it
//   /onepassword/   a 1Password Connect server (onepassword/connect.fake.ts)
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import * as z from "zod";
import { gmailFake } from "./gmail/gmail.fake";
import { connectFake } from "./onepassword/connect.fake";

interface RecordedEvent {
  at: number;
  [key: string]: unknown;
}
const events: RecordedEvent[] = [];
const MAX_EVENTS = 10_000;

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const remote = createMcpHandler(
  (ctx) => {
    const server = new McpServer({ name: "fake-remote", version: "0.1.0" });
    server.registerTool(
      "report_request",
      {
        description: "Reports the header names and _meta keys that reached this remote server.",
        inputSchema: z.object({}),
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      async (_args, toolCtx) => {
        const headers = ctx.requestInfo?.headers;
        const names = headers === undefined ? [] : [...headers.keys()].sort();
        const auth = headers?.get("authorization");
        return {
          content: [{ type: "text", text: JSON.stringify({ headerNames: names, authorizationSha256: auth ? await sha256(auth) : null, metaKeys: Object.keys(toolCtx.mcpReq._meta ?? {}).sort() }) }],
        };
      },
    );
    return server;
  },
  { keepAliveMs: 0 },
);

const app = new Hono();
app.post("/recorder/events", async (c) => {
  const body = (await c.req.json()) as Record<string, unknown>;
  if (events.length >= MAX_EVENTS) events.shift();
  events.push({ ...body, at: typeof body.at === "number" ? body.at : Date.now() });
  return c.json({ ok: true });
});
app.get("/recorder/events", (c) => c.json(events));
app.delete("/recorder/events", (c) => {
  events.length = 0;
  return c.json({ ok: true });
});
app.all("/remote/mcp", (c) => remote.fetch(c.req.raw));
// Fails with a body that must never reach a caller.
app.post("/remote/broken", () => new Response("upstream-secret-body: sk_live_do_not_leak", { status: 502 }));
app.route("/gmail", gmailFake.app);
app.route("/onepassword", connectFake.app);
app.get("/healthz", (c) => c.json({ ok: true }));
app.notFound(() => Response.json({ error: "not found" }, { status: 404 }));
export default app;
