// Starts Workers under `wrangler dev` for the local stack and for tests. The whole stack (npm run dev and
// the e2e suite) is the gateway with its bundles on 8787, the approval service on 8788 and the fakes on 8789;
// tests of a single Worker start it alone on free ports with startWorkers().
import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const PORTS = { gateway: 8787, approvals: 8788, fakes: 8789 };

/** The processes of the whole stack; each is one `wrangler dev` over one or more configs. */
export const STACK = [
  { name: "gateway", port: PORTS.gateway, configs: ["wrangler.toml", "bundles/echo/wrangler.toml", "bundles/google/wrangler.toml"] },
  { name: "approvals", port: PORTS.approvals, configs: ["approvals/wrangler.toml"] },
  { name: "fakes", port: PORTS.fakes, configs: ["test/fakes/wrangler.toml"] },
];

const varNames = (text) => new Set(text.split("\n").map((l) => /^([A-Za-z0-9_]+)=/.exec(l.trim())?.[1]).filter(Boolean));

/** Creates .dev.vars from the example, or adds the example's variables that an older copy lacks. */
export function prepare() {
  const vars = join(ROOT, ".dev.vars");
  const example = join(ROOT, ".dev.vars.example");
  if (!existsSync(vars)) copyFileSync(example, vars);
  else {
    const have = varNames(readFileSync(vars, "utf8"));
    const missing = readFileSync(example, "utf8").split("\n").filter((l) => { const n = /^([A-Za-z0-9_]+)=/.exec(l.trim())?.[1]; return n !== undefined && !have.has(n); });
    if (missing.length > 0) appendFileSync(vars, `\n${missing.join("\n")}\n`);
  }
  mkdirSync(join(ROOT, ".xdg"), { recursive: true });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => { socket.destroy(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts each process (`{ name, port, configs, vars? }`, port 0 = pick a free one) and resolves when each
 * answers GET /healthz. Returns the ports used, the captured logs and stop().
 */
export async function startWorkers(processes, { quiet = true, timeoutMs = 120_000 } = {}) {
  prepare();
  const children = [];
  const logs = [];
  const stop = () => Promise.all(children.map(({ child }) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  })));
  for (const p of processes) {
    const port = p.port === 0 ? await freePort() : p.port;
    if (await portOpen(port)) { await stop(); throw new Error(`port ${port} (${p.name}) is in use: stop the other strad stack (npm run dev) first`); }
    const inspector = await freePort();
    const vars = Object.entries(p.vars ?? {}).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
    const args = ["dev", ...p.configs.flatMap((c) => ["-c", c]), "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector), "--show-interactive-dev-session=false", ...vars];
    const child = spawn(join(ROOT, "node_modules/.bin/wrangler"), args, {
      cwd: ROOT,
      env: { ...process.env, XDG_CONFIG_HOME: join(ROOT, ".xdg"), WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Whole lines only, each with its process's name, so a log scan can tell who wrote what.
    const lineLogger = () => {
      let partial = "";
      return (chunk) => {
        const lines = (partial + chunk.toString()).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) {
          logs.push(`[${p.name}] ${line}\n`);
          if (!quiet) process.stdout.write(`[${p.name}] ${line}\n`);
        }
      };
    };
    child.stdout.on("data", lineLogger());
    child.stderr.on("data", lineLogger());
    children.push({ ...p, port, child });
  }
  const deadline = Date.now() + timeoutMs;
  for (const p of children) {
    for (;;) {
      if (p.child.exitCode !== null) { await stop(); throw new Error(`${p.name} exited early:\n${logs.join("")}`); }
      try {
        const r = await fetch(`http://127.0.0.1:${p.port}/healthz`);
        await r.body?.cancel();
        break;
      } catch {}
      if (Date.now() > deadline) { await stop(); throw new Error(`${p.name} did not start in time:\n${logs.join("")}`); }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return { stop, logs, ports: Object.fromEntries(children.map((c) => [c.name, c.port])) };
}

export function startStack(options) {
  return startWorkers(STACK, options);
}
