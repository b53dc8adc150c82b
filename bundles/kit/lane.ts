// The kit's hot path: a 2026-07-28 tools/call of a plain tool (bundles/kit/tools.ts `plainTool`), as the gateway
// sends every call to an ungated mount, is answered without building a per-request SDK server and transport, which
// were most of what a bundle allocated per call. The lane takes only calls the SDK's modern leg would take as they
// are (the same checks as the gateway's lane, contract/tool-call.ts) with arguments the tool's schema accepts, and
// answers them byte for byte as that leg does; test/bundles/kit/lane.unit.test.ts holds the two to the same answers
// for the same requests, valid and invalid. A call to a gated mount carries the gateway's progress token and channel
// on every call, reads included: a plain tool uses neither and sends no notification, so the SDK answers it as it
// answers the bare call, and the lane takes it too. Everything else goes to the SDK as before: other methods and
// revisions, a log level, arguments the schema refuses (the SDK words the refusal), and a tool the lane ran whose
// outcome it does not encode itself (thrown, or a result of another shape), which the SDK answers with that outcome
// without running the tool again (CallState.settled).
import { isJsonContentType, type McpServer } from "@modelcontextprotocol/server";
import {
  encodeResult,
  everydayResult,
  isPlainObject,
  type Message,
  MODERN_REVISION,
  modernCallFits,
  onlyKeys,
  plainCall,
  plainListId,
  resultAnswer,
  type ServerIdentity,
} from "../../contract/tool-call";
import type { CallScope } from "./scope";
import { type PlainTool, toolsServedBy } from "./tools";

/**
 * An env as the lane saw it: the object and every value it held. A mount's factory makes its server of the mount and
 * the env alone (MountFactory), so what the lane learnt from one holds for a request whose env is that object still
 * holding those values (workerd hands an isolate one env object; a test may change one in place).
 */
export interface EnvSeen {
  env: Record<string, unknown>;
  /** The env's own keys and, at the same index, their values. */
  keys: readonly string[];
  values: readonly unknown[];
}

export function envSeen(env: Record<string, unknown>): EnvSeen {
  const keys = Object.keys(env);
  return { env, keys, values: keys.map((key) => env[key]) };
}

/**
 * Whether `env` is the env `seen` saw, holding the same own values (compared by identity, as the factory read them).
 * Asked on every call the lane takes, so it allocates nothing.
 */
export function sameEnv(seen: EnvSeen, env: Record<string, unknown>): boolean {
  if (seen.env !== env) return false;
  let count = 0;
  for (const key in env) if (Object.hasOwn(env, key)) count++;
  if (count !== seen.keys.length) return false;
  for (let i = 0; i < seen.keys.length; i++) {
    const key = seen.keys[i] as string;
    if (!Object.hasOwn(env, key) || env[key] !== seen.values[i]) return false;
  }
  return true;
}

/** What the lane knows of one mount under one env: its plain tools by name, and the identity its server reports. */
export interface LaneTable extends EnvSeen {
  tools: ReadonlyMap<string, PlainTool>;
  serverInfo: ServerIdentity;
}

/** An input schema that declares SEP-2243 header mirroring: the SDK checks such a call's headers first. */
const HEADER_DECLARATION = '"x-mcp-header"';

/** What the SDK's server holds of a registered tool that decides how its call is answered (McpServer._createRegisteredTool). */
interface RegisteredTool {
  enabled: boolean;
  handler: unknown;
  inputSchema: unknown;
  outputSchema?: unknown;
  scopeChallenge?: unknown;
  execution?: unknown;
}

/**
 * The lane's table for a mount, learnt from a server the mount's factory built for a request on the SDK's path: each
 * plain tool registerTools was given that the server holds exactly as plainTool registered it (enabled, with its own
 * handler and input schema, and no output schema, scope challenge or execution of another kind: anything a factory
 * changed of a tool makes it the SDK's), on a server whose tool execution the factory left as the SDK made it; and
 * the identity the SDK stamps on every 2026-07-28 result. A tools/call's server holds the called tool alone
 * (registerTools), so what `known` learnt under the same env is kept beside it: a factory makes the same tools of the
 * same env. The lane never runs a factory itself, so a tool's first call under an env is always the SDK's.
 */
export function laneTableFor(server: McpServer, seen: EnvSeen, known?: ReadonlyMap<string, PlainTool>): LaneTable {
  // What of the SDK's server the lane must agree with; the SDK keeps it in members of its own.
  const sdk = server as unknown as { _maxToolInputElements?: number; _registeredTools: Record<string, RegisteredTool | undefined>; server: { _serverInfo: ServerIdentity } };
  const tools = new Map<string, PlainTool>(known);
  // A server that caps its tools' arguments by count checks each call before its tool runs, and one whose factory
  // wrapped the SDK's tool execution may do anything with a result: the SDK's to serve.
  if (sdk._maxToolInputElements === undefined && !Object.hasOwn(server, "executeToolHandler")) {
    const seen = new Set<string>();
    for (const entry of toolsServedBy(server) ?? []) {
      // The SDK serves the first tool of a name registerTools was given; a later one never runs.
      if (seen.has(entry.name)) continue;
      seen.add(entry.name);
      const plain = entry.plain;
      if (plain === undefined || !heldAsRegistered(sdk._registeredTools[entry.name], plain) || declaresHeaders(plain)) continue;
      tools.set(entry.name, plain);
    }
  }
  return { ...seen, tools, serverInfo: sdk.server._serverInfo };
}

