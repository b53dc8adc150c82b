// The 1Password bundle as deployed (`wrangler deploy --dry-run`, the SDK's WASM core a CompiledWasm module through sdk-loader.mjs) on workerd through Miniflare, with no network: the official SDK loads and its sign-in fails cleanly, naming the cause, for a malformed token and for a well-formed one it cannot take to 1Password; the Connect client reads the Connect fake; and the loader refuses an SDK glue it does not know.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { workerdLoader, writeLoader } from "../../../bundles/onepassword/sdk-loader.mjs";
// @ts-expect-error: plain ESM helper without types
import { buildWorker, startRuntime } from "../../../scripts/stack.mjs";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "../../../scripts/workers.mjs";
import type { ServerEntry } from "../../../worker/roster";
import { callUpstream } from "../../../worker/upstream";
import { createConnectFake } from "../../fakes/onepassword/connect.fake";
import { IDS, PROVISIONING_TOKEN } from "../../fakes/onepassword/seed";
import { gatewayStandIn } from "../kit/helpers/gateway-binding";

const out = mkdtempSync(join(tmpdir(), "strad-onepassword-workerd-"));
const outbound: string[] = [];
const connect = createConnectFake();
type Runtime = { url: string; miniflare: { dispatchFetch: (url: string, init: RequestInit) => Promise<Response> }; stop: () => Promise<void> };
let built: Record<string, unknown>;
const runtimes: Runtime[] = [];

/** The bundle (`build`: the full one by default) alone in a runtime with these variables and no network: the Connect fake answers its own host, everything else is recorded and refused. */
async function start(bindings: Record<string, string>, build: Record<string, unknown> = built): Promise<Runtime> {
  // No gateway here, so no CallRegistry binding (nothing in these tests writes).
  const { durableObjects: _calls, ...worker } = build;
  const runtime = (await startRuntime([
    // The runtime's URL reaches the bundle as the gateway's binding does: a bundle answers nothing else (R-CHAN-13).
    gatewayStandIn(worker),
    {
      ...worker,
      bindings,
      outboundService: async (request: Request) => {
        const url = new URL(request.url);
        if (url.host === "connect.strad.test") return connect.app.fetch(new Request(request.url.replace("https://connect.strad.test/onepassword", "http://connect"), request));
        outbound.push(`${request.method} ${url.origin}${url.pathname}`);
        throw new Error("no network in this test");
      },
    },
  ])) as Runtime;
  runtimes.push(runtime);
  return runtime;
}

/** A service-account token of the documented shape (base64url JSON after "ops_") for an account that does not exist. */
const b64u = (text: string) => Buffer.from(text).toString("base64url");
const WELL_FORMED = `ops_${b64u(
  JSON.stringify({
    signInAddress: "strad-spike.1password.invalid",
    email: "service@example.com",
    secretKey: "A3-C4ZJMN-PQTZTL-HGL84-G64M7-KVZRN-4ZVP6",
    srpX: "1".repeat(64),
    muk: { alg: "A256GCM", ext: true, k: b64u("12345678901234567890123456789012"), key_ops: ["encrypt", "decrypt"], kty: "oct", kid: "mp" },
    userAuth: { alg: "PBES2g-HS256", iterations: 100000, method: "SRPg-4096", salt: b64u("salt") },
    deviceUuid: "abcdefghijklmnopqrstuvwx12",
    throttleSecret: { seed: "a".repeat(64), uuid: "abcdefghijklmnopqrstuvwx34" },
  }),
)}`;

let sdk: Runtime;
let connected: Runtime;

beforeAll(async () => {
  built = buildWorker("bundles/onepassword/wrangler.toml", { into: out });
  sdk = await start({ ONEPASSWORD__OP_SERVICE_ACCOUNT_TOKEN: "ops_not-a-token", ONEPASSWORD_PROVISIONING__OP_SERVICE_ACCOUNT_TOKEN: WELL_FORMED });
  connected = await start({ ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST: "https://connect.strad.test/onepassword", ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN: PROVISIONING_TOKEN });
}, 180_000);

afterAll(async () => {
  for (const r of runtimes) await r.stop();
  rmSync(out, { recursive: true, force: true });
});

