// The contract every bundle passes: never hand the model the keys, and the kit's guard rules (docs/rules.md R-TOOL-1, R-TOOL-2, R-TOOL-3, R-CHAN-9).
// A bundle's own test calls bundleContract() with its handler and tool list: tools list as declared, each
// declares all four annotations, none takes a user, account, token, credential or host, its registry of
// confirmed tools is exactly the tools that ask, and each of those refuses before it reads or writes. A bundle
// with tool groups runs it once per group: the tools outside the group are neither listed nor callable.
import type { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type GuardKind, guardDeclarations } from "../../../bundles/kit/guard";
import { callBundle, listBundle } from "./helpers/bundle";

export interface ContractTool {
  /** How the tool asks: through the kit's guard (always / when) or not at all. */
  asks: GuardKind;
  /** Arguments that pass the tool's input schema. */
  args: Record<string, unknown>;
}

export interface BundleContract {
  bundle: string;
  handler: ExportedHandler<Record<string, unknown>>;
  factory: (mount: string, env: Record<string, unknown>) => McpServer;
  mounts: readonly string[];
  /** The bundle's registry of confirmed tools. */
  registry: ReadonlySet<string>;
  tools: Readonly<Record<string, ContractTool>>;
  /** Vars the bundle needs to answer at all (never an approval address). */
  env?: Record<string, unknown>;
  /** A property whose name looks like a credential but is not one, with the reason. */
  allowProperties?: Readonly<Record<string, string>>;
  /**
   * Tools the bundle has that these mounts do not serve (another tool group's), with arguments that pass their
   * schema: none is listed, and a call to each is answered as the SDK answers an unknown tool, before any request.
   */
  absent?: Readonly<Record<string, Record<string, unknown>>>;
}

export const ANNOTATIONS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;
/** Identity, credentials and hosts travel as headers, never as arguments the model writes. */
export const FORBIDDEN_PROPERTY = /user|account|token|credential|host/i;