/** The server holds the tool as plainTool registered it: enabled, its handler and schema its own, nothing else declared. */
function heldAsRegistered(registered: RegisteredTool | undefined, plain: PlainTool): boolean {
  return (
    registered !== undefined &&
    registered.enabled === true &&
    registered.handler === plain.handler &&
    registered.inputSchema === plain.inputSchema &&
    registered.outputSchema === undefined &&
    registered.scopeChallenge === undefined &&
    registered.execution === undefined
  );
}

/** Whether the tool's input schema mirrors an argument into a header; one that cannot be put as JSON Schema is left to the SDK too. */
function declaresHeaders(tool: PlainTool): boolean {
  try {
    return JSON.stringify(tool.inputSchema["~standard"].jsonSchema.input({ target: "draft-2020-12" })).includes(HEADER_DECLARATION);
  } catch {
    return true;
  }
}

/**
 * The lane's answer to one request, or undefined when the request belongs to the SDK's path. Runs inside the
 * request's scope (the tool reads its mount, env and call from it); `scope.call` is the request's tools/call.
 */
export async function kitLane(request: Request, message: unknown, table: LaneTable, scope: CallScope): Promise<Response | undefined> {
  const headers = request.headers;
  if (headers.get("mcp-protocol-version") !== MODERN_REVISION || !isJsonContentType(headers.get("content-type"))) return undefined;
  if (!isPlainObject(message)) return undefined;
  const call = plainCall(message as Message);
  if (call === undefined) return undefined;
  const fits = modernCallFits(request, message as Message, call, true);
  if (fits !== true && !(await fits)) return undefined;
  const tool = table.tools.get(call.name);
  if (tool === undefined || scope.call === undefined || request.signal.aborted) return undefined;
  // A schema whose check throws (a transform or refinement that fails) is the SDK's to answer: the tool has not run.
  let checked: Awaited<ReturnType<PlainTool["inputSchema"]["~standard"]["validate"]>>;
  try {
    checked = await tool.inputSchema["~standard"].validate(call.arguments ?? {});
  } catch {
    return undefined;
  }
  if (checked.issues !== undefined) return undefined;

  let result: unknown;
  try {
    result = await tool.run(checked.value);
  } catch (error) {
    scope.call.settled = { error };
    return undefined;
  }
  // A call that put a question to the client answers with it (mount.ts answerWithQuestion): the SDK's path encodes it.
  if (scope.call.question !== undefined) {
    scope.call.settled = { result };
    return undefined;
  }
  // The SDK's exchange ends when its request does, and it answers 499 then: the result is dropped.
  if (request.signal.aborted) return new Response(null, { status: 499 });
  try {
    if (isPlainObject(result) && everydayResult(result)) return resultAnswer(call.id, encodeResult(result, table.serverInfo));
  } catch {
    // Reading or serialising the result threw (a getter, a BigInt): the SDK answers that as it does.
  }
  scope.call.settled = { result };
  return undefined;
}

/**
 * A mount's tools/list as the SDK answered it under one env. Every 2026-07-28 list the gateway sends (listTools in
 * worker/mcp.ts: no cursor, its everyday envelope) gets the same result from the SDK whatever its id, so the lane
 * keeps the SDK's own first answer and gives it again, under each request's id, without building a server: the
 * list's tools and their JSON Schemas, converted from zod for every list, were the most a list cost. Kept with the
 * env it was answered under (EnvSeen: seen before the SDK ran, and kept only if the env still held it after).
 */
export interface KnownList extends EnvSeen {
  result: Record<string, unknown>;
}

/** The id of a list the lane may answer (plainListId, with the SDK's own content-type test), or undefined. */
export function listLaneId(request: Request, message: unknown): string | number | undefined {
  if (!isJsonContentType(request.headers.get("content-type")) || request.signal.aborted) return undefined;
  return plainListId(request, message);
}

/**
 * The result of the SDK's answer `text` to the list with `id`, when the lane's own answer under that id would be
 * the same bytes (resultAnswer's order and form); else undefined, and the lane learns nothing from it.
 */
export function listResultOf(text: string, id: string | number): Record<string, unknown> | undefined {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(answer) || !onlyKeys(answer, ["result", "jsonrpc", "id"]) || answer.id !== id || !isPlainObject(answer.result)) return undefined;
  if (answer.result.resultType !== "complete" || answer.result.nextCursor !== undefined) return undefined;
  return JSON.stringify({ result: answer.result, jsonrpc: "2.0", id }) === text ? answer.result : undefined;
}

/** The lane's answer to a list it may take, from what the SDK answered before under the same env. */
export function listLane(id: string | number, known: KnownList | undefined, env: Record<string, unknown>): Response | undefined {
  return known !== undefined && sameEnv(known, env) ? resultAnswer(id, known.result) : undefined;
}
