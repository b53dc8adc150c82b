// Starts the slowest files first. The unit and processes projects run three files at a time, and a clean clone (CI)
// has no record of how long each file took, so vitest would start them in path order: the deploy rehearsal (minutes of
// wrangler builds) began halfway through and ran alone at the end. Listed here, the longest first, as measured in a full
// `npm test`; every other file keeps vitest's own order after them.
import { BaseSequencer } from "vitest/node";

export const SLOWEST_FIRST = [
  // The three that build every Worker again and again start one by one among the three workers, each beside a file
  // that mostly waits, rather than all at once.
  "test/scripts/deploy-rehearsal.test.ts",
  "test/scripts/production-rehearsal.test.ts",
  "test/bundles/mailbox/tools.unit.test.ts",
  "test/scripts/deploy.test.ts",
  "test/bundles/kit/bundle-direct.unit.test.ts",
  "test/scripts/deploy-check.test.ts",
  "test/bundles/mailbox/workerd.unit.test.ts",
  "test/scripts/new-bundle.test.ts",
  "test/scripts/bench-cold.test.ts",
  "test/scripts/bench.test.ts",
];

/** The files (`pathOf` gives each one's path) in the order they start: the listed ones first, in their order; the others as they came. */
export function slowestFirst(files, pathOf) {
  const rank = (file) => {
    const at = SLOWEST_FIRST.findIndex((path) => pathOf(file).endsWith(`/${path}`));
    return at === -1 ? SLOWEST_FIRST.length : at;
  };
  // Array.prototype.sort is stable: files of equal rank keep their order.
  return [...files].sort((a, b) => rank(a) - rank(b));
}

export default class SlowestFirst extends BaseSequencer {
  async sort(files) {
    return slowestFirst(await super.sort(files), (spec) => spec.moduleId);
  }
}
