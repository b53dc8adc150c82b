// The 1Password bundle's client layer: which credentials a mount reads (own path: its own only; the shared mount: its own, else the bare ones), and the Connect client against the Connect fake (status-only errors, no redirect followed, https only, ids checked).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type CallScope, runInScope } from "../../../bundles/kit/scope";
import { credentialsFor, SHARED_MOUNT } from "../../../bundles/onepassword/onepassword.client";
import { ConnectClient, connectBase } from "../../../bundles/onepassword/onepassword.connect";
import { CONNECT_ONLY, connectOnlyRefusal } from "../../../bundles/onepassword/onepassword.sdk";
import { SECRET_MARKER } from "../../fakes/onepassword/connect.fake";
import { IDS, PROVISIONING_TOKEN, SECRETS, SHARED_TOKEN } from "../../fakes/onepassword/seed";
import { type ServedConnect, startConnectFake } from "./helpers";

describe("which credentials a mount reads (one token, one mount)", () => {
  const bare = { OP_CONNECT_HOST: "https://connect.example.com", OP_CONNECT_TOKEN: "bare-token" };

  it("an own-path mount reads only its own <SLUG>__ credentials, never the bare ones, and says which of its own to set", () => {
    const found = credentialsFor("onepassword-provisioning", { ...bare, OP_SERVICE_ACCOUNT_TOKEN: "ops_bare" });
    expect(found).toEqual({
      ok: false,
      reason:
        "this mount has no 1Password credentials: set ONEPASSWORD_PROVISIONING__OP_SERVICE_ACCOUNT_TOKEN, or ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST and ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN; an own-path mount never reads the bare ones",
    });
    const own = credentialsFor("onepassword-provisioning", { ...bare, ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST: "https://own.example.com", ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN: "own-token" });
    expect(own).toMatchObject({ ok: true, credentials: { kind: "connect", host: "https://own.example.com", token: "own-token" } });
    // Another slug's credentials are not this mount's either.
    expect(credentialsFor("onepassword-provisioning", { OTHER__OP_CONNECT_HOST: "https://x.example.com", OTHER__OP_CONNECT_TOKEN: "t" }).ok).toBe(false);
  });

  it("the shared mount reads its own ONEPASSWORD__ credentials first, else the bare ones, never mixing the two", () => {
    expect(credentialsFor(SHARED_MOUNT, bare)).toMatchObject({ ok: true, credentials: { kind: "connect", token: "bare-token", names: { host: "OP_CONNECT_HOST", token: "OP_CONNECT_TOKEN" } } });
    expect(credentialsFor(SHARED_MOUNT, { ...bare, ONEPASSWORD__OP_CONNECT_HOST: "https://own.example.com", ONEPASSWORD__OP_CONNECT_TOKEN: "own" })).toMatchObject({
      ok: true,
      credentials: { token: "own" },
    });
    // Its own host without its own token is incomplete: the bare token is another namespace's.
    expect(credentialsFor(SHARED_MOUNT, { ...bare, ONEPASSWORD__OP_CONNECT_HOST: "https://own.example.com" })).toEqual({
      ok: false,
      reason: "this mount's 1Password Connect credentials are incomplete: ONEPASSWORD__OP_CONNECT_TOKEN is not set",
    });
    expect(credentialsFor(SHARED_MOUNT, {})).toMatchObject({ ok: false, reason: expect.stringContaining("(or the bare OP_SERVICE_ACCOUNT_TOKEN, or OP_CONNECT_HOST and OP_CONNECT_TOKEN)") });
  });

  it("a service-account token wins over Connect in the same namespace; blank values count as unset", () => {
    expect(credentialsFor(SHARED_MOUNT, { ...bare, OP_SERVICE_ACCOUNT_TOKEN: "ops_token" })).toMatchObject({ ok: true, credentials: { kind: "service-account", token: "ops_token" } });
    expect(credentialsFor(SHARED_MOUNT, { ...bare, OP_SERVICE_ACCOUNT_TOKEN: "  " })).toMatchObject({ ok: true, credentials: { kind: "connect" } });
  });
});

