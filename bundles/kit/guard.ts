// "Asks a person" as part of a tool's declaration: a bundle says when a tool asks (always, when a predicate
// on the live target holds, never), what the prompt says and how the target is fingerprinted; the kit does
// the rest. Every tool that asks is listed in its bundle's registry of confirmed tools, and registering one
// that is not (or a never-asking tool that is) throws, so the list cannot drift from the code.
import type { CallToolResult, McpServer, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server";
import { audit, auditTrail, decisionTrail } from "./audit";
import { askPerson, auditRefusal, preflight, type Vetted, waivedLine } from "./confirm";
import { applyEdits, type Change, changedNames, checkSchema, type Editable, type EditForm, type EditPlan, editForm, editsLine, planEdits, readEdits } from "./edits";
import { type FingerprintInput, fingerprint } from "./fingerprint";
import { GateRefusal, gatedWrite } from "./gate";
import { buildPrompt, cleanLine, PromptRefusal, type PromptSpec } from "./prompt";
import { currentScope } from "./scope";
import { actedOnTokenLine, TOKEN_ARGUMENT, type TokenRoute, tokenRoute, tokenStep } from "./token";

export type GuardRule<T> = { kind: "always" } | { kind: "when"; applies: (target: T) => boolean | Promise<boolean> } | { kind: "never" };
export type GuardKind = GuardRule<unknown>["kind"];

export const always = { kind: "always" } as const;
export const never = { kind: "never" } as const;
/** Asks only when the predicate holds for the target as it stands now, e.g. "the pad is not empty". */
export function when<T>(applies: (target: T) => boolean | Promise<boolean>): GuardRule<T> {
  return { kind: "when", applies };
}

export interface Guard<A, T> {
  rule: GuardRule<T>;
  /** Reads the live target. Runs only once the call may ask, and again right before acting. */
  resolve: (args: A) => T | Promise<T>;
  /** What the approval is bound to: the operation and the exact target. */
  fingerprint: (target: T) => FingerprintInput;
  prompt: (target: T) => PromptSpec;
  /** The write itself; it reaches the upstream's write endpoints only through `write` (the send gate). */
  act: (target: T, write: typeof gatedWrite) => Promise<CallToolResult>;
  /**
   * "token": with nobody to ask, on a slug that allows it, the tool falls back to the two-call token
   * (bundles/kit/token.ts; its input schema carries `two_call_token`). Absent: it refuses without a channel.
   */
  fallback?: "token";
  /** The target in a few words (counts and ids, never upstream text), for an answer saying it changed. */
  describe?: (target: T) => string;
  /**
   * The arguments a person may correct on the card (docs/rules.md R-EDIT-1): "narrow" lists may only lose entries,
   * "free" text may change within the tool's schema. The edited call is checked as a model's call is, and runs instead.
   */
  editable?: Editable;
}

/** All four hints are required, so no tool is left to a client's defaults (docs/rules.md R-TOOL-1). */
export type DeclaredAnnotations = ToolAnnotations & { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };

export interface GuardedToolConfig<S extends StandardSchemaWithJSON> {
  title?: string;
  description: string;
  inputSchema: S;
  annotations: DeclaredAnnotations;
}

const declarations = new WeakMap<McpServer, Map<string, GuardKind>>();

export function guardedTool<S extends StandardSchemaWithJSON, T>(
  server: McpServer,
  registry: ReadonlySet<string>,
  name: string,
  config: GuardedToolConfig<S>,
  guard: Guard<StandardSchemaWithJSON.InferOutput<S>, T>,
): void {
  declareGuard(server, registry, name, guard.rule.kind);
  checkFallback(name, config, guard);
  const plan = editPlanFor(name, config, guard);
  server.registerTool(name, config, ((args: StandardSchemaWithJSON.InferOutput<S>) => runGuarded(guard, args, plan)) as never);
}

/** A guard's edit declaration, checked against its tool's input schema at registration (bundles/kit/edits.ts). */
export function editPlanFor(name: string, config: { inputSchema: StandardSchemaWithJSON }, guard: Pick<Guard<never, never>, "rule" | "editable">): EditPlan | undefined {
  if (guard.editable !== undefined && guard.rule.kind === "never") throw new Error(`tool "${name}" never asks, so nobody can edit its calls`);
  return planEdits(name, config.inputSchema, guard.editable);
}

/** A guard that falls back to the two-call token asks at times, and its tool's schema takes the token. */
export function checkFallback(name: string, config: { inputSchema: unknown }, guard: Pick<Guard<never, never>, "rule" | "fallback">): void {
  if (guard.fallback !== "token") return;
  if (guard.rule.kind === "never") throw new Error(`tool "${name}" never asks, so it has no use for the two-call token`);
  const shape = (config.inputSchema as { shape?: Record<string, unknown> } | undefined)?.shape;
  if (shape !== undefined && !(TOKEN_ARGUMENT in shape)) throw new Error(`tool "${name}" falls back to the two-call token, but its input schema has no ${TOKEN_ARGUMENT}`);
}

/**
 * Records how a tool asks, under the same registry checks as guardedTool, for a bundle that registers the tool
 * itself and runs its own flow on the kit's preflight, askPerson and gate (bundles/onepassword: a declined
 * reveal still answers, with every sensitive value withheld).
 */
export function declareGuard(server: McpServer, registry: ReadonlySet<string>, name: string, kind: GuardKind): void {
  if (kind !== "never" && !registry.has(name)) throw new Error(`tool "${name}" asks a person but is missing from its bundle's registry of confirmed tools`);
  if (kind === "never" && registry.has(name)) throw new Error(`tool "${name}" never asks but is listed in its bundle's registry of confirmed tools`);
  let declared = declarations.get(server);
  if (declared === undefined) {
    declared = new Map();
    declarations.set(server, declared);
  }
  declared.set(name, kind);
}

/** The guard each tool registered through the kit declared, for the registry test. */
export function guardDeclarations(server: McpServer): ReadonlyMap<string, GuardKind> {
  return declarations.get(server) ?? new Map();
}

function text(message: string, isError: boolean): CallToolResult {
  return { content: [{ type: "text", text: message }], isError };
}

export function refusal(reason: string): CallToolResult {
  return text(`Refused: ${reason}. Nothing was read or written.`, true);
}

const NOT_DONE: Record<"decline" | "cancel" | "expired", string> = {
  decline: "the person declined",
  cancel: "the approval was cancelled",
  expired: "the approval expired before anyone answered",
};

/** `plan`: the tool's edit plan (editPlanFor); without one, an accept runs the call as proposed and its content is not read. */
export async function runGuarded<A, T>(guard: Guard<A, T>, args: A, plan?: EditPlan): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) {
    audit("refused", { reason: "not_a_tool_call" }, scope);
    return refusal("this request is not a tool call");
  }

  if (guard.rule.kind === "never") {
    const target = await guard.resolve(args);
    call.approval = { fingerprint: await fingerprint(guard.fingerprint(target)), approved: false };
    return act(guard, target);
  }

  // Refuse before anything is read or written: no one to ask means no reason to touch the upstream, unless the
  // tool opts into the two-call token and the slug allows it (docs/rules.md R-PAD-7).
  const route: TokenRoute | undefined = guard.fallback === "token" ? tokenRoute() : undefined;
  if (route?.kind === "refuse") {
    audit("refused", { reason: route.code }, scope);
    return refusal(route.reason);
  }
  const pre = preflight();
  if (route === undefined && !pre.ok) {
    auditRefusal(pre);
    return refusal(pre.reason);
  }
  const slug = route !== undefined ? route.slug : pre.ok ? pre.slug : "";

  const target = await guard.resolve(args);
  const approvedFingerprint = await fingerprint(guard.fingerprint(target));
  const trail = auditTrail(scope);
  if (trail !== undefined) trail.fingerprint = approvedFingerprint;
  if (guard.rule.kind === "when" && !(await guard.rule.applies(target))) {
    call.approval = { fingerprint: approvedFingerprint, approved: false };
    return act(guard, target);
  }

  // A prompt that cannot show what binds the approval whole is never sent (docs/rules.md R-PROMPT-9).
  let message: string;
  try {
    message = buildPrompt(slug, guard.prompt(target));
  } catch (error) {
    if (error instanceof PromptRefusal) {
      audit("refused", { reason: error.code === "too_large" ? "prompt_too_large" : "prompt_value_too_long" }, scope);
      return text(`Not done: ${error.message}, so no one was asked. Nothing was written.`, true);
    }
    throw error;
  }
  if (route !== undefined) {
    const step = await tokenStep({ route, args, target: approvedFingerprint, message, describe: guard.describe?.(target) });
    if (step.kind !== "redeemed") return step.answer;
    if (scope.signal.aborted) {
      audit("cancelled", { reason: "caller_left" }, scope);
      return text(`Not done: ${NOT_DONE.cancel} (the call was dropped). Nothing was written.`, true);
    }
    call.approval = { fingerprint: approvedFingerprint, approved: true };
    const done = await act(guard, target);
    if (done.isError === true) return done;
    return { ...done, content: [...(done.content ?? []), { type: "text", text: actedOnTokenLine(route.slug) }] };
  }
  // The editable fields ride on the question as a form beside the confirm box (docs/rules.md R-EDIT-2).
  const form = editForm(plan, args);
  let edited: Edited<A, T> | undefined;
  const vet =
    form === undefined || plan === undefined
      ? undefined
      : async (content: Record<string, unknown>): Promise<Vetted> => {
          const read = await readAnswer(guard, args, plan, form, content, slug, approvedFingerprint);
          if (!read.ok) return read;
          edited = read.edited;
          return { ok: true };
        };
  const decision = await askPerson({ message, binds: approvedFingerprint, ...(form === undefined ? {} : { requestedSchema: form.schema }), ...(vet === undefined ? {} : { vet }) });
  switch (decision.kind) {
    case "refused":
      if (decision.edit === true) return text(`Not done: the person's answer was refused before anything ran: ${decision.reason}. Nothing was written.`, true);
      return refusal(decision.reason);
    case "failed":
      return text(`Not done: ${decision.reason}. Nothing was written.`, true);
    case "not-approved":
      return text(`Not done: ${NOT_DONE[decision.answer]}${decision.why ? ` (${cleanLine(decision.why)})` : ""}. Nothing was written.`, true);
    case "approved":
      break;
  }
  if (edited !== undefined) return editedCall(guard, args, approvedFingerprint, edited);
  if (decision.asked) return approvedCall(guard, args, target, approvedFingerprint);
  // The waiver answered for nobody: whatever happens next, the answer says so (docs/rules.md R-CHAN-14).
  const done = await approvedCall(guard, args, target, approvedFingerprint);
  return { ...done, content: [...(done.content ?? []), { type: "text", text: waivedLine(cleanLine(slug, 100)) }] };
}

