// Covers a person's edits on a 1Password create (R-OP-12, R-EDIT-*): the card offers each item's title, tags and public fields with the model's values and never a secret (password, API secret, note body, a website with credentials), the edited create writes exactly the edited items to the Connect fake, a form answer naming a secret or breaking the tool's rules creates nothing, and the answer and the audit lines name the changed fields without a secret value.
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { AuditLine } from "../../../bundles/kit/audit";
import { CREATE_EDITABLE } from "../../../bundles/onepassword/onepassword.create";
import { IDS, SECRET_PREFIX } from "../../fakes/onepassword/seed";
import { harness } from "./helpers";

const h = harness();
let log: MockInstance<typeof console.log>;
beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => log.mockRestore());

const audits = (): AuditLine[] =>
  log.mock.calls
    .map((a) => String(a[0]))
    .filter((l) => l.includes('"event":"audit"'))
    .map((l) => JSON.parse(l) as AuditLine);
const created = () => h.fake.store.created;
const posts = () => h.fake.store.requests.filter((r) => r.method === "POST");

const PASSWORD = `${SECRET_PREFIX}grafana-pw`;
const LOGIN = {
  vault_id: IDS.engineering,
  items: [
    { title: "Grafana", username: "ops", password: PASSWORD, url: "https://grafana.example.com", tags: ["ops", "metrics"] },
    { title: "Sentry", password: `${SECRET_PREFIX}sentry-pw`, url: "https://ops:hunter2@sentry.example.com/" },
  ],
};

/** The create body the approval service received: what the person was shown. */
function asked(): { message: string; requestedSchema: { properties: Record<string, Record<string, unknown>> } } {
  const post = h.approver.requests.find((r) => r.method === "POST");
  return JSON.parse(post?.body ?? "{}");
}
const accept = (content: Record<string, unknown>) => ({ body: { action: "accept", content: { confirm: true, ...content }, _meta: { "dev.strad/approver": "ada@example.com" } } });

describe("a create's card", () => {
  it("offers each item's title, tags and public fields with the model's values, and never a secret, a note body or a website with credentials", async () => {
    const { answer } = await h.call({ tool: "onepassword_create_login", args: LOGIN, poll: { body: { action: "decline" } } });
    expect(answer.text).toBe("Not done: the person declined. Nothing was created.");
    const { properties } = asked().requestedSchema;
    expect(Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, p.default ?? null]))).toEqual({
      "items.0.title": "Grafana",
      "items.1.title": "Sentry",
      "items.0.username": "ops",
      "items.0.url": "https://grafana.example.com",
      "items.0.tags": "ops\nmetrics",
      confirm: null,
    });
    expect(properties["items.0.title"]?.title).toBe("Title (1 of 2)");
    // No password is on the card, and the website holding credentials (the caller's, shown in the message as given) is
    // no default of the form.
    expect(asked().message).not.toContain(SECRET_PREFIX);
    const form = JSON.stringify(asked().requestedSchema);
    for (const secret of [SECRET_PREFIX, "hunter2", "sentry.example.com"]) expect(form).not.toContain(secret);
  });

  it("offers a secure note's title and tags, never its body, and an API credential's username, never its secret or key type", async () => {
    await h.call({
      tool: "onepassword_create_secure_note",
      args: { vault_id: IDS.engineering, items: [{ title: "Runbook", note: `${SECRET_PREFIX}body`, tags: ["ops"] }] },
      poll: { body: { action: "decline" } },
    });
    expect(Object.keys(asked().requestedSchema.properties)).toEqual(["items.0.title", "items.0.tags", "confirm"]);
    h.approver.requests.length = 0;
    await h.call({
      tool: "onepassword_create_api_credential",
      args: { vault_id: IDS.engineering, items: [{ title: "Deploy", secret: `${SECRET_PREFIX}key`, username: "ci", key_type: "bearer" }] },
      poll: { body: { action: "decline" } },
    });
    expect(Object.keys(asked().requestedSchema.properties)).toEqual(["items.0.title", "items.0.username", "confirm"]);
    expect(JSON.stringify(asked())).not.toContain(SECRET_PREFIX);
  });

  it("no create declares a secret, a note body or a key's type editable", () => {
    const declared = Object.values(CREATE_EDITABLE).flatMap((e) => Object.keys(e));
    expect(new Set(declared)).toEqual(new Set(["items.*.title", "items.*.username", "items.*.url", "items.*.tags"]));
  });
});

