// Covers bundles/kit/tools.ts and the echo bundle's per-isolate tool definitions: a tools/call gets a server holding the called tool alone and answers byte for byte as a server holding every tool would, concurrent calls on different mounts and channels each see only their own call, and nothing one request leaves behind changes the next one's answer.
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import manifest from "../../../bundles/echo/bundle.json";
import echo from "../../../bundles/echo/echo.app";
import { echoServer } from "../../../bundles/echo/echo.tools";
import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import { serveBundle } from "../../../bundles/kit/mount";
import { callStateFor, currentScope, runInScope } from "../../../bundles/kit/scope";
import { jsonSchemaOnce, registerTools } from "../../../bundles/kit/tools";
import { callBundle } from "./helpers/bundle";

type Handler = ExportedHandler<Record<string, unknown>>;

/** The same bundle, with the call hidden from the factory: every request's server holds every tool. */
const everyTool = serveBundle({ manifest, server: (mount, env) => runInScope({ ...currentScope(), call: undefined }, () => echoServer(mount, env)) });

const MODERN = "2026-07-28";
const envelope = (extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "test", version: "0" },
  ...extra,
});

interface Raw {
  label: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

function modernCall(mount: string, name: unknown, args: unknown, meta: Record<string, unknown> | null = envelope({ progressToken: "strad-1" })): Raw {
  const params = { name, arguments: args, ...(meta === null ? {} : { _meta: meta }) };
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": String(name) };
  return { label: `2026-07-28 ${mount} ${String(name)} ${JSON.stringify(args)}`, path: `/${mount}`, headers, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params } };
}

function legacyCall(mount: string, name: unknown, args: unknown): Raw {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
  return { label: `2025-11-25 ${mount} ${String(name)} ${JSON.stringify(args)}`, path: `/${mount}`, headers, body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } } };
}

/** Every tool with good and bad arguments, names no tool has (some of them Object.prototype's), and a name that is not a string. */
const CALLS: [unknown, unknown][] = [
  ["echo", { text: "hi" }],
  ["echo", { text: 5 }],
  ["echo", { text: "x".repeat(10_001) }],
  ["about", {}],
  ["add", { a: 1, b: 2 }],
  ["add", { a: "1", b: 2 }],
  ["report_meta", {}],
  ["wait_for_abort", { ms: 1, tag: "t" }],
  ["wait_for_abort", { ms: 0, tag: "t" }],
  ["progress_demo", { steps: 2, ms: 0 }],
  ["progress_demo", { steps: 21, ms: 0 }],
  ["claim_race", { n: 1 }],
  ["demo_write", { note: "n" }],
  ["demo_write", { note: "" }],
  ["nope", {}],
  ["", {}],
  ["constructor", {}],
  ["toString", {}],
  [5, {}],
];

const REQUESTS: Raw[] = [
  ...["echo", "echo-waived"].flatMap((mount) => CALLS.flatMap(([name, args]) => [modernCall(mount, name, args), legacyCall(mount, name, args)])),
  modernCall("echo", "echo", { text: "hi" }, null),
  modernCall("echo", "echo", { text: "hi" }, envelope({ "io.modelcontextprotocol/protocolVersion": "2030-01-01" })),
  { ...modernCall("echo", "echo", { text: "hi" }), label: "wrong protocol version header", headers: { ...modernCall("echo", "echo", {}).headers, "mcp-protocol-version": "2024-01-01" } },
  { ...modernCall("echo", "echo", { text: "hi" }), label: "an Mcp-Name header naming another tool", headers: { ...modernCall("echo", "add", {}).headers } },
  {
    label: "2026-07-28 tools/list",
    path: "/echo",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
    body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: envelope() } },
  },
  { label: "2025-11-25 tools/list", path: "/echo", headers: legacyCall("echo", "", {}).headers, body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} } },
  {
    label: "2025-11-25 batch of two calls",
    path: "/echo",
    headers: legacyCall("echo", "", {}).headers,
    body: [legacyCall("echo", "echo", { text: "a" }).body, { ...(legacyCall("echo", "add", { a: 1, b: 1 }).body as object), id: 8 }],
  },
];

const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;

/** The whole answer as the gateway would read it: status, content type and body, byte for byte. */
async function answer(handler: Handler, raw: Raw, env: Record<string, unknown>): Promise<string> {
  const request = new Request(`https://bundle.internal${raw.path}`, { method: "POST", headers: raw.headers, body: JSON.stringify(raw.body) });
  const response = await (handler.fetch as NonNullable<Handler["fetch"]>)(request as never, env, ctx);
  return `${response.status} ${response.headers.get("content-type")}\n${await response.text()}`;
}

// No RECORDER_URL: wait_for_abort reports nowhere, and nothing leaves the test.
const ENVS: Record<string, Record<string, unknown>> = {
  "as deployed": {},
  "with the dev probes": { STRAD_DEV_PROBES: "1", ECHO_WAIVED__GREETING: "hello" },
};

