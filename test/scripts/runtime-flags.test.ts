// Covers which V8 flags a local workerd runs with (scripts/stack.mjs startRuntime): LOCAL_V8_FLAGS unless the caller
// asks for V8 as deployed, which the bench's measured runtimes do (scripts/bench-runtime.mjs startMeasuredRuntime).
// A stand-in for workerd records the flags it was handed through scripts/workerd-v8-flags.sh, then runs workerd.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { startMeasuredRuntime } from "../../scripts/bench-runtime.mjs";
// @ts-expect-error: plain ESM helper without types
import { bundledWorkerd, LOCAL_V8_FLAGS, startRuntime } from "../../scripts/stack.mjs";

const PROBE = { name: "flags-probe", modules: true, script: "export default { fetch() { return new Response('up') } }", compatibilityDate: "2026-04-26" };

let dir: string;
let record: string;
let before: string | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strad-flags-"));
  record = join(dir, "flags");
  const workerd = bundledWorkerd() as string;
  const spy = join(dir, "workerd");
  // Records STRAD_V8_FLAGS as it reached workerd ("none" when nothing went through the wrapper), then is workerd.
  writeFileSync(spy, `#!/bin/sh\nprintf '%s\\n' "\${STRAD_V8_FLAGS:-none}" >> '${record}'\nexec '${workerd}' "$@"\n`);
  chmodSync(spy, 0o755);
  before = process.env.MINIFLARE_WORKERD_PATH;
  process.env.MINIFLARE_WORKERD_PATH = spy;
});

afterAll(() => {
  if (before === undefined) delete process.env.MINIFLARE_WORKERD_PATH;
  else process.env.MINIFLARE_WORKERD_PATH = before;
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `start`'s runtime, checks it serves, stops it, and says what flags workerd was handed. */
async function flagsOf(start: () => Promise<{ url: string; stop(): Promise<void> }>): Promise<string> {
  rmSync(record, { force: true });
  const runtime = await start();
  try {
    expect(await (await fetch(runtime.url)).text()).toBe("up");
  } finally {
    await runtime.stop();
  }
  return readFileSync(record, "utf8").trimEnd();
}

it("runs a local workerd with LOCAL_V8_FLAGS, V8 without background threads", async () => {
  expect(LOCAL_V8_FLAGS).toEqual(["--single-threaded"]);
  expect(await flagsOf(() => startRuntime([PROBE]))).toBe(JSON.stringify(LOCAL_V8_FLAGS));
}, 30_000);

it("runs the bench's measured workerd, and any that asks for none, with V8 as deployed", async () => {
  expect(await flagsOf(() => startMeasuredRuntime([PROBE]))).toBe("none");
  expect(await flagsOf(() => startRuntime([PROBE], { v8Flags: [] }))).toBe("none");
  // Asked-for flags replace the local ones rather than adding to them.
  expect(await flagsOf(() => startRuntime([PROBE], { v8Flags: ["--trace-gc"] }))).toBe('["--trace-gc"]');
  // The wrapper was only ever in between: the user's MINIFLARE_WORKERD_PATH is back as it was.
  expect(process.env.MINIFLARE_WORKERD_PATH).toBe(join(dir, "workerd"));
}, 30_000);

it("hands each of several runtimes started at once its own flags, and puts the environment back once all are up", async () => {
  rmSync(record, { force: true });
  const asked = [["--trace-gc"], [], LOCAL_V8_FLAGS, ["--expose-gc"]];
  const runtimes = await Promise.all(asked.map((v8Flags) => startRuntime([PROBE], { v8Flags })));
  try {
    for (const runtime of runtimes) expect(await (await fetch(runtime.url)).text()).toBe("up");
  } finally {
    await Promise.all(runtimes.map((r: { stop(): Promise<void> }) => r.stop()));
  }
  const handed = readFileSync(record, "utf8").trimEnd().split("\n").sort();
  expect(handed).toEqual(asked.map((flags) => (flags.length === 0 ? "none" : JSON.stringify(flags))).sort());
  expect(process.env.MINIFLARE_WORKERD_PATH).toBe(join(dir, "workerd"));
  for (const name of ["STRAD_WORKERD", "STRAD_NODE", "STRAD_V8_FLAGS", "STRAD_LINE_BUFFERED"]) expect(process.env[name], name).toBeUndefined();
}, 60_000);
