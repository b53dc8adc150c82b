// The MCP SDK's server package, evaluated on first use. Evaluating its modules (the protocol's schemas, built with
// zod at load) was most of a Worker's cold start (docs/bench.md, part 6): a gateway whose requests take the fast lane
// never needs them, so no Worker imports the package's values at its top level, only its types
// (scripts/check-boundaries.mjs refuses a static value import); what the hot path needs of it is restated in
// contract/tool-call.ts and held to the SDK by test/contract/sdk-constants.test.ts. The bundler keeps a module that is
// only imported dynamically unevaluated until then (esbuild's lazy `__esm` wrappers), in one file.
type Sdk = typeof import("@modelcontextprotocol/server");

/** `load`, run on the first call and its answer kept; a load that failed is tried again by the next call, not remembered. */
export function lazily<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

/** The SDK's server package, loaded once per isolate. */
export const loadSdk: () => Promise<Sdk> = lazily(() => import("@modelcontextprotocol/server"));
