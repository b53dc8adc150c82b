// Covers bundles/kit/mount.ts and bundles/kit/tool-groups.ts: a "per-slug" bundle serves /<slug> exactly for the slugs whose own secrets are set (never from bare names or another slug's), answers a mount without them with a JSON-RPC error naming the missing variables; a mount's tool-group setting that names no group refuses every request, naming the variable and the allowed groups; a bundle with a list of mounts serves exactly those.
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import echo from "../../../bundles/echo/echo.app";
import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import { type BundleManifest, MOUNT_UNAVAILABLE, serveBundle } from "../../../bundles/kit/mount";
import { type ToolGroupSpec, toolGroupsFor } from "../../../bundles/kit/tool-groups";
import { callBundle, listBundle } from "./helpers/bundle";

const GROUPS: ToolGroupSpec = { variable: "KIT_GROUPS", default: "reads", groups: { reads: ["look"], writes: ["look", "change"] } };
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** A bundle whose factory registers the tools of the mount's groups, as the Google bundle's does. */
function groupedServer(mount: string, env: Record<string, unknown>): McpServer {
  const server = new McpServer({ name: `kit-mount/${mount}`, version: "0.0.0" });
  const groups = toolGroupsFor(GROUPS, mount, env);
  const tools = groups.ok ? groups.tools : new Set<string>();
  for (const name of ["look", "change"]) {
    if (tools.has(name)) server.registerTool(name, { description: name, inputSchema: z.object({}), annotations: READ }, async () => ({ content: [{ type: "text", text: `${name} on ${mount}` }] }));
  }
  return server;
}

const PER_SLUG: BundleManifest = { mounts: "per-slug", secrets: ["KIT_ID", "KIT_KEY"], toolGroups: GROUPS };
const bundle = serveBundle({ manifest: PER_SLUG, server: groupedServer });
const OWN = { MAIL_ONE__KIT_ID: "id-one-value", MAIL_ONE__KIT_KEY: "key-one-value" };

