// Findings of the issue 16 and issue 26 reviews, each held here through the tools: a label the sensitive rule once
// missed (or that no word list holds: deny by default) is never shown before a yes, in metadata or after a decline; a
// field's section counts; a website loses its userinfo and one with a query or userinfo waits for a yes; and a create
// whose request left the gate and then failed is never reported as "nothing was created" (a retry would make a second item).
import { afterEach, describe, expect, it, vi } from "vitest";
import { IDS, SECRET_PREFIX, SECRETS } from "../../fakes/onepassword/seed";
import { harness, PROVISIONING, TEAM } from "./helpers";

const h = harness();
const github = { vault_id: IDS.engineering, item_id: IDS.github };

async function addField(field: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${h.fake.host}/_fake/fields`, { method: "POST", body: JSON.stringify({ vault: IDS.engineering, item: IDS.github, field }) });
  expect(r.status).toBe(200);
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("issue 16 review: labels the sensitive rule once missed", () => {
  it.each(["DB passwd", "pwd", "Passwort", "Recovery codes", "p\u0430ssword", "pass\u200bword", "Wi-Fi pass"])(
    "a STRING field labelled %j is withheld by metadata and by a declined reveal, and the prompt names it",
    async (label) => {
      await addField({ id: "addedfield", type: "STRING", label, value: `${SECRET_PREFIX}leak` });
      const meta = await h.call({ tool: "onepassword_get_item_metadata", args: github, channel: "none" });
      expect(meta.answer.text).not.toContain(`${SECRET_PREFIX}leak`);
      const declined = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, poll: { body: { action: "decline" } } });
      expect(declined.json?._credentialsRevealed).toBe(false);
      expect(declined.answer.text).not.toContain(`${SECRET_PREFIX}leak`);
      expect(declined.prompts[0]?.join("\n")).toContain(label.replace("\u200b", ""));
    },
  );
});

describe("issue 26 review: deny by default", () => {
  it.each([
    "Bearer",
    "JWT",
    "DSN",
    "Connection string",
    "Security code",
    "PUK",
    "Wiederherstellungscodes",
    "API-Schlüssel",
    "Geheimnis",
    "one-time code",
    "Recovery codes",
    "Токен",
    "Mot de passe",
    "Contraseña",
    "パスワード",
    "Пароль",
    "密码",
    "Clé API",
    "Código de seguridad",
    "Sicherheitscode",
  ])("a STRING field labelled %j is withheld by metadata and by a declined reveal, and the reveal's prompt names it", async (label) => {
    await addField({ id: "addedfield", type: "STRING", label, value: `${SECRET_PREFIX}leak` });
    const meta = await h.call({ tool: "onepassword_get_item_metadata", args: github, channel: "none" });
    expect(meta.answer.text).not.toContain(`${SECRET_PREFIX}leak`);
    const declined = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, poll: { body: { action: "decline" } } });
    expect(declined.json?._credentialsRevealed).toBe(false);
    expect(declined.answer.text).not.toContain(`${SECRET_PREFIX}leak`);
    expect(declined.prompts[0]).toContain(`  Reveals: 3 values: password, notesPlain, ${label}`);
  });

  it.each(["Recovery codes", "API"])("a username field under a section titled %j is withheld, and a username outside any section is not", async (title) => {
    await addField({ id: "sectioned", type: "STRING", purpose: "USERNAME", label: "username", value: `${SECRET_PREFIX}sectioned`, section: { id: "s9", label: title } });
    const meta = await h.call({ tool: "onepassword_get_item_metadata", args: github, channel: "none" });
    expect(meta.answer.text).not.toContain(`${SECRET_PREFIX}sectioned`);
    const fields = (meta.json?.fields ?? []) as { id: string; value: string; sensitive: boolean; section?: string }[];
    expect(fields.find((f) => f.id === "sectioned")).toMatchObject({ value: "[REDACTED]", sensitive: true, section: title });
    expect(fields.find((f) => f.id === "username")).toMatchObject({ value: "ada@example.com", sensitive: false });
  });

  it("a website loses its userinfo before anything is shown, and one with userinfo or a query is withheld until a yes", async () => {
    const status = { vault_id: IDS.team, item_id: IDS.status };
    const meta = await h.call({ mount: TEAM, tool: "onepassword_get_item_metadata", args: status, channel: "none" });
    expect(meta.answer.text).not.toContain(SECRET_PREFIX);
    expect(meta.json?.urls).toEqual([
      { href: "https://status.example.com/", primary: true, sensitive: false },
      { href: "https://status.example.com/[REDACTED]", label: "admin", sensitive: true, host: "status.example.com" },
      { href: "https://status.example.com/[REDACTED]", sensitive: true, host: "status.example.com" },
    ]);
    const accepted = await h.call({ mount: TEAM, tool: "onepassword_get_item", args: { items: [status] } });
    expect(accepted.prompts[0]?.slice(-2)).toEqual([`  Item: Team / Status page (${IDS.status})`, "  Reveals: 2 values: admin (at status.example.com), website (at status.example.com)"]);
    expect(accepted.json?._credentialsRevealed).toBe(true);
    const urls = ((accepted.json?.items ?? []) as { urls: { href: string }[] }[])[0]?.urls.map((u) => u.href);
    // The query was asked for and shown; the userinfo never is, asked or not.
    expect(urls).toEqual(["https://status.example.com/", "https://status.example.com/admin", `https://status.example.com/feed?key=${SECRETS.urlQuery}`]);
    expect([accepted.answer.text, ...accepted.prompts.flat()].join("\n")).not.toContain(SECRETS.urlPassword);
  });
});

describe("issue 16 review: a create whose outcome is unknown says so", () => {
  it("a request that reached Connect and then failed is reported as unknown, never as nothing created", async () => {
    const inner = globalThis.fetch;
    vi.stubGlobal("fetch", async (input: string | URL | Request, init?: RequestInit) => {
      const response = await inner(input, init);
      if ((init?.method ?? "GET") === "POST" && String(input).includes("/v1/vaults/")) {
        await response.arrayBuffer();
        throw new TypeError("Network connection lost.");
      }
      return response;
    });
    const args = { vault_id: "provisioningvault000000001", items: [{ title: "bootstrap-unknown", secret: `${SECRET_PREFIX}k` }] };
    const first = await h.call({ mount: PROVISIONING, tool: "onepassword_create_api_credential", args, channel: "none", env: { ONEPASSWORD_PROVISIONING__OP_ELICITATION_WRITE: "false" } });
    expect(h.fake.store.created.map((c) => c.title)).toEqual(["bootstrap-unknown"]);
    expect(first.answer.text).toContain("whether 1Password Connect created the item is unknown");
    expect(first.answer.text).toContain("Check the vault before trying again");
    expect(first.answer.text).not.toMatch(/nothing was created/i);
  });
});