/** After a yes (or the waiver): act on the live target, if it is still the one approved. */
async function approvedCall<A, T>(guard: Guard<A, T>, args: A, target: T, approvedFingerprint: string): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) return refusal("this request is not a tool call");
  // The approval covers the target the person saw; what is executed is the target as it stands now.
  const live = await guard.resolve(args);
  if ((await fingerprint(guard.fingerprint(live))) !== approvedFingerprint) {
    audit("refused", { reason: "target_changed" }, scope);
    const now = guard.describe === undefined ? "" : ` (approved: ${guard.describe(target)}; now: ${guard.describe(live)})`;
    return text(`Not done: the target changed after it was approved${now}, so the approval does not cover it. Nothing was written.`, true);
  }
  if (scope.signal.aborted) {
    audit("cancelled", { reason: "caller_left" }, scope);
    return text(`Not done: ${NOT_DONE.cancel} (the call was dropped). Nothing was written.`, true);
  }
  call.approval = { fingerprint: approvedFingerprint, approved: true };
  return act(guard, live);
}

/** The call the person's edit makes: its arguments, its target as resolved after the answer, its fingerprint, what changed. */
interface Edited<A, T> {
  args: A;
  target: T;
  fingerprint: string;
  changes: readonly Change[];
}

type AnswerRead<A, T> = { ok: true; edited?: Edited<A, T> } | Extract<Vetted, { ok: false }>;

