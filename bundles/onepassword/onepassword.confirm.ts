// How a 1Password tool asks: the kit's preflight, prompt, askPerson and send gate, in the order runGuarded uses
// them, with what this bundle needs on top. A declined reveal still answers, every sensitive value withheld
// (docs/rules.md R-OP-2); a waiver on the roster (skipConfirmations) waives nothing here, since a reveal and a share
// always ask (R-OP-4); a create goes unasked only under the mount's own provisioning posture (R-OP-5); and the
// upstream variables that would have decided instead are ignored, with a warning naming each (R-OP-3). A create's
// card carries the kit's edit form, and the person's answer is read and vetted by the kit's edit functions (R-OP-12).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { slugNamespace } from "../../contract/slug";
import { audit, auditTrail, decisionTrail } from "../kit/audit";
import { askPerson, auditRefusal, type Preflight, preflight, type Vetted } from "../kit/confirm";
import { type Change, changedNames, type Editable, type EditPlan, editedArgs, editForm, editsLine } from "../kit/edits";
import { type FingerprintInput, fingerprint } from "../kit/fingerprint";
import { type GatedWrite, GateRefusal, gatedWrite } from "../kit/gate";
import { elicitationPosture } from "../kit/posture";
import { cleanLine, PromptRefusal } from "../kit/prompt";
import { currentScope } from "../kit/scope";
import { type OnePasswordClient, OnePasswordError, SHARED_MOUNT } from "./onepassword.client";
import { buildOnePasswordPrompt, type OnePasswordPromptSpec } from "./onepassword.prompt";

/** The variable a provisioning mount sets, under its own namespace, to "false". */
export const PROVISIONING_VARIABLE = "OP_ELICITATION_WRITE";
/** The upstream tool's posture switches: as bare variables they would decide for every mount, so none is read. */
export const IGNORED_VARIABLES = ["OP_ELICITATION_READ", "OP_ELICITATION_WRITE", "DANGEROUSLY_SKIP_ELICITATIONS", "OP_WHITELISTED_ITEMS"] as const;

export const METADATA_HINT = "onepassword_get_item_metadata answers without asking anyone, for a caller that only needs to know that an item exists and what it holds";
export const WAIVER_REASON =
  'this slug waives confirmations (skipConfirmations), but a 1Password reveal, share or create always asks a person: no roster setting waives it (a create goes unasked only where the mount\'s own OP_ELICITATION_WRITE is "false")';

/**
 * Whether the mount's creates are answered accept inside the bundle: its own `<MOUNT>__OP_ELICITATION_WRITE` is
 * exactly "false". Any other value asks, a bare OP_ELICITATION_WRITE is never read, and the shared mount always
 * asks: its slugs share one account, so none of them may turn asking off for the others.
 */
export function provisioningPosture(mount: string, env: Record<string, unknown>): boolean {
  return mount !== SHARED_MOUNT && env[`${slugNamespace(mount)}${PROVISIONING_VARIABLE}`] === "false";
}

/** The variables set on this Worker that the bundle ignores, for this mount. */
export function ignoredVariables(mount: string, env: Record<string, unknown>): string[] {
  const found: string[] = IGNORED_VARIABLES.filter((name) => env[name] !== undefined);
  const shared = `${slugNamespace(SHARED_MOUNT)}${PROVISIONING_VARIABLE}`;
  if (mount === SHARED_MOUNT && env[shared] !== undefined) found.push(shared);
  return found;
}

/** One warning line per ignored variable, naming it and never its value. Returns the names. */
export function warnIgnoredVariables(mount: string, env: Record<string, unknown>, log: (line: string) => void = (line) => console.warn(line)): string[] {
  const found = ignoredVariables(mount, env);
  for (const variable of found) {
    const effect = IGNORED_VARIABLES.includes(variable as (typeof IGNORED_VARIABLES)[number])
      ? 'ignored: strad decides whether a 1Password tool asks; a reveal and a share always ask, and a create asks unless the mount\'s own <MOUNT>__OP_ELICITATION_WRITE is "false"'
      : "ignored: the shared /onepassword mount always asks before a create; the provisioning posture is for a slug on its own path";
    log(JSON.stringify({ event: "onepassword_variable_ignored", mount, variable, effect }));
  }
  return found;
}

