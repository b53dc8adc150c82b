// A Rustpad server for the tests and the dev stack: a Node process (workerd cannot serve a WebSocket to a Worker
// in another runtime as a plain server), on 127.0.0.1:8791 in the stack (scripts/stack.mjs). It speaks Rustpad's
// protocol as its server does: GET /api/text/<id> (the text; a pad it does not hold reads as empty and is not
// created), GET /api/stats, and the WebSocket /api/socket/<id>, which says Identity, then History and Language when
// there are any, and UserInfo of those connected; it takes Edit (transformed over every edit since the revision it
// names, with the crate's rules: ./ot.mjs), SetLanguage, ClientInfo and CursorData, broadcasts every applied edit
// to every connection (the sender's own is its acknowledgement), and drops a connection that sends an edit it
// cannot apply or one that would make the pad longer than 100,000 characters.
//
// For tests, beside Rustpad's own routes:
//   GET    /healthz                       "ok"
//   GET    /_fake/pads/<id>               { text, revision, language, connections } (404 for a pad it does not hold)
//   PUT    /_fake/pads/<id>               { text, language? }: the pad as a stored document (connections to it dropped)
//   POST   /_fake/pads/<id>/edit          another client's edit: { append } or { operation }, and `when`: "now"
//                                         (default) or "before-next-edit" (held until a client next sends an edit to
//                                         the pad, then applied first, so that edit is transformed over it)
//   GET    /_fake/edits[?pad=<id>]        every edit received, in order: { pad, kind, client, revision, operation,
//                                         applied, at } (kind: edit | injected | language | rejected)
//   DELETE /_fake                         forgets every pad and every record
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { Seq } from "./ot.mjs";

export const RUSTPAD_FAKE_PORT = 8791;
const MAX_CHARS = 100_000;
/** The user id of edits a test injects: another client, as far as everyone connected can tell. */
export const OTHER_CLIENT = 1_000_001;
const SEEDER = 1_000_000;

