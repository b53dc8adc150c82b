// A production rehearsal on this machine (issue 14 #7; docs/deploy.md, "Afterwards"). Nothing is deployed: every
// Worker is built exactly as `wrangler deploy` builds it (the gateway from its `main` with the production roster
// strad.config.yaml; no .dev.vars read) and runs on workerd, in three runtimes on free loopback ports. Each gets what
// a deploy gives it and nothing else: the roster's servers[].env as `npm run deploy` passes it (`--var`), exactly the
// secrets `npm run deploy:check` lists, and settings an operator can set. Cloudflare Access is played by a local key
// set (ACCESS_CERTS_URL) and an edge stand-in in front of https://approvals.example.com; Google by the Gmail fake
// (GMAIL_API_BASE_URL, GMAIL_TOKEN_URL). A person in Debian's Chromium, carrying an Access application token shaped
// as Cloudflare documents it, approves one send_email an MCP client asked for as the roster's caller alice.
// It needs no dev stack, so it runs in the processes project, beside the e2e half rather than inside it.

import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { Miniflare, Request as MiniflareRequest, Response as MiniflareResponse } from "miniflare";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeployWorker, planDeploy, type Secret } from "../../scripts/deploy-check";
// @ts-expect-error: a plain ES module without types
import { buildWorker, stackProcesses, startRuntime } from "../../scripts/stack.mjs";
import { gotoTraced, launchChromium, SHOTS } from "../e2e/browser";
import { bearer, connectLegacy, DEV_VARS, ROOT, textOf, waitFor } from "../e2e/helpers";
import { AccessEdge, AccessTeam, newServiceToken, relayed } from "../e2e/rehearsal/access";
import type { OutboxEntry } from "../fakes/gmail/store";

interface Runtime {
  url: string;
  miniflare: Miniflare;
  stop: () => Promise<void>;
}

/** The public host of the approval service in the production roster (its allowedUrlPrefixes and approvalUrlPrefixes). */
const APPROVALS_HOST = "approvals.example.com";
const APPROVALS_ORIGIN = `https://${APPROVALS_HOST}`;
const TEAM_DOMAIN = "https://strad-rehearsal.cloudflareaccess.com";
const AUDIENCE = randomBytes(32).toString("hex");
const PERSON_EMAIL = "casey.approver@example.com";
/** The Gmail fake's credentials for the person's mailbox (test/fakes/gmail/seed.ts; bundles/google/.dev.vars.example). */
const GMAIL = {
  clientId: "dev-gmail-client-person",
  clientSecret: "dev-gmail-secret-person-0123456789abcdef0123456789abcdef",
  refreshToken: "dev-gmail-refresh-person-0123456789abcdef0123456789abcdef",
  mailbox: "person@example.com",
};

/** What an operator invents and seeds with `wrangler secret put` (fresh for every run). */
const SECRETS = {
  aliceToken: randomBytes(32).toString("base64url"),
  serviceToken: newServiceToken(),
  sessionSecret: randomBytes(36).toString("base64url"),
  operatorToken: randomBytes(24).toString("base64url"),
};

/** The value seeded for each secret `npm run deploy:check` lists, by name; it lists exactly these. */
const SEEDED: Record<string, string> = {
  STRAD_TOKEN_ALICE: SECRETS.aliceToken,
  GMAIL_RW_EXTERNAL__APPROVALS_CF_ACCESS_CLIENT_ID: SECRETS.serviceToken.clientId,
  GMAIL_RW_EXTERNAL__APPROVALS_CF_ACCESS_CLIENT_SECRET: SECRETS.serviceToken.clientSecret,
  GMAIL_RW_EXTERNAL__GMAIL_CLIENT_ID: GMAIL.clientId,
  GMAIL_RW_EXTERNAL__GMAIL_CLIENT_SECRET: GMAIL.clientSecret,
  GMAIL_RW_EXTERNAL__GMAIL_REFRESH_TOKEN: GMAIL.refreshToken,
  SESSION_SECRET: SECRETS.sessionSecret,
  OPERATOR_TOKEN: SECRETS.operatorToken,
};

interface WorkerOptions {
  name: string;
  bindings?: Record<string, unknown>;
  [option: string]: unknown;
}

/**
 * A built Worker with what a deploy gives it: the roster's env rendered for it (`--var`), the operator's settings,
 * and the secrets `npm run deploy:check` lists for it, each seeded as `wrangler secret put` would.
 */
