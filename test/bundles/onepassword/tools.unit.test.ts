// The 1Password tools end to end in Node: the bundle's handler, the Connect fake and a scripted approval service. A reveal shows values only on accept with the box ticked, and answers every other outcome with the items redacted; creates and shares create nothing without a yes; the provisioning posture, the ignored variables, the waiver that waives nothing, and the approval bound to the exact item set.
import { describe, expect, it, vi } from "vitest";
import { canonicalTarget, fingerprint } from "../../../bundles/kit/fingerprint";
import { revealFingerprint } from "../../../bundles/onepassword/onepassword.reveal";
import { SECRET_MARKER } from "../../fakes/onepassword/connect.fake";
import { IDS, SECRET_PREFIX, SECRETS } from "../../fakes/onepassword/seed";
import { ACCEPT, harness, PENDING, PROVISIONING, SHARED, TEAM } from "./helpers";

const h = harness();
const github = { vault_id: IDS.engineering, item_id: IDS.github };
const card = { vault_id: IDS.finance, item_id: IDS.card };
const wifi = { vault_id: IDS.finance, item_id: IDS.wifi };
const deploy = { vault_id: IDS.engineering, item_id: IDS.deployNotes };
const wiki = { vault_id: IDS.team, item_id: IDS.wiki };

type Shown = { id: string; title: string; fields: { label: string; value?: string; sensitive: boolean }[] };
const itemsOf = (json: Record<string, unknown> | undefined) => (json?.items ?? []) as Shown[];
const fieldValue = (items: Shown[], title: string, label: string) => items.find((i) => i.title === title)?.fields.find((f) => f.label === label)?.value;
const created = () => h.fake.store.created;
const posts = () => h.fake.store.requests.filter((r) => r.method === "POST");

