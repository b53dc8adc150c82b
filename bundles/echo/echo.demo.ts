// A guarded demo tool: demo_write records a note at the fakes' recorder, and always asks first. Its
// "write" goes through the kit's send gate like a real send would, so the e2e suite can count writes.
import * as z from "zod";
import { always, type Guard, guardedTool } from "../kit/guard";
import { currentScope } from "../kit/scope";
import { jsonSchemaOnce, type ToolEntry } from "../kit/tools";

/** The echo bundle's registry of confirmed tools: every tool that asks a person, and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["demo_write"]);

interface DemoTarget {
  note: string;
  mount: string;
}

// The tool's definition and guard are built once per isolate; the mount it records is the call's (bundles/echo/echo.tools.ts says why).
const DEMO_WRITE = {
  description: "Records a note in the demo recorder. Asks a person first.",
  inputSchema: jsonSchemaOnce(z.object({ note: z.string().min(1).max(2_000) })),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

const DEMO_GUARD: Guard<{ note: string }, DemoTarget> = {
  rule: always,
  resolve: ({ note }) => ({ note, mount: currentScope().mount }),
  fingerprint: (target) => ({ operation: "demo_write", target: { note: target.note, mount: target.mount } }),
  prompt: (target) => ({
    heading: "This will record a note in the demo recorder.",
    consequence: "The recorder keeps every note it is given; a recorded note cannot be taken back.",
    values: [{ label: "Note", value: target.note }],
  }),
  act: async (target, write) => {
    const recorder = currentScope().env.RECORDER_URL;
    if (typeof recorder !== "string") return { content: [{ type: "text", text: "Not done: RECORDER_URL is not set on this bundle." }], isError: true };
    const response = await write(`${recorder}/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "demo_write", note: target.note, mount: target.mount }),
    });
    await response.body?.cancel().catch(() => {});
    if (!response.ok) return { content: [{ type: "text", text: `Not done: the recorder answered HTTP ${response.status}.` }], isError: true };
    return { content: [{ type: "text", text: "Recorded." }] };
  },
};

/** The demo tools, as entries of the echo bundle's tool table (bundles/kit/tools.ts). */
export const DEMO_TOOLS: readonly ToolEntry[] = [{ name: "demo_write", register: (server) => guardedTool(server, CONFIRMED_TOOLS, "demo_write", DEMO_WRITE, DEMO_GUARD) }];
