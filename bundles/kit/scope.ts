// Each tools/call runs inside a scope holding that call's request, channel and signal, so two calls in
// flight in one isolate never see each other's approval address (docs/rules.md R-CHAN-8).
import { AsyncLocalStorage } from "node:async_hooks";
import { type AskChannel, CHANNEL_META_KEY, type Channel, type ClientChannel, type FallbackChannel, parseChannel } from "../../contract/channel";
import { CLIENT_CAPABILITIES_META_KEY, elicitationModes, isPlainObject } from "../../contract/tool-call";

export type SkipChannel = Extract<Channel, { skip: true }>;

/**
 * What the gateway's _meta entry says about asking a person, once parsed. A refusal the gateway wrote keeps
 * the slug and caller it named (for the audit trail); a malformed entry keeps nothing of what it said.
 */
export type ChannelState =
  | { kind: "none" }
  | { kind: "refused"; reason: string; slug?: string; caller?: string; malformed?: true }
  | { kind: "ask"; channel: AskChannel }
  | { kind: "skip"; channel: SkipChannel }
  /** Nobody to ask, on a slug that allows the two-call token: only a guard that opts in takes it (bundles/kit/token.ts). */
  | { kind: "fallback"; channel: FallbackChannel }
  /** Ask the person at the caller's own client: input_required with a sealed requestState (bundles/kit/client-ask in confirm.ts). */
  | { kind: "client"; channel: ClientChannel };

export interface ProgressNotification {
  method: "notifications/progress";
  params: { progressToken: string | number; progress: number; message?: string };
}

/** What the guard has let through for this call; the send gate reads it before any write. */
export interface Approval {
  fingerprint: string;
  /** A person said yes, or the slug's waiver did: the write must win the call's single claim. */
  approved: boolean;
  /** Set once the call's claim succeeded, so a tool's second request in the same call does not claim again. */
  claimed?: Promise<boolean>;
}

export interface CallState {
  /** JSON-RPC id of the tools/call, so notifications are related to it. */
  requestId: string | number;
  toolName: string;
  channel: ChannelState;
  /** Epoch ms at which approval requests are aborted and any later answer counts as expired. */
  deadline: number | undefined;
  progressToken: string | number | undefined;
  /** Sends a notification related to this call; replaced by the mount once the server instance exists. */
  notify: (notification: ProgressNotification) => Promise<void>;
  approval?: Approval;
  /** What this call's audit lines carry once it is known (bundles/kit/audit.ts). */
  audit?: AuditTrail;
  /**
   * The outcome of a plain tool the kit's lane already ran, when that outcome is the SDK's to answer: the tool's
   * handler on the SDK's server hands it over instead of running again (bundles/kit/lane.ts).
   */
  settled?: Settled;
  /** The call's arguments as they came, which a client question's seal binds by fingerprint (bundles/kit/seal.ts). */
  arguments?: unknown;
  /** A 2026-07-28 retry's answers and the state they came back with (the gateway forwards both as they came). */
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  /**
   * The question this call answers with instead of its tool's own result: set by askPerson on a client channel when
   * there is no valid answer yet, and returned by the mount's server as the call's input_required result.
   */
  question?: Record<string, unknown>;
  /**
   * The gateway declared on the hop that the caller's client takes URL-mode elicitation (worker/mcp.ts: only to a gated
   * mount on an approval channel, only when the caller declared it), so a question carrying nothing but a link may be
   * put to it (Approval Flow's review page, docs/rules.md R-FLOW-13).
   */
  urlElicitation?: boolean;
}

/** What a tool's handler returned or threw. */
export type Settled = { result: unknown } | { error: unknown };

/** Filled in as the call goes: the approval request the service issued, who decided it, what the approval covers. */
export interface AuditTrail {
  request: string | null;
  approver: string | null;
  fingerprint: string | null;
}

export interface CallScope {
  /** The mount (slug) this request was routed to. */
  mount: string;
  /** Fires when the gateway's request to this bundle closes: caller left, timed out or cancelled. */
  signal: AbortSignal;
  /** Lets work that must outlive the response (audit records) finish. */
  waitUntil: (p: Promise<unknown>) => void;
  env: Record<string, unknown>;
  /** Present when the request is a tools/call. */
  call?: CallState;
}

const storage = new AsyncLocalStorage<CallScope>();

export function runInScope<T>(scope: CallScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function currentScope(): CallScope {
  const scope = storage.getStore();
  if (scope === undefined) throw new Error("no call scope: a tool ran outside a bundle request");
  return scope;
}

/** The current request's scope, or undefined outside a bundle request. */
export function activeScope(): CallScope | undefined {
  return storage.getStore();
}

/** The current tools/call, or undefined outside one. */
export function currentCall(): CallState | undefined {
  return storage.getStore()?.call;
}

/** Parses the gateway's entry. Anything that does not parse is a refusal, never a guess. */
export function readChannel(meta: unknown): ChannelState {
  if (typeof meta !== "object" || meta === null || !(CHANNEL_META_KEY in meta)) return { kind: "none" };
  const raw = (meta as Record<string, unknown>)[CHANNEL_META_KEY];
  if (raw === undefined) return { kind: "none" };
  const channel = parseChannel(raw);
  if (channel === undefined) return { kind: "refused", reason: "malformed channel", malformed: true };
  if ("refused" in channel) return { kind: "refused", reason: channel.refused, slug: channel.slug, ...(channel.caller === undefined ? {} : { caller: channel.caller }) };
  if ("skip" in channel) return { kind: "skip", channel };
  if ("url" in channel) return { kind: "ask", channel };
  if ("ask" in channel) return { kind: "client", channel };
  return { kind: "fallback", channel };
}

function progressTokenOf(meta: unknown): string | number | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const token = (meta as Record<string, unknown>).progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

/** The call state of one tools/call request, built from its params when the request arrives. */
export function callStateFor(requestId: string | number, params: Record<string, unknown>, now: number = Date.now()): CallState {
  const meta = params._meta;
  const channel = readChannel(meta);
  const ttlMs = channel.kind === "ask" || channel.kind === "skip" || channel.kind === "fallback" || channel.kind === "client" ? channel.channel.ttlMs : undefined;
  const { inputResponses, requestState } = params;
  return {
    requestId,
    toolName: typeof params.name === "string" ? params.name : "",
    channel,
    deadline: ttlMs === undefined ? undefined : now + ttlMs,
    progressToken: progressTokenOf(meta),
    notify: async () => {},
    arguments: params.arguments,
    ...(typeof inputResponses === "object" && inputResponses !== null && !Array.isArray(inputResponses) ? { inputResponses: inputResponses as Record<string, unknown> } : {}),
    ...(typeof requestState === "string" ? { requestState } : {}),
    ...(elicitationModes(isPlainObject(meta) ? meta[CLIENT_CAPABILITIES_META_KEY] : undefined).url ? { urlElicitation: true } : {}),
  };
}