export interface Words {
  /** What the answer says did not happen: "Nothing was revealed." */
  nothing: string;
}

export interface ConfirmedTool<A, T> {
  words: Words;
  /** Creates only: answered unasked under the mount's provisioning posture. */
  provisioning: boolean;
  /** Why this client cannot serve the tool at all (a share on Connect), checked before anything is read. */
  unsupported?: (client: OnePasswordClient) => string | undefined;
  /** Reads what the call would act on; throws OnePasswordError (or InputError) with a reason to show. */
  resolve: (args: A, client: OnePasswordClient) => Promise<T>;
  /** Whether this target needs a person: a reveal asks only when a sensitive value would be shown. */
  asks: (target: T) => boolean;
  fingerprint: (target: T) => FingerprintInput;
  /** What the person is shown: the caller's values, and apart from them what was read from 1Password (R-OP-10). */
  prompt: (target: T) => OnePasswordPromptSpec;
  /** Carries the call out: `asked` when a person said yes (a write then needs that yes at the gate). */
  act: (target: T, run: { client: OnePasswordClient; write: GatedWrite; asked: boolean }) => Promise<CallToolResult>;
  /** The answer when no yes came: a reveal answers the items with every sensitive value withheld. */
  notDone: (target: T, why: string) => CallToolResult;
  /** What a person may correct on the card (bundles/kit/edits.ts): never a secret value (docs/rules.md R-OP-12). */
  editable?: Editable;
}

export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

/** A tool's answer as JSON text. */
export function json(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 1) }] };
}

export function text(message: string, isError = false): CallToolResult {
  return { content: [{ type: "text", text: message }], ...(isError ? { isError: true } : {}) };
}

/** A refusal before anything is read; one that stems from asking points at the tool that never asks. */
export function refusal(reason: string, hint = true): CallToolResult {
  return text(`Refused: ${reason}. Nothing was read, revealed or written${hint ? `; ${METADATA_HINT}` : ""}.`, true);
}

const NOT_DONE: Record<"decline" | "cancel" | "expired", string> = {
  decline: "the person declined",
  cancel: "the approval was cancelled",
  expired: "the approval expired before anyone answered",
};

/** A failure's reason as shown: ours word for word, anything else by its kind only. */
export function reasonOf(error: unknown, what: string): string {
  if (error instanceof OnePasswordError || error instanceof InputError || error instanceof GateRefusal) return error.message;
  return `${what} (${error instanceof Error ? cleanLine(error.name, 60) : "error"})`;
}

type Ready = { ok: true; pre: Extract<Preflight, { ok: true }> | undefined } | { ok: false; answer: CallToolResult };

/** Whether the call may go on, before anything is read: the provisioning posture needs no channel; everything else a person's. */
function ready(unasked: boolean): Ready {
  const scope = currentScope();
  // A container-wide switch refuses every guarded call, the provisioning posture's included (docs/rules.md R-CHAN-10).
  if (unasked && elicitationPosture(scope.env).ok) return { ok: true, pre: undefined };
  const pre = preflight();
  if (!pre.ok) {
    auditRefusal(pre);
    return { ok: false, answer: refusal(pre.reason) };
  }
  if (pre.mode === "skip") {
    audit("refused", { reason: "no_channel" }, scope);
    return { ok: false, answer: refusal(WAIVER_REASON) };
  }
  return { ok: true, pre };
}

/** The call the person's edit makes: its target as resolved from the edited arguments, its fingerprint, what changed. */
interface Edited<T> {
  /** The edited arguments, which editedCall resolves again before it acts. */
  args: unknown;
  target: T;
  fingerprint: string;
  changes: readonly Change[];
}

/**
 * Reads an accept's content as the kit's guard does (docs/rules.md R-EDIT-3, R-EDIT-4): the kit reads the changes and
 * holds the edited arguments to the tool's schema; then the items the card showed must still be what they were, the
 * edited items resolve under the tool's own rules and their prompt could be shown whole; then they are fingerprinted,
 * and the trail records both fingerprints and the changed names. `undefined` edited: the call as proposed.
 */
