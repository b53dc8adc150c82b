// Starts the whole local stack for every e2e test file (the Workers built as deployed, on workerd through
// Miniflare: scripts/stack.mjs), keeps what the Workers write, and at the end of the run fails it if any
// secret, token or approval URL the run used appears in it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
// @ts-expect-error: plain ESM helper without types
import { startStack } from "../../scripts/stack.mjs";
import { STACK_LOG } from "./helpers";
import { secretsIn } from "./secrets";

export const LOG_FILE = STACK_LOG;

export default async function setup(): Promise<() => Promise<void>> {
  const stack = await startStack({ quiet: true });
  mkdirSync(dirname(LOG_FILE), { recursive: true });
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