function server(mount: string): ServerEntry {
  return { slug: mount, kind: "bundle", bundle: "ONEPASSWORD", path: `/${mount}` } as unknown as ServerEntry;
}

async function call(runtime: Runtime, mount: string, name: string, args: Record<string, unknown>): Promise<string> {
  const answer = await callUpstream({
    server: server(mount),
    method: "tools/call",
    params: { name, arguments: args },
    meta: {},
    headers: {},
    signal: new AbortController().signal,
    fetcher: (url, init) => runtime.miniflare.dispatchFetch(url, init),
  });
  if (!answer.ok) throw new Error(`tools/call failed: ${answer.error.code}`);
  return ((answer.result.content as { text: string }[]) ?? []).map((c) => c.text).join("");
}

describe("the official SDK on workerd", { timeout: 120_000 }, () => {
  it("builds with its WASM core as a CompiledWasm module beside the script: over the Free plan's 3 MB gzipped, within the Paid plan's 10 MB", () => {
    const dir = join(out, "strad-bundle-onepassword");
    const shipped = readdirSync(dir).filter((f) => f.endsWith(".js") || f.endsWith(".wasm"));
    expect(shipped.filter((f) => f.endsWith(".wasm"))).toHaveLength(1);
    expect(readFileSync(join(dir, "onepassword.app.js"), "utf8")).toMatch(/core_bg\.wasm/);
    const gzipped = shipped.reduce((n, f) => n + gzipSync(readFileSync(join(dir, f))).byteLength, 0);
    expect(gzipped).toBeGreaterThan(3 * 1024 * 1024);
    expect(gzipped).toBeLessThan(10 * 1024 * 1024);
  });

  it("fails a malformed service-account token cleanly, naming the cause, with no request sent", async () => {
    const text = await call(sdk, "onepassword", "onepassword_list_vaults", {});
    expect(text).toBe("Not done: the mount's OP_SERVICE_ACCOUNT_TOKEN is not a valid service-account token.");
    expect(outbound).toEqual([]);
  });

  it("fails a well-formed token it cannot take to 1Password cleanly: one sign-in request, refused, and an error naming the cause", async () => {
    const text = await call(sdk, "onepassword-provisioning", "onepassword_list_vaults", {});
    expect(text).toBe("Not done: 1Password refused the service account's sign-in, or could not be reached.");
    expect(outbound).toEqual(["POST https://strad-spike.1password.invalid/api/v3/auth/start"]);
    // The isolate is still serving.
    expect(await call(sdk, "onepassword", "onepassword_list_vaults", {})).toMatch(/^Not done: /);
  });
});

describe("the Connect client on workerd", { timeout: 120_000 }, () => {
  it("serves a mount with Connect credentials and no service-account token, from that mount's own account", async () => {
    connect.store.reset();
    const text = await call(connected, "onepassword-provisioning", "onepassword_list_items", { vault_id: IDS.provisioning });
    expect(JSON.parse(text)).toEqual({ vault_id: IDS.provisioning, items: [{ id: IDS.bootstrap, title: "Bootstrap key", category: "API_CREDENTIAL", tags: ["bootstrap"] }] });
    expect(connect.store.requests.map((r) => `${r.method} ${r.path} ${r.account} ${r.status}`)).toEqual([`GET /v1/vaults/${IDS.provisioning}/items provisioning 200`]);
    // The shared mount has no credentials of its own here, and the bare ones are unset: it refuses, naming them.
    expect(await call(connected, "onepassword", "onepassword_list_vaults", {})).toMatch(/^Refused: this mount has no 1Password credentials: set ONEPASSWORD__OP_SERVICE_ACCOUNT_TOKEN/);
  });
});

