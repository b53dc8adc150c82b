// Starts the local stack exactly as `npm run dev` does, for every e2e test file, and keeps its logs so
// that a test can check what the gateway wrote (no secret may appear in them).
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error: plain ESM helper without types
import { ROOT, startStack } from "../../scripts/stack.mjs";

export const LOG_FILE = join(ROOT, "test-output", "stack.log");

export default async function setup(): Promise<() => Promise<void>> {
  const stack = await startStack({ quiet: true });
  mkdirSync(join(ROOT, "test-output"), { recursive: true });
  const flush = () => writeFileSync(LOG_FILE, stack.logs.join(""));
  const timer = setInterval(flush, 500);
  return async () => {
    clearInterval(timer);
    flush();
    await stack.stop();
  };
}
