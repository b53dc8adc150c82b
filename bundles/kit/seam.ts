// The seam an upstream tool tree already has: it asks the server object whether the client supports
// elicitation, then calls server.elicitInput(). On a bundle's server both answer from the current call's
// channel, never from process.env (docs/rules.md R-CHAN-11): support is reported exactly
// when the call carries a usable channel, and elicitInput() speaks the fallback protocol against its URL.
import type { ClientCapabilities, ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult, McpServer } from "@modelcontextprotocol/server";
import { CONFIRM_SCHEMA } from "./approval-client";
import { audit, auditTrail } from "./audit";
import { askPerson, auditRefusal, preflight } from "./confirm";
import { fingerprint } from "./fingerprint";
import { cleanLine } from "./prompt";
import { currentCall } from "./scope";

function usable(): boolean {
  if (currentCall() === undefined) return false;
  return preflight().ok;
}

/** The upstream's own form plus the confirm box, which is the only thing that can make an answer act. */
function withConfirm(schema: ElicitRequestFormParams["requestedSchema"] | undefined): Record<string, unknown> {
  const properties = { ...(schema?.properties ?? {}), confirm: CONFIRM_SCHEMA.properties.confirm };
  const required = [...new Set([...(schema?.required ?? []), "confirm"])];
  return { type: "object", properties, required };
}

type ContentValue = string | number | boolean | string[];

function formContent(content: Record<string, unknown>): Record<string, ContentValue> {
  const kept: Record<string, ContentValue> = {};
  for (const [key, value] of Object.entries(content)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") kept[key] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) kept[key] = value as string[];
  }
  return kept;
}

export function installConfirmSeam(mcp: McpServer): void {
  const server = mcp.server;
  const original = server.getClientCapabilities.bind(server);
  server.getClientCapabilities = (): ClientCapabilities => {
    const { elicitation: _dropped, ...rest } = original() ?? {};
    return usable() ? { ...rest, elicitation: { form: {} } } : rest;
  };
  server.elicitInput = async (params: ElicitRequestFormParams | ElicitRequestURLParams): Promise<ElicitResult> => {
    if (params.mode === "url") {
      audit("refused", { reason: "url_elicitation" });
      throw new Error("Refused: URL elicitation cannot be carried over the approval channel");
    }
    const pre = preflight();
    if (!pre.ok) {
      auditRefusal(pre);
      throw new Error(`Refused: ${pre.reason}`);
    }
    // The upstream's message is prefixed with the slug, so a person holding several slugs can tell who asks.
    const message = [`${cleanLine(pre.slug, 100)}:`, ...params.message.split("\n").map((line) => cleanLine(line, 400))].join("\n");
    // An upstream tree has no target to hand over: the approval is bound to the question it asked.
    const asked = currentCall();
    const bound = asked === undefined ? undefined : await fingerprint({ operation: `elicit:${asked.toolName}`, target: { message } });
    const trail = auditTrail();
    if (trail !== undefined && bound !== undefined) trail.fingerprint = bound;
    const decision = await askPerson({ message, requestedSchema: withConfirm(params.requestedSchema), ...(bound === undefined ? {} : { binds: bound }) });
    switch (decision.kind) {
      case "refused":
        throw new Error(`Refused: ${decision.reason}`);
      case "failed":
        throw new Error(decision.reason);
      case "not-approved":
        return { action: decision.answer === "decline" ? "decline" : "cancel" };
      case "approved": {
        if (asked !== undefined && bound !== undefined) asked.approval = { fingerprint: bound, approved: true };
        return { action: "accept", content: formContent(decision.content) };
      }
    }
  };
}
