// The 1Password bundle end to end: MCP clients through the gateway to the bundle and the Connect fake on 8789, a scripted approval service on 8790 (and the real one on 8788) deciding. Every tool, and every outcome: accept reveals and creates; decline, expiry, an unticked box, an unknown answer and a late yes reveal and create nothing; the provisioning slug creates unasked but still asks before a reveal or a share; the own-path slug never answers with the shared account. The fake's request log and created items are the ground truth.
import { readFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { decidePrompt, mintSession, waitForPendingPrompt } from "../../../approvals/dev-api.mjs";
import { LOG_FILE } from "../../e2e/global-setup";
import { bearer, type Connected, connectLegacy, connectModern, DEV_VARS, FAKES, LATE_APPROVAL_MS, logsCaughtUp, nothingMore, quiet, TOKENS, textOf, waitFor } from "../../e2e/helpers";
import { type CreatedItem, type RecordedConnectRequest, SECRET_MARKER } from "../../fakes/onepassword/connect.fake";
import { IDS, PROVISIONING_TOKEN, SECRET_PREFIX, SECRETS, SHARED_TOKEN } from "../../fakes/onepassword/seed";
import { type Plan, useScriptedApprover } from "../kit/helpers/hostile-server";

const ACCEPT: Plan = { body: { action: "accept", content: { confirm: true } } };
const PENDING: Plan = { body: { action: "pending", content: null } };

const scripted = useScriptedApprover();
let run = 0;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++run}`;

const connect = {
  async requests(): Promise<RecordedConnectRequest[]> {
    return (await (await fetch(`${FAKES}/onepassword/_fake/requests`)).json()) as RecordedConnectRequest[];
  },
  async created(title?: string): Promise<CreatedItem[]> {
    const all = (await (await fetch(`${FAKES}/onepassword/_fake/created`)).json()) as CreatedItem[];
    return title === undefined ? all : all.filter((c) => c.title === title);
  },
  async reset(): Promise<void> {
    await (await fetch(`${FAKES}/onepassword/_fake/reset`, { method: "POST" })).body?.cancel();
  },
};

beforeEach(async () => {
  scripted.requests.length = 0;
  await connect.reset();
});

const github = { vault_id: IDS.engineering, item_id: IDS.github };
const card = { vault_id: IDS.finance, item_id: IDS.card };

const clients = [
  ["2026-07-28 (@modelcontextprotocol/client 2.x)", connectModern],
  ["2025-11-25 (@modelcontextprotocol/sdk 1.x)", connectLegacy],
] as const;

function connectTo(slug: string, approvalUrl?: string, connectFn: (typeof clients)[number][1] = connectModern): Promise<Connected> {
  return connectFn(slug, { ...bearer(TOKENS.session), ...(approvalUrl === undefined ? {} : { "x-elicitation-url": approvalUrl }) });
}

async function callThrough(slug: string, tool: string, args: Record<string, unknown>, approvalUrl?: string, connectFn: (typeof clients)[number][1] = connectModern) {
  const client = await connectTo(slug, approvalUrl, connectFn);
  try {
    const result = await client.callTool(tool, args);
    const text = textOf(result);
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
    return { result, text, json };
  } finally {
    await client.close();
  }
}

type Shown = { title: string; fields: { label: string; value?: string; sensitive: boolean }[] };
const fieldValue = (json: Record<string, unknown> | undefined, title: string, label: string) =>
  ((json?.items ?? []) as Shown[]).find((i) => i.title === title)?.fields.find((f) => f.label === label)?.value;
const promptsTo = (route: string) => scripted.requestsTo(route).filter((r) => r.method === "POST");
const promptLines = (route: string) => (JSON.parse(promptsTo(route)[0]?.body ?? "{}") as { message?: string }).message?.split("\n") ?? [];

describe("the tools as listed", () => {
  it("are the eight 1Password tools, each declaring all four annotations", async () => {
    const client = await connectTo("onepassword");
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "onepassword_create_api_credential",
        "onepassword_create_login",
        "onepassword_create_secure_note",
        "onepassword_get_item",
        "onepassword_get_item_metadata",
        "onepassword_list_items",
        "onepassword_list_vaults",
        "onepassword_share_item",
      ]);
      for (const tool of tools) {
        for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) expect(typeof tool.annotations?.[hint], `${tool.name} ${hint}`).toBe("boolean");
      }
    } finally {
      await client.close();
    }
  });
});

describe("the read-only tools", () => {
  it("list vaults and items and read metadata without asking, every sensitive value withheld, with no approval URL at all", async () => {
    const vaults = await callThrough("onepassword", "onepassword_list_vaults", {});
    expect(((vaults.json?.vaults ?? []) as { name: string }[]).map((v) => v.name)).toEqual(["Engineering", "Finance"]);
    const items = await callThrough("onepassword", "onepassword_list_items", { vault_id: IDS.finance });
    expect(items.json?.items).toEqual([
      { id: IDS.card, title: "Corporate card", category: "CREDIT_CARD", tags: ["finance"] },
      { id: IDS.wifi, title: "Office wifi", category: "SECURE_NOTE", tags: [] },
    ]);
    const meta = await callThrough("onepassword", "onepassword_get_item_metadata", card);
    expect(meta.text).not.toContain(SECRET_PREFIX);
    expect(fieldValue({ items: [meta.json] }, "Corporate card", "number")).toBe("[REDACTED]");
    // Deny by default (issue 26): a card's holder is no username, title or website, so it waits for a yes too.
    expect(fieldValue({ items: [meta.json] }, "Corporate card", "cardholder name")).toBe("[REDACTED]");
    const login = await callThrough("onepassword", "onepassword_get_item_metadata", github);
    expect(fieldValue({ items: [login.json] }, "GitHub", "username")).toBe("ada@example.com");
    expect(fieldValue({ items: [login.json] }, "GitHub", "notesPlain")).toBe("[REDACTED]");
  });
});

describe.each(clients)("a %s caller's onepassword_get_item", (_label, connectFn) => {
  it("reveals the batch's sensitive values once the person accepts with the box ticked, after one prompt naming the slug, every item and field and no value", async () => {
    const route = unique("reveal");
    const url = scripted.route(route, { poll: (_r, i) => (i < 2 ? PENDING : ACCEPT) });
    const { result, json } = await callThrough("onepassword-scripted", "onepassword_get_item", { items: [github, card] }, url, connectFn);
    expect(result.isError).not.toBe(true);
    expect(json?._credentialsRevealed).toBe(true);
    expect(fieldValue(json, "GitHub", "password")).toBe(SECRETS.github);
    expect(fieldValue(json, "Corporate card", "verification number")).toBe(SECRETS.cvv);
    expect(promptsTo(route)).toHaveLength(1);
    const lines = promptLines(route);
    expect(lines[0]).toBe("onepassword-scripted: This will reveal 7 sensitive value(s) of 2 1Password item(s) to the caller.");
    // What was read from 1Password is labelled so, never as the caller's (issue 26).
    expect(lines.slice(-5)).toEqual([
      "Values below were read from 1Password just now, not supplied by the caller:",
      `  Item: Engineering / GitHub (${IDS.github})`,
      "  Reveals: 2 values: password, notesPlain",
      `  Item: Finance / Corporate card (${IDS.card})`,
      "  Reveals: 5 values: cardholder name, number, verification number, expiry date, PIN",
    ]);
    // Under the caller's heading, only the ids the caller asked for.
    const caller = lines.slice(
      lines.indexOf("Values below are supplied by the caller, not by this server:") + 1,
      lines.indexOf("Values below were read from 1Password just now, not supplied by the caller:"),
    );
    expect(caller).toEqual([`  Asked for: ${IDS.engineering}/${IDS.github}`, `  Asked for: ${IDS.finance}/${IDS.card}`, ""]);
    expect(lines.join("\n")).not.toContain(SECRET_PREFIX);
    for (const r of scripted.requestsTo(route)) {
      expect(r.headers["cf-access-client-id"]).toBe(DEV_VARS.SCRIPTED_CF_ACCESS_CLIENT_ID);
      expect(r.headers.authorization).toBeUndefined();
    }
  });

  it.each([
    ["a decline", { body: { action: "decline" } }, /the person declined/],
    ["an expired answer", { body: { action: "expired" } }, /the approval expired/],
    ["an accept with the box unticked", { body: { action: "accept", content: { confirm: false } } }, /the confirm box was not ticked/],
    ["an answer it does not know", { body: { action: "approve-all" } }, /the answer was not recognised/],
  ])("reveals nothing on %s: the items come back with every sensitive field [REDACTED] and _credentialsRevealed: false", async (_what, plan, why) => {
    const url = scripted.route(unique("no-reveal"), { poll: () => plan });
    const { result, text, json } = await callThrough("onepassword-scripted", "onepassword_get_item", { items: [github, card] }, url, connectFn);
    expect(result.isError).not.toBe(true);
    expect(text).not.toContain(SECRET_PREFIX);
    expect(json?._credentialsRevealed).toBe(false);
    expect(String(json?._notRevealed)).toMatch(why);
    expect(fieldValue(json, "GitHub", "password")).toBe("[REDACTED]");
    expect(fieldValue(json, "GitHub", "username")).toBe("ada@example.com");
  });
});

describe("a reveal that ends without a yes in time", () => {
  it("reveals nothing when nobody answers before the deadline", async () => {
    const url = scripted.route(unique("silent"), { poll: () => PENDING });
    const { json, text } = await callThrough("onepassword-brief", "onepassword_get_item", { items: [github] }, url);
    expect(text).not.toContain(SECRET_PREFIX);
    expect(json?._credentialsRevealed).toBe(false);
    expect(String(json?._notRevealed)).toMatch(/the approval expired before anyone answered/);
  });

  it("reveals nothing when the caller leaves while the person decides, even when the person then approves: 1Password is not read again", async () => {
    const route = unique("drop-reveal");
    let decision: Plan = PENDING;
    const url = scripted.route(route, { poll: () => decision });
    const client = await connectTo("onepassword-scripted", url);
    const drop = new AbortController();
    try {
      const call = client.callTool("onepassword_get_item", { items: [github] }, { signal: drop.signal });
      call.catch(() => {});
      await waitFor(async () => (scripted.requestsTo(route).some((r) => r.method === "GET") ? true : undefined));
      const readsBefore = (await connect.requests()).length;
      drop.abort();
      await expect(call).rejects.toThrow();
      await nothingMore();
      const asked = scripted.requestsTo(route).length;
      decision = ACCEPT;
      await quiet(LATE_APPROVAL_MS);
      expect(scripted.requestsTo(route).length).toBe(asked);
      expect((await connect.requests()).length).toBe(readsBefore);
    } finally {
      await client.close();
    }
  });

  it("fails naming only the approval service's HTTP status, and reveals nothing", async () => {
    const url = scripted.route(unique("broken"), { create: () => ({ status: 502, body: `${SECRET_MARKER}: approvals are down` }) });
    const { result, text } = await callThrough("onepassword-scripted", "onepassword_get_item", { items: [github] }, url);
    expect(result.isError).toBe(true);
    expect(text).toBe("Not done: the approval service answered HTTP 502. Nothing was revealed.");
  });

  it("reveals nothing when the item gains a secret field while the person decides: the approval covered the fields they saw", async () => {
    const url = scripted.route(unique("changed"), {
      poll: async () => {
        await fetch(`${FAKES}/onepassword/_fake/fields`, {
          method: "POST",
          body: JSON.stringify({ vault: IDS.engineering, item: IDS.github, field: { id: "recovery", type: "CONCEALED", label: "recovery code", value: `${SECRET_PREFIX}recovery` } }),
        });
        return ACCEPT;
      },
    });
    const { json, text } = await callThrough("onepassword-scripted", "onepassword_get_item", { items: [github] }, url);
    expect(text).not.toContain(SECRET_PREFIX);
    expect(json?._credentialsRevealed).toBe(false);
    expect(String(json?._notRevealed)).toMatch(/the items changed after they were approved/);
  });

  it("refuses without an approval URL, before 1Password is read, pointing at onepassword_get_item_metadata", async () => {
    const { text } = await callThrough("onepassword", "onepassword_get_item", { items: [github] });
    expect(text).toMatch(/^Refused: the gateway refused the approval channel: .*onepassword_get_item_metadata answers without asking anyone/);
    expect(await connect.requests()).toEqual([]);
  });
});

describe("the creates", () => {
  it.each([
    [
      "onepassword_create_login",
      (title: string) => ({ vault_id: IDS.engineering, items: [{ title, username: "ops", password: `${SECRET_PREFIX}${title}`, url: "https://grafana.example.com" }] }),
      "LOGIN",
    ],
    ["onepassword_create_secure_note", (title: string) => ({ vault_id: IDS.engineering, items: [{ title, note: `${SECRET_PREFIX}note ${title}` }] }), "SECURE_NOTE"],
    ["onepassword_create_api_credential", (title: string) => ({ vault_id: IDS.engineering, items: [{ title, secret: `${SECRET_PREFIX}key ${title}`, key_type: "bearer" }] }), "API_CREDENTIAL"],
  ])("%s creates the item once the person accepts, after one prompt that never shows the secret", async (tool, args, category) => {
    const route = unique(tool);
    const url = scripted.route(route, { poll: () => ACCEPT });
    const title = unique("item");
    const { result, json } = await callThrough("onepassword-scripted", tool, args(title), url);
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(((json?.created ?? []) as { title: string }[]).map((c) => c.title)).toEqual([title]);
    expect(await connect.created(title)).toEqual([expect.objectContaining({ account: "shared", vault: IDS.engineering, category })]);
    expect(promptsTo(route)).toHaveLength(1);
    expect(promptLines(route)[0]).toMatch(new RegExp(`^onepassword-scripted: This will create 1 .* item\\(s\\) in the 1Password vault ${IDS.engineering}\\.$`));
    expect(promptLines(route).slice(-2)).toEqual(["Values below were read from 1Password just now, not supplied by the caller:", `  Vault: Engineering (${IDS.engineering})`]);
    expect(promptLines(route).join("\n")).not.toContain(SECRET_PREFIX);
  });

  it.each([
    ["a decline", { body: { action: "decline" } }, "Not done: the person declined. Nothing was created."],
    ["an expired answer", { body: { action: "expired" } }, "Not done: the approval expired before anyone answered. Nothing was created."],
    ["an unticked box", { body: { action: "accept", content: { confirm: false } } }, "Not done: the person declined (the confirm box was not ticked). Nothing was created."],
    ["an answer it does not know", { body: { action: "yes-please" } }, "Not done: the person declined (the answer was not recognised). Nothing was created."],
  ])("create nothing on %s", async (_what, plan, said) => {
    const title = unique("declined");
    for (const [tool, args] of [
      ["onepassword_create_login", { vault_id: IDS.engineering, items: [{ title, password: "p" }] }],
      ["onepassword_create_secure_note", { vault_id: IDS.engineering, items: [{ title, note: "n" }] }],
      ["onepassword_create_api_credential", { vault_id: IDS.engineering, items: [{ title, secret: "k" }] }],
    ] as const) {
      const url = scripted.route(unique(tool), { poll: () => plan });
      const { text } = await callThrough("onepassword-scripted", tool, args, url);
      expect(text, tool).toBe(said);
    }
    await nothingMore();
    expect(await connect.created(title)).toEqual([]);
  });

  it("creates nothing when nobody answers before the deadline", async () => {
    const title = unique("silent");
    const url = scripted.route(unique("silent"), { poll: () => PENDING });
    const { text } = await callThrough("onepassword-brief", "onepassword_create_login", { vault_id: IDS.engineering, items: [{ title, password: "p" }] }, url);
    expect(text).toMatch(/^Not done: the approval expired/);
    await nothingMore();
    expect(await connect.created(title)).toEqual([]);
  });

  it("creates nothing when the caller leaves while the person decides, even when the person then approves (a late yes)", async () => {
    const route = unique("drop-create");
    let decision: Plan = PENDING;
    const url = scripted.route(route, { poll: () => decision });
    const title = unique("late");
    const client = await connectTo("onepassword-scripted", url);
    const drop = new AbortController();
    try {
      const call = client.callTool("onepassword_create_api_credential", { vault_id: IDS.engineering, items: [{ title, secret: `${SECRET_PREFIX}late` }] }, { signal: drop.signal });
      call.catch(() => {});
      await waitFor(async () => (scripted.requestsTo(route).some((r) => r.method === "GET") ? true : undefined));
      drop.abort();
      await expect(call).rejects.toThrow();
      await nothingMore();
      decision = ACCEPT;
      await quiet(LATE_APPROVAL_MS);
      expect(await connect.created(title)).toEqual([]);
      expect((await connect.requests()).filter((r) => r.method === "POST")).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe("onepassword_share_item on a Connect slug", () => {
  it("says Connect has no share endpoint, asks nobody and shares nothing; without an approval URL it is refused first", async () => {
    const route = unique("share");
    const url = scripted.route(route, { poll: () => ACCEPT });
    const { text } = await callThrough("onepassword-scripted", "onepassword_share_item", { items: [github] }, url);
    expect(text).toMatch(/^Not done: this slug is served by 1Password Connect, which has no share endpoint/);
    expect(scripted.requestsTo(route)).toEqual([]);
    const refused = await callThrough("onepassword", "onepassword_share_item", { items: [github] });
    expect(refused.text).toMatch(/^Refused: /);
    expect(await connect.requests()).toEqual([]);
  });
});

describe("the provisioning slug (own path, own token, provisioning posture)", () => {
  it("creates unasked in its own account, whatever approval URL the caller sends, and with none", async () => {
    const session = await mintSession();
    const titles = [unique("minted"), unique("minted")];
    const withUrl = await callThrough(
      "onepassword-provisioning",
      "onepassword_create_api_credential",
      { vault_id: IDS.provisioning, items: [{ title: titles[0], secret: `${SECRET_PREFIX}minted` }] },
      session.elicitationUrl,
    );
    expect(withUrl.result.isError, withUrl.text).not.toBe(true);
    const without = await callThrough("onepassword-provisioning", "onepassword_create_login", { vault_id: IDS.provisioning, items: [{ title: titles[1], password: "p" }] });
    expect(without.result.isError, without.text).not.toBe(true);
    expect((await connect.created()).map((c) => [c.account, c.vault, c.title])).toEqual(titles.map((t) => ["provisioning", IDS.provisioning, t]));
    // Nobody was asked.
    await expect(waitForPendingPrompt(session.sessionId, { timeoutMs: 300 })).rejects.toThrow(/no pending prompt/);
  });

  it("still asks before a reveal (declined here: nothing revealed) and refuses a share without an approval URL", async () => {
    const session = await mintSession();
    const call = callThrough("onepassword-provisioning", "onepassword_get_item", { items: [{ vault_id: IDS.provisioning, item_id: IDS.bootstrap }] }, session.elicitationUrl);
    const prompt = await waitForPendingPrompt(session.sessionId);
    expect(prompt.message).toMatch(/^onepassword-provisioning: This will reveal 1 sensitive value\(s\) of 1 1Password item\(s\)/);
    await decidePrompt(session.sessionId, prompt.requestId, "decline");
    const { json, text } = await call;
    expect(text).not.toContain(SECRETS.bootstrap);
    expect(json?._credentialsRevealed).toBe(false);
    const share = await callThrough("onepassword-provisioning", "onepassword_share_item", { items: [{ vault_id: IDS.provisioning, item_id: IDS.bootstrap }] });
    expect(share.text).toMatch(/^Refused: /);
  });

  it("never answers with the shared account: its vaults are its own, and the shared account's items are unknown to it", async () => {
    const vaults = await callThrough("onepassword-provisioning", "onepassword_list_vaults", {});
    expect(((vaults.json?.vaults ?? []) as { name: string }[]).map((v) => v.name)).toEqual(["Provisioning"]);
    const other = await callThrough("onepassword-provisioning", "onepassword_get_item_metadata", github);
    expect(other.text).toBe("Not done: 1Password Connect answered HTTP 404.");
    expect((await connect.requests()).map((r) => r.account)).toEqual(["provisioning", "provisioning"]);
    // And the shared slug reads the shared account.
    await callThrough("onepassword", "onepassword_list_vaults", {});
    expect((await connect.requests()).map((r) => r.account)).toEqual(["provisioning", "provisioning", "shared"]);
  });
});

describe("the stack's logs", () => {
  it("hold no Connect token, no secret value and no Connect error body after all of the above", async () => {
    await logsCaughtUp();
    const log = readFileSync(LOG_FILE, "utf8");
    for (const token of [SHARED_TOKEN, PROVISIONING_TOKEN]) expect(log.includes(token)).toBe(false);
    expect(log).not.toContain(SECRET_PREFIX);
    expect(log).not.toContain(SECRET_MARKER);
  });
});