async function post(handler: ExportedHandler<Record<string, unknown>>, path: string, body: unknown, env: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: GATEWAY_PROPS } as unknown as ExecutionContext;
  const request = new Request(`https://bundle.internal${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28" },
    body: JSON.stringify(body),
  });
  const response = await (handler.fetch as NonNullable<typeof handler.fetch>)(request as never, env, ctx);
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe("a per-slug bundle", () => {
  it("serves /<slug> for a slug whose every secret is set under its own namespace", async () => {
    expect((await listBundle(bundle, "mail-one", OWN)).map((t) => t.name)).toEqual(["look"]);
    const answer = await callBundle(bundle, { mount: "mail-one", name: "look", env: OWN });
    expect(answer.text).toBe("look on mail-one");
  });

  it("answers a slug without its own credentials with a JSON-RPC error to its id naming each missing variable, never a value", async () => {
    // Bare names and another slug's are never a slug's own.
    const env = { ...OWN, KIT_ID: "bare-id-value", KIT_KEY: "bare-key-value", MAIL_TWO__KIT_ID: "id-two-value" };
    for (const method of ["tools/list", "tools/call", "initialize"]) {
      const r = await post(bundle, "/mail-two", { jsonrpc: "2.0", id: 7, method, params: { name: "look", arguments: {} } }, env);
      expect(r.status, method).toBe(200);
      expect(r.json).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: MOUNT_UNAVAILABLE, message: "no mount at /mail-two: a mount is served at /<slug> for a slug with credentials of its own, and MAIL_TWO__KIT_KEY is not set" },
      });
    }
    const none = await post(bundle, "/mail-three", { jsonrpc: "2.0", id: "x", method: "tools/list" }, env);
    expect((none.json.error as { message: string }).message).toMatch(/MAIL_THREE__KIT_ID, MAIL_THREE__KIT_KEY are not set$/);
    expect(JSON.stringify(none.json)).not.toMatch(/value/);
    // Through the gateway's own upstream client the reason reaches the caller, not an HTTP status.
    const listed = await callBundle(bundle, { mount: "mail-two", name: "look", env });
    expect(listed.error).toMatchObject({ code: "UPSTREAM_RPC", rpcCode: MOUNT_UNAVAILABLE, message: expect.stringContaining("MAIL_TWO__KIT_KEY is not set") });
  });

  it("treats an empty or blank secret as missing, and a path that is no slug as no mount", async () => {
    const blank = await post(bundle, "/mail-one", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...OWN, MAIL_ONE__KIT_KEY: "  " });
    expect((blank.json.error as { message: string }).message).toMatch(/MAIL_ONE__KIT_KEY is not set$/);
    for (const path of ["/", "/Mail-One", "/mail_one", "/mail-one/x", "/mail--one"]) {
      const r = await post(bundle, path, { jsonrpc: "2.0", id: 1, method: "tools/list" }, OWN);
      expect(r.status, path).toBe(404);
      expect(r.json).toMatchObject({ id: null, error: { code: -32601, message: `no mount at ${path}` } });
    }
  });

  it("answers each request by its own env's values, however the same env object and others alternate (the answer is remembered per mount)", async () => {
    const shared: Record<string, unknown> = { ...OWN };
    const states: [string, Record<string, unknown>, RegExp | string[]][] = [
      ["served", OWN, ["look"]],
      ["a secret unset", { MAIL_ONE__KIT_ID: "id-one-value" }, /MAIL_ONE__KIT_KEY is not set$/],
      ["a secret blank", { ...OWN, MAIL_ONE__KIT_KEY: " " }, /MAIL_ONE__KIT_KEY is not set$/],
      ["groups that name none", { ...OWN, MAIL_ONE__KIT_GROUPS: "nope" }, /MAIL_ONE__KIT_GROUPS names something that is not a tool group/],
      ["groups that name writes", { ...OWN, MAIL_ONE__KIT_GROUPS: "writes" }, ["look", "change"]],
    ];
    let seed = 31;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 60; i++) {
      const [name, values, expected] = states[next() % states.length] as (typeof states)[number];
      // Half the time the same object, its values changed in place; half the time a fresh one.
      let env: Record<string, unknown> = { ...values };
      if (next() % 2 === 0) {
        for (const key of Object.keys(shared)) delete shared[key];
        Object.assign(shared, values);
        env = shared;
      }
      if (Array.isArray(expected))
        expect(
          (await listBundle(bundle, "mail-one", env)).map((t) => t.name),
          `${i}: ${name}`,
        ).toEqual(expected);
      else expect(((await post(bundle, "/mail-one", { jsonrpc: "2.0", id: i, method: "tools/list" }, env)).json.error as { message?: string }).message, `${i}: ${name}`).toMatch(expected);
    }
  });

  it("refuses a manifest whose mounts is another word, or a per-slug one without secrets", () => {
    expect(() => serveBundle({ manifest: { mounts: "every-slug" }, server: groupedServer })).toThrow(/a list of paths or "per-slug"/);
    expect(() => serveBundle({ manifest: { mounts: "per-slug", secrets: [] }, server: groupedServer })).toThrow(/lists the secrets/);
  });
});

describe("tool groups", () => {
  it("a mount serves its own groups' tools, the default when it declares none, and never reads a bare or another mount's setting", async () => {
    const names = async (env: Record<string, unknown>) => (await listBundle(bundle, "mail-one", { ...OWN, ...env })).map((t) => t.name);
    expect(await names({})).toEqual(["look"]);
    expect(await names({ MAIL_ONE__KIT_GROUPS: "writes" })).toEqual(["look", "change"]);
    expect(await names({ MAIL_ONE__KIT_GROUPS: " reads , writes " })).toEqual(["look", "change"]);
    expect(await names({ MAIL_ONE__KIT_GROUPS: "" })).toEqual(["look"]);
    expect(await names({ KIT_GROUPS: "writes", MAIL_TWO__KIT_GROUPS: "writes" })).toEqual(["look"]);
    const call = await callBundle(bundle, { mount: "mail-one", name: "change", env: OWN });
    expect(call.error).toMatchObject({ code: "UPSTREAM_RPC", message: "Tool change not found" });
  });

  it("a setting that names no group makes the mount serve no tool: every request is answered with the variable and the allowed groups, never the value", async () => {
    for (const value of ["write", "reads,nope", "READS", "__proto__", "constructor"]) {
      const env = { ...OWN, MAIL_ONE__KIT_GROUPS: value };
      for (const method of ["tools/list", "tools/call"]) {
        const r = await post(bundle, "/mail-one", { jsonrpc: "2.0", id: 3, method, params: { name: "look", arguments: {} } }, env);
        expect(r.status, `${value} ${method}`).toBe(200);
        expect(r.json).toEqual({
          jsonrpc: "2.0",
          id: 3,
          error: {
            code: MOUNT_UNAVAILABLE,
            message: "the mount at /mail-one serves no tool: MAIL_ONE__KIT_GROUPS names something that is not a tool group; allowed: reads, writes (comma-separated), or unset for reads",
          },
        });
      }
      expect(toolGroupsFor(GROUPS, "mail-one", env)).toMatchObject({ ok: false, variable: "MAIL_ONE__KIT_GROUPS" });
    }
    expect(toolGroupsFor(GROUPS, "mail-one", { MAIL_ONE__KIT_GROUPS: 42 })).toMatchObject({ ok: false, reason: expect.stringMatching(/^MAIL_ONE__KIT_GROUPS is not text/) });
  });

  it("reads the mount's namespace, so slugs sharing a path share its groups", () => {
    expect(toolGroupsFor(GROUPS, "mail-one", { MAIL_ONE__KIT_GROUPS: "writes" })).toEqual({
      ok: true,
      variable: "MAIL_ONE__KIT_GROUPS",
      declared: true,
      groups: ["writes"],
      tools: new Set(["look", "change"]),
    });
    expect(toolGroupsFor(GROUPS, "mail-one", {})).toEqual({ ok: true, variable: "MAIL_ONE__KIT_GROUPS", declared: false, groups: ["reads"], tools: new Set(["look"]) });
  });
});

describe("a bundle that lists its mounts", () => {
  it("serves exactly those, whatever credentials the env holds (the echo bundle, unchanged)", async () => {
    expect((await listBundle(echo, "echo-waived", {})).map((t) => t.name)).toContain("demo_write");
    const r = await post(echo, "/echo-other", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ECHO_OTHER__X: "x" });
    expect(r).toEqual({ status: 404, json: { jsonrpc: "2.0", id: null, error: { code: -32601, message: "no mount at /echo-other" } } });
  });
});