describe("the Connect-only build's refusal (wrangler.toml [env.connect]; on workerd in workerd.unit.test.ts)", () => {
  it("is off outside that build, and names the variable that asked for the SDK and the two to seed instead", () => {
    expect(CONNECT_ONLY).toBe(false);
    for (const mount of [SHARED_MOUNT, "onepassword-team"]) {
      const token = { OP_SERVICE_ACCOUNT_TOKEN: "ops_x", ONEPASSWORD_TEAM__OP_SERVICE_ACCOUNT_TOKEN: "ops_y" };
      const found = credentialsFor(mount, token);
      if (!found.ok || found.credentials.kind !== "service-account") throw new Error("expected service-account credentials");
      const ns = mount === SHARED_MOUNT ? "" : "ONEPASSWORD_TEAM__";
      const reason = connectOnlyRefusal(found.credentials.names.token);
      expect(reason).toContain(`this mount's ${ns}OP_SERVICE_ACCOUNT_TOKEN is set (it is read before Connect's): delete it and seed ${ns}OP_CONNECT_HOST and ${ns}OP_CONNECT_TOKEN`);
      expect(reason).toContain("npm run deploy -- --onepassword connect");
      expect(reason).not.toContain("ops_");
    }
  });
});

describe("the Connect client", () => {
  let fake: ServedConnect;
  beforeAll(async () => {
    fake = await startConnectFake();
  });
  afterAll(async () => {
    await fake.stop();
  });
  const scope = (): CallScope => ({ mount: "onepassword", signal: new AbortController().signal, waitUntil: () => {}, env: {} });
  const inScope = <T>(work: () => Promise<T>) => runInScope(scope(), work);

  it("reads vaults, items and a full item from Connect's documented routes, each account its own", async () => {
    fake.store.reset();
    const shared = new ConnectClient(fake.host, SHARED_TOKEN);
    const own = new ConnectClient(fake.host, PROVISIONING_TOKEN);
    expect((await inScope(() => shared.listVaults())).map((v) => v.name)).toEqual(["Engineering", "Finance"]);
    expect((await inScope(() => own.listVaults())).map((v) => v.name)).toEqual(["Provisioning"]);
    expect((await inScope(() => shared.listItems(IDS.engineering))).map((i) => [i.title, i.category])).toEqual([
      ["GitHub", "LOGIN"],
      ["Stripe API", "API_CREDENTIAL"],
      ["Deploy notes", "SECURE_NOTE"],
    ]);
    const notes = await inScope(() => shared.getItem(IDS.engineering, IDS.deployNotes));
    expect(notes.fields.find((f) => f.label === "Deploy token")).toMatchObject({ type: "STRING", section: "Operations", value: SECRETS.deployToken });
    expect(fake.store.requests.map((r) => `${r.method} ${r.path} ${r.account}`)).toEqual([
      "GET /onepassword/v1/vaults shared",
      "GET /onepassword/v1/vaults provisioning",
      `GET /onepassword/v1/vaults/${IDS.engineering}/items shared`,
      `GET /onepassword/v1/vaults/${IDS.engineering}/items/${IDS.deployNotes} shared`,
    ]);
    // Another account's vault is as unknown as one that does not exist.
    await expect(inScope(() => own.getItem(IDS.engineering, IDS.github))).rejects.toThrow(/^1Password Connect answered HTTP 404$/);
  });

  it("names only the status of a failure, never Connect's body", async () => {
    fake.store.reset();
    const wrong = new ConnectClient(fake.host, "not-the-token");
    const error = await inScope(() => wrong.listVaults()).catch((e: Error) => e);
    expect(String(error)).toBe("OnePasswordError: 1Password Connect answered HTTP 401");
    expect(String(error)).not.toContain(SECRET_MARKER);
  });

  it("follows no redirect with the token on it, and refuses an answer of another shape", async () => {
    const calls: RequestInit[] = [];
    const redirecting = new ConnectClient("https://connect.example.com", "t0ken", "OP_CONNECT_HOST", async (_url, init) => {
      calls.push(init);
      return new Response(null, { status: 302, headers: { location: "https://elsewhere.example.com/" } });
    });
    await expect(inScope(() => redirecting.listVaults())).rejects.toThrow("1Password Connect answered HTTP 302");
    expect(calls[0]?.redirect).toBe("manual");
    const odd = new ConnectClient("https://connect.example.com", "t0ken", "OP_CONNECT_HOST", async () => Response.json({ not: "a list" }));
    await expect(inScope(() => odd.listVaults())).rejects.toThrow("1Password Connect gave an answer of an unexpected shape");
  });

  it("takes an https host, or plain http on loopback only, and checks every id before it builds a path", async () => {
    expect(connectBase("https://connect.example.com/", "OP_CONNECT_HOST")).toBe("https://connect.example.com");
    expect(connectBase("http://127.0.0.1:8789/onepassword", "OP_CONNECT_HOST")).toBe("http://127.0.0.1:8789/onepassword");
    expect(() => connectBase("http://connect.example.com", "X__OP_CONNECT_HOST")).toThrow("X__OP_CONNECT_HOST must be https (plain http only for a loopback host)");
    expect(() => connectBase("https://user:pw@connect.example.com", "OP_CONNECT_HOST")).toThrow(/no userinfo, query or fragment/);
    const spy = vi.fn(async () => Response.json([]));
    const client = new ConnectClient("https://connect.example.com", "t0ken", "OP_CONNECT_HOST", spy);
    await expect(inScope(() => client.getItem("../../v1/activity", IDS.github))).rejects.toThrow("the vault id is not a 1Password id");
    expect(spy).not.toHaveBeenCalled();
  });

  it("tries a read once more when its connection failed before any answer, never a third time, nor after an answer or a drop", async () => {
    const flaky = (failures: number, answer: () => Response = () => Response.json([])) => {
      const calls: string[] = [];
      const client = new ConnectClient("https://connect.example.com", "t0ken", "OP_CONNECT_HOST", async (url) => {
        calls.push(String(url));
        if (calls.length <= failures) throw new TypeError("Network connection lost.");
        return answer();
      });
      return { calls, client };
    };
    const once = flaky(1);
    expect(await inScope(() => once.client.listVaults())).toEqual([]);
    expect(once.calls).toEqual(["https://connect.example.com/v1/vaults", "https://connect.example.com/v1/vaults"]);
    const twice = flaky(2);
    await expect(inScope(() => twice.client.listVaults())).rejects.toThrow("1Password Connect could not be reached");
    expect(twice.calls).toHaveLength(2);
    const refused = flaky(0, () => new Response(null, { status: 503 }));
    await expect(inScope(() => refused.client.listVaults())).rejects.toThrow("1Password Connect answered HTTP 503");
    expect(refused.calls).toHaveLength(1);
    // A call dropped while its read was in flight: the read is not made again.
    const dropped = new AbortController();
    const calls: string[] = [];
    const dropping = new ConnectClient("https://connect.example.com", "t0ken", "OP_CONNECT_HOST", async (url) => {
      calls.push(String(url));
      dropped.abort();
      throw new TypeError("aborted");
    });
    await expect(runInScope({ ...scope(), signal: dropped.signal }, () => dropping.listVaults())).rejects.toThrow("the call was dropped");
    expect(calls).toHaveLength(1);
  });

  it("cannot share: Connect has no share endpoint", async () => {
    const client = new ConnectClient(fake.host, SHARED_TOKEN);
    expect(client.canShare).toBe(false);
    await expect(client.shareItem()).rejects.toThrow("1Password Connect has no share endpoint");
  });
});