describe("the Connect-only build on workerd (wrangler.toml [env.connect])", { timeout: 120_000 }, () => {
  const connectOut = mkdtempSync(join(tmpdir(), "strad-onepassword-connect-"));
  let only: Runtime;
  beforeAll(async () => {
    only = await start(
      {
        ONEPASSWORD__OP_SERVICE_ACCOUNT_TOKEN: WELL_FORMED,
        ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST: "https://connect.strad.test/onepassword",
        ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN: PROVISIONING_TOKEN,
      },
      buildWorker("bundles/onepassword/wrangler.toml", { into: connectOut, env: "connect" }),
    );
  }, 180_000);
  afterAll(() => rmSync(connectOut, { recursive: true, force: true }));

  it("ships no WebAssembly and none of the SDK, and fits the Free plan's 3 MB gzipped", () => {
    const dir = join(connectOut, "strad-bundle-onepassword");
    const shipped = readdirSync(dir).filter((f) => f.endsWith(".js") || f.endsWith(".wasm"));
    expect(shipped).toEqual(["onepassword.app.js"]);
    const script = readFileSync(join(dir, "onepassword.app.js"), "utf8");
    expect(script).not.toMatch(/core_bg\.wasm|invoke_sync|1password\/sdk-core/);
    expect(gzipSync(readFileSync(join(dir, "onepassword.app.js"))).byteLength).toBeLessThan(3 * 1024 * 1024);
  });

  it("refuses a service-account mount, naming the switch and the variables, with no request sent", async () => {
    const before = outbound.length;
    const text = await call(only, "onepassword", "onepassword_list_vaults", {});
    expect(text).toBe(
      "Refused: this deployment's 1Password bundle is the Connect-only build (npm run deploy -- --onepassword connect), which has no service-account client, and this mount's ONEPASSWORD__OP_SERVICE_ACCOUNT_TOKEN is set (it is read before Connect's): delete it and seed ONEPASSWORD__OP_CONNECT_HOST and ONEPASSWORD__OP_CONNECT_TOKEN, or deploy the full build. Nothing was read, revealed or written.",
    );
    expect(outbound.slice(before)).toEqual([]);
  });

  it("serves a Connect mount as the full build does", async () => {
    connect.store.reset();
    const text = await call(only, "onepassword-provisioning", "onepassword_list_items", { vault_id: IDS.provisioning });
    expect(JSON.parse(text)).toEqual({ vault_id: IDS.provisioning, items: [{ id: IDS.bootstrap, title: "Bootstrap key", category: "API_CREDENTIAL", tags: ["bootstrap"] }] });
    expect(connect.store.requests.map((r) => `${r.method} ${r.path} ${r.account} ${r.status}`)).toEqual([`GET /v1/vaults/${IDS.provisioning}/items provisioning 200`]);
  });
});

describe("the SDK loader", () => {
  it("refuses a glue that no longer reads its WASM the way it replaces", () => {
    expect(() => workerdLoader("module.exports.x = 1;", "./core_bg.wasm")).toThrow(/no longer reads its WASM/);
  });

  // CI once failed here: a copy of the tree shallower than the checkout, its node_modules a link to the checkout's,
  // wrote a loader importing the WASM by a path relative to the link, which from the file's real place named a folder
  // that does not exist, and every build of the bundle failed until the next one rewrote it.
  it("imports the WASM by a path that holds from where the loader really is, when node_modules is a link to a deeper folder", () => {
    const top = mkdtempSync(join(tmpdir(), "strad-loader-"));
    try {
      const real = join(top, "deep", "er", "still", "node_modules");
      const sdk = dirname(createRequire(join(ROOT, "package.json")).resolve("@1password/sdk-core/package.json"));
      cpSync(sdk, join(real, "@1password", "sdk-core"), { recursive: true });
      const root = join(top, "tree");
      mkdirSync(root);
      writeFileSync(join(root, "package.json"), "{}");
      symlinkSync(real, join(root, "node_modules"));
      const loader = writeLoader(root);
      const wasm = /^import wasmModule from "([^"]+)";$/m.exec(readFileSync(loader, "utf8"))?.[1] ?? "";
      expect(wasm).toBe("../../@1password/sdk-core/nodejs/core_bg.wasm");
      expect(existsSync(resolve(dirname(realpathSync(loader)), wasm))).toBe(true);
      // A second build with nothing changed leaves the file alone: builds side by side never see it half written.
      const before = statSync(loader).mtimeMs;
      writeLoader(root);
      expect(statSync(loader).mtimeMs).toBe(before);
      expect(readdirSync(dirname(loader))).toEqual(["sdk-core.workerd.mjs"]);
    } finally {
      rmSync(top, { recursive: true, force: true });
    }
  });
});
