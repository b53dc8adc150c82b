// The 1Password prompts' text: the kit's prompt (bundles/kit/prompt.ts), with what was read from 1Password just now
// (vault names, item titles, field labels) under a heading of its own. Those are written by whoever can edit the
// vault, not by the caller and not by this server, so they are never shown under the kit's "supplied by the caller"
// (docs/rules.md R-OP-10). Every value, the caller's and 1Password's alike, is rendered by the kit, line for line.
import { buildPrompt, CALLER_VALUES_HEADING, MAX_PROMPT_BYTES, PromptRefusal, type PromptSpec, type PromptValue } from "../kit/prompt";

export const READ_VALUES_HEADING = "Values below were read from 1Password just now, not supplied by the caller:";

export interface OnePasswordPromptSpec extends PromptSpec {
  /** What was read from 1Password: listed after the caller's values, under READ_VALUES_HEADING. */
  read: readonly PromptValue[];
}

/** The prompt's text. Throws PromptRefusal as the kit's builder does: a bound value too long, or the whole over the cap. */
export function buildOnePasswordPrompt(slug: string, spec: OnePasswordPromptSpec): string {
  const text = buildPrompt(slug, { heading: spec.heading, consequence: spec.consequence, values: [...spec.values, ...spec.read] });
  if (spec.read.length === 0) return text;
  const lines = text.split("\n");
  const heading = lines.indexOf(CALLER_VALUES_HEADING);
  const firstRead = heading + 1 + spec.values.length;
  // The kit writes one line per value under its heading (docs/rules.md R-PROMPT-3); anything else is a prompt this
  // module cannot split honestly, so it fails the call rather than label a line wrongly.
  if (heading < 0 || lines.length !== firstRead + spec.read.length) throw new Error("the kit's prompt no longer writes one line per value under its heading");
  const caller = spec.values.length === 0 ? lines.slice(0, heading) : [...lines.slice(0, firstRead), ""];
  const message = [...caller, READ_VALUES_HEADING, ...lines.slice(firstRead)].join("\n");
  const bytes = new TextEncoder().encode(message).byteLength;
  if (bytes > MAX_PROMPT_BYTES) {
    throw new PromptRefusal(`the prompt would be ${bytes} bytes, more than the ${MAX_PROMPT_BYTES} the approval service takes, and it is never shown cut`, "too_large");
  }
  return message;
}