describe("a create the person edited", () => {
  it("creates exactly the edited items; the answer and the audit lines name the changed fields", async () => {
    const { answer } = await h.call({
      tool: "onepassword_create_login",
      args: LOGIN,
      poll: accept({ "items.0.title": "Grafana (prod)", "items.0.tags": "ops\n\nprod\n", "items.1.title": "Sentry (prod)", "items.0.url": "https://grafana.example.org/" }),
    });
    expect(answer.isError, answer.text).toBe(false);
    const [result, line] = (answer.result.content as { text: string }[]).map((c) => c.text);
    expect((JSON.parse(result ?? "{}").created as { title: string }[]).map((c) => c.title)).toEqual(["Grafana (prod)", "Sentry (prod)"]);
    expect(created().map((c) => [c.title, c.tags, c.urls, c.fields.map((f) => [f.label, f.value])])).toEqual([
      [
        "Grafana (prod)",
        ["ops", "prod"],
        ["https://grafana.example.org/"],
        [
          ["username", "ops"],
          ["password", PASSWORD],
        ],
      ],
      ["Sentry (prod)", [], ["https://ops:hunter2@sentry.example.com/"], [["password", `${SECRET_PREFIX}sentry-pw`]]],
    ]);
    expect(line).toBe(
      'The person edited this call before approving it, and what ran is their version, not the one proposed: items.0.title is now "Grafana (prod)"; items.0.tags is now ["ops", "prod"]; items.1.title is now "Sentry (prod)"; items.0.url is now "https://grafana.example.org/".',
    );
    expect(answer.text).not.toContain(SECRET_PREFIX);
    const lines = audits();
    expect(lines.map((l) => l.outcome)).toEqual(["asked", "approved", "claimed", "written", "written"]);
    const approved = lines.find((l) => l.outcome === "approved");
    expect(approved?.edited).toEqual(["items.0.tags", "items.0.title", "items.0.url", "items.1.title"]);
    expect(approved?.proposed).toMatch(/^[0-9a-f]{64}$/);
    expect(approved?.proposed).not.toBe(approved?.fingerprint);
    expect(approved?.card).toMatch(/^[0-9a-f]{64}$/);
    const raw = log.mock.calls.map((a) => String(a[0])).join("\n");
    for (const value of [SECRET_PREFIX, "Grafana (prod)", "prod"]) expect(raw).not.toContain(value);
  });

  it("names a changed website that is not plainly public without showing it", async () => {
    const { answer } = await h.call({ tool: "onepassword_create_login", args: LOGIN, poll: accept({ "items.0.url": "https://ops:s3cret@grafana.example.com/" }) });
    expect(answer.isError, answer.text).toBe(false);
    expect(created()[0]?.urls).toEqual(["https://ops:s3cret@grafana.example.com/"]);
    expect(answer.text).toContain("items.0.url was changed (its value is not shown)");
    expect(answer.text).not.toContain("s3cret");
  });

  it.each([
    ["sets the password, which the card did not offer", { "items.0.password": "chosen" }, "edit_not_offered", /"items\.0\.password", which the card did not offer/],
    ["sets a website the card did not offer (it held credentials)", { "items.1.url": "https://sentry.example.com/" }, "edit_not_offered", /"items\.1\.url", which the card did not offer/],
    ["empties a title, which the tool's schema refuses", { "items.0.title": "" }, "edit_invalid", /fails the tool's own input schema at "items\.0\.title"/],
    ["gives a title one character past its limit", { "items.0.title": "x".repeat(201) }, "edit_invalid", /at "items\.0\.title"/],
    ["gives eleven tags, one past the limit", { "items.0.tags": Array.from({ length: 11 }, (_, i) => `t${i}`).join("\n") }, "edit_invalid", /at "items\.0\.tags"/],
    ["gives a tag starting with a space", { "items.0.tags": "ops\n prod" }, "edit_invalid", /starts or ends with a space/],
    ["gives a website that is not a URL", { "items.0.url": "grafana" }, "edit_invalid", /at "items\.0\.url"/],
  ])("creates nothing when the answer %s", async (_label, content, reason, why) => {
    const { answer } = await h.call({ tool: "onepassword_create_login", args: LOGIN, poll: accept(content) });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^Not done: the person's answer was refused before anything ran: /);
    expect(answer.text).toMatch(why);
    expect(answer.text).toMatch(/Nothing was created\.$/);
    expect(posts()).toEqual([]);
    expect(audits().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["refused", reason],
    ]);
  });

  it("takes a title at exactly its limit, and ten tags", async () => {
    const tags = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const { answer } = await h.call({ tool: "onepassword_create_login", args: LOGIN, poll: accept({ "items.0.title": "x".repeat(200), "items.0.tags": tags.join("\n") }) });
    expect(answer.isError, answer.text).toBe(false);
    expect(created()[0]).toMatchObject({ title: "x".repeat(200), tags });
  });

  it("a plain accept creates the items as proposed", async () => {
    const { answer } = await h.call({ tool: "onepassword_create_login", args: LOGIN, poll: accept({}) });
    expect(answer.isError, answer.text).toBe(false);
    expect(answer.text).not.toContain("The person edited");
    expect(created().map((c) => [c.title, c.tags])).toEqual([
      ["Grafana", ["ops", "metrics"]],
      ["Sentry", []],
    ]);
    expect(audits().find((l) => l.outcome === "approved")).toMatchObject({ edited: null, proposed: null });
  });
});
