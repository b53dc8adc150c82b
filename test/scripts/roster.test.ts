// Covers `npm run roster -- <gateway-url> list|add|set|replace|remove|diff|history` (scripts/roster.ts) against the
// gateway served in Node on a loopback port: the token from the environment only, https or loopback http only, each
// command's effect and output, a refusal's message, and one run as the child process npm starts.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ACCESS_TOKEN_VARIABLE, run, TOKEN_VARIABLE } from "../../scripts/roster";
import { httpGateway, MemoryOverlay, overlayBinding } from "../worker/helpers/overlay";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ADMIN = "admin-token-0123456789abcdef";
const ROSTER = `callers:
  - { id: ops, kind: admin, roles: [], tokenSecret: TOKEN_ADMIN }
  - { id: alice, kind: session, roles: [user], tokenSecret: TOKEN_ALICE }
servers:
  - { slug: plain, kind: bundle, bundle: ECHO, path: /echo, entitlements: [user] }
  - { slug: guarded, kind: bundle, bundle: ECHO, path: /echo-confirmed, entitlements: [user], confirmations: true }
`;
const store = new MemoryOverlay();
let gateway: { url: string; stop: () => Promise<void> };
const dir = mkdtempSync(join(tmpdir(), "strad-roster-cli-"));

beforeAll(async () => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  gateway = await httpGateway(ROSTER, { TOKEN_ADMIN: ADMIN, TOKEN_ALICE: "alice-token-0123456789abcdef", CALLS: {}, ROSTER_OVERLAY: overlayBinding(store) });
});
afterAll(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

async function cli(args: string[], env: Record<string, string | undefined> = { [TOKEN_VARIABLE]: ADMIN }, stdin = ""): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    args,
    env,
    (l) => out.push(l),
    (l) => err.push(l),
    () => stdin,
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("npm run roster", () => {
  it("adds a remote server from a file, lists it marked as runtime, diffs it, changes and removes it, and shows the history", async () => {
    const file = join(dir, "added.yaml");
    writeFileSync(file, "slug: added\nkind: remote-http\nurl: https://added.example/mcp\nentitlements: [user]\n");
    const added = await cli([gateway.url, "add", file]);
    expect(added).toMatchObject({ code: 0 });
    expect(added.out).toContain("add added: written, overlay version 1 (added)");
    const listed = await cli([gateway.url, "list"]);
    expect(listed.out).toMatch(/^\[RT\+\] added \(remote-http https:\/\/added\.example\/mcp\)/m);
    expect(listed.out).toMatch(/^ {6}plain \(bundle ECHO\/echo\)/m);
    expect((await cli([gateway.url, "set", "plain", "-"], undefined, '{"timeoutMs": 9000}')).code).toBe(0);
    const diff = await cli([gateway.url, "diff"]);
    expect(diff.out).toContain("+ added:");
    expect(diff.out).toContain('~ plain: {"timeoutMs":9000}');
    expect((await cli([gateway.url, "list"])).out).toMatch(/^\[RT~\] plain .*timeoutMs: 9000/m);
    expect((await cli([gateway.url, "remove", "added"])).code).toBe(0);
    const history = await cli([gateway.url, "history"]);
    expect(history.out.split("\n").map((l) => l.split(" ").slice(1, 4).join(" "))).toEqual(["ops remove added", "ops patch plain", "ops add added"]);
  });

  it("a refused write exits 1 with the gateway's reason naming the key, and writes nothing", async () => {
    const before = store.version;
    const refused = await cli([gateway.url, "set", "guarded", "-"], undefined, "confirmations: false\n");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("HTTP 422 GUARD_KEY");
    expect(refused.err).toContain('"confirmations"');
    expect(store.version).toBe(before);
  });

  it("reads the token from the environment only, and refuses to send it anywhere but https or a loopback host", async () => {
    const none = await cli([gateway.url, "list"], {});
    expect(none.code).toBe(1);
    expect(none.err).toContain(`set ${TOKEN_VARIABLE}`);
    for (const url of ["http://gateway.example", "http://10.0.0.1:8787", "ftp://127.0.0.1"]) {
      const sent = vi.spyOn(globalThis, "fetch");
      const r = await cli([url, "list"]);
      expect(r.code).toBe(1);
      expect(r.err).toContain("https only");
      expect(sent).not.toHaveBeenCalled();
      sent.mockRestore();
    }
    // A token on the command line is an extra argument: usage, and nothing sent.
    expect((await cli([gateway.url, "list", ADMIN])).code).toBe(1);
    const wrong = await cli([gateway.url, "list"], { [TOKEN_VARIABLE]: "not-the-admin-token-0123" });
    expect(wrong).toMatchObject({ code: 1 });
    expect(wrong.err).toContain("HTTP 401");
  });

  it("runs as npm starts it: tsx scripts/roster.ts with the token in the environment", async () => {
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      // 60 s: tsx compiles the script on its first run; 1-4 s measured, several times that under load.
      execFile(
        join(ROOT, "node_modules/.bin/tsx"),
        ["scripts/roster.ts", gateway.url, "list"],
        { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, [TOKEN_VARIABLE]: ADMIN } },
        (error, stdout) => resolve({ code: error === null ? 0 : (error.code as number | null), stdout }),
      );
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("overlay version");
    expect(result.stdout).toContain("guarded (bundle ECHO/echo-confirmed)");
  });
});

describe("npm run roster with an operator's Cloudflare Access token", () => {
  it("sends STRAD_ACCESS_TOKEN as Cf-Access-Jwt-Assertion when STRAD_ADMIN_TOKEN is unset, and the admin token alone when both are set", async () => {
    const seen: Record<string, string | undefined>[] = [];
    const server = createServer((req, res) => {
      seen.push({ authorization: req.headers.authorization, assertion: req.headers["cf-access-jwt-assertion"] as string | undefined });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ version: 0, overlayError: null, servers: [], overlay: { add: [], change: [] } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await cli([url, "list"], { [ACCESS_TOKEN_VARIABLE]: "header.payload.signature" })).code).toBe(0);
      expect((await cli([url, "list"], { [ACCESS_TOKEN_VARIABLE]: "header.payload.signature", [TOKEN_VARIABLE]: ADMIN })).code).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(seen).toEqual([
      { authorization: undefined, assertion: "header.payload.signature" },
      { authorization: `Bearer ${ADMIN}`, assertion: undefined },
    ]);
    // Neither set: nothing is sent, and the message names both variables.
    const none = await cli([url, "list"], {});
    expect(none.code).not.toBe(0);
    expect(none.err).toContain(ACCESS_TOKEN_VARIABLE);
  });
});
