import { defineConfig } from "vitest/config";

// Two projects: "unit" runs pure modules in Node (and the CallRegistry Durable Object on workerd, through
// Miniflare, driven from Node); "e2e" drives the whole local stack (real Workers, real Durable Objects, real
// service bindings), built as deployed and run on workerd through Miniflare by its global setup.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "test/contract/**/*.test.ts",
            "test/worker/**/*.test.ts",
            "test/durable-objects/**/*.test.ts",
            "test/bundles/**/*.unit.test.ts",
            "test/approvals/**/*.unit.test.ts",
            "test/scripts/**/*.test.ts",
          ],
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts", "test/bundles/**/*.e2e.test.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          retry: 0,
        },
      },
    ],
  },
});
