// Covers how the local stack and the test Dovecot pick ports (scripts/stack.mjs freePorts, and the same in
// test/servers/dovecot/dovecot.mjs): the ports one call hands out are all different, since each is held open until all
// are picked (picked one after another, the system once handed the same port out twice and a Dovecot told to listen on
// both refused: "duplicate listener"), and each is free to bind once handed out.
import { createServer, type Server } from "node:net";
import { expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { freePort, freePorts } from "../../scripts/stack.mjs";

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

it("hands out different ports in one call, every time, each free to bind afterwards", async () => {
  for (let round = 0; round < 200; round++) {
    const n = 1 + (round % 4);
    const ports = (await freePorts(n)) as number[];
    expect(ports).toHaveLength(n);
    expect(new Set(ports).size).toBe(n);
    for (const port of ports) expect(port).toBeGreaterThan(0);
    if (round % 20 === 0) {
      const servers = await Promise.all(ports.map(listen));
      await Promise.all(servers.map(close));
    }
  }
  expect(await freePort()).toBeGreaterThan(0);
});
