// Runs the shared bundle contract (contract.ts) against the echo bundle, and checks that the contract's own checks can fail.

import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import echo from "../../../bundles/echo/echo.app";
import { CONFIRMED_TOOLS } from "../../../bundles/echo/echo.demo";
import { echoServer } from "../../../bundles/echo/echo.tools";
import { always, guardDeclarations, guardedTool } from "../../../bundles/kit/guard";
import { bundleContract, forbiddenProperties, missingAnnotations, registryMismatch } from "./contract";
import { callBundle, listBundle } from "./helpers/bundle";

const MOUNTS = ["echo", "echo-confirmed", "echo-waived", "echo-unseeded"];
const TOOLS = {
  echo: { asks: "never", args: { text: "hi" } },
  add: { asks: "never", args: { a: 1, b: 2 } },
  about: { asks: "never", args: {} },
  wait_for_abort: { asks: "never", args: { ms: 1, tag: "contract" } },
  progress_demo: { asks: "never", args: { steps: 1, ms: 0 } },
  demo_write: { asks: "always", args: { note: "contract" } },
} as const;
const PROBES = { report_meta: { asks: "never", args: {} }, claim_race: { asks: "never", args: { n: 1 } } } as const;

// As deployed: no dev switch, no probes.
bundleContract({ bundle: "echo", handler: echo, factory: echoServer, mounts: MOUNTS, registry: CONFIRMED_TOOLS, tools: TOOLS });
// The local stack (bundles/echo/wrangler.toml sets STRAD_DEV_PROBES=1): the probes join every mount.
bundleContract({ bundle: "echo (dev probes)", handler: echo, factory: echoServer, mounts: MOUNTS, registry: CONFIRMED_TOOLS, tools: { ...TOOLS, ...PROBES }, env: { STRAD_DEV_PROBES: "1" } });

describe("issue 13 #15: the echo bundle's test probes exist only in the dev stack", () => {
  it.each(["report_meta", "claim_race"])("without STRAD_DEV_PROBES=1, echo-confirmed lists no %s and calling it is refused as unknown", async (probe) => {
    for (const env of [{}, { STRAD_DEV_PROBES: "true" }, { STRAD_DEV_PROBES: "0" }]) {
      const names = (await listBundle(echo, "echo-confirmed", env)).map((t) => t.name);
      expect(names).not.toContain(probe);
      expect(names).toContain("demo_write");
      const answer = await callBundle(echo, { mount: "echo-confirmed", name: probe, args: PROBES[probe as keyof typeof PROBES].args, env });
      expect(answer.ok, JSON.stringify(answer.result)).toBe(false);
      expect(answer.error).toMatchObject({ code: "UPSTREAM_RPC", message: `Tool ${probe} not found` });
    }
  });

  it("with STRAD_DEV_PROBES=1 the probes answer on echo-confirmed", async () => {
    const names = (await listBundle(echo, "echo-confirmed", { STRAD_DEV_PROBES: "1" })).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["report_meta", "claim_race"]));
  });
});

describe("the contract's own checks", () => {
  it("finds a credential-shaped property at any depth", () => {
    const schema = z.toJSONSchema(
      z.object({
        query: z.string(),
        userId: z.string(),
        opts: z.object({ apiHost: z.string(), list: z.array(z.object({ access_token: z.string() })) }),
        account: z.union([z.string(), z.object({ credentials: z.string() })]),
      }),
    );
    expect(forbiddenProperties(schema).sort()).toEqual(["access_token", "account", "apiHost", "credentials", "userId"]);
    expect(forbiddenProperties(schema, { userId: "an id of a pad's author, not the caller" }).sort()).toEqual(["access_token", "account", "apiHost", "credentials"]);
    expect(forbiddenProperties(z.toJSONSchema(z.object({ text: z.string(), count: z.number() })))).toEqual([]);
  });

  it("finds a missing or non-boolean annotation", () => {
    expect(missingAnnotations({ annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true } })).toEqual(["openWorldHint"]);
    expect(missingAnnotations({})).toHaveLength(4);
    expect(missingAnnotations({ annotations: { readOnlyHint: "yes", destructiveHint: false, idempotentHint: true, openWorldHint: false } })).toEqual(["readOnlyHint"]);
  });

  it("finds a registry that lists a tool that does not ask", () => {
    const server = new McpServer({ name: "t", version: "0" });
    const guard = {
      rule: always,
      resolve: () => ({}),
      fingerprint: () => ({ operation: "x", target: {} }),
      prompt: () => ({ heading: "h", consequence: "c", values: [] }),
      act: async () => ({ content: [] }),
    };
    guardedTool(
      server,
      new Set(["asks"]),
      "asks",
      { description: "d", inputSchema: z.object({}), annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } },
      guard,
    );
    expect(registryMismatch(guardDeclarations(server), new Set(["asks", "stale"]))).toEqual(["stale is in the registry but does not ask"]);
  });

  it("sees demo_write's write go through the gate only: the demo module makes no fetch of its own", () => {
    const source = readFileSync(new URL("../../../bundles/echo/echo.demo.ts", import.meta.url), "utf8");
    expect(source).not.toMatch(/(^|[^.\w])fetch\s*\(/m);
    expect(source).toMatch(/await write\(/);
  });
});
