// A mount's question put to a 2025-11-25 caller on the call's own event stream (docs/rules.md R-PUSH-1..4). On
// 2026-07-28 a question travels as an input_required result and the client retries (relay.ts); 2025-11-25 has no such
// result, but its server may send a request on the stream of the call it belongs to. So for a caller the roster declares
// human-backed, on a slug that allows it, the gateway plays the 2026-07-28 client to the mount: it puts each question
// to its caller as `elicitation/create`, waits for the answer (a separate POST, which may land on any isolate and is
// routed to this call through the caller's CallRegistry object), and retries the mount with the answers and the state
// the mount sealed. The mount is asked, sealed and claimed exactly as on 2026-07-28: the gateway holds nothing it could
// act on, and the retry runs inside the caller's own call, under its claim, hold and deadline.
import { MAX_QUESTION_ROUNDS, questionTag, requestKey } from "../contract/call-registry";
import type { CallRef } from "../contract/channel";
import { RpcCode, RpcError } from "../contract/rpc";
import { type ElicitationModes, isPlainObject, NO_ELICITATION } from "../contract/tool-call";
import { isSecureOrLoopback } from "../contract/url-policy";
import type { GatewayRequest } from "./mcp";
import type { RetryParams } from "./relay";
import { AbortReason, describeUpstreamError, errorCode } from "./upstream";

/** The first segment of every question id the gateway pushes; nothing else the gateway sends has it. */
export const QUESTION_ID_PREFIX = "strad-q:";
const QUESTION_ID = /^strad-q:([1-9][0-9]?):([0-9a-f]{24}):([ns]:[\s\S]*)$/;

/**
 * A pushed question's JSON-RPC id: the round, the registry's tag for the round (contract/call-registry.ts questionTag)
 * and the call's request id as its record key holds it, so the answer names its record without naming its nonce.
 */
export function questionId(round: number, tag: string, requestKeyText: string): string {
  return `${QUESTION_ID_PREFIX}${round}:${tag}:${requestKeyText}`;
}

export interface QuestionRef {
  round: number;
  tag: string;
  requestKey: string;
}

/** The parts of a question id the gateway handed out, or undefined for any other id. */
export function parseQuestionId(id: unknown): QuestionRef | undefined {
  if (typeof id !== "string") return undefined;
  const match = QUESTION_ID.exec(id);
  if (match === null) return undefined;
  return { round: Number(match[1]), tag: match[2] as string, requestKey: match[3] as string };
}

/**
 * The session id's mark of what its initialize declared (docs/rules.md R-PUSH-1). The gateway keeps nothing per session,
 * so the id it hands out carries it and the client echoes it: `.f` form, `.u` URL, `.fu` both, nothing for none. A
 * client that changes the mark only changes which questions it is sent; nothing is decided by it but that.
 */
export function sessionMark(modes: ElicitationModes): string {
  return modes.form && modes.url ? ".fu" : modes.form ? ".f" : modes.url ? ".u" : "";
}

export function sessionModes(session: string | null | undefined): ElicitationModes {
  if (session === null || session === undefined) return NO_ELICITATION;
  const dot = session.lastIndexOf(".");
  const mark = dot === -1 ? "" : session.slice(dot + 1);
  if (mark === "fu") return { form: true, url: true };
  if (mark === "f") return { form: true, url: false };
  if (mark === "u") return { form: false, url: true };
  return NO_ELICITATION;
}

const encoder = new TextEncoder();

