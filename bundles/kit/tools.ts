// Registering a bundle's tools on the server built for one request. The SDK serves one exchange per server
// instance, so a bundle builds a fresh server for every request, and registering a tool on it costs about 1.5 KB
// (the SDK's record of it carries accessors and closures of its own). A tools/call reaches one tool only: a call
// naming one of the bundle's tools gets a server holding that tool alone, and every other request (tools/list, a
// name no tool has, a batch, a factory run outside a request) gets them all, so the SDK answers as it would with all.
import type { CallToolResult, Icon, McpServer, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server";
import { currentCall } from "./scope";

/** One tool, and how it is registered: a function built once per isolate, never per request. */
export interface ToolEntry {
  name: string;
  register: (server: McpServer) => unknown;
  /** Set by plainTool: what the kit's lane needs to serve a call of this tool without the SDK (bundles/kit/lane.ts). */
  plain?: PlainTool;
}

/**
 * A plain tool as the kit's lane sees it: the schema its arguments are held to, and what it does with them; and the
 * handler plainTool registers, by which the lane knows the SDK's server still holds the tool as it was registered.
 */
export interface PlainTool {
  inputSchema: StandardSchemaWithJSON;
  run: (args: unknown) => Promise<CallToolResult>;
  handler: (args: unknown) => Promise<CallToolResult>;
}

/** The tools a server was given by registerTools (every one, whichever it registered), for the lane's table. */
const served = new WeakMap<McpServer, readonly ToolEntry[]>();

/** Registers the tools this request can reach, in the order given, and returns the server. */
export function registerTools(server: McpServer, tools: readonly ToolEntry[]): McpServer {
  served.set(server, tools);
  const called = currentCall()?.toolName;
  const only = called === undefined ? undefined : tools.find((tool) => tool.name === called);
  if (only !== undefined) only.register(server);
  else for (const tool of tools) tool.register(server);
  return server;
}

/** The tools registerTools was given for this server, or undefined when it registered its tools some other way. */
export function toolsServedBy(server: McpServer): readonly ToolEntry[] | undefined {
  return served.get(server);
}

/** What a plain tool may declare: no output schema and no scope challenge, the two things that change how its call is answered. */
export interface PlainToolConfig<S extends StandardSchemaWithJSON> {
  title?: string;
  description?: string;
  inputSchema: S;
  annotations?: ToolAnnotations;
  icons?: Icon[];
  _meta?: Record<string, unknown>;
}

/**
 * A tool whose handler needs nothing of the SDK's per-request context: it reads its arguments and the call's scope
 * (bundles/kit/scope.ts) and answers, asking nobody and sending no notification. The kit's lane may serve its
 * calls without building an SDK server (bundles/kit/lane.ts); every other call of it (and any call the lane leaves)
 * is the SDK's as before. When the lane ran the tool but its outcome is the SDK's to answer (a thrown error, a
 * result of another shape), the handler registered here hands that outcome over instead of running the tool again.
 * What a plain tool promises, for the lane to answer as the SDK would: its input schema checks without side effects
 * (a call the lane hands over is checked again by the SDK); the factory registering it does not replace the server's
 * tools/call handler; and nothing the factory does per request matters to its calls (the lane does not run the
 * factory for the calls it serves): what a call must do whichever path answers it, such as 1Password's warning of
 * its ignored switches, the tool's own handler does.
 */
export function plainTool<S extends StandardSchemaWithJSON>(name: string, config: PlainToolConfig<S>, run: (args: StandardSchemaWithJSON.InferOutput<S>) => Promise<CallToolResult>): ToolEntry {
  const handler = async (args: unknown): Promise<CallToolResult> => {
    const call = currentCall();
    const settled = call?.settled;
    if (call !== undefined && settled !== undefined) {
      call.settled = undefined;
      if ("error" in settled) throw settled.error;
      return settled.result as CallToolResult;
    }
    return run(args as StandardSchemaWithJSON.InferOutput<S>);
  };
  const plain: PlainTool = { inputSchema: config.inputSchema, run: run as PlainTool["run"], handler };
  return { name, plain, register: (server) => server.registerTool(name, config, handler as never) };
}

type Convert = StandardSchemaWithJSON["~standard"]["jsonSchema"]["input"];
type JsonSchema = ReturnType<Convert>;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function convertOnce(convert: Convert): Convert {
  const byTarget = new Map<string, JsonSchema>();
  return (options) => {
    if (options.libraryOptions !== undefined) return convert(options);
    let json = byTarget.get(options.target);
    if (json === undefined) {
      json = deepFreeze(convert(options));
      byTarget.set(options.target, json);
    }
    return json;
  };
}

/**
 * The schema, converting itself to JSON Schema once per target instead of at every request that asks: the SDK
 * converts the called tool's input schema on each tools/call, to look for SEP-2243 header declarations, and zod
 * builds the answer anew each time (some 6 KB). The conversion depends on the schema alone, so one answer serves
 * every request; it is frozen throughout, so code that tried to change what the next request reads would throw
 * instead. Standard Schema's `~standard` is the interface the SDK reads, and zod lets it be set.
 */
export function jsonSchemaOnce<S extends StandardSchemaWithJSON>(schema: S): S {
  const standard = schema["~standard"];
  const jsonSchema = { input: convertOnce(standard.jsonSchema.input), output: convertOnce(standard.jsonSchema.output) };
  (schema as { "~standard": unknown })["~standard"] = { ...standard, jsonSchema };
  return schema;
}
