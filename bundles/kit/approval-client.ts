// The pulsemcp fallback-elicitation protocol (docs/rules.md R-CLIENT-1), spoken against an address a caller chose.
// It uses only fetch, AbortSignal and timers, so it runs the same in workerd and in Node tests.
// Unlike the reference client: no redirect is followed, an error names a status and never a byte of the
// body, and every request is aborted at the deadline (docs/rules.md R-CLIENT-3, R-CLIENT-4, R-CLIENT-5).
import { readCappedText } from "../../contract/body";
import { APPROVER_META_KEY, DECIDED_AT_META_KEY } from "../../contract/channel";
import { CONFIRM_SCHEMA, isRequestId, isReservedChannelHeader, META_EXPIRES_AT, META_REQUEST_ID, META_TOOL_NAME } from "../../contract/elicitation";
import { cleanLine } from "../../contract/text";

export { CONFIRM_SCHEMA };

export const DEFAULT_POLL_INTERVAL_MS = 5_000;
/** Tests may poll faster than production, but never in a hot loop. */
export const MIN_POLL_INTERVAL_MS = 20;
/** A poll or create answer larger than this is refused unread. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** How long a poll asks a long-polling service to hold the answer (RFC 7240 `Prefer: wait`). */
export const LONG_POLL_WAIT_S = 20;
const MAX_POLLS = 100_000;

/** An approver's name is cut here (an email address is at most 254 characters). */
export const MAX_APPROVER_CHARS = 254;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ApprovalRequest {
  /** The channel's URL: already held to the gateway's allowlist. */
  url: string;
  /** The channel's headers (the edge credential): on the POST and on every poll, nowhere else. */
  headers: Record<string, string>;
  message: string;
  /** Defaults to a single confirm box. */
  requestedSchema?: Record<string, unknown>;
  toolName: string;
  /** Epoch ms: every request is aborted then, and an answer read later counts as expired. */
  deadline: number;
  /** The call's own signal: firing aborts everything and turns any answer into cancel. */
  signal: AbortSignal;
  pollIntervalMs?: number;
  fetch?: FetchLike;
  /** Told the request id once the service has taken the create (the audit trail's `asked`). */
  onCreated?: (requestId: string) => void;
}

export type ApprovalError = { code: "APPROVAL_HTTP"; status: number } | { code: "APPROVAL_REDIRECT"; status: number } | { code: "APPROVAL_UNREACHABLE" } | { code: "APPROVAL_PROTOCOL"; why: string };

export type NoAnswer = "decline" | "cancel" | "expired";

/**
 * Why there is no yes, in the kit's own words: the service `answered` so (decline, cancel, expired), the
 * call was dropped (`caller_left`), the `deadline` passed, the service kept answering pending
 * (`too_many_polls`), or its accept or action was not one that acts (`unticked`, `unrecognised`).
 */
export type NoAnswerCause = "answered" | "caller_left" | "deadline" | "too_many_polls" | "unticked" | "unrecognised";

/**
 * `approver`: who decided, as the service's answer named it under `_meta["dev.strad/approver"]` (cleaned, capped), else null.
 * `decidedAt`: when the answer says the prompt became final (`_meta["dev.strad/decided-at"]`, epoch ms), present only when
 * it named a valid ISO-8601 time; the service's word, for a flow that checks a decision came before its own expiry.
 */
export type ApprovalResult =
  | { ok: true; answer: "accept"; content: Record<string, unknown>; approver: string | null; decidedAt?: number }
  | { ok: true; answer: NoAnswer; why?: string; cause: NoAnswerCause; approver: string | null; decidedAt?: number }
  | { ok: false; error: ApprovalError };

export function describeApprovalError(error: ApprovalError): string {
  switch (error.code) {
    case "APPROVAL_HTTP":
      return `the approval service answered HTTP ${error.status}`;
    case "APPROVAL_REDIRECT":
      return `the approval service answered with a redirect (HTTP ${error.status}), which is never followed`;
    case "APPROVAL_UNREACHABLE":
      return "the approval service could not be reached";
    case "APPROVAL_PROTOCOL":
      return `the approval service gave an unusable answer: ${error.why}`;
  }
}

type Exchange = { ok: true; body: unknown } | { ok: false; error: ApprovalError };

