// The service-account client (the official SDK) behind the same tools, with the SDK replaced by a recording stand-in: it is chosen when the mount's token is seeded, its items read through the same sensitive rule, each create and share is one gated write (the SDK is never asked without a live, approved call), a signed-in client is kept per mount until the token changes, and its failures are worded here.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { categoryOf, createParams, itemOf, sdkReason } from "../../../bundles/onepassword/onepassword.sdk";
import { IDS } from "../../fakes/onepassword/seed";
import { harness, PROVISIONING, SHARED } from "./helpers";

const TOKEN = "ops_shared-service-account-token-0123456789";
const OWN_TOKEN = "ops_provisioning-service-account-token-0123456789";

const sdkItem = (over: Record<string, unknown> = {}) => ({
  id: IDS.github,
  title: "GitHub",
  category: "Login",
  vaultId: IDS.engineering,
  fields: [
    { id: "username", title: "username", fieldType: "Text", value: "ada@example.com" },
    { id: "password", title: "password", fieldType: "Concealed", value: "sdk-secret-password" },
    { id: "otp", title: "one-time password", fieldType: "Totp", value: "otpauth://sdk-secret", sectionId: "s1" },
  ],
  sections: [{ id: "s1", title: "Security" }],
  notes: "Org owner: strad",
  tags: ["dev"],
  websites: [{ url: "https://github.com/", label: "website", autofillBehavior: "AnywhereOnWebsite" }],
  version: 3,
  files: [],
  createdAt: new Date("2026-01-05T09:00:00Z"),
  updatedAt: new Date("2026-01-06T09:00:00Z"),
  ...over,
});

const sdk = vi.hoisted(() => {
  const state = {
    signIns: [] as string[],
    creates: [] as Record<string, unknown>[],
    shares: [] as { itemId: string; params: Record<string, unknown> }[],
    failSignIn: undefined as Error | undefined,
    /** While set, every sign-in waits for it: a sign-in in flight. */
    signInHeld: undefined as Promise<void> | undefined,
  };
  return { state };
});

vi.mock("@1password/sdk", () => ({
  createClient: async (config: { auth: string }) => {
    sdk.state.signIns.push(config.auth);
    await sdk.state.signInHeld;
    if (sdk.state.failSignIn !== undefined) throw sdk.state.failSignIn;
    return {
      vaults: {
        list: async () => [{ id: IDS.engineering, title: "Engineering", description: "", activeItemCount: 1 }],
        getOverview: async (id: string) => ({ id, title: id === IDS.engineering ? "Engineering" : "Provisioning" }),
      },
      items: {
        list: async () => [{ id: IDS.github, title: "GitHub", category: "Login", vaultId: IDS.engineering, tags: ["dev"], websites: [] }],
        get: async (vaultId: string, itemId: string) => sdkItem({ vaultId, id: itemId }),
        create: async (params: Record<string, unknown>) => {
          sdk.state.creates.push(params);
          return { ...sdkItem(), id: "createditem000000000000001", title: params.title, category: params.category, vaultId: params.vaultId, tags: params.tags };
        },
        shares: {
          getAccountPolicy: async () => ({ maxExpiry: "ThirtyDays", defaultExpiry: "SevenDays", allowedTypes: [], allowedRecipientTypes: [], files: {} }),
          validateRecipients: async (_policy: unknown, emails: string[]) => emails.map((email) => ({ type: "Email", parameters: { email } })),
          create: async (item: { id: string }, _policy: unknown, params: Record<string, unknown>) => {
            sdk.state.shares.push({ itemId: item.id, params });
            return `https://share.1password.com/s#${item.id}`;
          },
        },
      },
    };
  },
}));

const h = harness();
const env = { OP_SERVICE_ACCOUNT_TOKEN: TOKEN, ONEPASSWORD_PROVISIONING__OP_SERVICE_ACCOUNT_TOKEN: OWN_TOKEN };
const github = { vault_id: IDS.engineering, item_id: IDS.github };

beforeEach(() => {
  sdk.state.signIns.length = 0;
  sdk.state.creates.length = 0;
  sdk.state.shares.length = 0;
  sdk.state.failSignIn = undefined;
  sdk.state.signInHeld = undefined;
});

