// A refusing proxy on 127.0.0.1 for the deploy rehearsal: wrangler is given it as HTTPS_PROXY / HTTP_PROXY (wrangler
// 4.86 installs undici's EnvHttpProxyAgent when one is set, so every fetch of its own goes through it) and as the npm
// registry (its update check asks the registry with node:https, which ignores proxies). Whatever reaches it was
// headed off the machine: it records the host and answers 403, and the rehearsal must find it empty.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface TrapHit {
  kind: "CONNECT" | "request";
  /** host:port for a CONNECT, the absolute URL (or Host header and path) for a plain request. */
  target: string;
}

export interface OutboundTrap {
  url: string;
  hits: TrapHit[];
  close(): Promise<void>;
}

export async function startOutboundTrap(): Promise<OutboundTrap> {
  const hits: TrapHit[] = [];
  const server = createServer((req, res) => {
    const target = req.url?.startsWith("http") ? req.url : `${req.headers.host ?? "?"}${req.url ?? ""}`;
    hits.push({ kind: "request", target });
    res.writeHead(403, { "content-type": "text/plain" });
    res.end("the deploy rehearsal lets nothing leave this machine\n");
  });
  server.on("connect", (req, socket) => {
    hits.push({ kind: "CONNECT", target: req.url ?? "?" });
    socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