/** Asks once and waits for the answer. Never throws. */
export async function requestApproval(req: ApprovalRequest): Promise<ApprovalResult> {
  const doFetch: FetchLike = req.fetch ?? ((input, init) => fetch(input, init));
  const interval = Math.max(MIN_POLL_INTERVAL_MS, req.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  // After every wait: a dropped call is a cancel whatever was read, and nothing counts past the deadline.
  const settled = (): ApprovalResult | undefined => {
    if (req.signal.aborted) return { ok: true, answer: "cancel", why: "the call was dropped", cause: "caller_left", approver: null };
    if (Date.now() >= req.deadline) return { ok: true, answer: "expired", why: "the deadline passed", cause: "deadline", approver: null };
    return undefined;
  };
  const early = settled();
  if (early !== undefined) return early;

  let base: string;
  let createHeaders: Headers;
  let pollHeaders: (waitS: number) => Headers;
  try {
    const parsed = new URL(req.url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error("scheme");
    base = parsed.href;
    createHeaders = headersWith(req.headers, { "content-type": "application/json", accept: "application/json" });
    pollHeaders = (waitS) => headersWith(req.headers, { accept: "application/json", prefer: `wait=${waitS}` });
  } catch {
    return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the channel's address or headers are not usable" } };
  }

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(0, req.deadline - Date.now()));
  const onDrop = () => controller.abort();
  req.signal.addEventListener("abort", onDrop, { once: true });
  try {
    const ownId = crypto.randomUUID();
    const body = JSON.stringify({
      mode: "form",
      message: req.message,
      requestedSchema: req.requestedSchema ?? CONFIRM_SCHEMA,
      _meta: {
        [META_REQUEST_ID]: ownId,
        [META_EXPIRES_AT]: new Date(req.deadline).toISOString(),
        [META_TOOL_NAME]: req.toolName,
      },
    });
    const created = await exchange(doFetch, base, { method: "POST", headers: createHeaders, body }, controller.signal);
    const requestId = created.ok ? requestIdOf(created.body, ownId) : undefined;
    // The service holds the prompt from here on, whatever happens to the call next.
    if (requestId !== undefined) req.onCreated?.(requestId);
    const afterCreate = settled();
    if (afterCreate !== undefined) return afterCreate;
    if (!created.ok) return created;
    if (requestId === undefined) return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the request id it named is not usable" } };
    // The request id goes at the end of the path, never into a query the channel URL may carry.
    const poll = new URL(base);
    poll.pathname = `${poll.pathname.endsWith("/") ? poll.pathname : `${poll.pathname}/`}${requestId}`;
    const pollUrl = poll.href;

    for (let poll = 0; poll < MAX_POLLS; poll++) {
      if (poll > 0) {
        await sleep(interval, controller.signal);
        const afterSleep = settled();
        if (afterSleep !== undefined) return afterSleep;
      }
      const waitS = Math.max(1, Math.min(LONG_POLL_WAIT_S, Math.floor((req.deadline - Date.now()) / 1000)));
      const polled = await exchange(doFetch, pollUrl, { method: "GET", headers: pollHeaders(waitS) }, controller.signal);
      const afterPoll = settled();
      if (afterPoll !== undefined) return afterPoll;
      if (!polled.ok) return polled;
      const answer = answerOf(polled.body);
      if (answer !== "pending") return answer;
    }
    return { ok: true, answer: "expired", why: "too many polls", cause: "too_many_polls", approver: null };
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener("abort", onDrop);
  }
}

function headersWith(channel: Record<string, string>, own: Record<string, string>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(channel)) {
    // A name the bundle sets itself, or a framing one, is dropped, never merged: the roster refuses it too (contract/elicitation.ts).
    if (!isReservedChannelHeader(name)) headers.set(name, value);
  }
  for (const [name, value] of Object.entries(own)) headers.set(name, value);
  return headers;
}

