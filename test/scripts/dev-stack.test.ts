// `npm run dev` as an operator runs it (the whole stack under `wrangler dev`), started on free ports beside the suite's own stack: it comes up, the gateway answers initialize and tools/list, and Ctrl-C stops all of it.
// The rest of the suite runs the same Workers built as deployed, on workerd through Miniflare (scripts/stack.mjs);
// `npm run dev` stays on `wrangler dev` because it rebuilds a Worker on every edit, so this one test keeps it honest.
// It needs none of the e2e stack (free ports, a Dovecot of its own), so it runs in the processes project, beside it.
import { type ChildProcess, spawn } from "node:child_process";
import { expect, it } from "vitest";
import { bearer, connectLegacy, ROOT, TOKENS, waitFor } from "../e2e/helpers";

/** Resolves when `child` has exited, or after `ms` (false). */
function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

const answers = (url: string) =>
  fetch(url).then(
    async (r) => {
      await r.body?.cancel();
      return true;
    },
    () => false,
  );

it("npm run dev brings the whole stack up, answers initialize and tools/list through the gateway, and stops on Ctrl-C", async () => {
  // Its own process group, so that Ctrl-C reaches npm, the script and every wrangler and workerd under it, as in a terminal.
  const child = spawn("npm", ["run", "dev", "--", "--free-ports"], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const group = child.pid as number;
  try {
    const up = await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm run dev exited early:\n${output}`);
        const m = /strad is up: gateway (http:\/\/127\.0\.0\.1:\d+)\/mcp {2}approvals (http:\/\/127\.0\.0\.1:\d+)\/ {2}fakes (http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
        return m === null ? undefined : { gateway: m[1] as string, approvals: m[2] as string, fakes: m[3] as string };
      },
      150_000,
      250,
    );
    // Off the suite's ports, so the two stacks never answer for each other.
    for (const url of Object.values(up)) expect(url).not.toMatch(/:878[789]$/);

    const client = await connectLegacy("echo", bearer(TOKENS.session), up.gateway);
    try {
      expect(client.revision).toBe("2025-11-25");
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["add", "echo", "report_meta"]));
    } finally {
      await client.close();
    }
    for (const url of [up.approvals, up.fakes]) expect(await answers(`${url}/healthz`), url).toBe(true);

    process.kill(-group, "SIGINT");
    expect(await exited(child, 20_000), output).toBe(true);
    // Nothing it started is left serving.
    await waitFor(async () => ((await Promise.all(Object.values(up).map((u) => answers(`${u}/healthz`)))).every((a) => !a) ? true : undefined), 10_000);
  } finally {
    // Whatever of the group is still running (nothing, when the test passed) is this test's own.
    try {
      process.kill(-group, "SIGKILL");
    } catch {}
  }
  // Up to 150 s for eight `wrangler dev` Workers to come up on two busy cores, then the stop: past the project's 60 s.
}, 240_000);