async function vetEdit<A, T>(
  tool: ConfirmedTool<A, T>,
  plan: EditPlan,
  form: NonNullable<ReturnType<typeof editForm>>,
  args: A,
  content: Record<string, unknown>,
  at: { client: OnePasswordClient; slug: string; approvedFingerprint: string },
): Promise<{ vetted: Vetted; edited?: Edited<T> }> {
  const read = await editedArgs(plan, form, args, content);
  if (!read.ok) return { vetted: read };
  if (read.changes.length === 0) return { vetted: { ok: true } };
  let target: T;
  try {
    target = await tool.resolve(read.args, at.client);
    buildOnePasswordPrompt(at.slug, tool.prompt(target));
    // Read after the edited items, so a change landing between the two reads is seen (R-EDIT-4, as the kit's guard).
    const live = await tool.resolve(args, at.client);
    if ((await fingerprint(tool.fingerprint(live))) !== at.approvedFingerprint) {
      return { vetted: { ok: false, code: "target_changed", why: "what the card showed changed in 1Password after it was shown" } };
    }
  } catch (error) {
    return { vetted: { ok: false, code: "edit_invalid", why: `the edited call breaks the tool's own rules: ${cleanLine(reasonOf(error, "it could not be prepared"), 400)}` } };
  }
  const editedFingerprint = await fingerprint(tool.fingerprint(target));
  const trail = auditTrail();
  if (trail !== undefined) trail.fingerprint = editedFingerprint;
  const decision = decisionTrail();
  if (decision !== undefined) {
    decision.proposed = at.approvedFingerprint;
    decision.edited = changedNames(read.changes);
  }
  return { vetted: { ok: true }, edited: { args: read.args, target, fingerprint: editedFingerprint, changes: read.changes } };
}

/** `plan`: the tool's edit plan (planEdits on its input schema); without one, an accept runs the call as proposed. */
export async function runConfirmed<A, T>(tool: ConfirmedTool<A, T>, args: A, clientFor: () => OnePasswordClient, plan?: EditPlan): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) {
    audit("refused", { reason: "not_a_tool_call" }, scope);
    return refusal("this request is not a tool call");
  }
  const unasked = tool.provisioning && provisioningPosture(scope.mount, scope.env);
  const gate = ready(unasked);
  if (!gate.ok) return gate.answer;

  let client: OnePasswordClient;
  try {
    client = clientFor();
  } catch (error) {
    return refusal(reasonOf(error, "the mount's 1Password client could not be made"), false);
  }
  const unsupported = tool.unsupported?.(client);
  if (unsupported !== undefined) return text(`Not done: ${unsupported}. ${tool.words.nothing}`, true);

  let target: T;
  try {
    target = await tool.resolve(args, client);
  } catch (error) {
    return text(`Not done: ${reasonOf(error, "1Password could not be read")}. ${tool.words.nothing}`, true);
  }
  const approvedFingerprint = await fingerprint(tool.fingerprint(target));
  const trail = auditTrail(scope);
  if (trail !== undefined) trail.fingerprint = approvedFingerprint;

  if (gate.pre === undefined || !tool.asks(target)) {
    // Nothing to ask about (a reveal with no sensitive value), or the provisioning posture: the gate still
    // checks every write, bound to this target, and claims the call when the gateway registered one.
    call.approval = { fingerprint: approvedFingerprint, approved: false };
    return act(tool, target, client, false);
  }

  let message: string;
  try {
    message = buildOnePasswordPrompt(gate.pre.slug, tool.prompt(target));
  } catch (error) {
    if (error instanceof PromptRefusal) {
      audit("refused", { reason: error.code === "too_large" ? "prompt_too_large" : "prompt_value_too_long" }, scope);
      return text(`Not done: ${error.message}, so no one was asked. ${tool.words.nothing}`, true);
    }
    throw error;
  }
  // The editable fields ride on the question as the kit's form beside the confirm box (docs/rules.md R-EDIT-2, R-OP-12).
  const form = editForm(plan, args);
  let edited: Edited<T> | undefined;
  const at = { client, slug: gate.pre.slug, approvedFingerprint };
  const vet =
    form === undefined || plan === undefined
      ? undefined
      : async (content: Record<string, unknown>): Promise<Vetted> => {
          const read = await vetEdit(tool, plan, form, args, content, at);
          edited = read.edited;
          return read.vetted;
        };
  const decision = await askPerson({ message, binds: approvedFingerprint, ...(form === undefined ? {} : { requestedSchema: form.schema }), ...(vet === undefined ? {} : { vet }) });
  switch (decision.kind) {
    case "refused":
      if (decision.edit === true) return text(`Not done: the person's answer was refused before anything ran: ${decision.reason}. ${tool.words.nothing}`, true);
      return refusal(decision.reason);
    case "failed":
      // The approval service's failure names its status only; nothing is revealed or written.
      return text(`Not done: ${decision.reason}. ${tool.words.nothing}`, true);
    case "not-approved":
      return tool.notDone(target, `${NOT_DONE[decision.answer]}${decision.why ? ` (${cleanLine(decision.why)})` : ""}`);
    case "approved":
      break;
  }
  if (edited !== undefined) return editedCall(tool, args, approvedFingerprint, edited, client);

  // The approval covers the items the person saw; what is acted on is the items as they stand now.
  let live: T;
  try {
    live = await tool.resolve(args, client);
  } catch (error) {
    return text(`Not done: ${reasonOf(error, "1Password could not be read")}. ${tool.words.nothing}`, true);
  }
  if ((await fingerprint(tool.fingerprint(live))) !== approvedFingerprint) {
    audit("refused", { reason: "target_changed" }, scope);
    return tool.notDone(target, "the items changed after they were approved, so the approval does not cover them");
  }
  if (scope.signal.aborted) {
    audit("cancelled", { reason: "caller_left" }, scope);
    return tool.notDone(target, `${NOT_DONE.cancel} (the call was dropped)`);
  }
  call.approval = { fingerprint: approvedFingerprint, approved: true };
  return act(tool, live, client, true);
}