describe("onepassword_get_item", () => {
  it("reveals every sensitive value of the batch on accept with the box ticked, after one prompt listing each item's vault, title and fields, never a value", async () => {
    const { answer, prompts, json } = await h.call({ tool: "onepassword_get_item", args: { items: [github, card, wifi] } });
    expect(answer.isError).toBe(false);
    expect(json?._credentialsRevealed).toBe(true);
    const items = itemsOf(json);
    expect(fieldValue(items, "GitHub", "password")).toBe(SECRETS.github);
    expect(fieldValue(items, "Corporate card", "number")).toBe(SECRETS.cardNumber);
    expect(fieldValue(items, "Corporate card", "PIN")).toBe(SECRETS.pin);
    expect(prompts).toHaveLength(1);
    // Issue 26: everything but a username, a title-like field or a website's host asks (a note's body, a card's
    // holder and expiry), and what was read from 1Password is labelled so, never as the caller's.
    expect(prompts[0]).toEqual([
      "onepassword: This will reveal 8 sensitive value(s) of 3 1Password item(s) to the caller.",
      "",
      "A revealed password, key or card number cannot be un-revealed. No value is shown here.",
      "",
      "Values below are supplied by the caller, not by this server:",
      `  Asked for: ${IDS.engineering}/${IDS.github}`,
      `  Asked for: ${IDS.finance}/${IDS.card}`,
      `  Asked for: ${IDS.finance}/${IDS.wifi}`,
      "",
      "Values below were read from 1Password just now, not supplied by the caller:",
      `  Item: Engineering / GitHub (${IDS.github})`,
      "  Reveals: 2 values: password, notesPlain",
      `  Item: Finance / Corporate card (${IDS.card})`,
      "  Reveals: 5 values: cardholder name, number, verification number, expiry date, PIN",
      `  Item: Finance / Office wifi (${IDS.wifi})`,
      "  Reveals: 1 value: notesPlain",
    ]);
    expect(prompts.flat().join("\n")).not.toContain(SECRET_PREFIX);
  });

  it.each([
    ["decline", { body: { action: "decline" } }, /the person declined/],
    ["expired", { body: { action: "expired" } }, /the approval expired before anyone answered/],
    ["cancel", { body: { action: "cancel" } }, /the approval was cancelled/],
    ["accept with the box unticked", { body: { action: "accept", content: { confirm: false } } }, /the person declined/],
    ["accept with no content", { body: { action: "accept" } }, /the person declined/],
    ["an unrecognised answer", { body: { action: "maybe-later" } }, /the person declined/],
  ])("on %s, answers the items with every sensitive field [REDACTED] and _credentialsRevealed: false", async (_label, plan, why) => {
    const { answer, json, prompts } = await h.call({ tool: "onepassword_get_item", args: { items: [github, card, deploy] }, poll: plan });
    expect(prompts).toHaveLength(1);
    expect(answer.isError).toBe(false);
    expect(answer.text).not.toContain(SECRET_PREFIX);
    expect(json?._credentialsRevealed).toBe(false);
    expect(String(json?._notRevealed)).toMatch(why);
    const items = itemsOf(json);
    expect(items.map((i) => i.title)).toEqual(["GitHub", "Corporate card", "Deploy notes"]);
    expect(fieldValue(items, "GitHub", "password")).toBe("[REDACTED]");
    expect(fieldValue(items, "Deploy notes", "Deploy token")).toBe("[REDACTED]");
    // A note's body is not plainly public (issue 26), and is withheld too.
    expect(fieldValue(items, "Deploy notes", "notesPlain")).toBe("[REDACTED]");
    // What is plainly public is still there.
    expect(fieldValue(items, "GitHub", "username")).toBe("ada@example.com");
  });

  it("fails naming only the HTTP status when the approval service answers an error, and reveals nothing", async () => {
    const failing = await h.call({
      tool: "onepassword_get_item",
      args: { items: [github] },
      create: () => ({ status: 503, body: `${SECRET_MARKER}: approvals down` }),
    });
    expect(failing.answer.isError).toBe(true);
    expect(failing.answer.text).toBe("Not done: the approval service answered HTTP 503. Nothing was revealed.");
    const pollFails = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, poll: { status: 500, body: `${SECRET_MARKER}: boom` } });
    expect(pollFails.answer.text).toBe("Not done: the approval service answered HTTP 500. Nothing was revealed.");
  });

  it("does not ask when no item of the batch holds a sensitive value", async () => {
    // The team account's wiki login holds only a username, an email, a title-like field and a plain website.
    const { answer, json, prompts } = await h.call({ mount: TEAM, tool: "onepassword_get_item", args: { items: [wiki] }, poll: { body: { action: "decline" } } });
    expect(prompts).toEqual([]);
    expect(answer.isError).toBe(false);
    expect(json?._credentialsRevealed).toBe(false);
    expect(itemsOf(json)[0]?.fields.map((f) => [f.label, f.value, f.sensitive])).toEqual([
      ["username", "team@example.com", false],
      ["E-Mail", "wiki-owner@example.com", false],
      ["Name", "Wiki admin", false],
    ]);
  });

  it("reveals nothing when the item set changes between the prompt and the yes: the approval covered the fields the person saw", async () => {
    const { answer, json } = await h.call({
      tool: "onepassword_get_item",
      args: { items: [github] },
      poll: async () => {
        // A person edits the item while the approval is pending: a new secret field appears.
        await fetch(`${h.fake.host}/_fake/fields`, {
          method: "POST",
          body: JSON.stringify({ vault: IDS.engineering, item: IDS.github, field: { id: "recovery", type: "CONCEALED", label: "recovery code", value: `${SECRET_PREFIX}recovery` } }),
        });
        return ACCEPT;
      },
    });
    expect(answer.isError).toBe(false);
    expect(answer.text).not.toContain(SECRET_PREFIX);
    expect(json?._credentialsRevealed).toBe(false);
    expect(String(json?._notRevealed)).toMatch(/the items changed after they were approved/);
  });

  it("binds the approval to the exact item set: [a] and [a, b] differ, the order does not matter", async () => {
    const item = (id: string, vaultId: string, fields: string[]) => ({
      vault: { id: vaultId, name: "v" },
      item: { id, vaultId, title: id, category: "LOGIN", tags: [], urls: [], fields: fields.map((f) => ({ id: f, label: f, type: "CONCEALED", value: "x" })) },
    });
    const a = item(IDS.github, IDS.engineering, ["password"]);
    const b = item(IDS.card, IDS.finance, ["cvv"]);
    const one = await fingerprint(revealFingerprint({ mount: SHARED, entries: [a] }));
    const two = await fingerprint(revealFingerprint({ mount: SHARED, entries: [a, b] }));
    const swapped = await fingerprint(revealFingerprint({ mount: SHARED, entries: [b, a] }));
    expect(one).not.toBe(two);
    expect(two).toBe(swapped);
    // Another mount, or one more field of the same item, is another approval.
    expect(await fingerprint(revealFingerprint({ mount: PROVISIONING, entries: [a] }))).not.toBe(one);
    expect(await fingerprint(revealFingerprint({ mount: SHARED, entries: [item(IDS.github, IDS.engineering, ["password", "otp"])] }))).not.toBe(one);
    // The fingerprint's text holds ids only, never a value.
    expect(canonicalTarget(revealFingerprint({ mount: SHARED, entries: [a, b] }))).not.toContain('"x"');
  });

  it("refuses on a waived slug (skipConfirmations): a reveal always asks a person", async () => {
    const { answer, prompts } = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, channel: "skip" });
    expect(answer.text).toMatch(/^Refused: this slug waives confirmations \(skipConfirmations\), but a 1Password reveal, share or create always asks a person/);
    expect(answer.text).toMatch(/onepassword_get_item_metadata answers without asking anyone/);
    expect(prompts).toEqual([]);
    expect(h.fake.store.requests).toEqual([]);
  });

  it("refuses without a channel before 1Password is read, pointing at onepassword_get_item_metadata", async () => {
    const { answer } = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, channel: "none" });
    expect(answer.text).toMatch(
      /^Refused: no approval channel reached this call.*; onepassword_get_item_metadata answers without asking anyone, for a caller that only needs to know that an item exists/,
    );
    expect(h.fake.store.requests).toEqual([]);
  });
});

