// Covers bundles/kit/edits.ts with guard.ts, confirm.ts and audit.ts: a guard's editable fields ride on the question as a form, an accept's content is read back into the call that runs (narrow lists only lose entries, free text stays within the tool's schema), exactly the edited call runs once and the proposed one never, the answer and the audit lines name the change, every decision line carries the card's digest, and a fast-check property: for random edits, what runs is what the card showed after the edit, or nothing runs.
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { z } from "zod";
import { type AuditLine, canonicalJson, cardDigest } from "../../../bundles/kit/audit";
import { editForm, editsLine, isNarrowing, MAX_FORM_BYTES, planEdits, readEdits } from "../../../bundles/kit/edits";
import { type FingerprintInput, fingerprint } from "../../../bundles/kit/fingerprint";
import { always, editPlanFor, type Guard, never, runGuarded } from "../../../bundles/kit/guard";
import { buildPrompt } from "../../../bundles/kit/prompt";
import { callStateFor, runInScope } from "../../../bundles/kit/scope";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import { askChannel, fakeCalls } from "./helpers/bundle";
import { HostileServer, type Plan, startSink } from "./helpers/hostile-server";

const Schema = z.object({
  to: z.array(z.string().max(40)).min(1).max(5),
  subject: z.string().max(30),
  note: z.string().max(100).optional(),
});
type Args = z.infer<typeof Schema>;
type Target = Args & { seen: number };

let hostile: HostileServer;
let recorder: Awaited<ReturnType<typeof startSink>>;
let log: MockInstance<typeof console.log>;
let n = 0;
/** How often the tool has read its live target: a test may change it between the question and the answer. */
let upstream = { version: 1 };

