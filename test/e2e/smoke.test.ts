// Covers `npm run smoke -- <gateway-url> <token>` (scripts/smoke.ts) against the local stack: every step passes for a session token on both revisions, the guarded call is refused before anything is read or written, and a wrong token, a caller that cannot see what a step needs and a gateway that refuses connections each fail naming the step; the token is never printed.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIRMED_TOOLS as ECHO_CONFIRMED } from "../../bundles/echo/echo.demo";
import { CONFIRMED_TOOLS as GOOGLE_CONFIRMED } from "../../bundles/google/google.tools";
import { GUARDED_PROBES } from "../../scripts/smoke";
// @ts-expect-error: plain ESM helper without types
import { freePort } from "../../scripts/stack.mjs";
import { FAKES, GATEWAY, ROOT, recorder, TOKENS } from "./helpers";

const TSX = join(ROOT, "node_modules", ".bin", "tsx");
const STEPS = ["discover", "initialize", "tools/list", "echo", "refusal"];

type Run = { status: number | null; stdout: string; stderr: string };

/** Runs the script as `npm run smoke -- …` does, against the dev roster the local stack's gateway is built with. */
function smoke(url: string, token: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(TSX, ["scripts/smoke.ts", url, token, "--roster", "strad.dev.yaml", ...args], { cwd: ROOT, encoding: "utf8", timeout: 90_000 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

/** Each step's line: "PASS|FAIL|SKIP <step>: <what>". */
function steps(stdout: string): Map<string, { verdict: string; detail: string }> {
  return new Map([...stdout.matchAll(/^(PASS|FAIL|SKIP) ([a-z/]+): (.*)$/gm)].map((m) => [m[2] as string, { verdict: m[1] as string, detail: m[3] as string }]));
}

function expectNoToken(r: Run, token: string): void {
  expect(token.length).toBeGreaterThan(15);
  expect(r.stdout).not.toContain(token);
  expect(r.stderr).not.toContain(token);
}

const demoWrites = async () => (await recorder.events()).filter((e) => e.kind === "demo_write").length;
const gmailRequests = async () => ((await (await fetch(`${FAKES}/gmail/_fake/requests`)).json()) as unknown[]).length;

describe("npm run smoke against the local stack", () => {
  it("passes every step for a session token, and its guarded call writes nothing", async () => {
    const writesBefore = await demoWrites();
    const r = await smoke(GATEWAY, TOKENS.session);
    expect(r.stderr).toBe("");
    expect(r.status, r.stdout).toBe(0);
    const got = steps(r.stdout);
    expect([...got.keys()]).toEqual(STEPS);
    for (const step of STEPS) expect(got.get(step)?.verdict, `${step}: ${got.get(step)?.detail}`).toBe("PASS");
    expect(got.get("discover")?.detail).toBe("strad 0.1.0 supports 2026-07-28");
    expect(got.get("initialize")?.detail).toBe("2025-11-25 with strad 0.1.0; notifications/initialized answered 202");
    expect(got.get("tools/list")?.detail).toMatch(/^\d+ tools: .*\becho__echo\b.*\becho-confirmed__demo_write\b/);
    expect(got.get("echo")?.detail).toBe("echo__echo answered its text back");
    expect(got.get("refusal")?.detail).toMatch(
      /^echo-confirmed__demo_write without X-Elicitation-Url was refused before it acted: Refused: the gateway refused the approval channel: the \/mcp request carried no X-Elicitation-Url header/,
    );
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("smoke: PASS: every step passed");
    expectNoToken(r, TOKENS.session);
    expect(await demoWrites()).toBe(writesBefore);
  });

  it("on 2026-07-28, refuses Gmail's send_email on the person's mailbox before the bundle reads or sends anything", async () => {
    const before = await gmailRequests();
    const r = await smoke(`${GATEWAY}/mcp`, TOKENS.session, "--revision", "2026-07-28", "--confirmed", "gmail-rw-external");
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^smoke: .*tool calls on 2026-07-28\)$/m);
    expect(steps(r.stdout).get("refusal")).toEqual({
      verdict: "PASS",
      detail: expect.stringMatching(/^gmail-rw-external__send_email without X-Elicitation-Url was refused before it acted: Refused: /),
    });
    // Not one Gmail API request: the refusal came before the tool resolved its target or minted a token.
    expect(await gmailRequests()).toBe(before);
    expectNoToken(r, TOKENS.session);
  });

  it("fails at initialize for a wrong token (401), runs nothing after it, and prints neither token", async () => {
    const wrong = `not-${TOKENS.session}`;
    const r = await smoke(GATEWAY, wrong);
    expect(r.status).toBe(1);
    const got = steps(r.stdout);
    expect(got.get("discover")).toEqual({ verdict: "FAIL", detail: "server/discover on 2026-07-28: HTTP 401: missing or unknown bearer token" });
    expect(got.get("initialize")).toEqual({ verdict: "FAIL", detail: "initialize on 2025-11-25: HTTP 401: missing or unknown bearer token" });
    for (const step of ["tools/list", "echo", "refusal"]) expect(got.get(step)?.verdict).toBe("SKIP");
    expect(r.stdout).toMatch(/^smoke: FAIL: discover, initialize failed; tools\/list, echo, refusal not run$/m);
    expectNoToken(r, wrong);
    expectNoToken(r, TOKENS.session);
  });

  it("fails at refusal for dev-reader, which sees echo but no slug that asks, naming what it looked for", async () => {
    const r = await smoke(GATEWAY, TOKENS.reader);
    expect(r.status).toBe(1);
    const got = steps(r.stdout);
    expect(got.get("echo")).toEqual({ verdict: "PASS", detail: "echo answered its text back" });
    expect(got.get("refusal")).toEqual({
      verdict: "FAIL",
      detail: expect.stringMatching(/^no guarded tool \(demo_write, send_email\) of a slug with confirmations: true in strad\.dev\.yaml \(echo-confirmed, .*\) is visible to this token$/),
    });
    expect(r.stdout).toMatch(/^smoke: FAIL: refusal failed$/m);
    expectNoToken(r, TOKENS.reader);
  });

  it("fails at echo when the token's selection holds no echo tool, and still checks the refusal", async () => {
    const r = await smoke(`${GATEWAY}/mcp?servers=gmail-rw-external`, TOKENS.session);
    expect(r.status).toBe(1);
    const got = steps(r.stdout);
    expect(got.get("tools/list")?.detail).toMatch(/^7 tools: search_messages, .*send_email$/);
    expect(got.get("echo")).toEqual({ verdict: "FAIL", detail: 'no echo tool is visible to this token (looked for "echo" or "<slug>__echo" among 7 tools)' });
    expect(got.get("refusal")?.verdict).toBe("PASS");
    expect(r.stdout).toMatch(/^smoke: FAIL: echo failed$/m);
    expectNoToken(r, TOKENS.session);
  });

  it("fails at the handshake against a port where nothing listens, naming the refused connection", async () => {
    const port = (await freePort()) as number;
    const r = await smoke(`http://127.0.0.1:${port}`, TOKENS.session, "--timeout", "5000");
    expect(r.status).toBe(1);
    const got = steps(r.stdout);
    expect(got.get("initialize")).toEqual({ verdict: "FAIL", detail: `initialize on 2025-11-25: could not reach http://127.0.0.1:${port}/mcp (ECONNREFUSED)` });
    expect(got.get("refusal")?.verdict).toBe("SKIP");
    expectNoToken(r, TOKENS.session);
  });

  it("refuses a missing token with the usage and exit 2, and knows only tools its bundles register as guarded", async () => {
    const r = await new Promise<Run>((resolve) => {
      execFile(TSX, ["scripts/smoke.ts", GATEWAY], { cwd: ROOT, encoding: "utf8", env: { ...process.env, STRAD_SMOKE_TOKEN: "" } }, (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }),
      );
    });
    expect(r).toMatchObject({ status: 2, stdout: "", stderr: expect.stringMatching(/^smoke: no token: pass it after the URL, or set STRAD_SMOKE_TOKEN\nusage: npm run smoke -- <gateway-url>/) });
    // A probe the bundles do not guard would not show the refusal the smoke claims.
    for (const tool of Object.keys(GUARDED_PROBES)) expect(ECHO_CONFIRMED.has(tool) || GOOGLE_CONFIRMED.has(tool), tool).toBe(true);
  });
});
