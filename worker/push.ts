// A mount's question put to a 2025-11-25 caller on the call's own event stream (docs/rules.md R-PUSH-1..4). On
// 2026-07-28 a question travels as an input_required result and the client retries (relay.ts); 2025-11-25 has no such
// result, but its server may send a request on the stream of the call it belongs to. So for a caller the roster declares
// human-backed, on a slug that allows it, the gateway plays the 2026-07-28 client to the mount: it puts each question
// to its caller as `elicitation/create`, waits for the answer (a separate POST, which may land on any isolate and is
// routed to this call through the caller's CallRegistry object), and retries the mount with the answers and the state
// the mount sealed. The mount is asked, sealed and claimed exactly as on 2026-07-28: the gateway holds nothing it could
// act on, and the retry runs inside the caller's own call, under its claim, hold and deadline.
import { type ElicitationModes, isPlainObject, NO_ELICITATION } from "../contract/tool-call";

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
