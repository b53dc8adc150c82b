// The Gmail answers a search, a message view and a thread view read (google.answers.ts) are checked by hand; zod's
// schemas (google.mailbox.ts) are the rule. Held to each schema's verdict and value, byte for byte once serialized,
// on JSON values built from every key with right, wrong, edge and absent values, unknown keys added, keys in any
// order and parts nested; the one documented difference (parts below MAX_PART_DEPTH left out) at its edge; and a
// refused shape, through the bundle's own read, is an error that names no part of Gmail's answer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { listAnswer, MAX_PART_DEPTH, MAX_PARTS, messageAnswer, threadAnswer } from "../../../bundles/google/google.answers";
import { GmailClient } from "../../../bundles/google/google.client";
import { header, SUMMARY_HEADERS, summariseMessage } from "../../../bundles/google/google.format";
import { ListSchema, Mailbox, MessageSchema, ThreadSchema } from "../../../bundles/google/google.mailbox";
import { runInScope } from "../../../bundles/kit/scope";
import { agree, asJson, objectOf, takenOf } from "../kit/helpers/json-answers";

// Values no key takes, and values at the edges of the ones they do.
const wrong = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 4 }), fc.constant([]), fc.constant({}), fc.constant(["x"]), fc.constant([1]));
// Right values weigh most: an answer is taken only when every key of every part is, and both verdicts must come often.
const id = fc.oneof(
  { weight: 30, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/) },
  { weight: 1, arbitrary: fc.constantFrom("a".repeat(256), "a".repeat(257), "", "a/b", "a b", "é", "..", "a\n") },
  { weight: 1, arbitrary: wrong },
);
const text = fc.oneof({ weight: 30, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: wrong });
const number = fc.oneof({ weight: 30, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e308, -1)) }, { weight: 1, arbitrary: wrong });
const extraKey = fc.constantFrom("extra", "__proto__", "constructor", "toString", "raw", "historyId");
const fieldsOf = (fields: Record<string, fc.Arbitrary<unknown>>) => objectOf(fields, extraKey, 4);

const headerValue = fc.oneof({ weight: 30, arbitrary: fieldsOf({ name: text, value: text }) }, { weight: 1, arbitrary: wrong });
const headers = fc.oneof({ weight: 30, arbitrary: fc.array(headerValue, { maxLength: 4 }) }, { weight: 1, arbitrary: wrong });
const body = fc.oneof({ weight: 30, arbitrary: fieldsOf({ size: number, data: text, attachmentId: text }) }, { weight: 1, arbitrary: wrong });
const { part } = fc.letrec((tie) => ({
  part: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    {
      weight: 30,
      arbitrary: fieldsOf({
        partId: text,
        mimeType: text,
        filename: text,
        headers,
        body,
        parts: fc.oneof({ weight: 30, arbitrary: fc.array(tie("part"), { maxLength: 3 }) }, { weight: 1, arbitrary: wrong }),
      }),
    },
    { weight: 1, arbitrary: wrong },
  ),
}));
const message = fieldsOf({
  id,
  threadId: id,
  labelIds: fc.oneof({ weight: 30, arbitrary: fc.array(text, { maxLength: 4 }) }, { weight: 1, arbitrary: wrong }),
  snippet: text,
  internalDate: text,
  sizeEstimate: number,
  payload: part,
});
const anyMessage = fc.oneof({ weight: 6, arbitrary: message }, { weight: 1, arbitrary: wrong });
const list = fc.oneof(
  {
    weight: 6,
    arbitrary: fieldsOf({
      messages: fc.oneof(
        { weight: 10, arbitrary: fc.array(fc.oneof({ weight: 10, arbitrary: fieldsOf({ id, threadId: id }) }, { weight: 1, arbitrary: wrong }), { maxLength: 4 }) },
        { weight: 1, arbitrary: wrong },
      ),
      nextPageToken: text,
      resultSizeEstimate: number,
    }),
  },
  { weight: 1, arbitrary: wrong },
);
const thread = fc.oneof(
  { weight: 6, arbitrary: fieldsOf({ id, messages: fc.oneof({ weight: 10, arbitrary: fc.array(anyMessage, { maxLength: 3 }) }, { weight: 1, arbitrary: wrong }) }) },
  { weight: 1, arbitrary: wrong },
);

/** A valid message whose payload nests `depth` parts (the payload the first). */
function nested(depth: number): Record<string, unknown> {
  let inner: Record<string, unknown> = { partId: String(depth), mimeType: "text/plain", body: { size: 1, data: "eA" } };
  for (let d = depth - 1; d >= 1; d--) inner = { partId: String(d), mimeType: "multipart/mixed", parts: [inner] };
  return { id: "m1", threadId: "t1", payload: inner };
}

