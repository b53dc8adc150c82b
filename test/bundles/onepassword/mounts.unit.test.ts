// A second 1Password account is a roster entry alone (bundles/onepassword/onepassword.mounts.ts, bundle.json "per-slug"): check-config takes a new slug on its own path with no change to bundle.json, the bundle serves /<slug> from that slug's own <SLUG>__ credentials (Connect or a service-account token) and never from another slug's or the bare ones, every dev and prod slug still passes, and the kit's refusals still come first on every path.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { GATEWAY_PROPS } from "../../../bundles/kit/gateway-only";
import handler from "../../../bundles/onepassword/onepassword.app";
import { credentialsFor } from "../../../bundles/onepassword/onepassword.client";
import { MAX_KEPT_MOUNTS } from "../../../bundles/onepassword/onepassword.mounts";
import { type BundleTree, checkConfigText, readBundleTree } from "../../../scripts/check-config";
import { IDS } from "../../fakes/onepassword/seed";
import { listBundle } from "../kit/helpers/bundle";
import { harness, PROVISIONING, SHARED, TEAM } from "./helpers";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const h = harness();

/** The mount's own credentials removed from the harness's env: what a slug without secrets of its own sees. */
const withoutOwn = (ns: string) => ({ [`${ns}OP_CONNECT_HOST`]: undefined, [`${ns}OP_CONNECT_TOKEN`]: undefined });

describe("bundle.json and check-config", () => {
  const tree = readBundleTree(ROOT) as BundleTree;
  const dev = readFileSync(join(ROOT, "strad.dev.yaml"), "utf8");
  const anchor = "  - slug: onepassword-scripted\n";
  const team = `  - slug: ${TEAM}\n    kind: bundle\n    bundle: ONEPASSWORD\n    path: /${TEAM}\n    entitlements: [user]\n    confirmations: true\n    timeoutMs: 120000\n    approvalUrlPrefixes: [http://127.0.0.1:8788/api/v1/elicitations/session/]\n`;

  it("serves a mount per slug, naming the three credentials a mount reads", () => {
    expect(tree.bundles.find((b) => b.dir === "onepassword")?.manifest).toEqual({ ok: true, mounts: "per-slug", secrets: ["OP_SERVICE_ACCOUNT_TOKEN", "OP_CONNECT_HOST", "OP_CONNECT_TOKEN"] });
  });

  it("takes a new 1Password slug on a path of its own as a roster entry alone, and every checked-in slug as it is", () => {
    expect(dev).toContain(anchor);
    expect(checkConfigText(dev.replace(anchor, `${team}${anchor}`), tree)).toEqual({ ok: true, lines: ["ok"] });
    for (const file of ["strad.dev.yaml", "strad.config.yaml"]) expect(checkConfigText(readFileSync(join(ROOT, file), "utf8"), tree), file).toEqual({ ok: true, lines: ["ok"] });
  });

  it("still refuses a 1Password path that is /<slug> of no server on the bundle", () => {
    const r = checkConfigText(dev.replace(anchor, `${team.replace(`path: /${TEAM}`, "path: /onepassword-typo")}${anchor}`), tree);
    expect(r.ok).toBe(false);
    expect(r.lines.join("\n")).toMatch(/slug "onepassword-team" mounts \/onepassword-typo, which bundle ONEPASSWORD \(bundles\/onepassword\) does not serve/);
  });
});

