import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { HistoryEntry, HistoryInput, RosterOverlayApi } from "../../../contract/roster-overlay";
import { createGateway } from "../../../worker/gateway";
import { executionContext } from "./gateway";

// What the runtime roster's tests in Node share: the RosterOverlay object's API over memory, and the gateway served
// on a loopback port for the CLI and posture --remote to reach.

/** The RosterOverlay object's API over memory, with the same compare-and-swap and history. */
export class MemoryOverlay implements RosterOverlayApi {
  version = 0;
  text: string | null = null;
  rows: HistoryEntry[] = [];
  reads = 0;
  read() {
    this.reads++;
    return { version: this.version, text: this.text };
  }
  write(expected: number, text: string, entry: HistoryInput) {
    if (expected !== this.version) return { ok: false as const, version: this.version };
    this.version++;
    this.text = text;
    this.rows.unshift({ ...entry, seq: this.version, at: new Date().toISOString(), version: this.version });
    return { ok: true as const, version: this.version };
  }
  history() {
    return this.rows;
  }
}

/** The binding the gateway reads the overlay through, over `store`. */
export const overlayBinding = (store: RosterOverlayApi) => ({ idFromName: (n: string) => n, get: () => store });

/** The Node gateway for `rosterYaml` on 127.0.0.1, with `env` as its bindings; its URL and a stop. */
export async function httpGateway(rosterYaml: string, env: Record<string, unknown>): Promise<{ url: string; stop: () => Promise<void> }> {
  const gateway = createGateway(rosterYaml);
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
    const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method, headers, body });
    const ctx = executionContext();
    const response = await (gateway.fetch as NonNullable<ExportedHandler["fetch"]>)(request as never, env, ctx);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
    await ctx.settle();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