/**
 * After a yes with edits: exactly the edited items, once; the gate binds their fingerprint, so the proposed ones cannot
 * be written. As an unedited yes acts on the items as they stand, the edited items are read again and held to what
 * they were when the answer was read, and the proposed ones to what the card showed.
 */
async function editedCall<A, T>(tool: ConfirmedTool<A, T>, args: A, approvedFingerprint: string, edited: Edited<T>, client: OnePasswordClient): Promise<CallToolResult> {
  const scope = currentScope();
  const call = scope.call;
  if (call === undefined) return refusal("this request is not a tool call");
  let live: T;
  let shown: T;
  try {
    live = await tool.resolve(edited.args as A, client);
    shown = await tool.resolve(args, client);
  } catch (error) {
    return text(`Not done: ${reasonOf(error, "1Password could not be read")}. ${tool.words.nothing}`, true);
  }
  if ((await fingerprint(tool.fingerprint(live))) !== edited.fingerprint || (await fingerprint(tool.fingerprint(shown))) !== approvedFingerprint) {
    audit("refused", { reason: "target_changed" }, scope);
    return tool.notDone(edited.target, "the items changed after the person's answer was read, so the approval does not cover them");
  }
  if (scope.signal.aborted) {
    audit("cancelled", { reason: "caller_left" }, scope);
    return tool.notDone(edited.target, `${NOT_DONE.cancel} (the call was dropped)`);
  }
  call.approval = { fingerprint: edited.fingerprint, approved: true };
  const done = await act(tool, live, client, true);
  // Whatever happened, the agent hears which call it was: the person's, field by field, no secret value (R-EDIT-5).
  return { ...done, content: [...(done.content ?? []), { type: "text", text: editsLine(edited.changes) }] };
}

async function act<A, T>(tool: ConfirmedTool<A, T>, target: T, client: OnePasswordClient, asked: boolean): Promise<CallToolResult> {
  try {
    return await tool.act(target, { client, write: gatedWrite, asked });
  } catch (error) {
    return text(`Not done: ${reasonOf(error, "the 1Password request could not be completed")}.`, true);
  }
}
