import { defineConfig } from "vitest/config";

// Two projects: "unit" runs pure modules in Node (and the CallRegistry Durable Object on workerd, through
// Miniflare, driven from Node); "e2e" drives the running local stack (real Workers,
// real Durable Objects, real service bindings) that its global setup starts, as `npm run dev` does.
export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["test/contract/**/*.test.ts", "test/worker/**/*.test.ts", "test/durable-objects/**/*.test.ts", "test/bundles/**/*.unit.test.ts", "test/approvals/**/*.unit.test.ts", "test/scripts/**/*.test.ts"] } },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts", "test/bundles/**/*.e2e.test.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          // Local `wrangler dev` occasionally loses the tail of a streamed response after an aborted
          // subrequest (the gateway's own stream tap showed the answer written and the stream closed), so a
          // client waits for an answer that never reaches it. A retry re-runs the whole test; no assertion
          // is loosened. See the note on the channel issue.
          retry: 2,
        },
      },
    ],
  },
});
