// A slug's own variable namespace. The gateway resolves `${VAR}` refs in it first and a bundle reads a
// mount's credentials only from it, so both sides must spell it the same way.

/** A slug: lower-case letters, digits and single hyphens (the roster's rule, worker/roster.ts). */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/**
 * The longest slug: a DNS label's 63 characters. A slug heads every prompt a person is shown, so its length is
 * one of the limits the approval service's cap is sized to (docs/rules.md R-LIMIT-1), and `<slug>__<tool>`
 * stays well inside MCP's 128-character tool names.
 */
export const MAX_SLUG_CHARS = 63;

/** `<SLUG>__`: the slug upper-cased with "-" as "_". */
export function slugNamespace(slug: string): string {
  return `${slug.toUpperCase().replaceAll("-", "_")}__`;
}
