// The gateway Worker's entry: the checked-in roster, the app, and the Durable Object class it hosts.
import roster from "../strad.config.yaml";
import { createGateway } from "./app";

export { CallRegistry } from "../durable-objects/call-registry";
export default createGateway(roster);