/** Every property name anywhere in a JSON Schema that looks like identity, a credential or a host. */
export function forbiddenProperties(schema: unknown, allow: Readonly<Record<string, string>> = {}, depth = 0): string[] {
  if (depth > 24 || typeof schema !== "object" || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((s) => forbiddenProperties(s, allow, depth + 1));
  const found: string[] = [];
  const node = schema as Record<string, unknown>;
  for (const key of ["properties", "patternProperties"]) {
    const props = node[key];
    if (typeof props !== "object" || props === null) continue;
    for (const [name, sub] of Object.entries(props)) {
      if (FORBIDDEN_PROPERTY.test(name) && allow[name] === undefined) found.push(name);
      found.push(...forbiddenProperties(sub, allow, depth + 1));
    }
  }
  for (const key of ["items", "prefixItems", "additionalProperties", "anyOf", "oneOf", "allOf", "not", "$defs", "definitions", "then", "else", "if"]) {
    const sub = node[key];
    if (key === "$defs" || key === "definitions") {
      if (typeof sub === "object" && sub !== null) found.push(...Object.values(sub).flatMap((s) => forbiddenProperties(s, allow, depth + 1)));
    } else found.push(...forbiddenProperties(sub, allow, depth + 1));
  }
  return found;
}

/** The hints a tool leaves to the client's defaults. */
export function missingAnnotations(tool: Record<string, unknown>): string[] {
  const annotations = (tool.annotations ?? {}) as Record<string, unknown>;
  return ANNOTATIONS.filter((hint) => typeof annotations[hint] !== "boolean");
}

/** Tools that ask but are not in the registry, and registry entries that do not ask. */
export function registryMismatch(declared: ReadonlyMap<string, GuardKind>, registry: ReadonlySet<string>): string[] {
  const asking = [...declared].filter(([, kind]) => kind !== "never").map(([name]) => name);
  return [
    ...asking.filter((name) => !registry.has(name)).map((n) => `${n} asks but is not in the registry`),
    ...[...registry].filter((name) => !asking.includes(name)).map((n) => `${n} is in the registry but does not ask`),
  ];
}

/** The container switches and gateway refusals a tool that asks must refuse under. */
const REFUSALS: { label: string; channel: unknown; env: Record<string, unknown>; says: RegExp }[] = [
  { label: "no channel", channel: undefined, env: {}, says: /no approval channel/ },
  { label: "a channel the gateway refused", channel: { slug: "contract", refused: "secret CONTRACT_UNSEEDED is not seeded" }, env: {}, says: /CONTRACT_UNSEEDED/ },
  { label: "a malformed channel", channel: { slug: "contract", url: 42 }, env: {}, says: /malformed channel/ },
  { label: "ELICITATION_ENABLED=false", channel: "ask", env: { ELICITATION_ENABLED: "false" }, says: /ELICITATION_ENABLED/ },
  { label: "ELICITATION_REQUEST_URL", channel: "ask", env: { ELICITATION_REQUEST_URL: "http://127.0.0.1:9/container/" }, says: /ELICITATION_REQUEST_URL/ },
  { label: "ELICITATION_POLL_URL", channel: "skip", env: { ELICITATION_POLL_URL: "http://127.0.0.1:9/container/" }, says: /ELICITATION_POLL_URL/ },
];

function channelFor(kind: unknown): unknown {
  if (kind === "ask") return { slug: "contract", url: "http://127.0.0.1:9/approvals/", ttlMs: 5_000, headers: {}, call: { scope: "contract", key: "n:1", nonce: "test-nonce-0123456789" } };
  if (kind === "skip") return { slug: "contract", skip: true, ttlMs: 5_000, call: { scope: "contract", key: "n:1", nonce: "test-nonce-0123456789" } };
  return kind;
}

export function bundleContract(c: BundleContract): void {
  const env = c.env ?? {};
  const names = Object.keys(c.tools).sort();
  const asking = names.filter((n) => c.tools[n]?.asks !== "never");

  describe(`the ${c.bundle} bundle's contract`, () => {
    afterEach(() => vi.unstubAllGlobals());

    it.each(c.mounts)("lists exactly its declared tools on /%s, each with all four annotations and no credential-shaped argument", async (mount) => {
      const tools = await listBundle(c.handler, mount, env);
      expect(tools.map((t) => t.name).sort()).toEqual(names);
      for (const tool of tools) {
        expect(missingAnnotations(tool), String(tool.name)).toEqual([]);
        expect(forbiddenProperties(tool.inputSchema, c.allowProperties), String(tool.name)).toEqual([]);
      }
    });

    it("keeps its registry of confirmed tools equal to the tools that ask, as declared", () => {
      for (const mount of c.mounts) {
        const declared = guardDeclarations(c.factory(mount, env));
        expect(registryMismatch(declared, c.registry)).toEqual([]);
        for (const name of names) expect(declared.get(name) ?? "never", name).toBe(c.tools[name]?.asks);
      }
      expect(new Set(asking)).toEqual(new Set(c.registry));
    });

    const cases = asking.flatMap((tool) => REFUSALS.map((r) => ({ tool, ...r })));
    it.each(cases)("$tool refuses with $label before it reads or writes anything, and says why", async ({ tool, channel, env: extra, says }) => {
      const outbound = vi.fn(async () => new Response("{}"));
      vi.stubGlobal("fetch", outbound);
      for (const mount of c.mounts) {
        const answer = await callBundle(c.handler, { mount, name: tool, args: c.tools[tool]?.args, channel: channelFor(channel), env: { ...env, ...extra } });
        expect(answer.isError, `${tool} on ${mount}`).toBe(true);
        expect(answer.text).toMatch(/^Refused: /);
        expect(answer.text).toMatch(says);
      }
      expect(outbound).not.toHaveBeenCalled();
    });

    const absent = Object.keys(c.absent ?? {}).sort();
    if (absent.length > 0)
      it.each(absent)("does not serve %s: it is neither listed nor callable on any mount, even with a channel", async (tool) => {
        const outbound = vi.fn(async () => new Response("{}"));
        vi.stubGlobal("fetch", outbound);
        for (const mount of c.mounts) {
          expect((await listBundle(c.handler, mount, env)).map((t) => t.name)).not.toContain(tool);
          for (const channel of [undefined, channelFor("ask"), channelFor("skip")]) {
            const answer = await callBundle(c.handler, { mount, name: tool, args: c.absent?.[tool], channel, env });
            expect(answer.ok, `${tool} on ${mount}`).toBe(false);
            expect(answer.error).toMatchObject({ code: "UPSTREAM_RPC", message: `Tool ${tool} not found` });
          }
          expect(guardDeclarations(c.factory(mount, env)).has(tool)).toBe(false);
        }
        expect(outbound).not.toHaveBeenCalled();
      });

    it.each(names.filter((n) => c.tools[n]?.asks === "never"))("%s answers without a channel: it never asks", async (tool) => {
      vi.stubGlobal(
        "fetch",
        vi.fn(async () => new Response("{}")),
      );
      const answer = await callBundle(c.handler, { mount: c.mounts[0] as string, name: tool, args: c.tools[tool]?.args, env });
      expect(answer.ok).toBe(true);
      expect(answer.text).not.toMatch(/^Refused: /);
    });
  });
}
