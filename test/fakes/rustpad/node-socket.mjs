// For the bundle's Node tests: a fetch that opens a WebSocket the way workerd's does for a Worker (a request with
// `Upgrade: websocket` answered with a `webSocket` to accept), over the `ws` package, and hands every other request
// to the real fetch. Nothing is delivered before accept(), as on workerd.
import WebSocket from "ws";

/** @param {WebSocket} ws */
function workerdLike(ws) {
  /** @type {Record<string, ((event: unknown) => void)[]>} */
  const listeners = { message: [], close: [], error: [] };
  /** @type {{ type: string, event: unknown }[]} */
  const held = [];
  let accepted = false;
  const emit = (type, event) => {
    if (!accepted) return held.push({ type, event });
    for (const listener of listeners[type] ?? []) listener(event);
  };
  ws.on("message", (data, isBinary) => emit("message", { data: isBinary ? data : data.toString("utf8") }));
  ws.on("close", () => emit("close", {}));
  ws.on("error", () => emit("error", {}));
  return {
    accept() {
      accepted = true;
      for (const { type, event } of held.splice(0)) emit(type, event);
    },
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    addEventListener: (type, listener) => listeners[type]?.push(listener),
  };
}

/**
 * @param {typeof fetch} [realFetch]
 * @returns {(input: string | URL | Request, init?: RequestInit) => Promise<Response>}
 */
export function socketFetch(realFetch = globalThis.fetch) {
  /** @type {string[]} */
  const opened = [];
  const fetcher = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (headers.get("upgrade")?.toLowerCase() !== "websocket") return realFetch(input, init);
    const url = String(input instanceof Request ? input.url : input).replace(/^http/, "ws");
    opened.push(url);
    const ws = new WebSocket(url);
    // Listening from the start: the server's first frame may come in the same read as the upgrade's answer.
    const socket = workerdLike(ws);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    return /** @type {Response} */ (/** @type {unknown} */ ({ status: 101, webSocket: socket, body: null }));
  };
  fetcher.opened = opened;
  return fetcher;
}
