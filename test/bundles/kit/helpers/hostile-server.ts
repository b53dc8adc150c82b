// A local approval service that misbehaves on cue, for the kit's tests: each route answers the create POST
// and the polls with whatever the test scripts (redirects, errors with secret-looking bodies, slow and
// late answers, malformed or oversized JSON, unknown actions). Every request it receives is recorded.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  at: number;
  /** Set once the request is over: answered, or left by the client before an answer (a delayed or held one). */
  outcome?: "answered" | "abandoned";
}

export interface Plan {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Wait this long before answering (the client may abort meanwhile). */
  delayMs?: number;
  /** Never answer: hold the request open until the client leaves. */
  hang?: boolean;
  /** Answer the status and headers and this much of a body, then hold the rest until the client leaves. */
  stallAfter?: string;
}

export type Handler = (request: RecordedRequest, count: number) => Plan | Promise<Plan>;

interface Route {
  create: Handler;
  poll: Handler;
  polls: number;
}

export class HostileServer {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, Route>();
  private server: Server | undefined;
  base = "";

  /** `prefix` is the path every route sits under ("/scripted" for the gateway's allowlisted prefix). */
  constructor(private readonly prefix = "") {}

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server?.once("error", reject);
      this.server?.listen(port, "127.0.0.1", () => resolve());
    });
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A fresh route; returns the channel URL (ending in /) to give the client. */
  route(name: string, handlers: { create?: Handler; poll?: Handler }): string {
    this.routes.set(name, {
      create: handlers.create ?? (() => ({ status: 201, body: { requestId: `req-${name}` } })),
      poll: handlers.poll ?? (() => ({ body: { action: "pending", content: null } })),
      polls: 0,
    });
    return `${this.base}${this.prefix}/${name}/`;
  }

  requestsTo(name: string): RecordedRequest[] {
    const root = `${this.prefix}/${name}`;
    return this.requests.filter((r) => r.path === root || r.path.startsWith(`${root}/`));
  }

  /** True when every request the route received is over (a delayed answer sent, or its client gone). */
  settled(name: string): boolean {
    return this.requestsTo(name).every((r) => r.outcome !== undefined);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on("error", () => {});
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? "/").split("?")[0] as string;
    const recorded: RecordedRequest = { method: req.method ?? "", path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
    this.requests.push(recorded);
    const local = path.startsWith(`${this.prefix}/`) ? path.slice(this.prefix.length) : "/";
    const [, name = "", rest = ""] = /^\/([^/]+)\/?(.*)$/.exec(local) ?? [];
    const route = this.routes.get(name);
    let plan: Plan;
    if (route === undefined) plan = { status: 404, body: "no such route" };
    else if (req.method === "POST" && rest === "") plan = await route.create(recorded, 1);
    else if (req.method === "GET" && rest !== "") plan = await route.poll(recorded, ++route.polls);
    else plan = { status: 405, body: "method not allowed" };
    if (plan.hang) {
      res.once("close", () => (recorded.outcome = "abandoned"));
      return;
    }
    if (plan.delayMs !== undefined) {
      const closed = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), plan.delayMs);
        res.once("close", () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (closed || res.destroyed) {
        recorded.outcome = "abandoned";
        return;
      }
    }
    if (plan.stallAfter !== undefined) {
      res.once("close", () => (recorded.outcome = "abandoned"));
      res.writeHead(plan.status ?? 200, { "content-type": "application/json", ...plan.headers });
      res.write(plan.stallAfter);
      return;
    }
    const body = plan.body === undefined ? "" : typeof plan.body === "string" ? plan.body : JSON.stringify(plan.body);
    res.writeHead(plan.status ?? 200, { "content-type": "application/json", ...plan.headers });
    res.end(body);
    recorded.outcome = "answered";
  }
}

/** A sink that only records: a redirect target, or a recorder that must stay empty. */
export async function startSink(): Promise<{ base: string; requests: RecordedRequest[]; stop: () => Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ method: req.method ?? "", path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The gateway's dev roster allowlists approval URLs under http://127.0.0.1:8790/scripted/. */
export const SCRIPTED_PORT = 8790;

/**
 * A scripted approval service under /scripted on 8790 for the whole test file: started before its tests,
 * stopped after them, its request log emptied before each test.
 */
export function useScriptedApprover(): HostileServer {
  const server = new HostileServer("/scripted");
  beforeAll(async () => {
    await server.start(SCRIPTED_PORT);
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  return server;
}
