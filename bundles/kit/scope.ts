// Each tools/call runs inside a scope holding that call's request, channel and signal, so two calls in
// flight in one isolate never see each other's approval address (seed 000: "Two sessions sending at once").
import { AsyncLocalStorage } from "node:async_hooks";

export interface CallScope {
  /** The mount (slug) this request was routed to. */
  mount: string;
  /** Fires when the gateway's request to this bundle closes: caller left, timed out or cancelled. */
  signal: AbortSignal;
  /** Lets work that must outlive the response (audit records) finish. */
  waitUntil: (p: Promise<unknown>) => void;
  env: Record<string, unknown>;
}

const storage = new AsyncLocalStorage<CallScope>();

export function runInScope<T>(scope: CallScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function currentScope(): CallScope {
  const scope = storage.getStore();
  if (scope === undefined) throw new Error("no call scope: a tool ran outside a bundle request");
  return scope;
}