describe("Gmail's answers checked by hand, held to zod's schemas", () => {
  it("a message: the same verdict and value as MessageSchema on 3,000 built answers", () => {
    const taken = takenOf(anyMessage, MessageSchema, messageAnswer, 3000);
    // Both verdicts were reached often: a generator that only ever built refusals would test little.
    expect(taken).toBeGreaterThan(300);
    expect(taken).toBeLessThan(2700);
  });

  it("a list of message ids: the same verdict and value as ListSchema on 2,000 built answers", () => {
    const taken = takenOf(list, ListSchema, listAnswer, 2000);
    expect(taken).toBeGreaterThan(200);
    expect(taken).toBeLessThan(1800);
  });

  it("a thread: the same verdict and value as ThreadSchema on 1,000 built answers", () => {
    const taken = takenOf(thread, ThreadSchema, threadAnswer, 1000);
    expect(taken).toBeGreaterThan(50);
  });

  it("a message as Gmail's metadata and full formats give it: taken whole, unknown keys (historyId, raw) dropped as zod drops them", () => {
    const full = asJson({
      id: "18c2f0a1b2c3d4e5",
      threadId: "18c2f0a1b2c3d4e5",
      labelIds: ["INBOX", "UNREAD"],
      snippet: "Lunch on Friday?",
      historyId: "12345",
      internalDate: "1733400000000",
      sizeEstimate: 2048,
      raw: "should not survive",
      payload: {
        partId: "",
        mimeType: "multipart/alternative",
        filename: "",
        headers: [
          { name: "From", value: "Ann <ann@example.com>" },
          { name: "Subject", value: "Lunch" },
        ],
        body: { size: 0 },
        parts: [
          { partId: "0", mimeType: "text/plain", filename: "", headers: [{ name: "Content-Type", value: "text/plain" }], body: { size: 5, data: "aGVsbG8" } },
          { partId: "1", mimeType: "application/pdf", filename: "a.pdf", headers: [], body: { size: 9000, attachmentId: "ANGjdJ8" }, extra: true },
        ],
      },
    });
    agree(MessageSchema, messageAnswer, full);
    expect(messageAnswer(full)).not.toHaveProperty("raw");
    expect(messageAnswer(full)).not.toHaveProperty("historyId");
    expect(messageAnswer(full)?.payload?.parts?.[1]).not.toHaveProperty("extra");
  });

  it(`parts: ${MAX_PARTS} in one list are taken, ${MAX_PARTS + 1} refused, as PartSchema's cap says`, () => {
    const leaf = { partId: "x", mimeType: "text/plain" };
    for (const n of [MAX_PARTS - 1, MAX_PARTS, MAX_PARTS + 1]) {
      const value = asJson({ id: "m1", threadId: "t1", payload: { mimeType: "multipart/mixed", parts: Array.from({ length: n }, () => leaf) } });
      agree(MessageSchema, messageAnswer, value);
      expect(messageAnswer(value) !== undefined, `${n} parts`).toBe(n <= MAX_PARTS);
    }
  });

  it(`parts nested ${MAX_PART_DEPTH} deep are taken as zod takes them; below that they are left out, unread, where zod would go on recursing`, () => {
    agree(MessageSchema, messageAnswer, nested(MAX_PART_DEPTH));
    expect(messageAnswer(nested(MAX_PART_DEPTH))).toBeDefined();
    // The message is kept, its part at the deepest level read without its parts: a stranger's nesting cannot make a thread unreadable.
    const deepest = (message: unknown) => {
      let part = (message as { payload: { parts?: unknown[] } }).payload;
      for (let d = 1; d < MAX_PART_DEPTH; d++) part = part.parts?.[0] as { parts?: unknown[] };
      return part as Record<string, unknown>;
    };
    const zodDeeper = MessageSchema.parse(nested(MAX_PART_DEPTH + 1));
    delete deepest(zodDeeper).parts;
    expect(messageAnswer(nested(MAX_PART_DEPTH + 1))).toEqual(zodDeeper);
    expect(deepest(messageAnswer(nested(MAX_PART_DEPTH + 1)))).toEqual({ partId: String(MAX_PART_DEPTH), mimeType: "multipart/mixed" });
    // Deep enough to overflow a recursive check's stack: read to the same depth, nothing thrown.
    expect(deepest(messageAnswer(nested(20_000)))).toEqual({ partId: String(MAX_PART_DEPTH), mimeType: "multipart/mixed" });
  });

  it("a summary's headers are each the first of its name, matched without case, as header() finds them, in the summary's order", () => {
    const names = fc.constantFrom(...SUMMARY_HEADERS, "FROM", "subject", "x-mailer", "Received", "İ", "message-id", "REPLY-to");
    fc.assert(
      fc.property(fc.array(fc.record({ name: names, value: fc.string({ maxLength: 6 }) }), { maxLength: 12 }), (headers) => {
        const payload = { headers };
        const expected: Record<string, string> = {};
        for (const name of SUMMARY_HEADERS) {
          const value = header(payload, name);
          if (value !== undefined) expected[name.toLowerCase()] = value;
        }
        const summary = summariseMessage({ id: "m1", threadId: "t1", payload }, false);
        const { id, threadId, labelIds, snippet, attachments, ...got } = summary;
        expect(JSON.stringify(got)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 1000 },
    );
  });

  it("a read whose answer has an unexpected shape fails with a sentence that names no part of the answer", async () => {
    const answers: Record<string, unknown> = {
      "/token": { access_token: "tok-1", expires_in: 3600 },
      "/gmail/v1/users/me/messages/m1": { id: "m1", threadId: 7, snippet: "SECRET-SNIPPET" },
    };
    const doFetch = async (input: RequestInfo | URL) => {
      const path = new URL(String(input)).pathname;
      return Response.json(answers[path] ?? {});
    };
    const client = new GmailClient("gmail-ro", { clientId: "c", clientSecret: "s", refreshToken: "r" }, { apiBase: "https://gmail.example", tokenUrl: "https://gmail.example/token" }, doFetch);
    const mailbox = new Mailbox(client);
    const scope = { mount: "gmail-ro", signal: new AbortController().signal, waitUntil: () => {}, env: {} };
    const failure = await runInScope(scope, () => mailbox.getMessage("m1", "metadata")).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toBe("Gmail gave an answer of an unexpected shape");
    expect(failure?.message).not.toContain("SECRET");
  });
});