describe("a tools/call's server holds the called tool alone", () => {
  it("registers only the tool a call names, and every tool for any other request", () => {
    const registered: string[] = [];
    const tools = ["a", "b", "c"].map((name) => ({ name, register: () => registered.push(name) }));
    const server = new McpServer({ name: "t", version: "0" });
    const inCall = (name: string) => {
      registered.length = 0;
      const scope = { mount: "m", signal: new AbortController().signal, waitUntil: () => {}, env: {}, call: callStateFor(1, { name }) };
      runInScope(scope, () => registerTools(server, tools));
      return [...registered];
    };
    expect(inCall("b")).toEqual(["b"]);
    expect(inCall("nope")).toEqual(["a", "b", "c"]);
    expect(inCall("")).toEqual(["a", "b", "c"]);
    registered.length = 0;
    runInScope({ mount: "m", signal: new AbortController().signal, waitUntil: () => {}, env: {} }, () => registerTools(server, tools));
    expect(registered).toEqual(["a", "b", "c"]);
    registered.length = 0;
    registerTools(server, tools);
    expect(registered).toEqual(["a", "b", "c"]);
  });

  it.each(Object.entries(ENVS))("answers every request %s exactly as a server holding every tool does", async (_, env) => {
    for (const raw of REQUESTS) {
      const [narrowed, whole] = [await answer(echo, raw, env), await answer(everyTool, raw, env)];
      expect(narrowed, raw.label).toBe(whole);
    }
  });

  it("keeps each of many concurrent calls on different mounts and channels to its own mount, channel, arguments and progress", async () => {
    const env = ENVS["with the dev probes"] as Record<string, unknown>;
    const mounts = ["echo", "echo-confirmed", "echo-waived", "echo-unseeded"];
    const calls = Array.from({ length: 80 }, (_, i) => ({ i, mount: mounts[i % 4] as string, kind: ["about", "report_meta", "progress_demo", "add"][Math.floor(i / 4) % 4] as string }));
    const answers = await Promise.all(
      calls.map((c) => {
        const channel = { slug: c.mount, url: `http://127.0.0.1:9/session-${c.i}/`, ttlMs: 10_000, headers: {} };
        const args = c.kind === "progress_demo" ? { steps: 3, ms: c.i % 5 } : c.kind === "add" ? { a: c.i, b: 1_000 } : {};
        return callBundle(echo, { mount: c.mount, name: c.kind, args, channel, progressToken: `token-${c.i}`, env });
      }),
    );
    for (const [k, a] of answers.entries()) {
      const c = calls[k] as (typeof calls)[number];
      expect(a.ok, `${c.kind} #${c.i}`).toBe(true);
      if (c.kind === "about") expect(JSON.parse(a.text)).toEqual({ mount: c.mount, greeting: c.mount === "echo-waived" ? "hello" : null });
      if (c.kind === "add") expect(a.result.structuredContent).toEqual({ sum: c.i + 1_000 });
      if (c.kind === "report_meta") {
        const seen = JSON.parse(a.text);
        expect(seen.mount).toBe(c.mount);
        expect(seen.channel.slug).toBe(c.mount);
        const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`http://127.0.0.1:9/session-${c.i}/`));
        expect(seen.channel.urlSha256).toBe(Buffer.from(digest).toString("hex"));
      }
      if (c.kind === "progress_demo") {
        expect(a.text).toBe("done after 3 steps");
        expect(a.progress.map((p) => [p.progressToken, p.progress])).toEqual([
          [`token-${c.i}`, 1],
          [`token-${c.i}`, 2],
          [`token-${c.i}`, 3],
        ]);
      }
    }
  });

  it("answers each request after many calls of every kind as a bundle answers it first", async () => {
    const env = ENVS["with the dev probes"] as Record<string, unknown>;
    const first = await Promise.all(REQUESTS.map((raw) => answer(serveBundle({ manifest, server: echoServer }), raw, env)));
    const served = serveBundle({ manifest, server: echoServer });
    for (let round = 0; round < 5; round++) await Promise.all(REQUESTS.map((raw) => answer(served, raw, round % 2 === 0 ? env : (ENVS["as deployed"] as Record<string, unknown>))));
    for (const [k, raw] of REQUESTS.entries()) expect(await answer(served, raw, env), raw.label).toBe(first[k]);
  });
});

describe("a schema converted to JSON Schema once", () => {
  const target = "draft-2020-12" as const;
  const shape = () => z.object({ text: z.string().max(10), n: z.number().int().min(1), nested: z.object({ tags: z.array(z.string()) }) });

  it("converts to what a fresh conversion gives, for both directions", () => {
    const once = jsonSchemaOnce(shape());
    expect(once["~standard"].jsonSchema.input({ target })).toEqual(shape()["~standard"].jsonSchema.input({ target }));
    expect(once["~standard"].jsonSchema.output({ target })).toEqual(shape()["~standard"].jsonSchema.output({ target }));
    expect(once["~standard"].jsonSchema.input({ target: "draft-07" })).toEqual(shape()["~standard"].jsonSchema.input({ target: "draft-07" }));
  });

  it("hands every request the same answer, frozen throughout, so no request can change the next one's", () => {
    const once = jsonSchemaOnce(shape());
    const first = once["~standard"].jsonSchema.input({ target });
    expect(once["~standard"].jsonSchema.input({ target })).toBe(first);
    const nested = (first.properties as Record<string, { properties: Record<string, unknown> }>).nested;
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(nested?.properties)).toBe(true);
    expect(() => {
      (first as Record<string, unknown>).type = "string";
    }).toThrow(TypeError);
  });

  it("still validates as the schema does", () => {
    const once = jsonSchemaOnce(shape());
    expect(once.safeParse({ text: "hi", n: 1, nested: { tags: [] } }).success).toBe(true);
    const checked = once["~standard"].validate({ text: "x".repeat(11), n: 0, nested: { tags: [1] } });
    expect(checked).toEqual(shape()["~standard"].validate({ text: "x".repeat(11), n: 0, nested: { tags: [1] } }));
  });
});