/**
 * Reads an accept's content (docs/rules.md R-EDIT-3, R-EDIT-4). No change: the call as proposed. A change: the
 * edited arguments pass the tool's own schema, the target the person saw is still the one approved, the edited
 * target resolves under the tool's own rules (display names, caps, allowlists) and its prompt could be shown whole;
 * then it is fingerprinted, and the trail records both fingerprints and the changed names. Anything else: refused.
 */
async function readAnswer<A, T>(guard: Guard<A, T>, args: A, plan: EditPlan, form: EditForm, content: Record<string, unknown>, slug: string, approvedFingerprint: string): Promise<AnswerRead<A, T>> {
  const read = readEdits(form, content);
  if (!read.ok) return read;
  if (read.changes.length === 0) return { ok: true };
  const checked = await checkSchema(plan, applyEdits(args, read.changes));
  if (!checked.ok) return { ok: false, code: "edit_invalid", why: checked.why };
  const editedArgs = checked.value as A;
  let target: T;
  try {
    target = await guard.resolve(editedArgs);
    buildPrompt(slug, guard.prompt(target));
    // What the card showed beside the form is still what it was, read after the edited target: a change landing
    // between the two reads is seen here, so the edited target was read from the world the person saw (R-EDIT-4).
    const live = await guard.resolve(args);
    if ((await fingerprint(guard.fingerprint(live))) !== approvedFingerprint) {
      return { ok: false, code: "target_changed", why: `the target changed after the card was shown${guard.describe === undefined ? "" : ` (now: ${guard.describe(live)})`}` };
    }
  } catch (error) {
    const why = error instanceof Error ? cleanLine(error.message.replace(/^Not done: /, "").replace(/\.?\s*Nothing was \w+\.$/, ""), 400) : "it could not be prepared";
    return { ok: false, code: "edit_invalid", why: `the edited call breaks the tool's own rules: ${why}` };
  }
  const editedFingerprint = await fingerprint(guard.fingerprint(target));
  const trail = auditTrail();
  if (trail !== undefined) trail.fingerprint = editedFingerprint;
  const decision = decisionTrail();
  if (decision !== undefined) {
    decision.proposed = approvedFingerprint;
    decision.edited = changedNames(read.changes);
  }
  return { ok: true, edited: { args: editedArgs, target, fingerprint: editedFingerprint, changes: read.changes } };
}

