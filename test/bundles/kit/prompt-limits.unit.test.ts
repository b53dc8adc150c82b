// Issue 15 #3: the limits agree end to end. The largest prompt a confirmed tool can legally build (Gmail's
// send_email at every limit, and the largest draft it sends as it stands), built by the real prompt builder,
// fits the kit's cap and the approval service's, and the create body the kit sends for it fits the service's
// body cap and passes its validation (docs/rules.md R-LIMIT-1, R-LIMIT-2).
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES, parseCreate } from "../../../approvals/prompt";
import { MAX_CREATE_BYTES } from "../../../approvals/protocol.routes";
import { sendPrompt } from "../../../bundles/google/google.send";
import { requestApproval } from "../../../bundles/kit/approval-client";
import { buildPrompt, MAX_PROMPT_BYTES, PromptRefusal } from "../../../bundles/kit/prompt";
import { MAX_PROMPT_BYTES as CONTRACT_MAX_PROMPT_BYTES, MAX_CREATE_BODY_BYTES } from "../../../contract/elicitation";
import { largestComposeTarget, largestDraftTarget, sendLimits } from "../google/largest-send";

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;
const limits = sendLimits();

/** The create body the kit's approval client sends for a message, caught before it leaves. */
async function createBodyFor(message: string): Promise<string> {
  let sent: string | undefined;
  await requestApproval({
    url: "https://approvals.example/s/",
    headers: {},
    message,
    toolName: "send_email",
    deadline: Date.now() + 60_000,
    signal: new AbortController().signal,
    fetch: async (_url, init) => {
      sent ??= String(init.body);
      return Response.json({ action: "decline" });
    },
  });
  if (sent === undefined) throw new Error("the client sent no create");
  return sent;
}

describe("issue 15 #3: the largest legal prompt fits every cap it meets", () => {
  it("the kit and the approval service hold to one cap, from contract/", () => {
    expect(MAX_PROMPT_BYTES).toBe(CONTRACT_MAX_PROMPT_BYTES);
    expect(MAX_MESSAGE_BYTES).toBe(CONTRACT_MAX_PROMPT_BYTES);
    expect(MAX_CREATE_BYTES).toBe(MAX_CREATE_BODY_BYTES);
  });

  it("finds send_email's limits in its own schema and parsers", () => {
    expect(limits).toEqual({
      entryUnits: 320,
      recipientsPerField: 50,
      nameChars: 64,
      localChars: 64,
      domainChars: 253,
      subjectUnits: 900,
      replyIdChars: 256,
      attachments: 10,
      filenameUnits: 255,
      filenameChars: 120,
      draftIdChars: 256,
    });
  });

  it("the largest legal send_email prompt, built by the real builder, fits the kit's cap and the approval service's, shown whole", () => {
    const target = largestComposeTarget(limits);
    const text = buildPrompt(target.mount, sendPrompt(target));
    // Every limit at once: 50 recipients, a 900-character subject, a reply, 10 attachments.
    const lines = text.split("\n");
    expect(lines.filter((l) => l.startsWith("  To: ") || l.startsWith("  Bcc: "))).toHaveLength(50);
    expect(lines.filter((l) => l.startsWith("  Attachment: "))).toHaveLength(10);
    expect(text).not.toContain("[cut:");
    expect(text).toContain(target.subject);
    for (const a of [...target.to, ...target.bcc]) expect(text).toContain(`${a.email} (name: ${a.name})`);
    for (const a of target.attachments) expect(text).toContain(`  Attachment: ${a.filename} (${a.mimeType}, 1024.0 KB)`);
    // Over the old 4 KiB the approval service refused, and within the cap both sides now hold to.
    expect(bytes(text)).toBeGreaterThan(4096);
    expect(bytes(text)).toBeLessThanOrEqual(MAX_PROMPT_BYTES);
    expect(bytes(text)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
  });

  it("the largest draft send_email sends as it stands fits the same caps, shown whole", () => {
    const target = largestDraftTarget(limits);
    const text = buildPrompt(target.mount, sendPrompt(target));
    expect(text).not.toContain("[cut:");
    expect(text.split("\n").filter((l) => l.startsWith("  To: ") || l.startsWith("  Bcc: "))).toHaveLength(50);
    expect(bytes(text)).toBeGreaterThan(4096);
    expect(bytes(text)).toBeLessThanOrEqual(MAX_PROMPT_BYTES);
  });

  it("the create body the kit sends for the largest prompt passes the approval service's validation and fits its body cap", async () => {
    const target = largestComposeTarget(limits);
    const message = buildPrompt(target.mount, sendPrompt(target));
    const body = await createBodyFor(message);
    expect(bytes(body)).toBeLessThanOrEqual(MAX_CREATE_BODY_BYTES);
    const parsed = parseCreate(JSON.parse(body), Date.now());
    expect(parsed.ok && parsed.prompt.message).toBe(message);
  });

  it("any JSON encoding of a message at the cap fits the approval service's body cap: every character escaped", () => {
    const message = "a".repeat(MAX_PROMPT_BYTES);
    const escaped = `"${[...message].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"`;
    expect(JSON.parse(escaped)).toBe(message);
    const body = `{"mode":"form","message":${escaped},"requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]},"_meta":{"com.pulsemcp/request-id":"${crypto.randomUUID()}","com.pulsemcp/expires-at":"${new Date(Date.now() + 60_000).toISOString()}"}}`;
    expect(bytes(body)).toBeLessThanOrEqual(MAX_CREATE_BODY_BYTES);
    expect(parseCreate(JSON.parse(body), Date.now()).ok).toBe(true);
  });

  it("a tool limit raised without raising the cap is caught: ten times the attachments no longer fit", () => {
    const target = largestComposeTarget({ ...limits, attachments: limits.attachments * 10 });
    let refusal: unknown;
    try {
      buildPrompt(target.mount, sendPrompt(target));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(PromptRefusal);
    expect((refusal as PromptRefusal).code).toBe("too_large");
  });
});
