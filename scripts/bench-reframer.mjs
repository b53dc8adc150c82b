// A reference for `npm run bench`, never deployed: the least a gateway that reads each call and speaks
// 2026-07-28 to its bundle must do, on either revision. It parses the caller's JSON-RPC message, re-frames the
// call for the bundle's modern leg over the service binding (with its own envelope: a caller's _meta is never
// passed on), and answers with the bundle's result stripped of the hop's fields; to a 2026-07-28 caller, as a
// complete result under its own identity. No caller check, routing, limit, timeout or log line: everything
// strad's gateway does beyond this is its own cost. With the LOG_LINE binding "1" it writes the gateway's one log line
// per request as well: the least a gateway that keeps issue 31's rules pays (`npm run bench` part 1, "the floor").
const HOP_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench-reframer", version: "0" },
};
const OWN_META = { "io.modelcontextprotocol/serverInfo": { name: "bench-reframer", version: "0" } };

export default {
  async fetch(request, env) {
    const modern = request.headers.get("mcp-protocol-version") === "2026-07-28";
    const message = JSON.parse(await request.text());
    const { name, arguments: args } = message.params;
    const answer = await env.BUNDLE.fetch(`https://bundle.internal${new URL(request.url).pathname}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: HOP_META } }),
    });
    const { resultType, _meta, ...result } = JSON.parse(await answer.text()).result;
    // With LOG_LINE, the gateway's one JSON log line per request too (worker/log.ts's shape), as the logger reference writes it.
    if (env.LOG_LINE === "1") {
      console.log(
        JSON.stringify({ at: new Date().toISOString(), event: "mcp_request", caller: "bench", slugs: ["echo"], method: "tools/call", tool: name, outcome: "ok", status: answer.status, durationMs: 0 }),
      );
    }
    return Response.json({ jsonrpc: "2.0", id: message.id, result: modern ? { _meta: OWN_META, ...result, resultType } : result });
  },
};