/**
 * After a yes with edits: exactly the edited call, once; the gate binds its fingerprint, so the proposed call cannot
 * run (R-EDIT-4). As an unedited yes acts on the target as it stands (approvedCall), the edited target is read again
 * and held to the fingerprint it had when the answer was read, and the proposed target to the one the card showed:
 * a change since the answer was read acts on nothing.
 */
async function editedCall<A, T>(guard: Guard<A, T>, args: A, approvedFingerprint: string, edited: Edited<A, T>): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) return refusal("this request is not a tool call");
  const live = await guard.resolve(edited.args);
  const shown = await guard.resolve(args);
  if ((await fingerprint(guard.fingerprint(live))) !== edited.fingerprint || (await fingerprint(guard.fingerprint(shown))) !== approvedFingerprint) {
    audit("refused", { reason: "target_changed" }, scope);
    const now = guard.describe === undefined ? "" : ` (now: ${guard.describe(shown)})`;
    return text(`Not done: the target changed after the person's answer was read${now}, so the approval does not cover it. Nothing was written.`, true);
  }
  if (scope.signal.aborted) {
    audit("cancelled", { reason: "caller_left" }, scope);
    return text(`Not done: ${NOT_DONE.cancel} (the call was dropped). Nothing was written.`, true);
  }
  call.approval = { fingerprint: edited.fingerprint, approved: true };
  const done = await act(guard, live);
  // Whatever happened, the agent hears which call it was: the person's, field by field (R-EDIT-5).
  return { ...done, content: [...(done.content ?? []), { type: "text", text: editsLine(edited.changes) }] };
}

async function act<A, T>(guard: Guard<A, T>, target: T): Promise<CallToolResult> {
  try {
    return await guard.act(target, gatedWrite);
  } catch (error) {
    if (error instanceof GateRefusal) return text(`Not done: ${error.message}.`, true);
    // A write aborted with the call, or a tool's own failure: name the kind, never an upstream body.
    const kind = error instanceof Error ? cleanLine(error.name, 60) : "error";
    return text(`Not done: the write could not be completed (${kind}).`, true);
  }
}