describe("the read-only tools", () => {
  it("list vaults, list items (titles, categories, tags only) and read metadata with every sensitive value withheld, never asking", async () => {
    const vaults = await h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none" });
    expect(((vaults.json?.vaults ?? []) as { name: string }[]).map((v) => v.name)).toEqual(["Engineering", "Finance"]);
    const items = await h.call({ tool: "onepassword_list_items", args: { vault_id: IDS.engineering }, channel: "none" });
    expect(items.json?.items).toEqual([
      { id: IDS.github, title: "GitHub", category: "LOGIN", tags: ["dev"] },
      { id: IDS.stripe, title: "Stripe API", category: "API_CREDENTIAL", tags: ["payments", "prod"] },
      { id: IDS.deployNotes, title: "Deploy notes", category: "SECURE_NOTE", tags: [] },
    ]);
    const meta = await h.call({ tool: "onepassword_get_item_metadata", args: card, channel: "none" });
    expect(meta.answer.text).not.toContain(SECRET_PREFIX);
    // Issue 26: a card's holder and expiry are no username, title or website, so they wait for a yes too.
    expect(((meta.json?.fields ?? []) as { label: string; value: string; sensitive: boolean }[]).map((f) => [f.label, f.value, f.sensitive])).toEqual([
      ["cardholder name", "[REDACTED]", true],
      ["number", "[REDACTED]", true],
      ["verification number", "[REDACTED]", true],
      ["expiry date", "[REDACTED]", true],
      ["PIN", "[REDACTED]", true],
    ]);
    expect(meta.json?.vault_name).toBe("Finance");
    expect(h.approver.requests).toEqual([]);
  });

  it("an own-path slug answers from its own account only, and one whose own token is unseeded refuses rather than answer with the shared account", async () => {
    const own = await h.call({ mount: PROVISIONING, tool: "onepassword_list_vaults", args: {}, channel: "none" });
    expect(((own.json?.vaults ?? []) as { name: string }[]).map((v) => v.name)).toEqual(["Provisioning"]);
    const unseeded = await h.call({
      mount: PROVISIONING,
      tool: "onepassword_list_vaults",
      args: {},
      channel: "none",
      env: { ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST: undefined, ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN: undefined },
    });
    expect(unseeded.answer.text).toMatch(
      /^Refused: this mount has no 1Password credentials: set ONEPASSWORD_PROVISIONING__OP_SERVICE_ACCOUNT_TOKEN, or ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST and ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN; an own-path mount never reads the bare ones/,
    );
    expect(h.fake.store.requests.map((r) => r.account)).toEqual(["provisioning"]);
  });

  it("names Connect's status and never its body when a read fails", async () => {
    await fetch(`${h.fake.host}/_fake/faults`, { method: "POST", body: JSON.stringify({ path: "/v1/vaults", status: 500 }) });
    const { answer } = await h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none" });
    expect(answer.text).toBe("Not done: 1Password Connect answered HTTP 500.");
  });
});

