// Starts the whole local stack for every e2e test file (the Workers built as deployed, on workerd through
// Miniflare: scripts/stack.mjs), keeps what the Workers write, and at the end of the run fails it if any
// secret, token or approval URL the run used appears in it.
//
// `npm test` (scripts/test.mjs) runs the e2e files in two vitest processes on the one stack: the owner starts it,
// and a guest (a file that mostly waits on a person's clock, and uses callers of its own) runs beside it. They meet
// in the folder STRAD_E2E_LEASE names: the owner writes `ready` once the stack is up (or `failed`), and keeps the
// stack until scripts/test.mjs writes `guest-done` when the guest has exited. Without STRAD_E2E_LEASE the process
// owns its stack alone, as in `vitest run --project e2e <file>`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
// @ts-expect-error: plain ESM helper without types
import { startStack } from "../../scripts/stack.mjs";
import { STACK_LOG } from "./helpers";
import { secretsIn } from "./secrets";

export const LOG_FILE = STACK_LOG;

/** How long a guest waits for the owner's stack, and the owner for the guest: past the slowest start and file seen. */
const LEASE_WAIT_MS = 10 * 60_000;

/** Resolves once `path` exists, or throws after LEASE_WAIT_MS (or at once when `failed` exists), naming what it waited for. */
async function until(path: string, failed?: string): Promise<void> {
  const deadline = Date.now() + LEASE_WAIT_MS;
  while (!existsSync(path)) {
    if (failed !== undefined && existsSync(failed)) throw new Error(`the e2e stack's owner could not start it: ${readFileSync(failed, "utf8")}`);
    if (Date.now() > deadline) throw new Error(`waited ${LEASE_WAIT_MS} ms for ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export default async function setup(): Promise<() => Promise<void>> {
  const lease = process.env.STRAD_E2E_LEASE;
  const role = process.env.STRAD_E2E_ROLE;
  if (lease !== undefined && role === "guest") {
    await until(join(lease, "ready"), join(lease, "failed"));
    return async () => {};
  }
  let stack: { logs: string[]; stop: () => Promise<void> };
  try {
    stack = await startStack({ quiet: true });
  } catch (error) {
    if (lease !== undefined) writeFileSync(join(lease, "failed"), error instanceof Error ? error.message : String(error));
    throw error;
  }
  mkdirSync(dirname(LOG_FILE), { recursive: true });
  const flush = () => writeFileSync(LOG_FILE, stack.logs.join(""));
  const timer = setInterval(flush, 500);
  if (lease !== undefined) writeFileSync(join(lease, "ready"), "");
  return async () => {
    // A guest still running keeps the stack up; its own failures are its process's to report.
    if (lease !== undefined) await until(join(lease, "guest-done")).catch(() => {});
    clearInterval(timer);
    flush();
    await stack.stop();
    const leaks = secretsIn(readFileSync(LOG_FILE, "utf8"));
    if (leaks.length > 0) throw new Error(`the stack's logs contain credentials: ${leaks.join(", ")}`);
  };
}