describe("the service-account client's mapping", () => {
  it("reads an SDK item in Connect's vocabulary, so one sensitive rule serves both clients", () => {
    const item = itemOf(sdkItem() as never);
    expect(item.category).toBe("LOGIN");
    expect(item.fields.map((f) => [f.label, f.type, f.section ?? null])).toEqual([
      ["username", "STRING", null],
      ["password", "CONCEALED", null],
      ["one-time password", "OTP", "Security"],
      ["notesPlain", "STRING", null],
    ]);
    expect(categoryOf("ApiCredentials")).toBe("API_CREDENTIAL");
    expect(categoryOf("SecureNote")).toBe("SECURE_NOTE");
    expect(categoryOf("CreditCard")).toBe("CREDIT_CARD");
  });

  it("builds the SDK's create: the note as the item's notes, every other field by its label", () => {
    expect(
      createParams({
        vaultId: IDS.engineering,
        title: "Runbook",
        category: "SECURE_NOTE",
        fields: [{ label: "notesPlain", type: "STRING", purpose: "NOTES", value: "body" }],
        urls: [],
        tags: ["ops"],
      }),
    ).toEqual({ category: "SecureNote", vaultId: IDS.engineering, title: "Runbook", fields: [], notes: "body", tags: ["ops"], websites: [] });
  });

  it("words a failure itself, never with the SDK's message", () => {
    expect(sdkReason(new Error("invalid service account token, please make sure …"), "x")).toBe("the mount's OP_SERVICE_ACCOUNT_TOKEN is not a valid service-account token");
    expect(sdkReason(new Error("authentication error: internal server error"), "x")).toBe("1Password refused the service account's sign-in, or could not be reached");
    expect(sdkReason(new TypeError("upstream said: sk_live_do_not_leak"), "list the vaults")).toBe("1Password could not list the vaults (TypeError)");
  });
});