async function exchange(doFetch: FetchLike, url: string, init: RequestInit, signal: AbortSignal): Promise<Exchange> {
  let response: Response;
  try {
    response = await doFetch(url, { ...init, redirect: "manual", signal });
  } catch {
    return { ok: false, error: { code: "APPROVAL_UNREACHABLE" } };
  }
  // An open redirect on an allowed host must not carry the request (and the edge credential) elsewhere.
  if ((response.type as string) === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
    discard(response);
    return { ok: false, error: { code: "APPROVAL_REDIRECT", status: response.status } };
  }
  if (response.status < 200 || response.status > 299) {
    discard(response);
    return { ok: false, error: { code: "APPROVAL_HTTP", status: response.status } };
  }
  // Read natively when the answer declares its length (contract/body.ts), to the cap either way; the read ends with the
  // fetch's signal, which is the call's.
  const text = await readCappedText(response, MAX_ANSWER_BYTES);
  if (!text.ok) return { ok: false, error: text.tooLarge ? { code: "APPROVAL_PROTOCOL", why: "the answer is too large" } : { code: "APPROVAL_UNREACHABLE" } };
  if (text.value.trim() === "") return { ok: true, body: undefined };
  try {
    return { ok: true, body: JSON.parse(text.value) as unknown };
  } catch {
    return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the answer is not JSON" } };
  }
}

function discard(response: Response): void {
  response.body?.cancel().catch(() => {});
}

/** The create answer may name the service's own id; without one the client keeps its own. */
function requestIdOf(body: unknown, ownId: string): string | undefined {
  if (typeof body !== "object" || body === null) return ownId;
  const named = (body as Record<string, unknown>).requestId;
  if (typeof named !== "string") return ownId;
  return isRequestId(named) ? named : undefined;
}

/**
 * Who decided, as the service named it (docs/rules.md R-AUDIT-4): a string, cleaned by the one sanitiser
 * (runs of whitespace collapsed) and cut at MAX_APPROVER_CHARS; anything else, or nothing left, is null.
 */
export function approverFrom(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const clean = cleanLine(value, MAX_APPROVER_CHARS, { collapse: true }).trim();
  return clean === "" ? null : clean;
}

