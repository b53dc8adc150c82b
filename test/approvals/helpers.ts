// Shared by the approval service's tests: start the Worker alone on a free port, mint sessions, build
// create bodies, and read the review page's CSRF token the way the browser script does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { DEV_ACCESS_HEADERS, DEV_OPERATOR_TOKEN, mintSession, type Session } from "../../approvals/dev-api.mjs";
// @ts-expect-error: plain ESM helper without types
import { buildWorker, startRuntime } from "../../scripts/stack.mjs";

export { DEV_ACCESS_HEADERS, DEV_OPERATOR_TOKEN };

/**
 * workerd closes a kept-alive connection 5 s after its last answer, and Node's fetch keeps one for 4 s: on a loaded
 * machine the client can still pick a connection the server is closing, and the request fails with ECONNRESET (or
 * undici's "other side closed") before it was read (seen twice in clean-clone runs, on a burst of 100 creates after a
 * 2.6 s pause). Every fetch of an approval service test file retries such a failure once, as an HTTP client retries a
 * request on a reused connection that closed under it. Nothing is hidden: a request the service had taken would come
 * back a second time as a duplicate (a create's 409, a decision's 409), which the tests would see.
 */
export function retryOnReset(fetcher: typeof fetch): typeof fetch {
  const reset = (error: unknown) => {
    const code = (error as { cause?: { code?: unknown } })?.cause?.code;
    return code === "ECONNRESET" || code === "UND_ERR_SOCKET";
  };
  return async (input, init) => {
    try {
      return await fetcher(input, init);
    } catch (error) {
      // Only a body that can be sent again: a string, bytes, or none.
      const body = init?.body;
      if (!reset(error) || (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array))) throw error;
      return fetcher(input, init);
    }
  };
}
globalThis.fetch = retryOnReset(globalThis.fetch);
export const CONFIG = "approvals/wrangler.toml";
export const START_TIMEOUT_MS = 180_000;

export interface Running {
  origin: string;
  stop: () => Promise<void>;
}

/**
 * The approval service alone, built as deployed and run on workerd through Miniflare with its folder's .dev.vars, as
 * the e2e stack runs it; `vars` over those, as `wrangler dev --var` would set them. Its Durable Objects keep their
 * storage in memory, gone when it stops. Not under `wrangler dev`: its proxy and file watcher have no part in what
 * these tests check, its proxy words a reset connection as a 503 ("Your worker restarted mid-request", see
 * retryOnReset), and each start cost a build of its own; test/scripts/dev-stack.test.ts starts `npm run dev` itself.
 */
export async function startApprovals(vars: Record<string, string> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "strad-approvals-"));
  try {
    const worker = buildWorker(CONFIG, { into: dir }) as { bindings?: Record<string, unknown> };
    const runtime = (await startRuntime([{ ...worker, bindings: { ...worker.bindings, ...vars } }])) as { url: string; stop: () => Promise<void> };
    return {
      origin: runtime.url,
      stop: async () => {
        await runtime.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The approval service for one test file: started before its tests (startApprovals), stopped after them. `origin` and
 * `operator()` (the dev API's operator credentials for it) read the running service.
 */
export function useApprovals(vars: Record<string, string> = {}): { readonly origin: string; operator: () => { origin: string; operatorToken: string } } {
  let svc: Running | undefined;
  beforeAll(async () => {
    svc = await startApprovals(vars);
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await svc?.stop();
  });
  const origin = () => {
    if (svc === undefined) throw new Error("the approval service is not running: useApprovals() starts it before the file's tests");
    return svc.origin;
  };
  return {
    get origin() {
      return origin();
    },
    operator: () => ({ origin: origin(), operatorToken: DEV_OPERATOR_TOKEN }),
  };
}

export function mint(origin: string): Promise<Session> {
  return mintSession({ origin, operatorToken: DEV_OPERATOR_TOKEN });
}

export function createBody(overrides: { message?: string; requestId?: string; expiresInMs?: number; meta?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    mode: "form",
    message: overrides.message ?? "Send an email?\nTo: someone@example.com\nSubject: Hello",
    requestedSchema: {
      type: "object",
      properties: { confirm: { type: "boolean", title: "Send this email", description: "Tick to send" } },
      required: ["confirm"],
    },
    _meta: {
      "com.pulsemcp/request-id": overrides.requestId ?? crypto.randomUUID(),
      "com.pulsemcp/expires-at": new Date(Date.now() + (overrides.expiresInMs ?? 120_000)).toISOString(),
      "com.pulsemcp/tool-name": "send_email",
      ...overrides.meta,
    },
  };
}

export function requestIdOf(body: Record<string, unknown>): string {
  return (body._meta as Record<string, string>)["com.pulsemcp/request-id"] as string;
}

export async function createPrompt(elicitationUrl: string, body: Record<string, unknown>, headers: Record<string, string> = { ...DEV_ACCESS_HEADERS }): Promise<Response> {
  return fetch(elicitationUrl, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** Creates a prompt and fails the test unless the service accepted it. */
export async function newPrompt(elicitationUrl: string, overrides: Parameters<typeof createBody>[0] = {}, headers?: Record<string, string>): Promise<string> {
  const body = createBody(overrides);
  const response = await createPrompt(elicitationUrl, body, headers);
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${await response.text()}`);
  return requestIdOf(body);
}

export async function poll(
  elicitationUrl: string,
  requestId: string,
  headers: Record<string, string> = { ...DEV_ACCESS_HEADERS },
): Promise<{ status: number; body: { action?: string; content?: unknown; _meta?: Record<string, string>; error?: string }; ms: number; response: Response }> {
  const started = Date.now();
  const response = await fetch(`${elicitationUrl}${requestId}`, { headers });
  const body = (await response.json()) as { action?: string; content?: unknown; _meta?: Record<string, string>; error?: string };
  return { status: response.status, body, ms: Date.now() - started, response };
}

/** The CSRF token and base path the review page hands its script, read as the script reads them. */
export async function reviewPage(reviewUrl: string, headers: Record<string, string> = {}): Promise<{ csrf: string; base: string; html: string; response: Response }> {
  const response = await fetch(reviewUrl, { headers });
  const html = await response.text();
  const csrf = /<meta name="strad-csrf" content="([^"]*)">/.exec(html)?.[1] ?? "";
  const base = /<meta name="strad-base" content="([^"]*)">/.exec(html)?.[1] ?? "";
  return { csrf, base, html, response };
}

export async function decide(
  reviewUrl: string,
  requestId: string,
  action: "accept" | "decline",
  options: { csrf: string; confirm?: boolean; headers?: Record<string, string> },
): Promise<{ status: number; body: { error?: string; prompt?: { status: string; decidedBy: string | null } } }> {
  const response = await fetch(`${reviewUrl}/prompts/${requestId}/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": options.csrf, ...options.headers },
    body: JSON.stringify({ action, confirm: options.confirm ?? action === "accept" }),
  });
  return { status: response.status, body: (await response.json()) as { error?: string; prompt?: { status: string; decidedBy: string | null } } };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `task` for 0..n-1, ten at a time: a hundred requests at once to a `wrangler dev` on a loaded machine had one
 * reused connection closed under it ("other side closed"), which says nothing of the service's rules.
 */
export async function tenAtATime<T>(n: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let from = 0; from < n; from += 10) results.push(...(await Promise.all(Array.from({ length: Math.min(10, n - from) }, (_, i) => task(from + i)))));
  return results;
}
