// The MCP SDK's server package, evaluated on first use. Evaluating its modules (the protocol's schemas, built with
// zod at load) was most of a Worker's cold start (docs/bench.md, part 6): a gateway whose requests take the fast lane
// never needs them, so no Worker imports the package's values at its top level, only its types
// (scripts/check-boundaries.mjs refuses a static value import); what the hot path needs of it is restated in
// contract/tool-call.ts and held to the SDK by test/contract/sdk-constants.test.ts. The bundler keeps a module that is
// only imported dynamically unevaluated until then (esbuild's lazy `__esm` wrappers), in one file.
type Sdk = typeof import("@modelcontextprotocol/server");

let loading: Promise<Sdk> | undefined;

/** The SDK's server package, loaded once per isolate. */
export const loadSdk = (): Promise<Sdk> =>
  (loading ??= import("@modelcontextprotocol/server").catch((error: unknown) => {
    // A load that failed is tried again by the next caller, not remembered.
    loading = undefined;
    throw error;
  }));
