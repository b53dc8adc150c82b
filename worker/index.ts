// The gateway Worker's entry: the checked-in roster, the app, and the Durable Object classes it hosts.
import roster from "../strad.config.yaml";
import { createGateway } from "./app";

export { CallRegistry } from "../durable-objects/call-registry";
export { RosterOverlay } from "../durable-objects/roster-overlay";
export default createGateway(roster);
