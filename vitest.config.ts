import { defineConfig } from "vitest/config";

// Two projects: "unit" runs pure modules in Node; "e2e" drives the running local stack (real Workers,
// real Durable Objects, real service bindings) that its global setup starts, as `npm run dev` does.
export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["test/worker/**/*.test.ts", "test/bundles/**/*.unit.test.ts", "test/scripts/**/*.test.ts"] } },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts", "test/bundles/**/*.e2e.test.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