const ISO_8601_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** When the answer says the prompt became final (docs/rules.md R-APPR-19): epoch ms of a valid ISO-8601 UTC time, else undefined. */
export function decidedAtFrom(value: unknown): number | undefined {
  if (typeof value !== "string" || !ISO_8601_UTC.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : undefined;
}

function answerOf(body: unknown): ApprovalResult | "pending" {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the answer is not a JSON object" } };
  }
  const { action, content, _meta: meta } = body as { action?: unknown; content?: unknown; _meta?: unknown };
  const metaOf = (key: string): unknown => (typeof meta === "object" && meta !== null && !Array.isArray(meta) && Object.hasOwn(meta, key) ? (meta as Record<string, unknown>)[key] : undefined);
  // Who decided, for the audit trail only: never shown to the caller, never a reason to act.
  const approver = approverFrom(metaOf(APPROVER_META_KEY));
  const at = decidedAtFrom(metaOf(DECIDED_AT_META_KEY));
  const when = at === undefined ? {} : { decidedAt: at };
  // The action is matched exactly, as the pulsemcp protocol spells it: `ACCEPT`, `Accept`, ` accept` or a look-alike
  // is an unrecognised action, which is a decline (docs/rules.md R-CLIENT-2).
  switch (action) {
    case "pending":
      return "pending";
    case "accept":
      // Only a ticked confirm box acts; an accept without it is a decline.
      if (typeof content === "object" && content !== null && (content as Record<string, unknown>).confirm === true) {
        return { ok: true, answer: "accept", content: content as Record<string, unknown>, approver, ...when };
      }
      return { ok: true, answer: "decline", why: "the confirm box was not ticked", cause: "unticked", approver, ...when };
    case "decline":
    case "cancel":
      return { ok: true, answer: action, cause: "answered", approver, ...when };
    case "expired":
      // Nobody decides an expiry.
      return { ok: true, answer: action, cause: "answered", approver: null, ...when };
    default:
      return { ok: true, answer: "decline", why: "the answer was not recognised", cause: "unrecognised", approver: null };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

// The same protocol, one step at a time, for a flow whose prompt outlives the call that raised it
// (bundles/approval-flow: create in one call, poll in later ones). Same rules as requestApproval: no redirect,
// status-only errors, capped answers, the channel's headers on every request, aborted at `deadline` and with
// `signal`.

export interface PromptCreate {
  url: string;
  headers: Record<string, string>;
  message: string;
  requestedSchema?: Record<string, unknown>;
  toolName: string;
  /** The protocol's request id the client proposes. */
  requestId: string;
  /** Epoch ms: the prompt's own expiry (`com.pulsemcp/expires-at`). */
  expiresAt: number;
  /** Extra `_meta` entries beside the protocol's own (an approval service that does not know one ignores it). */
  meta?: Record<string, unknown>;
  /** Epoch ms at which the request is aborted. */
  deadline: number;
  signal: AbortSignal;
  fetch?: FetchLike;
}

/** `meta`: the create answer's `_meta` object when it had one, else {}. */
export type PromptCreated = { ok: true; requestId: string; meta: Record<string, unknown> } | { ok: false; error: ApprovalError };

/** Creates a prompt and returns at once, without polling. Never throws. */
export async function createPrompt(req: PromptCreate): Promise<PromptCreated> {
  const doFetch: FetchLike = req.fetch ?? ((input, init) => fetch(input, init));
  let base: string;
  let headers: Headers;
  try {
    const parsed = new URL(req.url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error("scheme");
    base = parsed.href;
    headers = headersWith(req.headers, { "content-type": "application/json", accept: "application/json" });
  } catch {
    return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the channel's address or headers are not usable" } };
  }
  const body = JSON.stringify({
    mode: "form",
    message: req.message,
    requestedSchema: req.requestedSchema ?? CONFIRM_SCHEMA,
    _meta: { ...(req.meta ?? {}), [META_REQUEST_ID]: req.requestId, [META_EXPIRES_AT]: new Date(req.expiresAt).toISOString(), [META_TOOL_NAME]: req.toolName },
  });
  const { signal, done } = boundedSignal(req.deadline, req.signal);
  try {
    const created = await exchange(doFetch, base, { method: "POST", headers, body }, signal);
    if (!created.ok) return created;
    const requestId = requestIdOf(created.body, req.requestId);
    if (requestId === undefined) return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the request id it named is not usable" } };
    const meta = typeof created.body === "object" && created.body !== null ? (created.body as Record<string, unknown>)._meta : undefined;
    return { ok: true, requestId, meta: typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {} };
  } finally {
    done();
  }
}

export interface PromptPoll {
  url: string;
  headers: Record<string, string>;
  requestId: string;
  /** Seconds a long-polling service may hold the answer (`Prefer: wait`); 0 asks for an answer at once. */
  waitS: number;
  /** Epoch ms at which the poll is aborted. */
  deadline: number;
  signal: AbortSignal;
  fetch?: FetchLike;
}

/** One poll's answer, read as requestApproval reads it: pending, or the answer (only a ticked accept is `accept`). */
export type PromptPolled = { ok: true; answer: "pending" } | ApprovalResult;

/** Polls a prompt once. An abort (the deadline, or `signal`) is APPROVAL_UNREACHABLE; the caller knows which fired. Never throws. */
export async function pollPrompt(req: PromptPoll): Promise<PromptPolled> {
  const doFetch: FetchLike = req.fetch ?? ((input, init) => fetch(input, init));
  if (!isRequestId(req.requestId)) return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the request id is not usable" } };
  let pollUrl: string;
  let headers: Headers;
  try {
    const poll = new URL(req.url);
    if (poll.protocol !== "https:" && poll.protocol !== "http:") throw new Error("scheme");
    poll.pathname = `${poll.pathname.endsWith("/") ? poll.pathname : `${poll.pathname}/`}${req.requestId}`;
    pollUrl = poll.href;
    const waitS = Math.floor(req.waitS);
    headers = headersWith(req.headers, waitS >= 1 ? { accept: "application/json", prefer: `wait=${Math.min(LONG_POLL_WAIT_S, waitS)}` } : { accept: "application/json" });
  } catch {
    return { ok: false, error: { code: "APPROVAL_PROTOCOL", why: "the channel's address or headers are not usable" } };
  }
  const { signal, done } = boundedSignal(req.deadline, req.signal);
  try {
    const polled = await exchange(doFetch, pollUrl, { method: "GET", headers }, signal);
    if (!polled.ok) return polled;
    const answer = answerOf(polled.body);
    return answer === "pending" ? { ok: true, answer: "pending" } : answer;
  } finally {
    done();
  }
}

/** A signal that fires at `deadline` or with `outer`; `done()` releases the timer and the listener. */
function boundedSignal(deadline: number, outer: AbortSignal): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
  const onAbort = () => controller.abort();
  if (outer.aborted) controller.abort();
  else outer.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      outer.removeEventListener("abort", onAbort);
    },
  };
}
