// The Worker's TCP connector: the Workers socket API (cloudflare:sockets), imported when a call first connects, so
// every other module of the bundle also loads under Node (unit tests bring a connector of their own).
import type { Connector, SocketLike } from "./mailbox.connection";

export const workerConnect: Connector = async (address, options) => {
  const { connect } = await import("cloudflare:sockets");
  return connect(address, options) as unknown as SocketLike;
};
