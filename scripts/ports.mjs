// Ports on 127.0.0.1 for the local stack, the test Dovecot and the tests that start servers of their own.
import { createServer } from "node:net";

/** A port free on 127.0.0.1 when looked at (freePorts says what that is worth). */
export async function freePort() {
  return (await freePorts(1))[0];
}

/**
 * `n` ports free on 127.0.0.1 when looked at, all different: each is held by a listener of its own until all are
 * picked. Picked one after another, the system may hand the same port out twice (it was free again as soon as the
 * first probe closed), and a process told to listen on both fails: once a Dovecot, "duplicate listener" in a clean-clone
 * run.
 */
export async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", resolve);
      });
    }
    return servers.map((server) => server.address().port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(() => resolve()))));
  }
}