/** One SSE frame carrying the question as the 2025-11-25 transport sends a server's request on a POST's stream. */
export function questionFrame(id: string, params: Record<string, unknown>): Uint8Array {
  return encoder.encode(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, method: "elicitation/create", params })}\n\n`);
}

/** What the client answered one question with, as the registry handed it on. */
export type ClientReply = { ok: true; result: Record<string, unknown> } | { ok: false; code: number | undefined };

/** What an answer POST carries on to the registry: its `result` object or its `error` object, or undefined for neither. */
export function replyOf(msg: { result?: unknown; error?: unknown }): { result: Record<string, unknown> } | { error: Record<string, unknown> } | undefined {
  if (isPlainObject(msg.result)) return { result: msg.result };
  if (isPlainObject(msg.error)) return { error: msg.error };
  return undefined;
}

/** Reads the registry's payload (`{"result":…}` or `{"error":…}`); undefined for anything else. */
export function readReply(payload: string): ClientReply | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const reply = isPlainObject(parsed) ? replyOf(parsed) : undefined;
  if (reply === undefined) return undefined;
  if ("result" in reply) return { ok: true, result: reply.result };
  return { ok: false, code: Number.isSafeInteger(reply.error.code) ? (reply.error.code as number) : undefined };
}

/** Answers on their way to the call that asked: one waiter per round, settled once. */
export class AnswerBox {
  private readonly waiting = new Map<number, (payload: string) => void>();

  /** Resolves with the payload of the round's answer, or rejects with the signal's reason when the call ends first. */
  wait(round: number, signal: AbortSignal): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.waiting.delete(round);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(round, (payload) => {
        signal.removeEventListener("abort", onAbort);
        resolve(payload);
      });
    });
  }

  /** Hands a payload to the round's waiter; an answer nobody waits for is dropped. */
  deliver(round: number, payload: string): void {
    const waiter = this.waiting.get(round);
    if (waiter === undefined) return;
    this.waiting.delete(round);
    waiter(payload);
  }
}

/** Why a question could not be put to the caller, in words the caller can act on. */
export function describeUnaskable(slug: string, why: string): string {
  return `server "${slug}" asked a question that cannot be put to this client: ${why}; nothing was done`;
}

export interface PushTarget {
  ref: CallRef;
  id: string | number;
  answers: AnswerBox;
  signal: AbortSignal;
  /** The round the first of these questions is: rounds count every question this call put, up to MAX_QUESTION_ROUNDS. */
  first: number;
  /** Whether a form may be put (a client channel); otherwise a link alone (an approval channel, R-PUSH-5). */
  form: boolean;
  /**
   * Epoch ms after which no answer counts: the call's start plus its channel's ttlMs, the margin before the gateway's
   * own timeout that the bundle keeps on every other path, so a retry always has that margin to claim and write in.
   */
  answerBy: number;
  /** Epoch ms the call started at, so a late answer's error says how long answers counted for. */
  started: number;
  /** The elicitation modes the caller's client declared. */
  modes: ElicitationModes;
}

/** The call's end as the caller hears it: the reason its upstream was aborted with, or a generic cancel. */
function endedError(slug: string, reason: unknown): RpcError {
  const error = reason instanceof AbortReason ? reason.error : { code: "UPSTREAM_ABORTED" as const, reason: "the call has ended" };
  return new RpcError(errorCode(error), describeUpstreamError(slug, error));
}

/**
 * Puts a mount's input_required questions to a 2025-11-25 caller, one at a time, on the call's own stream, and returns
 * what the retry carries: the answers under the mount's keys and the mount's state, as they came (docs/rules.md R-PUSH-1,
 * R-PUSH-2). Anything the caller cannot be asked, an error it answers with, no answer by `answerBy`, or a call that ends
 * first, throws: the mount is then not called again, so nothing acts. A link on an approval channel is put and not
 * waited for (R-PUSH-5): it collects nothing, and the mount's own answer must not hang on the host's.
 */
export async function putToCaller(gw: GatewayRequest, slug: string, result: Record<string, unknown>, target: PushTarget): Promise<{ params: RetryParams; asked: number }> {
  const stream = await gw.callerStream;
  const requests = (result.inputRequests ?? {}) as Record<string, { method?: unknown; params?: unknown }>;
  const entries = Object.entries(requests);
  const modes = target.modes;
  const refuse = (why: string): never => {
    gw.log.outcome = "question_unaskable";
    throw new RpcError(RpcCode.QuestionUnrelayable, describeUnaskable(slug, why));
  };
  if (stream === undefined) refuse("the call is not answered as an event stream");
  // A round that asks nothing still counts, so a mount that only ever hands its state back cannot loop the call.
  const asked = Math.max(1, entries.length);
  if (target.first + asked - 1 > MAX_QUESTION_ROUNDS) refuse(`it asked more than ${MAX_QUESTION_ROUNDS} questions in one call`);
  const inputResponses: Record<string, unknown> = {};
  let round = target.first;
  for (const [key, request] of entries) {
    if (request.method !== "elicitation/create") refuse("only elicitation/create is relayed to a 2025-11-25 client");
    if (!isPlainObject(request.params)) refuse("its elicitation/create has no params object");
    const params = request.params as Record<string, unknown>;
    const mode = params.mode ?? "form";
    if (!(mode === "form" ? modes.form : mode === "url" ? modes.url : false)) refuse(`the client did not declare ${String(mode)} elicitation`);
    if (mode === "form" && !target.form) refuse("a mount on an approval channel may put only a link to its caller");
    if (mode === "url" && !isLink(params.url)) refuse("its link is not an https URL (or http to a loopback host)");
    const id = questionId(round, await questionTag(target.ref.nonce, round), requestKey(target.id));
    // 2025-11-25's URL mode names its elicitation; 2026-07-28's carries no id (the mount's state correlates), so the
    // question's own id serves.
    const sent = mode === "url" && params.elicitationId === undefined ? { ...params, elicitationId: id } : params;
    if (!target.form) {
      if (!stream?.push(questionFrame(id, sent))) throw endedError(slug, target.signal.reason);
      gw.log.outcome = "linked_client";
      round++;
      continue;
    }
    const late = new AbortController();
    const timer = setTimeout(() => late.abort(), Math.max(0, target.answerBy - Date.now()));
    const waited = target.answers.wait(round, AbortSignal.any([target.signal, late.signal]));
    if (!stream?.push(questionFrame(id, sent))) {
      clearTimeout(timer);
      waited.catch(() => {});
      throw endedError(slug, target.signal.reason);
    }
    gw.log.outcome = "asked_client";
    const tooLate = () => {
      gw.log.outcome = "client_answer_late";
      return new RpcError(
        RpcCode.UpstreamTimeout,
        `the question server "${slug}" put to the caller was not answered in time (answers count until ${target.answerBy - target.started} ms into the call); nothing was done`,
      );
    };
    let payload: string;
    try {
      payload = await waited;
    } catch (reason) {
      if (!late.signal.aborted || target.signal.aborted) throw endedError(slug, reason);
      throw tooLate();
    } finally {
      clearTimeout(timer);
    }
    // The clock decides, not the timer: a timer a loaded isolate runs late lets no late answer through.
    if (Date.now() > target.answerBy) throw tooLate();
    const reply = readReply(payload);
    if (reply === undefined || !reply.ok) {
      gw.log.outcome = "client_answer_error";
      const code = reply === undefined || reply.code === undefined ? "" : ` (JSON-RPC error ${reply.code})`;
      throw new RpcError(RpcCode.QuestionUnrelayable, `the client could not answer server "${slug}"'s question${code}; nothing was done`);
    }
    inputResponses[key] = reply.result;
    round++;
  }
  const requestState = typeof result.requestState === "string" ? result.requestState : undefined;
  return { params: { inputResponses, ...(requestState === undefined ? {} : { requestState }) }, asked };
}

/** A link a mount may put to its caller: an absolute https URL, or http to a loopback host (contract/url-policy.ts). */
function isLink(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    return isSecureOrLoopback(new URL(value));
  } catch {
    return false;
  }
}
