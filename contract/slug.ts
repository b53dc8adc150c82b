// A slug's own variable namespace. The gateway resolves `${VAR}` refs in it first and a bundle reads a
// mount's credentials only from it, so both sides must spell it the same way.

/** `<SLUG>__`: the slug upper-cased with "-" as "_". */
export function slugNamespace(slug: string): string {
  return `${slug.toUpperCase().replaceAll("-", "_")}__`;
}
