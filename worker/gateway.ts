// The gateway for a roster's text, parsed and validated at once (worker/roster.ts): what tests and tools build. The
// deployed entries carry the roster compiled at build time instead (worker/index.ts), so their start evaluates
// neither the YAML parser nor zod.
import { type GatewayOptions, gatewayFor } from "./app";
import type { GatewayEnv } from "./mcp";
import { parseRoster } from "./roster-text";

export function createGateway(rosterYaml: string, options?: GatewayOptions): ExportedHandler<GatewayEnv> {
  return gatewayFor(parseRoster(rosterYaml), options);
}