describe("the tools on a service-account mount", () => {
  it("are served by the SDK when the mount's token is seeded, signing in once per mount and again when the token changes", async () => {
    const a = await h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none", env });
    expect(a.json?.vaults).toEqual([{ id: IDS.engineering, name: "Engineering", items: 1 }]);
    await h.call({ tool: "onepassword_list_items", args: { vault_id: IDS.engineering }, channel: "none", env });
    await h.call({ mount: PROVISIONING, tool: "onepassword_list_vaults", args: {}, channel: "none", env });
    expect(sdk.state.signIns).toEqual([TOKEN, OWN_TOKEN]);
    await h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none", env: { ...env, OP_SERVICE_ACCOUNT_TOKEN: `${TOKEN}-rotated` } });
    expect(sdk.state.signIns).toEqual([TOKEN, OWN_TOKEN, `${TOKEN}-rotated`]);
    // Connect is never asked.
    expect(h.fake.store.requests).toEqual([]);
  });

  it("never shares a sign-in still in flight between calls (workerd cancels a request waiting on another's I/O), and keeps the one that finished", async () => {
    let release: () => void = () => {};
    sdk.state.signInHeld = new Promise<void>((r) => {
      release = r;
    });
    const rotated = { ...env, OP_SERVICE_ACCOUNT_TOKEN: `${TOKEN}-held` };
    const first = h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none", env: rotated });
    const second = h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none", env: rotated });
    await vi.waitFor(() => expect(sdk.state.signIns).toEqual([`${TOKEN}-held`, `${TOKEN}-held`]));
    release();
    for (const answer of await Promise.all([first, second])) expect(answer.json?.vaults).toEqual([{ id: IDS.engineering, name: "Engineering", items: 1 }]);
    await h.call({ tool: "onepassword_list_items", args: { vault_id: IDS.engineering }, channel: "none", env: rotated });
    expect(sdk.state.signIns).toEqual([`${TOKEN}-held`, `${TOKEN}-held`]);
  });

  it("a reveal withholds the SDK's concealed values until the person says yes", async () => {
    const declined = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, env, poll: { body: { action: "decline" } } });
    expect(declined.json?._credentialsRevealed).toBe(false);
    expect(declined.answer.text).not.toContain("sdk-secret");
    // The notes are no username, title or website either (issue 26), so the SDK item's notes wait for the yes too.
    expect(declined.prompts[0]).toContain("  Reveals: 3 values: password, one-time password, notesPlain");
    const accepted = await h.call({ tool: "onepassword_get_item", args: { items: [github] }, env });
    expect(accepted.json?._credentialsRevealed).toBe(true);
    expect(accepted.answer.text).toContain("sdk-secret-password");
  });

  it("shares an item once a person approves, through the gate, with the link's expiry and recipients as approved", async () => {
    const { answer, prompts, json } = await h.call({ tool: "onepassword_share_item", args: { items: [github], expires: "1d", one_time: true, emails: ["Bob@Example.com"] }, env });
    expect(answer.isError, answer.text).toBe(false);
    expect(json).toEqual({ shared: [{ vault_id: IDS.engineering, item_id: IDS.github, title: "GitHub", url: `https://share.1password.com/s#${IDS.github}` }], expires: "1d", one_time: true });
    expect(sdk.state.shares).toEqual([{ itemId: IDS.github, params: { oneTimeOnly: true, expireAfter: "OneDay", recipients: [{ type: "Email", parameters: { email: "bob@example.com" } }] } }]);
    // The link's settings are the caller's; the item's vault and title were read from 1Password, and say so (issue 26).
    expect(prompts[0]?.slice(4)).toEqual([
      "Values below are supplied by the caller, not by this server:",
      "  Expires after: 1d",
      "  One view only: yes",
      "  Recipient: bob@example.com",
      "",
      "Values below were read from 1Password just now, not supplied by the caller:",
      `  Item: Engineering / GitHub (${IDS.github})`,
    ]);
    expect(h.calls.claims.map((c) => c.won)).toEqual([true]);
  });

  it("never asks the SDK to share or create on a decline, or when the call is no longer live once the yes arrives", async () => {
    const declined = await h.call({ tool: "onepassword_share_item", args: { items: [github] }, env, poll: { body: { action: "decline" } } });
    expect(declined.answer.text).toBe("Not done: the person declined. Nothing was shared.");
    const late = await h.call({ tool: "onepassword_share_item", args: { items: [github] }, env, live: false });
    expect(late.answer.text).toBe("Not done: item 1 (GitHub): the call is no longer live or was already used for a share; nothing was shared.");
    const lateCreate = await h.call({ tool: "onepassword_create_login", args: { vault_id: IDS.engineering, items: [{ title: "late" }] }, env, live: false });
    expect(lateCreate.answer.text).toBe("Not done: item 1 (late): the call is no longer live or was already used for a create; nothing was created.");
    expect(sdk.state.shares).toEqual([]);
    expect(sdk.state.creates).toEqual([]);
  });

  it("creates unasked under the mount's provisioning posture, and asks on the shared mount", async () => {
    const own = await h.call({
      mount: PROVISIONING,
      tool: "onepassword_create_api_credential",
      args: { vault_id: IDS.provisioning, items: [{ title: "minted", secret: "k" }] },
      env: { ...env, ONEPASSWORD_PROVISIONING__OP_ELICITATION_WRITE: "false" },
      channel: "none",
    });
    expect(own.answer.isError, own.answer.text).toBe(false);
    expect(sdk.state.creates).toEqual([
      {
        category: "ApiCredentials",
        vaultId: IDS.provisioning,
        title: "minted",
        fields: [{ id: "credential", title: "credential", fieldType: "Concealed", value: "k" }],
        tags: [],
        websites: [],
      },
    ]);
    const shared = await h.call({
      mount: SHARED,
      tool: "onepassword_create_api_credential",
      args: { vault_id: IDS.engineering, items: [{ title: "asked", secret: "k" }] },
      env,
      poll: { body: { action: "decline" } },
    });
    expect(shared.prompts).toHaveLength(1);
    expect(sdk.state.creates).toHaveLength(1);
  });

  it("names a failed sign-in in its own words, and tries again on the next call", async () => {
    sdk.state.failSignIn = new Error("invalid service account token, please make sure you provide a valid service account token");
    const failed = await h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none", env });
    expect(failed.answer.text).toBe("Not done: the mount's OP_SERVICE_ACCOUNT_TOKEN is not a valid service-account token.");
    sdk.state.failSignIn = undefined;
    const again = await h.call({ tool: "onepassword_list_vaults", args: {}, channel: "none", env });
    expect(again.answer.isError).toBe(false);
    expect(sdk.state.signIns).toEqual([TOKEN, TOKEN]);
  });
});