beforeAll(async () => {
  hostile = await new HostileServer().start();
  recorder = await startSink();
});
afterAll(async () => {
  await hostile.stop();
  await recorder.stop();
});
beforeEach(() => {
  recorder.requests.length = 0;
  upstream = { version: 1 };
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => {
  log.mockRestore();
});

const fp = (t: Target): FingerprintInput => ({ operation: "demo_send", target: { to: { tuple: t.to }, subject: t.subject, note: t.note ?? null, seen: t.seen } });

const guard: Guard<Args, Target> = {
  rule: always,
  editable: { to: "narrow", subject: { mode: "free", label: "Subject line" } },
  resolve: (args) => {
    // A rule of the tool's own, beyond its schema: what a person's edit must pass as a model's call does.
    if (args.subject.includes("forbidden")) throw new Error("Not done: the subject holds a forbidden word. Nothing was sent.");
    return { ...args, seen: upstream.version };
  },
  fingerprint: fp,
  prompt: (t) => ({
    heading: "This will send a demo message.",
    consequence: "It cannot be recalled.",
    values: [...t.to.map((v) => ({ label: "To", value: v })), { label: "Subject", value: t.subject }],
  }),
  act: async (t, write) => {
    const response = await write(`${recorder.base}/send`, { method: "POST", body: JSON.stringify({ to: t.to, subject: t.subject, note: t.note ?? null }) }, { binds: fp(t), needsApproval: true });
    await response.body?.cancel();
    return { content: [{ type: "text", text: "sent" }] };
  },
};
const plan = editPlanFor("demo_send", { inputSchema: Schema }, guard);

/** One guarded call in a scope of its own, its question answered by `answer` at the first poll. */
async function run(args: Args, answer: Plan | ((body: Record<string, unknown>) => Plan), g: Guard<Args, Target> = guard) {
  const name = `e${++n}`;
  let asked: Record<string, unknown> = {};
  const url = hostile.route(name, {
    create: (r) => {
      asked = JSON.parse(r.body) as Record<string, unknown>;
      return { status: 201, body: { requestId: `req-${name}` } };
    },
    poll: () => (typeof answer === "function" ? answer(asked) : answer),
  });
  const calls = fakeCalls();
  calls.live("dev-session", `k:${name}`);
  const call = callStateFor(1, {
    name: "demo_send",
    arguments: args,
    _meta: { [CHANNEL_META_KEY]: askChannel(url, { slug: "kit-test", caller: "dev-session", call: { scope: "dev-session", key: `k:${name}`, nonce: "test-nonce-0123456789" } }) },
  });
  const scope = { mount: "kit", signal: new AbortController().signal, waitUntil: () => {}, env: { CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "20", STRAD_KEEPALIVE_MS: "1000" }, call };
  const result = await runInScope(scope, () => runGuarded(g, args, editPlanFor("demo_send", { inputSchema: Schema }, g)));
  const text = (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { result, text, isError: result.isError === true, asked, writes: recorder.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>) };
}

const accept = (content: Record<string, unknown>): Plan => ({ body: { action: "accept", content: { confirm: true, ...content }, _meta: { "dev.strad/approver": "ada@example.com" } } });

function lines(): AuditLine[] {
  return log.mock.calls
    .map((args) => String(args[0]))
    .filter((l) => l.includes('"event":"audit"'))
    .map((l) => JSON.parse(l) as AuditLine);
}

const ARGS: Args = { to: ["ada@example.com", "bob@example.com", "eve@example.com"], subject: "Quarterly report", note: "kept as proposed" };

describe("the declaration", () => {
  it("is checked against the tool's schema when the tool is registered", () => {
    expect(() => planEdits("t", Schema, { subject: "narrow" })).toThrow(/not a list of strings/);
    expect(() => planEdits("t", Schema, { to: "free" })).toThrow(/not a string/);
    expect(() => planEdits("t", Schema, { missing: "free" })).toThrow(/no such argument/);
    expect(() => planEdits("t", z.object({ confirm: z.string() }), { confirm: "free" })).toThrow(/"confirm"/);
    expect(() => editPlanFor("t", { inputSchema: Schema }, { ...guard, rule: never })).toThrow(/never asks/);
    expect(planEdits("t", Schema, {})).toBeUndefined();
    expect(plan?.fields.map((f) => [f.name, f.mode, f.kind, f.label, f.maxLength ?? null])).toEqual([
      ["to", "narrow", "list", "To", null],
      ["subject", "free", "text", "Subject line", 30],
    ]);
  });
});

describe("the form the question carries", () => {
  it("offers each declared field the model gave a value, with that value as its default, beside the confirm box", () => {
    const form = editForm(plan, ARGS);
    expect(form?.schema).toEqual({
      type: "object",
      properties: {
        to: {
          type: "array",
          title: "To",
          description: expect.stringMatching(/^Untick/),
          maxItems: 3,
          items: { type: "string", enum: ARGS.to },
          default: ARGS.to,
        },
        subject: { type: "string", title: "Subject line", description: expect.any(String), maxLength: 30, default: "Quarterly report" },
        confirm: { type: "boolean", title: "Approve", description: "Tick to let the call go ahead." },
      },
      required: ["confirm"],
    });
  });

  it("leaves out a field the model did not give, an empty list, and anything once the form would pass its byte cap", () => {
    expect(editForm(plan, { to: [], subject: "s" })?.offered.map((o) => o.field.name)).toEqual(["subject"]);
    expect(editForm(plan, { to: [] })).toBeUndefined();
    const big = planEdits("t", z.object({ a: z.string(), b: z.string() }), { a: "free", b: "free" });
    // The first field fills the form to just under the cap; the second, however small, no longer fits.
    const room = MAX_FORM_BYTES - JSON.stringify(editForm(big, { a: "" })?.schema).length;
    const filled = editForm(big, { a: "x".repeat(room), b: "y" });
    expect(filled?.offered.map((o) => o.field.name)).toEqual(["a"]);
    expect(JSON.stringify(filled?.schema).length).toBe(MAX_FORM_BYTES);
    expect(editForm(big, { a: "x".repeat(room + 1), b: "y" })?.offered.map((o) => o.field.name)).toEqual(["b"]);
  });
});

describe("reading the answer", () => {
  const form = editForm(plan, ARGS);
  it.each([
    ["no content beyond confirm", {}, []],
    ["the values as offered", { to: ARGS.to, subject: ARGS.subject }, []],
    ["one recipient unticked", { to: ["ada@example.com", "eve@example.com"] }, ["to"]],
    ["every recipient unticked", { to: [] }, ["to"]],
    ["a new subject", { subject: "Q3 report" }, ["subject"]],
    ["an emptied subject", { subject: "" }, ["subject"]],
    ["a multi-line text", { subject: "a\nb\tc" }, ["subject"]],
  ])("takes %s", (_label, content, changed) => {
    const read = readEdits(form, { confirm: true, ...content });
    expect(read.ok && read.changes.map((c) => c.field.name)).toEqual(changed);
  });

  it.each([
    ["a recipient added", { to: [...ARGS.to, "mallory@example.com"] }, "edit_widened"],
    ["a recipient changed", { to: ["ada@example.com", "bob@example.org", "eve@example.com"] }, "edit_widened"],
    ["recipients reordered", { to: ["bob@example.com", "ada@example.com"] }, "edit_widened"],
    ["a recipient doubled", { to: ["ada@example.com", "ada@example.com"] }, "edit_widened"],
    ["a field the card did not offer", { note: "hidden" }, "edit_not_offered"],
    ["a field the tool does not have", { bcc: ["x@example.com"] }, "edit_not_offered"],
    ["a list that is not a list", { to: "ada@example.com" }, "edit_invalid"],
    ["a list of numbers", { to: [1] }, "edit_invalid"],
    ["text that is not text", { subject: 5 }, "edit_invalid"],
    ["text with a zero-width space", { subject: "Q3\u200b report" }, "edit_invalid"],
    ["text with a bidi override", { subject: "Q3 \u202etroper" }, "edit_invalid"],
    ["text with a carriage return", { subject: "Q3\rreport" }, "edit_invalid"],
  ])("refuses %s", (_label, content, code) => {
    const read = readEdits(form, { confirm: true, ...content });
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.code).toBe(code);
  });

  it("holds a narrow list to a subsequence of what was offered, at every length", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 6 }), fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 7 }), (before, after) => {
        // An independent oracle: after is before with some entries deleted.
        const canDelete = (b: string[], a: string[]): boolean => (a.length === 0 ? true : b.length === 0 ? false : (b[0] === a[0] && canDelete(b.slice(1), a.slice(1))) || canDelete(b.slice(1), a));
        expect(isNarrowing(before, after)).toBe(canDelete(before, after));
      }),
    );
  });

  it("tells the agent what ran, field by field, and names a concealed field without its value", () => {
    const read = readEdits(form, { confirm: true, to: ["ada@example.com"], subject: 'Q3 "final"' });
    if (!read.ok) throw new Error(read.why);
    expect(editsLine(read.changes)).toBe(
      'The person edited this call before approving it, and what ran is their version, not the one proposed: to lost "bob@example.com", "eve@example.com" and is now ["ada@example.com"]; subject is now "Q3 \\"final\\"".',
    );
    const secret = planEdits("t", z.object({ title: z.string() }), { title: { mode: "free", conceal: true } });
    const hidden = readEdits(editForm(secret, { title: "old" }), { confirm: true, title: "s3cret-title" });
    if (!hidden.ok) throw new Error(hidden.why);
    expect(editsLine(hidden.changes)).toBe("The person edited this call before approving it, and what ran is their version, not the one proposed: title was changed (its value is not shown).");
  });
});