describe("a slug added by a roster entry alone", () => {
  it("serves a second account from its own <SLUG>__ Connect credentials: its vaults, its items, and a prompt headed by its slug", async () => {
    const vaults = await h.call({ mount: TEAM, tool: "onepassword_list_vaults", args: {}, channel: "none" });
    expect(((vaults.json?.vaults ?? []) as { name: string }[]).map((v) => v.name)).toEqual(["Team"]);
    const reveal = await h.call({ mount: TEAM, tool: "onepassword_get_item", args: { items: [{ vault_id: IDS.team, item_id: IDS.status }] }, poll: { body: { action: "decline" } } });
    expect(reveal.prompts[0]?.[0]).toMatch(/^onepassword-team: This will reveal /);
    expect(h.fake.store.requests.map((r) => r.account)).toEqual(["team", "team", "team"]);
    // The shared and the provisioning slugs still answer from their own accounts beside it.
    const shared = await h.call({ mount: SHARED, tool: "onepassword_list_vaults", args: {}, channel: "none" });
    const provisioning = await h.call({ mount: PROVISIONING, tool: "onepassword_list_vaults", args: {}, channel: "none" });
    expect([shared, provisioning].map((a) => ((a.json?.vaults ?? []) as { name: string }[]).map((v) => v.name))).toEqual([["Engineering", "Finance"], ["Provisioning"]]);
  });

  it("never falls back to another slug's credential or the bare ones: without its own it refuses, naming its own variables, and reads nothing", async () => {
    const unseeded = await h.call({
      mount: TEAM,
      tool: "onepassword_list_vaults",
      args: {},
      channel: "none",
      env: { ...withoutOwn("ONEPASSWORD_TEAM__"), ONEPASSWORD__OP_SERVICE_ACCOUNT_TOKEN: "ops_shared" },
    });
    expect(unseeded.answer.text).toBe(
      "Refused: this mount has no 1Password credentials: set ONEPASSWORD_TEAM__OP_SERVICE_ACCOUNT_TOKEN, or ONEPASSWORD_TEAM__OP_CONNECT_HOST and ONEPASSWORD_TEAM__OP_CONNECT_TOKEN; an own-path mount never reads the bare ones. Nothing was read, revealed or written.",
    );
    // Its own host without its own token is incomplete, whatever another slug holds.
    const half = await h.call({ mount: TEAM, tool: "onepassword_list_vaults", args: {}, channel: "none", env: { ONEPASSWORD_TEAM__OP_CONNECT_TOKEN: undefined } });
    expect(half.answer.text).toMatch(/^Refused: this mount's 1Password Connect credentials are incomplete: ONEPASSWORD_TEAM__OP_CONNECT_TOKEN is not set/);
    expect(h.fake.store.requests).toEqual([]);
  });

  it("reads its own service-account token, never another slug's or the bare one", () => {
    const env = { OP_SERVICE_ACCOUNT_TOKEN: "ops_bare", ONEPASSWORD__OP_SERVICE_ACCOUNT_TOKEN: "ops_shared", ONEPASSWORD_PROVISIONING__OP_SERVICE_ACCOUNT_TOKEN: "ops_provisioning" };
    expect(credentialsFor(TEAM, env).ok).toBe(false);
    expect(credentialsFor(TEAM, { ...env, ONEPASSWORD_TEAM__OP_SERVICE_ACCOUNT_TOKEN: "ops_team" })).toEqual({
      ok: true,
      credentials: { kind: "service-account", token: "ops_team", names: { token: "ONEPASSWORD_TEAM__OP_SERVICE_ACCOUNT_TOKEN" } },
    });
  });

  it("serves every slug's path, past the 64 it keeps a handler for too", async () => {
    expect(MAX_KEPT_MOUNTS).toBe(64);
    const slugs = Array.from({ length: MAX_KEPT_MOUNTS + 2 }, (_, i) => `onepassword-account-${i}`);
    for (const slug of slugs) {
      const tools = await listBundle(handler, slug, h.env());
      expect(
        tools.map((t) => t.name),
        slug,
      ).toContain("onepassword_get_item");
    }
  });
});

describe("the kit's refusals come first on every path", () => {
  const ctx = (props: unknown) => ({ waitUntil: () => {}, passThroughOnException: () => {}, props }) as unknown as ExecutionContext;
  const post = (path: string) =>
    new Request(`https://bundle.internal${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
  const fetchOf = handler.fetch as NonNullable<typeof handler.fetch>;

  it("a request that did not come over the gateway's binding is refused on a slug's path and on any other", async () => {
    for (const path of [`/${TEAM}`, "/onepassword", "/Not_A_Slug", "/"]) {
      const answer = await fetchOf(post(path) as never, h.env(), ctx({}));
      expect(answer.status, path).toBe(403);
      await answer.body?.cancel();
    }
  });

  it("a path that is no slug is no mount", async () => {
    for (const path of ["/Not_A_Slug", "/onepassword/v1", `/${"a".repeat(64)}`, "/"]) {
      const answer = await fetchOf(post(path) as never, h.env(), ctx(GATEWAY_PROPS));
      expect(answer.status, path).toBe(404);
      expect(await answer.text(), path).toContain(`no mount at ${path}`);
    }
  });
});