function deployed(worker: WorkerOptions, plan: { workers: DeployWorker[]; secrets: Secret[] }, settings: Record<string, string> = {}): WorkerOptions {
  const planned = plan.workers.find((w) => w.name === worker.name);
  if (planned === undefined) throw new Error(`npm run deploy:check does not deploy ${worker.name}`);
  const secrets: Record<string, string> = {};
  for (const secret of plan.secrets.filter((s) => s.worker === worker.name)) {
    const value = SEEDED[secret.name];
    if (value === undefined && secret.optional !== true) throw new Error(`npm run deploy:check lists ${secret.name} for ${worker.name}, which the rehearsal does not seed`);
    if (value !== undefined) secrets[secret.name] = value;
  }
  return { ...worker, bindings: { ...worker.bindings, ...planned.rendered, ...settings, ...secrets } };
}

const built = mkdtempSync(join(tmpdir(), "strad-rehearsal-"));
const team = new AccessTeam(TEAM_DOMAIN, AUDIENCE);
/** Each runtime's output, whole lines, kept here and never printed: it is what a log pipeline would receive. */
const output = { gateway: [] as string[], approvals: [] as string[], fakes: [] as string[] };
/** Hosts the Google bundle tried to reach other than the approval service and the Gmail fake. */
const strayHosts: string[] = [];

let fakes: Runtime | undefined;
let approvals: Runtime | undefined;
let gateway: Runtime | undefined;
let browser: Browser | undefined;
let edge: AccessEdge;

function collect(lines: string[]) {
  return (stdout: Readable, stderr: Readable) => {
    for (const stream of [stdout, stderr]) {
      let partial = "";
      stream.on("data", (chunk: Buffer) => {
        const parts = (partial + chunk.toString()).split("\n");
        partial = parts.pop() ?? "";
        lines.push(...parts);
      });
    }
  };
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const certsUrl = await team.start();

  // Google's stand-in: the fakes Worker, never deployed, built as the dev stack builds it.
  fakes = (await startRuntime([buildWorker("test/fakes/wrangler.toml", { into: built })], { onOutput: collect(output.fakes) })) as Runtime;
  const fakesOrigin = new URL(fakes.url).origin;

  // What `npm run deploy:check` reads from the tree: each Worker's rendered roster env and every secret to seed.
  const plan = planDeploy(ROOT);
  const listed = plan.secrets.map((s) => s.name).sort();
  if (JSON.stringify(listed) !== JSON.stringify(Object.keys(SEEDED).sort())) {
    throw new Error(`npm run deploy:check lists the secrets ${listed.join(", ")}; the rehearsal seeds ${Object.keys(SEEDED).sort().join(", ")}`);
  }

  // The approval service's top level is production; the operator sets the Access application's team domain and
  // audience (docs/deploy.md, step 4), where its certs are read, and the public origin it mints URLs under.
  approvals = (await startRuntime(
    [
      deployed(buildWorker("approvals/wrangler.toml", { into: built, production: true }), plan, {
        ACCESS_TEAM_DOMAIN: TEAM_DOMAIN,
        ACCESS_AUD: AUDIENCE,
        ACCESS_CERTS_URL: certsUrl,
        PUBLIC_ORIGIN: APPROVALS_ORIGIN,
      }),
    ],
    { onOutput: collect(output.approvals) },
  )) as Runtime;
  const approvalsRuntime = approvals;
  edge = new AccessEdge(APPROVALS_HOST, team, SECRETS.serviceToken, () => approvalsRuntime.miniflare);

  // The gateway and every bundle in one runtime (the tree's own list, as the dev stack finds it): the service
  // bindings and the CallRegistry the bundles bind by script_name are live. The Google bundle is pointed at the
  // Gmail fake, and its network is the stand-in's: the approval host sits behind Access, Google is the fake.
  const [gatewayConfig, ...bundleConfigs] = ((stackProcesses() as { name: string; configs: string[] }[]).find((p) => p.name === "gateway")?.configs ?? []) as string[];
  if (gatewayConfig === undefined) throw new Error("the tree has no gateway config");
  const bundles = bundleConfigs.map((config) => {
    const worker = deployed(buildWorker(config, { into: built, production: true }), plan);
    if (worker.name !== "strad-bundle-google") return worker;
    return {
      ...worker,
      bindings: { ...worker.bindings, GMAIL_API_BASE_URL: `${fakesOrigin}/gmail`, GMAIL_TOKEN_URL: `${fakesOrigin}/gmail/token` },
      outboundService: async (request: MiniflareRequest): Promise<MiniflareResponse> => {
        const url = new URL(request.url);
        const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
        if (url.host === APPROVALS_HOST) return edge.service({ url: request.url, method: request.method, headers: request.headers, body });
        if (url.origin === fakesOrigin) return relayed(await fetch(request.url, { method: request.method, headers: [...request.headers], body, redirect: "manual" }));
        strayHosts.push(url.host);
        throw new Error(`the rehearsal's network has no route to ${url.host}`);
      },
    };
  });
  if (!bundles.some((b) => b.name === "strad-bundle-google")) throw new Error("the tree has no Google bundle (bundles/google/wrangler.toml)");
  gateway = (await startRuntime([deployed(buildWorker(gatewayConfig, { into: built, production: true }), plan), ...bundles], {
    onOutput: collect(output.gateway),
  })) as Runtime;

  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  for (const runtime of [gateway, approvals, fakes]) await runtime?.stop().catch(() => {});
  await team.stop();
  rmSync(built, { recursive: true, force: true });
}, 60_000);