describe("a guarded call a person edited", () => {
  it("runs exactly the edited call once; the answer and the lines name the change, both fingerprints and the card's digest", async () => {
    const { text, isError, writes, asked } = await run(ARGS, accept({ to: ["ada@example.com", "eve@example.com"], subject: "Q3 report" }));
    expect(isError, text).toBe(false);
    expect(writes).toEqual([{ to: ["ada@example.com", "eve@example.com"], subject: "Q3 report", note: "kept as proposed" }]);
    expect(text).toBe(
      `sent\n${'The person edited this call before approving it, and what ran is their version, not the one proposed: to lost "bob@example.com" and is now ["ada@example.com", "eve@example.com"]; subject is now "Q3 report".'}`,
    );
    const proposed = await fingerprint(fp({ ...ARGS, seen: 1 }));
    const edited = await fingerprint(fp({ ...ARGS, to: ["ada@example.com", "eve@example.com"], subject: "Q3 report", seen: 1 }));
    const card = await cardDigest(asked.message as string, asked.requestedSchema as Record<string, unknown>);
    expect(lines().map((l) => [l.outcome, l.reason, l.approver, l.fingerprint, l.proposed, l.edited, l.card])).toEqual([
      ["asked", null, null, proposed, null, null, card],
      ["approved", null, "ada@example.com", edited, proposed, ["subject", "to"], card],
      ["claimed", null, "ada@example.com", edited, proposed, ["subject", "to"], card],
      ["written", null, "ada@example.com", edited, proposed, ["subject", "to"], card],
    ]);
    // No line holds a value the person or the model chose.
    const raw = log.mock.calls.map((a) => String(a[0])).join("\n");
    for (const value of ["Q3 report", "Quarterly", "bob@example.com", "kept as proposed"]) expect(raw).not.toContain(value);
  });

  it("an accept with only the confirm box runs the call as proposed, and its lines carry the card's digest and no edit", async () => {
    const { text, isError, writes, asked } = await run(ARGS, accept({}));
    expect(isError, text).toBe(false);
    expect(text).toBe("sent");
    expect(writes).toEqual([{ to: ARGS.to, subject: ARGS.subject, note: ARGS.note }]);
    const card = await cardDigest(asked.message as string, asked.requestedSchema as Record<string, unknown>);
    expect(lines().map((l) => [l.outcome, l.proposed, l.edited, l.card])).toEqual([
      ["asked", null, null, card],
      ["approved", null, null, card],
      ["claimed", null, null, card],
      ["written", null, null, card],
    ]);
  });

  it("the card's digest is the sha-256 of the canonical JSON of the message and schema the service received", async () => {
    const { asked } = await run(ARGS, { body: { action: "decline", content: null } });
    const [asking, declined] = lines();
    const expected = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson({ requestedSchema: asked.requestedSchema, message: asked.message })));
    expect(asking?.card).toBe([...new Uint8Array(expected)].map((b) => b.toString(16).padStart(2, "0")).join(""));
    expect(declined).toMatchObject({ outcome: "declined", card: asking?.card });
    // Key order does not change it; one character of the message does.
    const schema = asked.requestedSchema as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(schema).reverse());
    expect(await cardDigest(asked.message as string, reordered)).toBe(asking?.card);
    expect(await cardDigest(`${asked.message as string} `, schema)).not.toBe(asking?.card);
  });

  it.each([
    ["adds a recipient", { to: [...ARGS.to, "mallory@example.com"] }, "edit_widened", /"to" may only lose entries/],
    ["sets a field the card did not offer", { note: "smuggled" }, "edit_not_offered", /"note", which the card did not offer/],
    ["breaks the tool's schema", { subject: "x".repeat(31) }, "edit_invalid", /fails the tool's own input schema at "subject"/],
    ["leaves no recipient, which the schema refuses", { to: [] }, "edit_invalid", /at "to"/],
    ["breaks a rule of the tool's own", { subject: "a forbidden word" }, "edit_invalid", /breaks the tool's own rules: the subject holds a forbidden word\. Nothing was written\.$/],
  ])("nothing runs when the answer %s, and the tool says why", async (_label, content, reason, why) => {
    const { text, isError, writes } = await run(ARGS, accept(content));
    expect(isError).toBe(true);
    expect(text).toMatch(/^Not done: the person's answer was refused before anything ran: /);
    expect(text).toMatch(why);
    expect(text).toMatch(/Nothing was written\.$/);
    expect(writes).toEqual([]);
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["refused", reason],
    ]);
  });

  it("an edit whose prompt could not be shown whole is refused like a model's call", async () => {
    const longLabel: Guard<Args, Target> = { ...guard, prompt: (t) => ({ heading: "h", consequence: "c", values: [{ label: "Subject", value: t.subject.replace(/x/g, "\u200b".repeat(200)) }] }) };
    expect(() => buildPrompt("kit-test", longLabel.prompt({ ...ARGS, subject: "xxxxxx", seen: 1 }))).toThrow(/never shown cut/);
    const { text, writes } = await run(ARGS, accept({ subject: "xxxxxx" }), longLabel);
    expect(text).toMatch(/breaks the tool's own rules: the Subject value is \d+ characters long/);
    expect(writes).toEqual([]);
  });

  it("nothing runs when what the card showed beside the form changed before the answer", async () => {
    const { text, writes } = await run(ARGS, () => {
      upstream.version = 2;
      return accept({ subject: "Q3 report" });
    });
    expect(text).toMatch(/the target changed after the card was shown/);
    expect(writes).toEqual([]);
    expect(lines().map((l) => [l.outcome, l.reason])).toEqual([
      ["asked", null],
      ["refused", "target_changed"],
    ]);
  });

  it("the gate binds the edited call: a write bound to the proposed one is refused, and nothing goes out", async () => {
    const stubborn: Guard<Args, Target> = {
      ...guard,
      // A tool that (wrongly) writes what the model proposed, whatever the person changed.
      act: async (t, write) => {
        const response = await write(`${recorder.base}/send`, { method: "POST", body: "{}" }, { binds: fp({ ...ARGS, seen: t.seen }), needsApproval: true });
        await response.body?.cancel();
        return { content: [{ type: "text", text: "sent" }] };
      },
    };
    const { text, writes } = await run(ARGS, accept({ subject: "Q3 report" }), stubborn);
    expect(text).toMatch(/^Not done: the approval covers a different target; nothing was written\./);
    expect(writes).toEqual([]);
    expect(lines().map((l) => [l.outcome, l.reason])).toContainEqual(["refused", "target_mismatch"]);
  });

  it("a tool that declares nothing editable asks the plain confirm box and ignores any content", async () => {
    const plain: Guard<Args, Target> = { ...guard, editable: undefined };
    const { asked, writes, text } = await run(ARGS, accept({ subject: "ignored", to: ["mallory@example.com"] }), plain);
    expect(asked.requestedSchema).toEqual({ type: "object", properties: { confirm: { type: "boolean", title: "Approve", description: "Tick to let the call go ahead." } }, required: ["confirm"] });
    expect(text).toBe("sent");
    expect(writes).toEqual([{ to: ARGS.to, subject: ARGS.subject, note: ARGS.note }]);
  });
});

