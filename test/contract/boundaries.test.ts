// Covers the module boundaries (scripts/check-boundaries.mjs): the tree has no import that crosses from one Worker's code into another's except through contract/, and each kind of violation is caught.
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM helper without types
import { treeFiles, violations } from "../../scripts/check-boundaries.mjs";

describe("module boundaries", () => {
  it("no file under worker/, durable-objects/, bundles/, approvals/ or contract/ imports across a boundary except through contract/", () => {
    const files = treeFiles() as { path: string }[];
    expect(files.some((f) => f.path.startsWith("contract/"))).toBe(true);
    expect(files.some((f) => f.path.startsWith("approvals/"))).toBe(true);
    expect(violations(files)).toEqual([]);
  });

  it.each([
    ["a bundle importing the gateway", "bundles/google/x.ts", 'import { checkPrefix } from "../../worker/elicitation-url";'],
    ["the kit importing the gateway", "bundles/kit/x.ts", 'import type { Caller } from "../../worker/auth";'],
    ["the gateway importing the kit", "worker/x.ts", 'import { readCappedText } from "../bundles/kit/body";'],
    ["the gateway importing the approval service", "worker/x.ts", 'export { x } from "../approvals/tokens";'],
    ["a bundle importing a Durable Object's class", "bundles/echo/x.ts", 'import type { CallRegistry } from "../../durable-objects/call-registry";'],
    ["a Durable Object importing the gateway", "durable-objects/x.ts", 'import { requestKey } from "../worker/calls";'],
    ["the approval service importing a bundle", "approvals/x.ts", 'const m = await import("../bundles/kit/prompt");'],
    ["one bundle importing another", "bundles/echo/x.ts", 'import { Mailbox } from "../google/google.mailbox";'],
    ["contract importing the gateway", "contract/x.ts", 'import type { Roster } from "../worker/roster";'],
    ["a gateway module other than the entry importing a Durable Object", "worker/mcp2.ts", 'import type { CallRegistry } from "../durable-objects/call-registry";'],
    ["the gateway importing the SDK's values", "worker/x.ts", 'import { ProtocolError } from "@modelcontextprotocol/server";'],
    ["the gateway importing the SDK's values beside its types", "worker/x.ts", 'import { type ServerContext, Server } from "@modelcontextprotocol/server";'],
    ["the contract importing the SDK's core", "contract/x.ts", 'import { JSONRPCMessageSchema } from "@modelcontextprotocol/core/internal";'],
    ["a Durable Object importing the SDK's values", "durable-objects/x.ts", 'import * as sdk from "@modelcontextprotocol/server";'],
    ["the gateway importing the SDK's leg statically", "worker/app2.ts", 'import { sdkHandlers } from "./sdk-leg";'],
    ["the gateway re-exporting the SDK's values", "worker/x.ts", 'export { Server } from "@modelcontextprotocol/server";'],
    ["the gateway evaluating the SDK's leg by a bare import", "worker/x.ts", 'import "./sdk-leg";'],
    ["the gateway importing zod", "worker/x.ts", 'import * as z from "zod";'],
    ["a bundle importing zod's z object", "bundles/echo/x.ts", 'import { z } from "zod";'],
    ["a bundle importing zod's z object under another name", "bundles/echo/x.ts", 'import { type ZodType, z as zod } from "zod";'],
    ["the approval service importing zod's default export", "approvals/x.ts", 'import z from "zod/v4";'],
    ["the kit re-exporting zod's z object", "bundles/kit/x.ts", 'export { z } from "zod";'],
    ["a bundle importing zod's z object after a statement on the same line", "bundles/echo/x.ts", 'const a = 1;import { z } from "zod";'],
    ["the contract importing zod's core", "contract/x.ts", 'import * as core from "zod/v4/core";'],
    ["a Durable Object importing the YAML parser", "durable-objects/x.ts", 'import { parse } from "yaml";'],
    ["the gateway importing the roster's schema statically", "worker/app2.ts", 'import { parseRoster, type Roster } from "./roster";'],
    ["the gateway importing the channel's schema statically", "worker/mcp2.ts", 'import { CHANNEL_META_KEY } from "../contract/channel";'],
    ["the gateway's entry parsing a roster's text", "worker/index.ts", 'import { createGateway } from "./gateway";'],
  ])("refuses %s", (_name, path, text) => {
    const found = violations([{ path, text }]) as string[];
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(path);
  });

  it.each([
    ["a bundle using the kit and the contract", "bundles/google/x.ts", 'import { gatedWrite } from "../kit/gate";\nimport { slugNamespace } from "../../contract/slug";'],
    ["the gateway's entry hosting the Durable Object", "worker/index.ts", 'export { CallRegistry } from "../durable-objects/call-registry";\nimport roster from "../.build/strad.config.roster.js";'],
    ["the gateway's dev entry hosting the Durable Object", "worker/dev.ts", 'export { CallRegistry } from "../durable-objects/call-registry";\nimport roster from "../.build/strad.dev.roster.js";'],
    ["the gateway using the roster's types and loading its schema", "worker/x.ts", 'import type { Roster } from "./roster";\nconst schema = await import("./roster");'],
    ["the roster's schema importing zod", "worker/roster.ts", 'import * as z from "zod";'],
    ["a bundle importing zod's functions by name and its types", "bundles/echo/x.ts", 'import { object, string } from "zod";\nimport type { z } from "zod";'],
    ["a bundle importing zod's types after a statement on the same line", "bundles/echo/x.ts", 'const a = 1;import type { z } from "zod";'],
    ["the kit re-exporting zod's types", "bundles/kit/x.ts", 'export type { ZodType } from "zod";'],
    ["the roster's text parser importing the YAML parser and the schema", "worker/roster-text.ts", 'import { parse as parseYaml } from "yaml";\nimport { validateRoster } from "./roster";'],
    ["the roster's text wrapper importing the parser", "worker/gateway.ts", 'import { parseRoster } from "./roster-text";'],
    ["the approval service using the contract", "approvals/x.ts", 'import { REQUEST_ID } from "../contract/elicitation";'],
    ["a package import", "worker/x.ts", 'import { Hono } from "hono";'],
    ["the gateway importing the SDK's types", "worker/x.ts", 'import type { ServerContext } from "@modelcontextprotocol/server";\nimport { type A, type B } from "@modelcontextprotocol/server";'],
    ["the gateway loading the SDK's leg", "worker/x.ts", 'import type { SdkHandlers } from "./sdk-leg";\nconst leg = await import("./sdk-leg");'],
    ["the SDK's leg importing the SDK", "worker/sdk-leg.ts", 'import { createMcpHandler, Server } from "@modelcontextprotocol/server";'],
    ["a bundle importing the SDK", "bundles/echo/x.ts", 'import { McpServer } from "@modelcontextprotocol/server";'],
  ])("allows %s", (_name, path, text) => {
    expect(violations([{ path, text }])).toEqual([]);
  });
});
