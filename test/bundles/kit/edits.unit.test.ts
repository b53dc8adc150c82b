// Covers bundles/kit/edits.ts with guard.ts, confirm.ts and audit.ts: a guard's editable fields ride on the question as a form, an accept's content is read back into the call that runs (narrow lists only lose entries, free text stays within the tool's schema, a free list is text one entry per line, a pick is one of the choices listed, a path reaches into a list of objects), exactly the edited call runs once and the proposed one never, the answer and the audit lines name the change, every decision line carries the card's digest, and fast-check properties: for random edits (of every field kind), what runs is what the card showed after the edit, or nothing runs.
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { z } from "zod";
import { parseCreate } from "../../../approvals/prompt";
import { type AuditLine, canonicalJson, cardDigest } from "../../../bundles/kit/audit";
import { applyEdits, editForm, editsLine, isNarrowing, MAX_FORM_BYTES, MAX_LIST_OPTIONS, MAX_OPTION_CHARS, planEdits, readEdits } from "../../../bundles/kit/edits";
import { type FingerprintInput, fingerprint } from "../../../bundles/kit/fingerprint";
import { always, editPlanFor, type Guard, never, runGuarded } from "../../../bundles/kit/guard";
import { buildPrompt } from "../../../bundles/kit/prompt";
import { callStateFor, runInScope } from "../../../bundles/kit/scope";
import { CHANNEL_META_KEY } from "../../../contract/channel";
import { MAX_FORM_PROPERTIES } from "../../../contract/elicitation";
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
async function run<X = Args, Y = Target>(
  args: X,
  answer: Plan | ((body: Record<string, unknown>) => Plan),
  g: Guard<X, Y> = guard as unknown as Guard<X, Y>,
  schema: Parameters<typeof planEdits>[1] = Schema,
) {
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
  const result = await runInScope(scope, () => runGuarded(g, args, editPlanFor("demo_send", { inputSchema: schema }, g)));
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
    expect(() => planEdits("t", z.object({ n: z.number() }), { n: "free" })).toThrow(/not a string or a list of strings/);
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

  it("an edited call acts only on a target every read since the card agreed on: the world changing at any read from the answer to the act writes nothing", async () => {
    // The world changes for good at the `at`-th read of the target (the card's is the first).
    let reads = 0;
    let at = 0;
    const counted: Guard<Args, Target> = {
      ...guard,
      resolve: (args) => ({ ...args, seen: ++reads >= at ? 2 : 1 }),
      act: async (t, write) => {
        const response = await write(`${recorder.base}/send`, { method: "POST", body: JSON.stringify({ subject: t.subject, seen: t.seen }) }, { binds: fp(t), needsApproval: true });
        await response.body?.cancel();
        return { content: [{ type: "text", text: "sent" }] };
      },
    };
    const wrote: number[] = [];
    for (at = 2; at <= 12; at++) {
      reads = 0;
      recorder.requests.length = 0;
      const { text, writes } = await run(ARGS, accept({ subject: "Q3 report" }), counted);
      // What was written was read from the world the card showed, or nothing was.
      for (const w of writes) expect(w, `the change at read ${at}`).toEqual({ subject: "Q3 report", seen: 1 });
      if (writes.length === 0) expect(text, `the change at read ${at}`).toMatch(/the target changed after (the card was shown|the person's answer was read)/);
      expect(writes.length).toBeLessThanOrEqual(1);
      if (writes.length === 1) wrote.push(at);
    }
    // A change after the last read before the act is the act's own concern: from there on the write goes out, once.
    const first = wrote[0] ?? 13;
    expect(first).toBeLessThan(13);
    expect(wrote).toEqual(Array.from({ length: 13 - first }, (_, i) => first + i));
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

describe("paths, free lists and picks", () => {
  const Batch = z.object({
    items: z
      .array(z.object({ title: z.string().min(1).max(20), tags: z.array(z.string().min(1).max(8)).max(3).optional(), secret: z.string().optional() }))
      .min(1)
      .max(3),
    dest: z.string().max(30),
  });
  type BatchArgs = z.infer<typeof Batch>;
  let choices: readonly string[] | undefined = ["Archive", "Trash", "Work"];
  const batchPlan = planEdits("t", Batch, {
    "items.*.title": { mode: "free", offers: (v) => v !== "hidden" },
    "items.*.tags": "free",
    dest: { mode: "pick", choices: () => choices },
  });
  const ARGS2: BatchArgs = { items: [{ title: "One", tags: ["a", "b"], secret: "s3" }, { title: "Two" }], dest: "Archive" };
  beforeEach(() => {
    choices = ["Archive", "Trash", "Work"];
  });

  it("a declaration reaches into a list of objects, and a wrong path or kind fails when the plan is made", () => {
    expect(batchPlan?.fields.map((f) => [f.name, f.kind, f.label])).toEqual([
      ["items.*.title", "text", "Title"],
      ["items.*.tags", "lines", "Tags"],
      ["dest", "choice", "Dest"],
    ]);
    expect(() => planEdits("t", Batch, { "items.*": "free" })).toThrow(/not at a list position/);
    expect(() => planEdits("t", Batch, { "items.*.missing": "free" })).toThrow(/no such argument/);
    expect(() => planEdits("t", Batch, { "items.title": "free" })).toThrow(/no such argument/);
    expect(() => planEdits("t", Batch, { dest: "pick" })).toThrow(/lists its choices/);
    expect(() => planEdits("t", Batch, { dest: { mode: "free", choices: () => [] } })).toThrow(/lists its choices/);
    expect(() => planEdits("t", Batch, { "items.*.tags": { mode: "pick", choices: () => [] } })).toThrow(/not a string/);
    expect(() => planEdits("t", Batch, { "items.**.title": "free" })).toThrow(/not a form property name/);
  });

  it("offers one field per list position, a free list as lines, and a pick as the protocol's single-select enum", () => {
    const form = editForm(batchPlan, ARGS2);
    expect(form?.schema.properties).toEqual({
      "items.0.title": expect.objectContaining({ type: "string", title: "Title (1 of 2)", maxLength: 20, default: "One" }),
      "items.1.title": expect.objectContaining({ type: "string", title: "Title (2 of 2)", default: "Two" }),
      "items.0.tags": expect.objectContaining({ type: "string", title: "Tags (1 of 2)", description: expect.stringMatching(/^One entry per line\./), default: "a\nb" }),
      dest: expect.objectContaining({ type: "string", title: "Dest", enum: ["Archive", "Trash", "Work"], default: "Archive" }),
      confirm: expect.objectContaining({ type: "boolean" }),
    });
    // One item alone is not numbered.
    expect(editForm(batchPlan, { items: [{ title: "Solo" }], dest: "Work" })?.schema.properties).toMatchObject({ "items.0.title": { title: "Title" } });
  });

  it.each([
    ["a value its `offers` refuses", { ...ARGS2, items: [{ title: "hidden" }] }, "items.0.title"],
    ["a pick whose value is not among the choices", { ...ARGS2, dest: "Elsewhere" }, "dest"],
    ["a free list holding an entry with a line break", { ...ARGS2, items: [{ title: "One", tags: ["a\nb"] }] }, "items.0.tags"],
    ["a free list holding an entry that starts with a space", { ...ARGS2, items: [{ title: "One", tags: [" a"] }] }, "items.0.tags"],
  ])("leaves off %s", (_label, args, name) => {
    expect(editForm(batchPlan, args)?.offered.map((o) => o.field.name)).not.toContain(name);
  });

  it("offers a pick of exactly MAX_LIST_OPTIONS choices of MAX_OPTION_CHARS, and none with one more of either, or with no choices listed", () => {
    // The choices must also fit the form's byte cap with the rest of the card: 64 short names do, and a few long ones.
    const at = Array.from({ length: MAX_LIST_OPTIONS }, (_, i) => `Folder ${i}`);
    const named = (list: readonly string[] | undefined, dest: string) => {
      choices = list;
      return editForm(batchPlan, { items: [{ title: "t" }], dest })?.offered.some((o) => o.field.name === "dest");
    };
    expect(named(at, at[0] as string)).toBe(true);
    expect(named([...at, "one more"], at[0] as string)).toBe(false);
    expect(named(["y".repeat(MAX_OPTION_CHARS), "a"], "a")).toBe(true);
    expect(named([`${"y".repeat(MAX_OPTION_CHARS)}z`, "a"], "a")).toBe(false);
    expect(named(undefined, "a")).toBe(false);
  });

  it("offers at most the fields the service takes, the confirm box one of them, and the service takes that form", () => {
    const Many = z.object({ items: z.array(z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string() })).max(10) });
    const many = planEdits("t", Many, { "items.*.a": "free", "items.*.b": "free", "items.*.c": "free", "items.*.d": "free" });
    const item = { a: "1", b: "2", c: "3", d: "4" };
    const at = (n: number) => editForm(many, { items: Array.from({ length: n }, () => item) });
    // 31 fields and the box exactly fill the form; one more field is left off, and the last declared go first.
    expect(Object.keys(at(10)?.schema.properties as object)).toHaveLength(MAX_FORM_PROPERTIES);
    expect(
      at(10)
        ?.offered.map((o) => o.field.name)
        .slice(-2),
    ).toEqual(["items.9.c", "items.0.d"]);
    expect(Object.keys(at(7)?.schema.properties as object)).toHaveLength(29);
    const create = (schema: unknown) =>
      parseCreate(
        { mode: "form", message: "m", requestedSchema: schema, _meta: { "com.pulsemcp/request-id": "r1", "com.pulsemcp/expires-at": new Date(Date.now() + 60_000).toISOString() } },
        Date.now(),
      );
    expect(create(at(10)?.schema).ok).toBe(true);
    const over = { ...(at(10)?.schema as Record<string, unknown>) };
    over.properties = { ...(over.properties as object), "one.more": { type: "string", default: "x" } };
    expect(create(over).ok).toBe(false);
  });

  it("reads a pick, a free list and a nested title back into the call, and leaves the proposed arguments as they were", () => {
    const form = editForm(batchPlan, ARGS2);
    const read = readEdits(form, { confirm: true, dest: "Work", "items.0.tags": "a\n\nc\n", "items.1.title": "Zwei" });
    if (!read.ok) throw new Error(read.why);
    const edited = applyEdits(ARGS2, read.changes);
    expect(edited).toEqual({ items: [{ title: "One", tags: ["a", "c"], secret: "s3" }, { title: "Zwei" }], dest: "Work" });
    expect(ARGS2).toEqual({ items: [{ title: "One", tags: ["a", "b"], secret: "s3" }, { title: "Two" }], dest: "Archive" });
    expect(editsLine(read.changes)).toBe(
      'The person edited this call before approving it, and what ran is their version, not the one proposed: dest is now "Work"; items.0.tags is now ["a", "c"]; items.1.title is now "Zwei".',
    );
    // The same entries with a trailing line break are no change.
    const same = readEdits(form, { confirm: true, "items.0.tags": "a\nb\n" });
    expect(same.ok && same.changes).toEqual([]);
  });

  it.each([
    ["a pick not among the choices", { dest: "Elsewhere" }, "edit_not_offered"],
    ["a pick one character off a choice", { dest: "Archive " }, "edit_not_offered"],
    ["a pick that is not text", { dest: ["Work"] }, "edit_invalid"],
    ["a free list answered as a list", { "items.0.tags": ["a"] }, "edit_invalid"],
    ["a free list entry ending with a space", { "items.0.tags": "a \nb" }, "edit_invalid"],
    ["a free list entry with a zero-width space", { "items.0.tags": "a\u200b" }, "edit_invalid"],
    ["a field at a position the arguments do not have", { "items.2.title": "Three" }, "edit_not_offered"],
    ["a field never offered inside an item", { "items.0.secret": "mine" }, "edit_not_offered"],
  ])("refuses %s", (_label, content, code) => {
    const read = readEdits(editForm(batchPlan, ARGS2), { confirm: true, ...content });
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.code).toBe(code);
  });

  it("names a changed value its offers check refuses without showing it", () => {
    const read = readEdits(editForm(batchPlan, ARGS2), { confirm: true, "items.0.title": "hidden" });
    if (!read.ok) throw new Error(read.why);
    expect(editsLine(read.changes)).toMatch(/items\.0\.title was changed \(its value is not shown\)\.$/);
  });

  type Moved = BatchArgs & { seen: number };
  const moveFp = (t: Moved): FingerprintInput => ({ operation: "demo_move", target: { dest: t.dest, items: { tuple: t.items.map((i) => JSON.stringify(i)) } } });
  const mover: Guard<BatchArgs, Moved> = {
    rule: always,
    editable: { "items.*.title": "free", "items.*.tags": "free", dest: { mode: "pick", choices: () => choices } },
    resolve: (args) => ({ ...args, seen: 1 }),
    fingerprint: moveFp,
    prompt: (t) => ({ heading: "This will file items.", consequence: "They move.", values: [{ label: "Into", value: t.dest }, ...t.items.map((i) => ({ label: "Item", value: i.title }))] }),
    act: async (t, write) => {
      const response = await write(`${recorder.base}/move`, { method: "POST", body: JSON.stringify({ items: t.items, dest: t.dest }) }, { binds: moveFp(t), needsApproval: true });
      await response.body?.cancel();
      return { content: [{ type: "text", text: "moved" }] };
    },
  };

  it("for random picks, free lists and nested edits, what runs equals what the card showed after the edit, or nothing runs", async () => {
    const outcomes = { ran: 0, refused: 0 };
    const pool = ["Archive", "Trash", "Work", "Elsewhere", "archive", "Work "];
    const line = fc.oneof(fc.constantFrom("a", "b", "long-tag", "x y", " lead", "trail ", "zw\u200b", ""), fc.string({ maxLength: 9 }));
    const scenario = fc
      .record({
        items: fc.array(fc.record({ title: fc.string({ minLength: 1, maxLength: 20 }), tags: fc.option(fc.subarray(["a", "b", "c"]), { nil: undefined }) }), { minLength: 1, maxLength: 3 }),
        dest: fc.constantFrom("Archive", "Trash", "Work"),
      })
      .chain((args) =>
        fc.tuple(
          fc.constant(args as BatchArgs),
          fc
            .record({
              dest: fc.option(fc.oneof({ arbitrary: fc.constantFrom("Archive", "Trash", "Work"), weight: 6 }, { arbitrary: fc.constantFrom(...pool), weight: 2 }, fc.constant(1)), { nil: undefined }),
              "items.0.title": fc.option(fc.oneof({ arbitrary: fc.string({ minLength: 1, maxLength: 20 }), weight: 4 }, fc.string({ maxLength: 22 }), fc.constant("")), { nil: undefined }),
              "items.0.tags": fc.option(
                fc.oneof({ arbitrary: fc.subarray(["a", "b", "c"]), weight: 4 }, fc.array(line, { maxLength: 5 })).map((l) => l.join("\n")),
                { nil: undefined },
              ),
              "items.3.title": fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, fc.constant("smuggled")),
            })
            .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as Record<string, unknown>),
        ),
      );
    await fc.assert(
      fc.asyncProperty(scenario, async ([args, content]) => {
        recorder.requests.length = 0;
        log.mockClear();
        choices = ["Archive", "Trash", "Work"];
        const { writes, asked, isError } = await run<BatchArgs, Moved>(args, accept(content), mover, Batch);
        if (writes.length === 0) {
          expect(isError).toBe(true);
          outcomes.refused++;
          return;
        }
        outcomes.ran++;
        // The card after the edit, worked out apart from the kit: each offered default with the answer in its place.
        const shown = (asked.requestedSchema as { properties: Record<string, { default?: unknown; enum?: unknown[] }> }).properties;
        const tagsText = (content["items.0.tags"] ?? shown["items.0.tags"]?.default) as string | undefined;
        const first = args.items[0] as BatchArgs["items"][number];
        const expectedFirst = {
          ...first,
          title: (content["items.0.title"] ?? first.title) as string,
          ...(tagsText === undefined ? {} : { tags: tagsText.split("\n").filter((l) => l.trim() !== "") }),
        };
        const after = { items: [expectedFirst, ...args.items.slice(1)], dest: content.dest ?? args.dest };
        expect(writes).toEqual([JSON.parse(JSON.stringify(after))]);
        // And what ran passed every rule: a listed choice, a title the schema takes, at most three clean tags.
        expect(shown.dest?.enum).toContain(after.dest);
        expect(expectedFirst.title.length >= 1 && [...expectedFirst.title].length <= 20).toBe(true);
        expect((expectedFirst.tags ?? []).every((t) => t === t.trim() && t.length >= 1 && t.length <= 8 && !t.includes("\u200b"))).toBe(true);
        expect(Object.keys(content)).not.toContain("items.3.title");
      }),
      { numRuns: 120 },
    );
    expect(outcomes.ran).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
  });
});