describe("the creates", () => {
  const login = {
    vault_id: IDS.engineering,
    items: [
      { title: "Grafana", username: "ops", password: `${SECRET_PREFIX}grafana`, url: "https://grafana.example.com" },
      { title: "Sentry", password: `${SECRET_PREFIX}sentry` },
    ],
  };

  it("create every item of the batch on accept, after one prompt that shows each item and no password", async () => {
    const { answer, prompts, json } = await h.call({ tool: "onepassword_create_login", args: login });
    expect(answer.isError, answer.text).toBe(false);
    expect(((json?.created ?? []) as { title: string }[]).map((c) => c.title)).toEqual(["Grafana", "Sentry"]);
    expect(created().map((c) => [c.account, c.vault, c.title, c.category, c.fields.map((f) => `${f.label}:${f.type}`).join(",")])).toEqual([
      ["shared", IDS.engineering, "Grafana", "LOGIN", "username:STRING,password:CONCEALED"],
      ["shared", IDS.engineering, "Sentry", "LOGIN", "password:CONCEALED"],
    ]);
    expect(prompts).toHaveLength(1);
    expect(prompts[0]?.slice(0, 1)).toEqual([`onepassword: This will create 2 login item(s) in the 1Password vault ${IDS.engineering}.`]);
    // The caller's values under the caller's heading; the vault's name, read from 1Password, under its own (issue 26).
    expect(prompts[0]?.slice(4)).toEqual([
      "Values below are supplied by the caller, not by this server:",
      "  Title: Grafana",
      "  username: ops",
      "  Stores: password (concealed, not shown)",
      "  Website: https://grafana.example.com",
      "  Title: Sentry",
      "  Stores: password (concealed, not shown)",
      "",
      "Values below were read from 1Password just now, not supplied by the caller:",
      `  Vault: Engineering (${IDS.engineering})`,
    ]);
    expect(prompts.flat().join("\n")).not.toContain(SECRET_PREFIX);
    // One call, one claim, however many items it writes.
    expect(h.calls.claims).toEqual([{ scope: "dev-session", key: expect.any(String), won: true }]);
  });

  it.each([
    ["decline", { body: { action: "decline" } }, "Not done: the person declined. Nothing was created."],
    ["expired", { body: { action: "expired" } }, "Not done: the approval expired before anyone answered. Nothing was created."],
    ["unticked", { body: { action: "accept", content: { confirm: false } } }, "Not done: the person declined (the confirm box was not ticked). Nothing was created."],
    ["an unrecognised answer", { body: { action: "sure" } }, "Not done: the person declined (the answer was not recognised). Nothing was created."],
  ])("create nothing on %s", async (_label, plan, said) => {
    for (const [tool, args] of [
      ["onepassword_create_login", login],
      ["onepassword_create_secure_note", { vault_id: IDS.engineering, items: [{ title: "n", note: "body" }] }],
      ["onepassword_create_api_credential", { vault_id: IDS.engineering, items: [{ title: "k", secret: `${SECRET_PREFIX}k` }] }],
    ] as const) {
      const { answer } = await h.call({ tool, args, poll: plan });
      expect(answer.text, tool).toBe(said);
    }
    expect(posts()).toEqual([]);
  });

  it("create nothing when the call is no longer live once the yes arrives (a late yes): the gate refuses before Connect is written", async () => {
    const { answer, prompts } = await h.call({
      tool: "onepassword_create_api_credential",
      args: { vault_id: IDS.engineering, items: [{ title: "late", secret: `${SECRET_PREFIX}late` }] },
      live: false,
    });
    expect(prompts).toHaveLength(1);
    expect(answer.text).toBe("Not done: item 1 (late): the call is no longer live or was already used for a create; nothing was created.");
    expect(posts()).toEqual([]);
  });

  it("create nothing when the caller leaves while the person decides, even when the person then approves", async () => {
    const drop = new AbortController();
    let polls = 0;
    const call = h.call({
      tool: "onepassword_create_secure_note",
      args: { vault_id: IDS.engineering, items: [{ title: "dropped", note: "body" }] },
      signal: drop.signal,
      poll: () => {
        polls++;
        if (polls === 2) drop.abort();
        return polls > 2 ? ACCEPT : PENDING;
      },
    });
    const { answer } = await call;
    expect(answer.ok).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(posts()).toEqual([]);
  });

  it("a secure note and an API credential are stored with their bodies and keys, never shown in the prompt", async () => {
    const note = await h.call({ tool: "onepassword_create_secure_note", args: { vault_id: IDS.engineering, items: [{ title: "Runbook", note: `${SECRET_PREFIX}runbook body`, tags: ["ops"] }] } });
    expect(note.answer.isError, note.answer.text).toBe(false);
    expect(note.prompts[0]).toContain("  Stores: notesPlain (27 characters, not shown)");
    const api = await h.call({
      tool: "onepassword_create_api_credential",
      args: { vault_id: IDS.engineering, items: [{ title: "Deploy key", secret: `${SECRET_PREFIX}deploy-key`, username: "ci", key_type: "bearer" }] },
    });
    expect(api.answer.isError, api.answer.text).toBe(false);
    expect(api.prompts[0]?.slice(5, 9)).toEqual(["  Title: Deploy key", "  username: ci", "  Stores: credential (concealed, not shown)", "  type: bearer"]);
    expect([...note.prompts, ...api.prompts].flat().join("\n")).not.toContain(SECRET_PREFIX);
    expect(created().map((c) => [c.title, c.category, c.fields.map((f) => [f.label, f.type, f.value])])).toEqual([
      ["Runbook", "SECURE_NOTE", [["notesPlain", "STRING", `${SECRET_PREFIX}runbook body`]]],
      [
        "Deploy key",
        "API_CREDENTIAL",
        [
          ["username", "STRING", "ci"],
          ["credential", "CONCEALED", `${SECRET_PREFIX}deploy-key`],
          ["type", "STRING", "bearer"],
        ],
      ],
    ]);
  });

  it("refuse on a waived slug (skipConfirmations) and without a channel: the waiver waives nothing here", async () => {
    for (const channel of ["skip", "none"] as const) {
      const { answer } = await h.call({ tool: "onepassword_create_login", args: login, channel });
      expect(answer.text).toMatch(/^Refused: /);
    }
    expect(h.fake.store.requests).toEqual([]);
  });
});