/** The operator mints an approval session through Access (the service token admits it; the operator token mints). */
async function mintSession(): Promise<{ sessionId: string; elicitationUrl: string; reviewUrl: string }> {
  const response = await edge.service({
    url: `${APPROVALS_ORIGIN}/api/v1/sessions`,
    method: "POST",
    headers: Object.entries({
      authorization: `Bearer ${SECRETS.operatorToken}`,
      "cf-access-client-id": SECRETS.serviceToken.clientId,
      "cf-access-client-secret": SECRETS.serviceToken.clientSecret,
    }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { sessionId: string; elicitationUrl: string; reviewUrl: string };
}

/**
 * A browser context in which every request to the approval host is answered by the approval runtime as Access
 * would pass it on after the person signed in: with their application token in Cf-Access-Jwt-Assertion. Nothing
 * else is reachable.
 */
async function signedInAs(email: string): Promise<BrowserContext> {
  if (browser === undefined) throw new Error("no browser");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const assertion = await team.personToken(email);
  await context.route("**/*", (route) => route.abort("addressunreachable"));
  await context.route(`${APPROVALS_ORIGIN}/**`, async (route) => {
    const request = route.request();
    const headers = new Headers(Object.entries(await request.allHeaders()));
    headers.set("cf-access-jwt-assertion", assertion);
    const response = await edge.forward(request.url(), request.method(), headers, request.postDataBuffer() ?? undefined);
    await route.fulfill({ status: response.status, headers: Object.fromEntries(response.headers), body: Buffer.from(await response.arrayBuffer()) });
  });
  return context;
}

/** The card's caller values as [label, value] pairs, in order, exactly as the page shows them. */
async function valuePairs(card: Locator): Promise<[string, string][]> {
  const labels = await card.getByTestId("prompt-value-label").allTextContents();
  const values = await card.getByTestId("prompt-value").allTextContents();
  return labels.map((label, i) => [label, values[i] ?? ""]);
}

interface AuditLine {
  event: "audit";
  outcome: string;
  slug: string | null;
  tool: string;
  caller: string | null;
  request: string | null;
  approver: string | null;
  status: number | null;
}

function auditLines(): AuditLine[] {
  return output.gateway
    .map((line) => line.slice(Math.max(0, line.indexOf("{"))))
    .filter((line) => line.startsWith('{"event":"audit"'))
    .map((line) => JSON.parse(line) as AuditLine);
}

async function outbox(): Promise<OutboxEntry[]> {
  if (fakes === undefined) throw new Error("no fakes runtime");
  return (await (await fetch(`${fakes.url}/gmail/_fake/outbox`)).json()) as OutboxEntry[];
}

describe("the production rehearsal", () => {
  it("the production gateway holds no dev caller: the dev roster's session token is refused 401", async () => {
    if (gateway === undefined) throw new Error("no gateway runtime");
    const call = (token: string) =>
      fetch(`${gateway?.url}/mcp?servers=echo`, {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "rehearsal" } } }),
      });
    const dev = await call(DEV_VARS.STRAD_TOKEN_DEV_SESSION as string);
    await dev.body?.cancel();
    expect(dev.status).toBe(401);
    expect(dev.headers.get("www-authenticate")).toMatch(/^Bearer/);
    // The roster's own caller, seeded as `wrangler secret put STRAD_TOKEN_ALICE` would, is who it lets in.
    const alice = await call(SECRETS.aliceToken);
    await alice.body?.cancel();
    expect(alice.status).toBe(200);
  });

  it("a production build runs as deployed: a person signed in through Access approves one send_email on the review page, and the Gmail fake sends it once", async () => {
    if (gateway === undefined) throw new Error("no gateway runtime");
    const session = await mintSession();
    expect(session.elicitationUrl.startsWith(`${APPROVALS_ORIGIN}/api/v1/elicitations/session/`)).toBe(true);
    expect(session.reviewUrl.startsWith(`${APPROVALS_ORIGIN}/review/`)).toBe(true);

    // The person opens the review URL the operator handed them, signed in through Access.
    const context = await signedInAs(PERSON_EMAIL);
    let page: Page | undefined;
    try {
      page = await context.newPage();
      await gotoTraced(page, session.reviewUrl);
      // The page answers as the person Access verified, or with an error page saying why not.
      await page.getByTestId("identity").or(page.getByTestId("page-error")).first().waitFor({ timeout: 30_000 });
      expect(await page.getByTestId("page-error").allTextContents()).toEqual([]);
      expect(await page.getByTestId("identity").textContent()).toBe(PERSON_EMAIL);
      expect(await page.getByTestId("dev-mode-banner").count()).toBe(0);

      // The agent, as the roster's caller alice, asks for a send on the person's mailbox.
      const subject = `Rehearsal ${Date.now().toString(36)}`;
      const client = await connectLegacy("gmail-rw-external", { ...bearer(SECRETS.aliceToken), "x-elicitation-url": session.elicitationUrl }, gateway.url);
      const call = client.callTool("send_email", { to: ["grace@example.com"], subject, text: "Sent after a person's yes through Access." }, { timeout: 120_000 }).finally(() => client.close());
      call.catch(() => {});

      // The prompt reaches the page while the call waits; a call that ends first says why in the failure.
      const card = page.getByTestId("prompt").first();
      const early = call.then(
        (r) => `the call ended before any prompt reached the page: ${textOf(r)}`,
        (e: Error) => `the call failed before any prompt reached the page: ${e.message}`,
      );
      const shown = await Promise.race([
        card
          .getByTestId("prompt-values")
          .waitFor({ timeout: 60_000 })
          .then(() => "shown"),
        early,
      ]);
      expect(shown).toBe("shown");
      expect((await card.getByTestId("prompt-line").first().textContent())?.trim()).toBe(`gmail-rw-external: This will send an email from ${GMAIL.mailbox} to 1 recipient(s).`);
      expect(await valuePairs(card)).toEqual([
        ["To:", "grace@example.com"],
        ["Subject:", subject],
        ["Text body:", "41 B"],
      ]);
      const requestId = await card.getAttribute("data-request-id");
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      await page.screenshot({ path: join(SHOTS, "rehearsal-pending.png"), fullPage: true });

      await card.getByTestId("prompt-confirm").check();
      await card.getByTestId("prompt-accept").click();
      const result = await call;
      expect(result.isError, textOf(result)).not.toBe(true);
      expect(textOf(result)).toMatch(/^Sent from person@example\.com: Gmail message \S+ in thread \S+\.$/);
      await expect.poll(async () => card.getAttribute("data-status")).toBe("accept");
      expect(await card.getByTestId("prompt-outcome").textContent()).toContain(`by ${PERSON_EMAIL}`);
      await page.screenshot({ path: join(SHOTS, "rehearsal-accepted.png"), fullPage: true });

      // Exactly one message went out, to whom and with what the person saw.
      const sent = await outbox();
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ via: "send", account: GMAIL.mailbox, from: GMAIL.mailbox, to: ["grace@example.com"], cc: [], bcc: [], subject });

      // The bundle's audit trail names the person Access verified, then the claim and the write, for one request.
      const lines = await waitFor(async () => {
        const mine = auditLines().filter((l) => l.request === requestId);
        return mine.some((l) => l.outcome === "written") ? mine : undefined;
      }, 10_000);
      expect(lines.map((l) => l.outcome)).toEqual(["asked", "approved", "claimed", "written"]);
      for (const line of lines) expect(line).toMatchObject({ slug: "gmail-rw-external", tool: "send_email", caller: "alice", request: requestId });
      expect(lines.find((l) => l.outcome === "approved")?.approver).toBe(PERSON_EMAIL);
      expect(lines.find((l) => l.outcome === "claimed")?.approver).toBe(PERSON_EMAIL);
      expect(lines.find((l) => l.outcome === "written")).toMatchObject({ approver: PERSON_EMAIL, status: 200 });

      // Every approval request the bundle made (and the operator's minting) passed Access with the seeded service
      // token; the bundle reached nothing but the approval host and the Gmail fake; the team's certs were fetched.
      expect(edge.entries.filter((e) => e.outcome === "refused")).toEqual([]);
      expect(edge.entries.filter((e) => e.method === "POST" && e.path.startsWith("/api/v1/elicitations/session/"))).toHaveLength(1);
      expect(edge.entries.some((e) => e.method === "GET" && e.path.endsWith(`/${requestId}`))).toBe(true);
      expect(strayHosts).toEqual([]);
      expect(team.certsFetches).toBeGreaterThan(0);
    } finally {
      await page?.close().catch(() => {});
      await context.close().catch(() => {});
    }
  }, 180_000);
});
