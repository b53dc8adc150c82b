// A roster's text (YAML) to a validated roster or its errors: what check-config, the deploy scripts, the build's
// roster compiler and tests read. The gateway never parses YAML: its entries carry the roster compiled at build time.
import { parse as parseYaml } from "yaml";
import { type RosterResult, validateRoster } from "./roster";

export function parseRoster(yamlText: string): RosterResult {
  let data: unknown;
  try {
    data = parseYaml(yamlText, { uniqueKeys: true });
  } catch (error) {
    const message = error instanceof Error ? (error.message.split("\n")[0] ?? "invalid YAML") : "invalid YAML";
    return { ok: false, errors: [{ path: "(yaml)", message }] };
  }
  return validateRoster(data);
}
