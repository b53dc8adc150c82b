// The unit-level test files that start a process or a runtime (wrangler, workerd through Miniflare, tsx, Dovecot),
// directly or through a helper of theirs. vitest.config.ts runs them in the "processes" project with the timeouts
// argued there; test/scripts/timeouts.test.ts fails when a file that starts one is missing from this list.
export const PROCESS_TEST_FILES = [
  "test/approvals/*.unit.test.ts",
  "test/bundles/approval-flow/review-url.unit.test.ts",
  "test/bundles/approval-flow/store.workerd.unit.test.ts",
  "test/bundles/google/fake.workerd.unit.test.ts",
  "test/bundles/kit/bundle-direct.unit.test.ts",
  "test/bundles/mailbox/*.unit.test.ts",
  "test/bundles/onepassword/workerd.unit.test.ts",
  "test/bundles/pads/workerd.unit.test.ts",
  "test/durable-objects/*.test.ts",
  "test/scripts/*.test.ts",
  "test/worker/*.workerd.test.ts",
];

// The unit files that replace a module (vi.mock, vi.doMock), itself or through a helper: vitest.config.ts runs them in
// the "unit-isolated" project, each with a module graph of its own, as the "unit" project shares its workers' modules
// between files. test/scripts/timeouts.test.ts fails when such a file is missing from this list.
export const UNIT_ISOLATED = ["test/bundles/onepassword/sdk.unit.test.ts"];
