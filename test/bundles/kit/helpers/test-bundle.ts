// A bundle written for the kit's tests: one tool per guard shape, a tool that uses the capabilities seam
// the way an upstream tree does, and tools that report what their call scope holds.
import { McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { gatedFetch, gatedWrite } from "../../../../bundles/kit/gate";
import { always, guardedTool, never, when } from "../../../../bundles/kit/guard";
import { serveBundle } from "../../../../bundles/kit/mount";
import { currentCall, currentScope } from "../../../../bundles/kit/scope";

export const KIT_CONFIRMED = new Set(["delete_matching", "move_items", "replace_text"]);
const WRITES = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false } as const;

/** Live upstream state the guarded tools read: a mailbox of subjects, and pads of text. */
export const store = { messages: new Map<number, string>(), pads: new Map<string, string>() };

async function record(body: Record<string, unknown>): Promise<void> {
  const response = await gatedWrite(`${currentScope().env.RECORDER_URL as string}/events`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await response.body?.cancel();
}

const done = (text: string) => ({ content: [{ type: "text" as const, text }] });

export function kitServer(mount: string): McpServer {
  const server = new McpServer({ name: `kit-test/${mount}`, version: "0.0.0" });

  server.registerTool("whoami", { description: "Reports this call's scope after a random pause.", inputSchema: z.object({ pauseMs: z.number() }), annotations: WRITES }, async ({ pauseMs }) => {
    await new Promise((r) => setTimeout(r, pauseMs));
    const call = currentCall();
    const channel = call?.channel;
    return done(
      JSON.stringify({
        mount: currentScope().mount,
        channel: channel?.kind === "ask" ? channel.channel.url : channel?.kind === "refused" ? `refused: ${channel.reason}` : channel?.kind,
        deadline: call?.deadline ?? null,
        progressToken: call?.progressToken ?? null,
        toolName: call?.toolName ?? null,
      }),
    );
  });

  // An upstream tree's shape: ask the server object, then elicit, then send with a fetch it was handed.
  server.registerTool("vendored_send", { description: "Sends like an upstream tree.", inputSchema: z.object({ to: z.string() }), annotations: WRITES }, async ({ to }, ctx: ServerContext) => {
    if (server.server.getClientCapabilities()?.elicitation === undefined) return { ...done("no elicitation support"), isError: true };
    const answer = await ctx.mcpReq.elicitInput({ message: `Send mail to ${to}?\nSubject: hello`, requestedSchema: { type: "object", properties: { note: { type: "string" } } } });
    if (answer.action !== "accept" || answer.content?.confirm !== true) return done(`not sent: ${answer.action}`);
    const send = gatedFetch((url, method) => method === "POST" && url.pathname.endsWith("/events"));
    const response = await send(`${currentScope().env.RECORDER_URL as string}/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "vendored_send", to }),
    });
    await response.body?.cancel();
    return done("sent");
  });

  server.registerTool("sneaky_write", { description: "Writes without declaring a guard.", inputSchema: z.object({}), annotations: WRITES }, async () => {
    await record({ kind: "sneaky_write" });
    return done("written");
  });

  guardedTool(
    server,
    KIT_CONFIRMED,
    "delete_matching",
    { description: "Deletes the messages whose subject contains the text.", inputSchema: z.object({ contains: z.string() }), annotations: WRITES },
    {
      rule: always,
      resolve: ({ contains }) => ({ uids: [...store.messages].filter(([, subject]) => subject.includes(contains)).map(([uid]) => uid) }),
      fingerprint: (t) => ({ operation: "delete", target: { uids: { set: t.uids } } }),
      prompt: (t) => ({ heading: `This will delete ${t.uids.length} message(s).`, consequence: "A deleted message cannot be restored.", values: [{ label: "UIDs", value: t.uids.join(", ") }] }),
      act: async (t, write) => {
        const response = await write(`${currentScope().env.RECORDER_URL as string}/events`, { method: "POST", body: JSON.stringify({ kind: "delete", uids: t.uids }) });
        await response.body?.cancel();
        return done(`deleted ${t.uids.length}`);
      },
    },
  );

  guardedTool(
    server,
    KIT_CONFIRMED,
    "move_items",
    { description: "Moves or copies messages.", inputSchema: z.object({ uids: z.array(z.number()), to: z.string(), mode: z.enum(["move", "copy"]) }), annotations: WRITES },
    {
      rule: always,
      resolve: (args) => args,
      fingerprint: (t) => ({ operation: t.mode, target: { uids: { set: t.uids }, from: "INBOX", to: t.to } }),
      prompt: (t) => ({
        heading: `This will ${t.mode} ${t.uids.length} message(s) between mailboxes.`,
        consequence: "The messages get new UIDs.",
        values: [
          { label: "From", value: "INBOX" },
          { label: "To", value: t.to },
          // One line per message beyond the first few, so a large enough move builds a prompt over the service's cap.
          ...t.uids.slice(3).map((uid) => ({ label: "Message", value: uid })),
        ],
      }),
      act: async (t) => {
        await record({ kind: t.mode, uids: t.uids, to: t.to });
        return done(`${t.mode}d`);
      },
    },
  );

  guardedTool(
    server,
    KIT_CONFIRMED,
    "replace_text",
    { description: "Replaces every occurrence in a pad.", inputSchema: z.object({ pad: z.string(), search: z.string().min(1), replace: z.string() }), annotations: WRITES },
    {
      rule: when((t: { count: number }) => t.count > 1),
      resolve: ({ pad, search, replace }) => ({ pad, search, replace, count: (store.pads.get(pad) ?? "").split(search).length - 1 }),
      fingerprint: (t) => ({ operation: "replace_all", target: { pad: t.pad, pair: { tuple: [t.search, t.replace] }, count: t.count } }),
      prompt: (t) => ({
        heading: `This will replace ${t.count} occurrences in pad "${t.pad}".`,
        consequence: "What is replaced cannot be restored.",
        values: [
          { label: "Search", value: t.search },
          { label: "Replace with", value: t.replace },
        ],
      }),
      act: async (t) => {
        await record({ kind: "replace", pad: t.pad, count: t.count });
        return done(`replaced ${t.count}`);
      },
    },
  );

  guardedTool(
    server,
    KIT_CONFIRMED,
    "append_note",
    { description: "Appends a note; takes nothing away.", inputSchema: z.object({ note: z.string() }), annotations: WRITES },
    {
      rule: never,
      resolve: ({ note }) => ({ note }),
      fingerprint: (t) => ({ operation: "append", target: { note: t.note } }),
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t) => {
        await record({ kind: "append", note: t.note });
        return done("appended");
      },
    },
  );

  return server;
}

export const kitBundle = serveBundle({ mounts: { "/kit": kitServer, "/kit-other": kitServer } });
