// Covers `npm run check-config [file]` (scripts/check-config.ts) run as a child process: "ok" and exit 0, or every error with its path and exit 1.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = join(ROOT, "node_modules", ".bin", "tsx");
const dir = mkdtempSync(join(tmpdir(), "strad-check-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the script as `npm run check-config` does; children run concurrently since each pays tsx's start-up. */
function run(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ["scripts/check-config.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const GOOD = `gateway:
  elicitation:
    allowedUrlPrefixes:
      - https://zimmer.tadasant.com/api/v1/elicitations/session/
callers:
  - id: s1
    kind: session
    roles: [user]
    tokenSecret: TOKEN_S1
servers:
  - slug: gmail-rw-external
    kind: bundle
    bundle: GOOGLE
    path: /gmail
    entitlements: [user]
    confirmations: true
    timeoutMs: 240000
    confirmationHeaders:
      CF-Access-Client-Id: "\${ZIMMER_CF_ACCESS_CLIENT_ID}"
`;

const BAD = `gateway:
  elicitation:
    allowedUrlPrefixes:
      - https://zimmer.tadasant.com/api/v1/elicitations/session
servers:
  - slug: a
    kind: bundle
    bundle: B
    path: /a
    entitlements: [u]
    confirmations: true
    skipConfirmations: true
    env:
      MODE: sekret-value-1
  - slug: b
    kind: bundle
    bundle: B
    path: /b
    entitlements: [u]
    confirmationHeaders:
      Content-Type: text/plain
    env:
      MODE: sekret-value-2
  - slug: a
    kind: remote-http
    url: https://remote.example/mcp
    entitlements: [u]
`;

describe.concurrent("check-config", { timeout: 60_000 }, () => {
  it("a valid file prints ok and exits 0", async () => {
    const r = await run(file("good.yaml", GOOD));
    expect(r).toMatchObject({ status: 0, stdout: "ok\n", stderr: "" });
  });

  it("with no argument it checks the checked-in strad.config.yaml", async () => {
    expect(await run()).toMatchObject({ status: 0, stdout: "ok\n" });
  });

  let bad: ReturnType<typeof run> | undefined;
  const runBad = () => (bad ??= run(file("bad.yaml", BAD)));

  it("an invalid file prints every error as <path>: <message> and exits 1", async () => {
    const r = await runBad();
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    for (const line of lines) expect(line).toMatch(/^[^\s:]+(\[\d+\][^\s:]*)*: \S/);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^gateway\.elicitation\.allowedUrlPrefixes\[0\]: prefix path must end in "\/"/),
        expect.stringMatching(/^servers\[0\]\.skipConfirmations: confirmations and skipConfirmations are both true/),
        expect.stringMatching(/^servers\[1\]\.confirmationHeaders: confirmationHeaders without confirmations: true/),
        expect.stringMatching(/^servers\[1\]\.confirmationHeaders\.Content-Type: "Content-Type" is set by the bundle itself/),
        expect.stringMatching(/^servers\[1\]\.env\.MODE: bundle B already has MODE with a different value/),
        expect.stringMatching(/^servers\[2\]\.slug: duplicate slug "a"/),
      ]),
    );
    expect(lines).toHaveLength(6);
  });

  it("an error never echoes a value from the file", async () => {
    const r = await runBad();
    expect(r.status).toBe(1);
    expect(r.stderr).not.toContain("sekret-value");
  });

  it("an unknown key is reported with the path of its object", async () => {
    const r = await run(file("typo.yaml", GOOD.replace("confirmations: true", "confirmatons: true")));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^servers\[0\]: .*"confirmatons"/m);
  });

  it("a YAML syntax error or a duplicate key is reported and exits 1", async () => {
    expect(await run(file("syntax.yaml", "servers: [\n"))).toMatchObject({ status: 1, stderr: expect.stringMatching(/^\(yaml\): /) });
    expect(await run(file("dup.yaml", "callers: []\ncallers: []\n"))).toMatchObject({ status: 1, stderr: expect.stringMatching(/^\(yaml\): /) });
  });

  it("a missing file is reported and exits 1", async () => {
    const missing = join(dir, "nope.yaml");
    expect(await run(missing)).toMatchObject({ status: 1, stderr: `${missing}: cannot read the file (ENOENT)\n` });
  });

  it("more than one argument prints the usage and exits 1", async () => {
    expect(await run("a.yaml", "b.yaml")).toMatchObject({ status: 1, stderr: expect.stringContaining("usage: npm run check-config [file]") });
  });
});