/** @param {import("node:http").ServerResponse} res @param {number} status @param {unknown} body */
function json(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** @param {import("node:http").IncomingMessage} req */
function readJson(req) {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      try {
        resolve(body === "" ? {} : JSON.parse(body));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

/**
 * Starts the fake. `port` 0 picks a free one. Returns its port, its state (for in-process tests) and stop().
 * @param {{ port?: number, host?: string }} [options]
 */
export async function startRustpadFake({ port = RUSTPAD_FAKE_PORT, host = "127.0.0.1" } = {}) {
  const startTime = Math.floor(Date.now() / 1000);
  /** @type {Map<string, { text: string, language: string | null, operations: { id: number, operation: (number|string)[] }[], users: Map<number, unknown>, conns: Set<any>, armed: Seq[] }>} */
  const pads = new Map();
  /** @type {Record<string, unknown>[]} */
  const edits = [];
  let nextId = 0;

  const padOf = (id) => {
    let pad = pads.get(id);
    if (pad === undefined) {
      pad = { text: "", language: null, operations: [], users: new Map(), conns: new Set(), armed: [] };
      pads.set(id, pad);
    }
    return pad;
  };

  const send = (conn, message) => {
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify(message));
  };
  /** Every connection gets the history it has not seen yet, from its own revision on. */
  const flushHistory = (pad) => {
    for (const conn of pad.conns) {
      if (conn.revision < pad.operations.length) {
        send(conn, { History: { start: conn.revision, operations: pad.operations.slice(conn.revision) } });
        conn.revision = pad.operations.length;
      }
    }
  };
  const broadcast = (pad, message) => {
    flushHistory(pad);
    for (const conn of pad.conns) send(conn, message);
  };

  /** Applies an edit made against `revision`, transformed over everything since; throws when it cannot. */
  const apply = (pad, id, revision, seq) => {
    if (!Number.isSafeInteger(revision) || revision < 0 || revision > pad.operations.length) throw new Error(`revision ${revision} is not one the pad has had`);
    let op = seq;
    for (const prior of pad.operations.slice(revision)) op = op.transform(Seq.from(prior.operation))[0];
    if (op.targetLen > MAX_CHARS) throw new Error(`the pad would hold ${op.targetLen} characters, more than ${MAX_CHARS}`);
    pad.text = op.apply(pad.text);
    pad.operations.push({ id, operation: op.toJSON() });
    return op;
  };

  const inject = (padId, seq) => {
    const pad = padOf(padId);
    const applied = apply(pad, OTHER_CLIENT, pad.operations.length, seq);
    edits.push({ pad: padId, kind: "injected", client: OTHER_CLIENT, revision: pad.operations.length - 1, operation: seq.toJSON(), applied: applied.toJSON(), at: Date.now() });
    flushHistory(pad);
  };

  const onMessage = (padId, conn, raw) => {
    const pad = padOf(padId);
    let message;
    try {
      message = JSON.parse(raw);
    } catch {
      return conn.ws.close(1011, "failed to deserialize message");
    }
    if (message?.Edit !== undefined) {
      const { revision, operation } = message.Edit;
      try {
        const seq = Seq.from(operation);
        // A concurrent edit a test armed lands first, so this one is transformed over it.
        for (const armed of pad.armed.splice(0)) inject(padId, armed);
        const applied = apply(pad, conn.id, revision, seq);
        edits.push({ pad: padId, kind: "edit", client: conn.id, revision, operation, applied: applied.toJSON(), at: Date.now() });
      } catch (error) {
        edits.push({ pad: padId, kind: "rejected", client: conn.id, revision, operation, reason: String(error.message), at: Date.now() });
        return conn.ws.close(1011, "invalid edit operation");
      }
      flushHistory(pad);
    } else if (typeof message?.SetLanguage === "string") {
      pad.language = message.SetLanguage;
      edits.push({ pad: padId, kind: "language", client: conn.id, language: message.SetLanguage, at: Date.now() });
      broadcast(pad, { Language: message.SetLanguage });
    } else if (message?.ClientInfo !== undefined) {
      pad.users.set(conn.id, message.ClientInfo);
      broadcast(pad, { UserInfo: { id: conn.id, info: message.ClientInfo } });
    } else if (message?.CursorData !== undefined) {
      broadcast(pad, { UserCursor: { id: conn.id, data: message.CursorData } });
    } else conn.ws.close(1011, "failed to deserialize message");
  };

  const wss = new WebSocketServer({ noServer: true });
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://rustpad");
    const path = url.pathname;
    try {
      if (req.method === "GET" && path === "/healthz") return res.end("ok");
      let m = /^\/api\/text\/([^/]+)$/.exec(path);
      if (req.method === "GET" && m) {
        // Rustpad answers with a whole String (warp), so hyper declares its length; writeHead alone would send it chunked.
        const text = pads.get(decodeURIComponent(m[1]))?.text ?? "";
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
        return res.end(text);
      }
      if (req.method === "GET" && path === "/api/stats") return json(res, 200, { start_time: startTime, num_documents: pads.size });
      if (req.method === "GET" && path === "/_fake/edits") {
        const pad = url.searchParams.get("pad");
        return json(res, 200, pad === null ? edits : edits.filter((e) => e.pad === pad));
      }
      if (req.method === "DELETE" && path === "/_fake") {
        for (const pad of pads.values()) for (const conn of pad.conns) conn.ws.terminate();
        pads.clear();
        edits.length = 0;
        return json(res, 200, { ok: true });
      }
      m = /^\/_fake\/pads\/([^/]+)$/.exec(path);
      if (m && req.method === "GET") {
        const pad = pads.get(decodeURIComponent(m[1]));
        if (pad === undefined) return json(res, 404, { error: "no such pad" });
        return json(res, 200, { text: pad.text, revision: pad.operations.length, language: pad.language, connections: pad.conns.size });
      }
      if (m && req.method === "PUT") {
        const id = decodeURIComponent(m[1]);
        const body = await readJson(req);
        for (const conn of pads.get(id)?.conns ?? []) conn.ws.terminate();
        pads.delete(id);
        const pad = padOf(id);
        if (typeof body.text === "string" && body.text !== "") {
          pad.text = body.text;
          pad.operations.push({ id: SEEDER, operation: new Seq().insert(body.text).toJSON() });
        }
        pad.language = typeof body.language === "string" ? body.language : null;
        return json(res, 200, { text: pad.text, revision: pad.operations.length, language: pad.language });
      }
      m = /^\/_fake\/pads\/([^/]+)\/edit$/.exec(path);
      if (m && req.method === "POST") {
        const id = decodeURIComponent(m[1]);
        const body = await readJson(req);
        const pad = padOf(id);
        const seq = typeof body.append === "string" ? new Seq().retain([...pad.text].length).insert(body.append) : Seq.from(body.operation);
        if (body.when === "before-next-edit") {
          pad.armed.push(seq);
          return json(res, 200, { armed: pad.armed.length });
        }
        inject(id, seq);
        return json(res, 200, { text: pad.text, revision: pad.operations.length });
      }
      json(res, 404, { error: "not found" });
    } catch (error) {
      json(res, 400, { error: String(error?.message ?? error) });
    }
  });

  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://rustpad");
    const m = /^\/api\/socket\/([^/]+)$/.exec(url.pathname);
    if (m === null) {
      socket.write("HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n");
      return socket.destroy();
    }
    const padId = decodeURIComponent(m[1]);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const pad = padOf(padId);
      const conn = { id: nextId++, ws, revision: 0 };
      pad.conns.add(conn);
      send(conn, { Identity: conn.id });
      if (pad.operations.length > 0) send(conn, { History: { start: 0, operations: pad.operations } });
      conn.revision = pad.operations.length;
      if (pad.language !== null) send(conn, { Language: pad.language });
      for (const [id, info] of pad.users) send(conn, { UserInfo: { id, info } });
      ws.on("message", (data, isBinary) => {
        if (!isBinary) onMessage(padId, conn, data.toString("utf8"));
      });
      ws.on("close", () => {
        pad.conns.delete(conn);
        if (pad.users.delete(conn.id)) broadcast(pad, { UserInfo: { id: conn.id, info: null } });
      });
      ws.on("error", () => {});
    });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return {
    port: bound,
    url: `http://${host}:${bound}`,
    pads,
    edits,
    /** Another client's edit, now. */
    inject: (padId, seq) => inject(padId, seq),
    stop: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        server.closeAllConnections?.();
        server.close(() => resolve(undefined));
      }),
  };
}

// `node test/fakes/rustpad/rustpad.fake.mjs [port]`: the fake on its own.
if (import.meta.url === `file://${process.argv[1]}`) {
  const fake = await startRustpadFake({ port: Number(process.argv[2] ?? RUSTPAD_FAKE_PORT) });
  console.log(`rustpad fake on ${fake.url}`);
}
