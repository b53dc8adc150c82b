// Starts the local stack exactly as `npm run dev` does, for every e2e test file, keeps its logs, and at the
// end of the run fails it if any secret, token or approval URL the run used appears in those logs.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error: plain ESM helper without types
import { ROOT, startStack } from "../../scripts/stack.mjs";
import { secretsIn } from "./secrets";

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
    const leaks = secretsIn(readFileSync(LOG_FILE, "utf8"));
    if (leaks.length > 0) throw new Error(`the stack's logs contain credentials: ${leaks.join(", ")}`);
  };
}