describe("the property", () => {
  const emails = ["ada@example.com", "bob@example.com", "cy@example.com", "dee@example.com", "eve@example.com"];
  const text = fc.oneof(fc.string({ maxLength: 34 }), fc.constantFrom("", "Q3 report", "a forbidden word", "tab\there", "zero\u200bwidth", "x".repeat(30), "x".repeat(31)));
  // A random answer: each field left out, answered as offered, narrowed, widened, changed, retyped; sometimes a field the card did not offer.
  const answerFor = (args: Args) =>
    fc
      .record({
        to: fc.option(fc.oneof({ arbitrary: fc.subarray(args.to), weight: 4 }, fc.shuffledSubarray([...args.to, ...emails]), fc.constant(args.to), fc.constant("not a list")), { nil: undefined }),
        subject: fc.option(fc.oneof({ arbitrary: text, weight: 4 }, fc.constant(args.subject), fc.integer()), { nil: undefined }),
        note: fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, fc.string({ maxLength: 5 })),
      })
      .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as Record<string, unknown>);
  const scenario = fc
    .record({ to: fc.subarray(emails, { minLength: 1 }), subject: fc.string({ maxLength: 30 }).filter((s) => !s.includes("forbidden")), note: fc.string({ maxLength: 10 }) })
    .chain((args) => fc.tuple(fc.constant(args as Args), answerFor(args as Args)));

  it("for random edits, what runs equals what the card showed after the edit, or nothing runs", async () => {
    const outcomes = { ran: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, async ([args, content]) => {
        recorder.requests.length = 0;
        log.mockClear();
        const { writes, asked, isError } = await run(args, accept(content));
        // The card after the edit: each field's default as the service received it, with the answer in its place.
        const shown = (asked.requestedSchema as { properties: Record<string, { default?: unknown }> }).properties;
        const after = { to: content.to ?? shown.to?.default, subject: content.subject ?? shown.subject?.default, note: args.note };
        if (writes.length === 0) {
          expect(isError).toBe(true);
          outcomes.refused++;
          return;
        }
        outcomes.ran++;
        expect(writes).toEqual([after]);
        // And what ran passed every rule: the oracle, written apart from the kit.
        expect(Array.isArray(after.to) && after.to.length > 0 && isNarrowing(args.to, after.to as string[])).toBe(true);
        expect(typeof after.subject === "string" && [...(after.subject as string)].length <= 30 && !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b]/.test(after.subject as string)).toBe(true);
        expect(Object.keys(content).every((k) => k === "to" || k === "subject")).toBe(true);
      }),
      { numRuns: 120 },
    );
    // Both sides of the property were exercised, not one of them by accident of the generators.
    expect(outcomes.ran).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
  });
});
