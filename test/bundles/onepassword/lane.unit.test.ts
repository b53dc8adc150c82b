// Covers the 1Password bundle on the kit's lane (bundles/kit/lane.ts): every call, read or guarded, valid or not, is
// answered byte for byte as the SDK's path answers it, the three reads are served without an SDK server, each call
// warns once of the ignored upstream switches on either path, and every tool is built once per isolate.
import type { McpServer } from "@modelcontextprotocol/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import manifest from "../../../bundles/onepassword/bundle.json";
import { servePerSlug } from "../../../bundles/onepassword/onepassword.mounts";
import { onepasswordServer } from "../../../bundles/onepassword/onepassword.tools";
import { IDS, SECRET_PREFIX, SHARED_TOKEN } from "../../fakes/onepassword/seed";
import { answer, both, call, list, onGatedHop, type Raw } from "../kit/helpers/lane";
import { onlyOrigins, type ServedConnect, startConnectFake } from "./helpers";

/** Where a mount's Connect is a closed loopback port: its reads fail at once, the same way on both paths. */
const CLOSED = "http://127.0.0.1:9";
const TOOLS = [
  "onepassword_list_vaults",
  "onepassword_list_items",
  "onepassword_get_item_metadata",
  "onepassword_get_item",
  "onepassword_create_login",
  "onepassword_create_secure_note",
  "onepassword_create_api_credential",
  "onepassword_share_item",
];

let fake: ServedConnect;
let unexpected: string[] = [];
beforeAll(async () => {
  fake = await startConnectFake();
});
afterAll(async () => {
  await fake?.stop();
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  expect(unexpected, "requests to an origin the test did not name").toEqual([]);
});