describe("the provisioning posture", () => {
  const key = (title: string) => ({ vault_id: IDS.provisioning, items: [{ title, secret: `${SECRET_PREFIX}${title}` }] });
  const posture = { ONEPASSWORD_PROVISIONING__OP_ELICITATION_WRITE: "false" };

  it('creates unasked on a mount whose own OP_ELICITATION_WRITE is exactly "false", with or without a channel, in its own account', async () => {
    const asked = await h.call({ mount: PROVISIONING, tool: "onepassword_create_api_credential", args: key("minted-1"), env: posture, poll: { body: { action: "decline" } } });
    expect(asked.answer.isError, asked.answer.text).toBe(false);
    expect(asked.prompts).toEqual([]);
    const bare = await h.call({
      mount: PROVISIONING,
      tool: "onepassword_create_login",
      args: { vault_id: IDS.provisioning, items: [{ title: "minted-2", password: "p" }] },
      env: posture,
      channel: "none",
    });
    expect(bare.answer.isError, bare.answer.text).toBe(false);
    expect(created().map((c) => [c.account, c.title])).toEqual([
      ["provisioning", "minted-1"],
      ["provisioning", "minted-2"],
    ]);
    // With a channel the gateway registered the call, so the write still won the call's one claim.
    expect(h.calls.claims.map((c) => c.won)).toEqual([true]);
  });

  it("still asks before a share and a reveal on that mount", async () => {
    const reveal = await h.call({
      mount: PROVISIONING,
      tool: "onepassword_get_item",
      args: { items: [{ vault_id: IDS.provisioning, item_id: IDS.bootstrap }] },
      env: posture,
      poll: { body: { action: "decline" } },
    });
    expect(reveal.prompts).toHaveLength(1);
    expect(reveal.json?._credentialsRevealed).toBe(false);
    const share = await h.call({ mount: PROVISIONING, tool: "onepassword_share_item", args: { items: [{ vault_id: IDS.provisioning, item_id: IDS.bootstrap }] }, env: posture, channel: "none" });
    expect(share.answer.text).toMatch(/^Refused: no approval channel/);
  });

  it.each([["False"], [" false"], ["0"], ["no"], ["true"], [""]])("asks when the mount's own OP_ELICITATION_WRITE is %j", async (value) => {
    const { prompts, answer } = await h.call({
      mount: PROVISIONING,
      tool: "onepassword_create_api_credential",
      args: key("asked"),
      env: { ONEPASSWORD_PROVISIONING__OP_ELICITATION_WRITE: value },
      poll: { body: { action: "decline" } },
    });
    expect(prompts).toHaveLength(1);
    expect(answer.text).toBe("Not done: the person declined. Nothing was created.");
    expect(created()).toEqual([]);
  });

  it("ignores a bare OP_ELICITATION_WRITE, and the shared mount's own, and asks", async () => {
    for (const [mount, env] of [
      [PROVISIONING, { OP_ELICITATION_WRITE: "false" }],
      [SHARED, { OP_ELICITATION_WRITE: "false", ONEPASSWORD__OP_ELICITATION_WRITE: "false" }],
    ] as const) {
      const vault = mount === SHARED ? IDS.engineering : IDS.provisioning;
      const { prompts } = await h.call({ mount, tool: "onepassword_create_secure_note", args: { vault_id: vault, items: [{ title: "x", note: "y" }] }, env, poll: { body: { action: "decline" } } });
      expect(prompts, mount).toHaveLength(1);
    }
    expect(created()).toEqual([]);
  });

  it("is refused like every guarded call when the container sets ELICITATION_REQUEST_URL", async () => {
    const { answer } = await h.call({
      mount: PROVISIONING,
      tool: "onepassword_create_login",
      args: { vault_id: IDS.provisioning, items: [{ title: "x" }] },
      env: { ...posture, ELICITATION_REQUEST_URL: "http://127.0.0.1:9/x/" },
    });
    expect(answer.text).toMatch(/^Refused: the bundle sets ELICITATION_REQUEST_URL/);
    expect(created()).toEqual([]);
  });
});

