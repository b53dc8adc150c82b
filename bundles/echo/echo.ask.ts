// A DEMO of the gateway's pass-through of a 2026-07-28 question (docs/rules.md R-FWD-8, R-FWD-9), not a guard:
// demo_ask asks the caller's client one question with the SDK's own inputRequired() and request-state codec, and on
// the retry answers with what the client said. It reads and writes nothing, and it is served only where the dev
// stack turns it on (ECHO_DEMO_ASK=1 in bundles/echo/.dev.vars), so no deployed echo mount lists it.
import { type CallToolResult, createRequestStateCodec, type InputRequiredResult, inputRequired, inputResponse, type RequestStateCodec, type ServerContext } from "@modelcontextprotocol/server";
import * as z from "zod";
import { jsonSchemaOnce, type ToolEntry } from "../kit/tools";

/** The demo is served only with this switch on (bundles/echo/.dev.vars.example). */
export function demoAskOn(env: Record<string, unknown>): boolean {
  return env.ECHO_DEMO_ASK === "1";
}

/** The key of the one question demo_ask puts in its input_required result. */
export const DEMO_ASK_KEY = "reply";

// The seal's key is this isolate's own: the demo holds no secret, and a retry that lands on another isolate finds a
// seal that does not open and is simply asked again: a seal that does not open is a fresh question, never an error.
let codec: RequestStateCodec<{ question: string }> | undefined;
const sealer = () => {
  codec ??= createRequestStateCodec<{ question: string }>({ key: crypto.getRandomValues(new Uint8Array(32)), ttlSeconds: 300 });
  return codec;
};

const DEMO_ASK = {
  description: "DEMO of the gateway's pass-through of a 2026-07-28 question: asks the caller's client `question`, then answers with the reply.",
  inputSchema: jsonSchemaOnce(z.object({ question: z.string().min(1).max(500) })),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

/** The question the state was sealed for, or undefined when there is no state or its seal does not open. */
async function sealedQuestion(state: unknown, ctx: ServerContext): Promise<string | undefined> {
  if (typeof state !== "string") return undefined;
  try {
    return (await sealer().verify(state, ctx)).question;
  } catch {
    return undefined;
  }
}

const demoAsk = async ({ question }: { question: string }, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> => {
  const answer = inputResponse(ctx.mcpReq.inputResponses, DEMO_ASK_KEY);
  // Only an answer to this very question counts; anything else is asked (again).
  if (answer.kind === "elicit" && (await sealedQuestion(ctx.mcpReq.requestState(), ctx)) === question) {
    const reply = { question, action: answer.action, content: answer.content ?? null };
    return { content: [{ type: "text", text: JSON.stringify(reply) }], structuredContent: reply };
  }
  return inputRequired({
    inputRequests: {
      [DEMO_ASK_KEY]: inputRequired.elicit({ message: question, requestedSchema: { type: "object", properties: { reply: { type: "string", title: "Reply" } }, required: ["reply"] } }),
    },
    requestState: await sealer().mint({ question }),
  });
};

export const DEMO_ASK_TOOL: ToolEntry = { name: "demo_ask", register: (server) => server.registerTool("demo_ask", DEMO_ASK, demoAsk) };