describe("the 1Password bundle on the lane", () => {
  const lanes = { on: servePerSlug(manifest, onepasswordServer), off: servePerSlug(manifest, onepasswordServer, { fastLane: false }) };
  // One env object for every request, so the lane keeps the table it learnt: /onepassword reads the Connect fake,
  // /onepassword-team a closed port, and /onepassword-none has no credentials of its own (it never reads the bare ones).
  // An upstream switch is set, so every call warns that it is ignored (docs/rules.md R-OP-3).
  const env: Record<string, unknown> = { OP_ELICITATION_READ: "false" };
  beforeAll(() => {
    Object.assign(env, { OP_CONNECT_HOST: fake.host, OP_CONNECT_TOKEN: SHARED_TOKEN, ONEPASSWORD_TEAM__OP_CONNECT_HOST: `${CLOSED}/onepassword`, ONEPASSWORD_TEAM__OP_CONNECT_TOKEN: SHARED_TOKEN });
  });
  const github = { vault_id: IDS.engineering, item_id: IDS.github };

  /** Outbound held to the fake and the closed port, each ignored-switch warning counted as "warned", every mount's table learnt. */
  async function warmedCountingWarnings(): Promise<Map<string, number>> {
    unexpected = onlyOrigins(fake.origin, CLOSED);
    const runs = new Map<string, number>();
    vi.spyOn(console, "warn").mockImplementation((line: unknown) => {
      if (String(line).includes('"onepassword_variable_ignored"')) runs.set("warned", (runs.get("warned") ?? 0) + 1);
    });
    for (const path of ["/onepassword", "/onepassword-team", "/onepassword-none"]) await answer(lanes.on, list(path), env);
    return runs;
  }
  const CALLS: Raw[] = [
    call("/onepassword", "onepassword_list_vaults", {}),
    call("/onepassword", "onepassword_list_items", { vault_id: IDS.engineering }),
    call("/onepassword", "onepassword_list_items", { vault_id: "../x" }),
    call("/onepassword", "onepassword_get_item_metadata", github),
    call("/onepassword", "onepassword_get_item_metadata", { vault_id: IDS.engineering }),
    call("/onepassword", "onepassword_get_item_metadata", { vault_id: IDS.engineering, item_id: IDS.card }),
    call("/onepassword", "onepassword_get_item", { items: [github] }),
    call("/onepassword", "onepassword_create_login", { vault_id: IDS.engineering, items: [{ title: "x", username: "ada", password: "p" }] }),
    call("/onepassword", "onepassword_create_secure_note", { vault_id: IDS.engineering, items: [{ title: "x", note: "n" }] }),
    call("/onepassword", "onepassword_create_api_credential", { vault_id: IDS.engineering, items: [{ title: "x", secret: "s" }] }),
    call("/onepassword", "onepassword_share_item", { items: [github] }),
    call("/onepassword", "nope", {}),
    call("/onepassword-team", "onepassword_list_vaults", {}),
    call("/onepassword-none", "onepassword_list_vaults", {}),
  ];

  it("answers every call as the SDK does, takes the reads with good arguments without an SDK server, and warns once per call on either path", async () => {
    const runs = await warmedCountingWarnings();
    const taken: string[] = [];
    const texts: string[] = [];
    for (const raw of CALLS) {
      const { on, off } = await both(raw, lanes, env, runs);
      expect(on.text, raw.label).toBe(off.text);
      expect(on.runs, raw.label).toEqual({ warned: 1 });
      expect(off.runs, raw.label).toEqual({ warned: 1 });
      texts.push(on.text);
      if (on.servers === 0) taken.push(raw.label);
    }
    // Six reads with good arguments, on all three mounts; a refused argument, the guarded tools and an unknown name are the SDK's.
    expect(taken).toEqual(CALLS.filter((_, i) => [0, 1, 3, 5, 12, 13].includes(i)).map((r) => r.label));
    // What the lane answered is the bundle's: a read with every secret withheld, a status, a refusal naming variables.
    expect(texts[3]).toContain("[REDACTED]");
    expect(texts[3]).not.toContain(SECRET_PREFIX);
    expect(texts[5]).toContain("Not done: ");
    expect(texts[12]).toContain("Not done: 1Password Connect could not be reached.");
    expect(texts[13]).toContain("ONEPASSWORD_NONE__OP_SERVICE_ACCOUNT_TOKEN");
    // The guarded tools refused without a channel, before 1Password was read.
    for (const i of [6, 7, 8, 9, 10]) expect(texts[i], CALLS[i]?.label).toContain("Refused: ");
    expect(fake.store.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("takes the reads as a gated mount's hop sends them (the gateway's progress token and channel), answering as the SDK does", async () => {
    const runs = await warmedCountingWarnings();
    const reads = [0, 1, 3, 5, 12, 13].map((i) => onGatedHop(CALLS[i] as Raw));
    // A guarded tool on the same hop stays the SDK's; its channel here is a refusal, so nobody is asked.
    const guarded = onGatedHop(CALLS[6] as Raw, { slug: "onepassword", refused: "no approval URL", caller: "dev-session" });
    for (const raw of [...reads, guarded]) {
      const { on, off } = await both(raw, lanes, env, runs);
      expect(on.text, raw.label).toBe(off.text);
      expect(on.runs, raw.label).toEqual({ warned: 1 });
      expect(on.servers, raw.label).toBe(raw === guarded ? 1 : 0);
    }
    expect((await both(reads[1] as Raw, lanes, env, runs)).on.text).toContain("GitHub");
    expect((await both(guarded, lanes, env, runs)).on.text).toContain("Refused: ");
    expect(fake.store.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("builds each tool's schema once per isolate: two requests' servers hold the same schema objects", () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const schemaOf = (server: McpServer, name: string) => (server as unknown as { _registeredTools: Record<string, { inputSchema: unknown }> })._registeredTools[name]?.inputSchema;
    const [a, b] = [onepasswordServer("onepassword", env), onepasswordServer("onepassword", env)];
    for (const name of TOOLS) {
      expect(schemaOf(a, name), name).toBeDefined();
      expect(schemaOf(a, name), name).toBe(schemaOf(b, name));
    }
  });
});