describe("onepassword_share_item", () => {
  it("says so on a Connect slug, asks nobody and shares nothing", async () => {
    const { answer, prompts } = await h.call({ tool: "onepassword_share_item", args: { items: [github] } });
    expect(answer.text).toBe(
      "Not done: this slug is served by 1Password Connect, which has no share endpoint, so it cannot mint a share link; onepassword_share_item works on a slug whose own OP_SERVICE_ACCOUNT_TOKEN is seeded. Nothing was shared.",
    );
    expect(prompts).toEqual([]);
    expect(h.fake.store.requests).toEqual([]);
  });
});

describe("the upstream tool's own switches", () => {
  it("are ignored, with one warning naming each it found, when the isolate starts and on every call", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const env = { OP_ELICITATION_READ: "false", OP_ELICITATION_WRITE: "false", DANGEROUSLY_SKIP_ELICITATIONS: "true", OP_WHITELISTED_ITEMS: `${IDS.github}` };
    const first = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, env, poll: { body: { action: "decline" } } });
    // Still asked, and nothing revealed: none of them decides.
    expect(first.prompts).toHaveLength(1);
    expect(first.json?._credentialsRevealed).toBe(false);
    const lines = () => warn.mock.calls.map((c) => JSON.parse(String(c[0])) as { event: string; variable: string });
    const variables = ["OP_ELICITATION_READ", "OP_ELICITATION_WRITE", "DANGEROUSLY_SKIP_ELICITATIONS", "OP_WHITELISTED_ITEMS"];
    expect(lines().map((l) => l.variable)).toEqual(variables);
    expect(lines().every((l) => l.event === "onepassword_variable_ignored")).toBe(true);
    await h.call({ tool: "onepassword_list_vaults", args: {}, env, channel: "none" });
    expect(lines().map((l) => l.variable)).toEqual([...variables, ...variables]);
    // A value is never logged.
    expect(JSON.stringify(warn.mock.calls)).not.toContain(IDS.github);
  });
});
