// What the gateway passes between a 2026-07-28 caller and a mount for a question the mount asks (SEP-2322 multi
// round-trip): the caller's answers and the mount's state on the retry, and the elicitation capability the caller
// declared, so the mount may ask (docs/rules.md R-FWD-8, R-FWD-9). The one place the two revisions differ here.
import { CLIENT_CAPABILITIES_META_KEY, type ElicitationModes, elicitationModes, isPlainObject } from "../contract/tool-call";

/** What a 2026-07-28 retry carries to the mount: the caller's answers and the state the mount gave it. */
export interface RetryParams {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/**
 * The retry members of a tools/call's params, as they came: inputResponses when it is an object (the SDK hands a
 * handler nothing of any other value), requestState when it is a string (the SDK refuses any other). Undefined when
 * the call carries neither. Never anything of the params' `_meta` (R-FWD-2).
 */
export function retryParams(params: Record<string, unknown>): RetryParams | undefined {
  const { inputResponses, requestState } = params;
  const out: RetryParams = {};
  if (isPlainObject(inputResponses)) out.inputResponses = inputResponses;
  if (typeof requestState === "string") out.requestState = requestState;
  return out.inputResponses === undefined && out.requestState === undefined ? undefined : out;
}

/** The gateway's capabilities on a hop that may ask nothing: none. Built once and only ever serialised. */
export const NO_CAPABILITIES: Readonly<Record<string, unknown>> = Object.freeze({});
const FORM = Object.freeze({ elicitation: Object.freeze({ form: Object.freeze({}) }) });
const URL_ONLY = Object.freeze({ elicitation: Object.freeze({ url: Object.freeze({}) }) });
const BOTH = Object.freeze({ elicitation: Object.freeze({ form: Object.freeze({}), url: Object.freeze({}) }) });

/**
 * The capabilities the gateway declares to the mount for a 2026-07-28 call: the elicitation modes its caller declared
 * in the request's envelope, and nothing else (a question can be relayed only to a client that can answer it; the
 * gateway relays no sampling or roots request). Read as the SDK reads a declaration: a bare `elicitation: {}` is form.
 */
export function hopCapabilities(meta: unknown): Readonly<Record<string, unknown>> {
  return modesCapabilities(elicitationModes(isPlainObject(meta) ? meta[CLIENT_CAPABILITIES_META_KEY] : undefined));
}

/** The capabilities the gateway declares to the mount for a caller's elicitation modes, one frozen object per set. */
export function modesCapabilities(modes: ElicitationModes): Readonly<Record<string, unknown>> {
  return modes.form && modes.url ? BOTH : modes.form ? FORM : modes.url ? URL_ONLY : NO_CAPABILITIES;
}

/** Why a 2025-era caller cannot be handed a mount's question: the words of RpcCode.QuestionUnrelayable. */
export function describeUnrelayable(slug: string): string {
  return `server "${slug}" asked the caller a question (input_required), which only protocol revision 2026-07-28 can carry; this call came over a 2025-era revision, so it was not answered: call it again over 2026-07-28`;
}
