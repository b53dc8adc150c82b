// The gateway Worker's entry: the checked-in roster, compiled at build time (scripts/compile-roster.ts, the
// [build] command of wrangler.toml), the app, and the Durable Object classes it hosts.
import roster from "../.build/strad.config.roster.js";
import { gatewayFor } from "./app";

export { CallRegistry } from "../durable-objects/call-registry";
export { RosterOverlay } from "../durable-objects/roster-overlay";
export default gatewayFor(roster);
