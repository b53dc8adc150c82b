// What the CallRegistry's workerd tests share: the gateway built as deployed (it hosts the registry), started on
// workerd for the file, its service bindings left out since no call is forwarded here.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
// @ts-expect-error: a plain ES module without types
import { buildWorker, startRuntime } from "../../scripts/bench-runtime.mjs";

type Runtime = { miniflare: { getDurableObjectNamespace(name: string): Promise<DurableObjectNamespace> }; stop: () => Promise<void> };

/**
 * Starts the registry for the enclosing file or describe (`vars`: the gateway's settings over its own, such as
 * STRAD_CLAIM_HOLD_MS) and returns the CALLS namespace. 120 s for the start: a build and a workerd start took up to
 * 40 s on this 2-core machine under load.
 */
export function useCallRegistry(vars: Record<string, string> = {}): () => Promise<DurableObjectNamespace> {
  const built = mkdtempSync(join(tmpdir(), "strad-registry-"));
  let runtime: Runtime | undefined;
  beforeAll(async () => {
    const gateway = buildWorker("wrangler.toml", { into: built });
    runtime = (await startRuntime([{ ...gateway, serviceBindings: {}, bindings: { ...(gateway.bindings ?? {}), ...vars } }])) as Runtime;
  }, 120_000);
  afterAll(async () => {
    await runtime?.stop();
    rmSync(built, { recursive: true, force: true });
  });
  return () => {
    if (runtime === undefined) throw new Error("the call registry's runtime is not running");
    return runtime.miniflare.getDurableObjectNamespace("CALLS");
  };
}
