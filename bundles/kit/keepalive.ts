// While a person decides nothing else crosses the wire, and a silent response body gets dropped by fetch
// clients along the way (Node's after 300 s). So the call sends progress against the token the gateway
// put on it (docs/rules.md R-KEEP-2).
import type { ProgressNotification } from "./scope";

export const DEFAULT_KEEPALIVE_MS = 30_000;
export const MIN_KEEPALIVE_MS = 20;

export interface KeepaliveOptions {
  progressToken: string | number | undefined;
  notify: (notification: ProgressNotification) => Promise<void>;
  intervalMs: number;
  signal: AbortSignal;
}

/** Starts the ticks; the returned function stops them. Without a progress token there is nothing to send. */
export function startKeepalive(options: KeepaliveOptions): () => void {
  const { progressToken, notify, signal } = options;
  if (progressToken === undefined || signal.aborted) return () => {};
  let progress = 0;
  const timer = setInterval(
    () => {
      if (signal.aborted) return stop();
      progress += 1;
      notify({ method: "notifications/progress", params: { progressToken, progress, message: "waiting for a person to approve" } }).catch(() => {});
    },
    Math.max(MIN_KEEPALIVE_MS, options.intervalMs),
  );
  function stop() {
    clearInterval(timer);
    signal.removeEventListener("abort", stop);
  }
  signal.addEventListener("abort", stop, { once: true });
  return stop;
}
