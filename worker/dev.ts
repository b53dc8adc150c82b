// The gateway Worker's LOCAL entry: the same app and Durable Object as worker/index.ts, with the dev roster
// (strad.dev.yaml, compiled at build time as worker/index.ts's is: dev callers, loopback approval prefixes, the e2e suite's scripted approver). Only the dev
// stack builds it (`wrangler dev worker/dev.ts`, scripts/stack.mjs); `wrangler deploy` builds `main`
// (worker/index.ts), which holds the production roster, so a deploy can never carry this one.
import roster from "../.build/strad.dev.roster.js";
import { gatewayFor } from "./app";

export { CallRegistry } from "../durable-objects/call-registry";
export { RosterOverlay } from "../durable-objects/roster-overlay";
export default gatewayFor(roster);
