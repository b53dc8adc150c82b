// A diagnostic for a rare CPU spin seen in the e2e stack's gateway process (workerd at 100% in timer callbacks):
// run the stack with STRAD_STACK_INSPECT=1 (e.g. `STRAD_STACK_INSPECT=1 npx vitest run --project e2e`) and this
// beside it. When the process on PORT (8787 by default) stays busy for 8 seconds, it pauses each of its isolates
// through workerd's inspector and prints the JavaScript stack each was running, then resumes them.
// One such spin, caught with gdb, was in native code, where the inspector cannot pause it: V8's worker thread and
// workerd's main thread waiting on each other (scripts/stack.mjs STACK_V8_FLAGS says how, and what the stack now runs
// with). For a spin that comes back, `gdb -p PID -batch -ex "thread apply all bt 30"` shows every thread.
// Usage: node scripts/spin-watch.mjs [PORT] [MINUTES]
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { inspectorPortFile } from "./stack.mjs";

const PORT = Number(process.argv[2] ?? 8787);
const MINUTES = Number(process.argv[3] ?? 30);
const BUSY_TICKS = 80; // of the kernel's 100 clock ticks a second

/** The pid listening on PORT, or undefined. */
function listener() {
  const line = execFileSync("ss", ["-ltnpH", `sport = :${PORT}`], { encoding: "utf8" });
  return /pid=(\d+)/.exec(line)?.[1];
}

/** User plus system clock ticks the process has used. */
function ticks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Pauses one isolate, prints its stack and resumes it. */
async function stackOf(target) {
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let next = 0;
  const waiting = new Map();
  let onPause;
  const paused = new Promise((resolve) => {
    onPause = resolve;
  });
  ws.on("message", (data) => {
    const message = JSON.parse(String(data));
    if (message.method === "Debugger.paused") onPause(message.params);
    waiting.get(message.id)?.(message.result);
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      next += 1;
      waiting.set(next, resolve);
      ws.send(JSON.stringify({ id: next, method, params }));
    });
  await send("Debugger.enable");
  await send("Debugger.pause");
  const state = await Promise.race([paused, new Promise((resolve) => setTimeout(resolve, 3000))]);
  const name = target.webSocketDebuggerUrl.split("/").pop();
  if (state === undefined) console.log(`${name}: running no JavaScript`);
  else {
    console.log(`${name}: paused`);
    for (const frame of state.callFrames.slice(0, 25)) console.log(`   ${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop()}:${frame.location.lineNumber + 1}`);
    await send("Debugger.resume");
  }
  ws.close();
}

let busy = 0;
let last;
for (const end = Date.now() + MINUTES * 60_000; Date.now() < end; ) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const pid = listener();
  if (pid === undefined) {
    busy = 0;
    last = undefined;
    continue;
  }
  const now = ticks(pid);
  busy = last !== undefined && now - last >= BUSY_TICKS ? busy + 1 : 0;
  last = now;
  if (busy < 8) continue;
  console.log(`${new Date().toISOString()}: pid ${pid} on port ${PORT} busy for ${busy} s`);
  const inspector = readFileSync(inspectorPortFile(PORT), "utf8").trim();
  for (const target of await (await fetch(`http://127.0.0.1:${inspector}/json/list`)).json()) await stackOf(target);
  busy = 0;
}
