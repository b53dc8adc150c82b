// Tool groups: which of a bundle's tools a mount serves, read from the mount's own `<MOUNT>__<variable>` (a
// bare `<variable>` is another slug's, or the bundle-wide copy, and is never read). A bundle declares its groups
// in bundle.json (`toolGroups`); the kit refuses every request to a mount whose setting names no group, and the
// bundle registers only the tools of the groups a mount has. `npm run posture` reads them with the same code.
import { slugNamespace } from "../../contract/slug";

/** bundle.json's `toolGroups`: the variable a mount sets, the group a mount that sets none gets, each group's tools. */
export interface ToolGroupSpec {
  variable: string;
  default: string;
  groups: Readonly<Record<string, readonly string[]>>;
}

export type ToolGroups =
  /** `declared`: the mount's variable is set; otherwise the default applies. */
  | { ok: true; variable: string; declared: boolean; groups: readonly string[]; tools: ReadonlySet<string> }
  /** The variable is set to something that is not a list of groups: the mount serves no tool. Never holds the value. */
  | { ok: false; variable: string; reason: string };

/**
 * The groups a mount serves: `<MOUNT>__<variable>`, a comma-separated list of group names (the union of their
 * tools), or the default when it is unset or empty. Any name that is not a group fails the whole mount closed.
 */
/** The variable a mount's tool groups are read from: `<MOUNT>__<variable>`. */
export function toolGroupVariable(spec: ToolGroupSpec, mount: string): string {
  return `${slugNamespace(mount)}${spec.variable}`;
}

export function toolGroupsFor(spec: ToolGroupSpec, mount: string, env: Record<string, unknown>): ToolGroups {
  const variable = toolGroupVariable(spec, mount);
  const raw = env[variable];
  const allowed = Object.keys(spec.groups);
  const refuse = (why: string): ToolGroups => ({ ok: false, variable, reason: `${variable} ${why}; allowed: ${allowed.join(", ")} (comma-separated), or unset for ${spec.default}` });
  if (raw !== undefined && typeof raw !== "string") return refuse("is not text");
  const names = (raw ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  const declared = names.length > 0;
  const groups = declared ? [...new Set(names)] : [spec.default];
  if (groups.some((g) => !Object.hasOwn(spec.groups, g))) return refuse(declared ? "names something that is not a tool group" : "has a default that is not a tool group");
  const tools = new Set(groups.flatMap((g) => spec.groups[g] ?? []));
  return { ok: true, variable, declared, groups, tools };
}
