// Covers bundles/kit/approval-client.ts, the fallback-elicitation protocol client, against a hostile local approval service.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApprovalRequest, decidedAtFrom, describeApprovalError, MAX_ANSWER_BYTES, pollPrompt, requestApproval } from "../../../bundles/kit/approval-client";
import { HostileServer, startSink } from "./helpers/hostile-server";

const EDGE = { "CF-Access-Client-Id": "edge-id.access", "CF-Access-Client-Secret": "edge-secret-0123456789" };
const SECRET_BODY = "SECRET-7f3a internal: db password hunter2, token=abc.def.ghi";

let hostile: HostileServer;
let sink: Awaited<ReturnType<typeof startSink>>;
let n = 0;
const name = () => `r${++n}`;

beforeAll(async () => {
  hostile = await new HostileServer().start();
  sink = await startSink();
});
afterAll(async () => {
  await hostile.stop();
  await sink.stop();
});

function ask(url: string, over: Partial<ApprovalRequest> = {}) {
  return requestApproval({
    url,
    headers: EDGE,
    message: "demo: This will record a note.",
    toolName: "demo_write",
    deadline: Date.now() + 5_000,
    signal: new AbortController().signal,
    pollIntervalMs: 50,
    ...over,
  });
}

const errorText = (r: Awaited<ReturnType<typeof ask>>) => (r.ok ? "" : describeApprovalError(r.error));

describe("what acts", () => {
  it("acts only on accept with the confirm box ticked, and returns the answer's content", async () => {
    const url = hostile.route(name(), { poll: (_r, i) => (i < 3 ? { body: { action: "pending" } } : { body: { action: "accept", content: { confirm: true } } }) });
    expect(await ask(url)).toEqual({ ok: true, answer: "accept", content: { confirm: true }, approver: null });
  });

  it.each([
    ["an unticked box", { action: "accept", content: { confirm: false } }, "decline"],
    ["an accept without content", { action: "accept", content: null }, "decline"],
    ['a confirm of "true" as a string', { action: "accept", content: { confirm: "true" } }, "decline"],
    ["a decline", { action: "decline", content: null }, "decline"],
    ["a cancel", { action: "cancel" }, "cancel"],
    ["an expired", { action: "expired" }, "expired"],
    ["an unknown action", { action: "approve", content: { confirm: true } }, "decline"],
    ["an answer without an action", { content: { confirm: true } }, "decline"],
  ])("does not act on %s", async (_label, answer, expected) => {
    const url = hostile.route(name(), { poll: () => ({ body: answer }) });
    const result = await ask(url);
    expect(result).toMatchObject({ ok: true, answer: expected });
  });

  it("does not act on malformed JSON, and the error names no byte of it", async () => {
    const url = hostile.route(name(), { poll: () => ({ body: `{"action":"accept","content":{"confirm":true} ${SECRET_BODY}` }) });
    const result = await ask(url);
    expect(result.ok).toBe(false);
    expect(errorText(result)).toBe("the approval service gave an unusable answer: the answer is not JSON");
  });

  it("does not act on a JSON answer that is not an object", async () => {
    const url = hostile.route(name(), { poll: () => ({ body: '["accept"]' }) });
    expect((await ask(url)).ok).toBe(false);
  });

  it("refuses an oversized answer unread, with or without a content-length", async () => {
    const big = JSON.stringify({ action: "accept", content: { confirm: true, pad: "x".repeat(MAX_ANSWER_BYTES) } });
    const withLength = hostile.route(name(), { poll: () => ({ body: big }) });
    expect(errorText(await ask(withLength))).toContain("too large");
    const chunked = hostile.route(name(), { poll: () => ({ body: big, headers: { "transfer-encoding": "chunked" } }) });
    expect(errorText(await ask(chunked))).toContain("too large");
  });
});

describe("redirects and errors", () => {
  it.each([301, 302, 303, 307, 308])("treats a %i on the create as an error and never follows it", async (status) => {
    const url = hostile.route(name(), { create: () => ({ status, headers: { location: `${sink.base}/steal` } }) });
    const before = sink.requests.length;
    const result = await ask(url);
    expect(errorText(result)).toBe(`the approval service answered with a redirect (HTTP ${status}), which is never followed`);
    expect(sink.requests.length).toBe(before);
  });

  it("treats a redirect on a poll as an error and never follows it", async () => {
    const url = hostile.route(name(), { poll: () => ({ status: 307, headers: { location: `${sink.base}/steal` } }) });
    const before = sink.requests.length;
    expect(errorText(await ask(url))).toContain("HTTP 307");
    expect(sink.requests.length).toBe(before);
  });

  it("names the status of a 500 and never a byte of its secret-looking body", async () => {
    for (const step of ["create", "poll"] as const) {
      const plan = () => ({ status: 500, body: SECRET_BODY, headers: { "content-type": "text/plain" } });
      const url = hostile.route(name(), step === "create" ? { create: plan } : { poll: plan });
      const result = await ask(url);
      expect(result.ok).toBe(false);
      const text = errorText(result);
      expect(text).toBe("the approval service answered HTTP 500");
      for (const fragment of ["SECRET", "7f3a", "hunter2", "abc.def", "internal"]) expect(text).not.toContain(fragment);
      expect(JSON.stringify(result)).not.toContain("hunter2");
    }
  });

  it("names the status of a 401 from an edge and a 404 on a poll", async () => {
    const edge = hostile.route(name(), { create: () => ({ status: 401, body: "Access denied for edge-id" }) });
    expect(errorText(await ask(edge))).toBe("the approval service answered HTTP 401");
    const gone = hostile.route(name(), { poll: () => ({ status: 404, body: SECRET_BODY }) });
    expect(errorText(await ask(gone))).toBe("the approval service answered HTTP 404");
  });

  it("says the service could not be reached when nothing listens", async () => {
    const closed = await startSink();
    await closed.stop();
    expect(errorText(await ask(`${closed.base}/x/`))).toBe("the approval service could not be reached");
  });

  it("refuses a request id that would change the poll path, and polls nowhere", async () => {
    for (const requestId of ["../../steal", "..", "a/b", "a?b", "%2e%2e"]) {
      const route = name();
      const url = hostile.route(route, { create: () => ({ status: 201, body: { requestId } }) });
      const result = await ask(url);
      expect(errorText(result), requestId).toContain("request id");
      expect(hostile.requestsTo(route).filter((r) => r.method === "GET")).toEqual([]);
    }
  });
});

describe("the wire", () => {
  it("posts the form with a request id, an expiry and the tool name, then polls <url>/<requestId> without a doubled slash", async () => {
    const route = name();
    const url = hostile.route(route, { create: () => ({ status: 201, body: { requestId: "svc-42" } }), poll: () => ({ body: { action: "decline" } }) });
    const deadline = Date.now() + 4_000;
    await ask(url, { deadline });
    const [create, poll] = hostile.requestsTo(route);
    expect(create?.method).toBe("POST");
    expect(create?.path).toBe(`/${route}/`);
    expect(create?.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(create?.body ?? "{}");
    expect(body).toMatchObject({
      mode: "form",
      message: "demo: This will record a note.",
      requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
      _meta: { "com.pulsemcp/tool-name": "demo_write", "com.pulsemcp/expires-at": new Date(deadline).toISOString() },
    });
    expect(body._meta["com.pulsemcp/request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(poll?.method).toBe("GET");
    expect(poll?.path).toBe(`/${route}/svc-42`);
  });

  it("keeps its own request id when the create answer names none, and joins a URL without a trailing slash", async () => {
    const route = name();
    const url = hostile.route(route, { create: () => ({ status: 200, body: "" }), poll: () => ({ body: { action: "cancel" } }) });
    await ask(url.replace(/\/$/, ""));
    const [create, poll] = hostile.requestsTo(route);
    const ownId = JSON.parse(create?.body ?? "{}")._meta["com.pulsemcp/request-id"];
    expect(poll?.path).toBe(`/${route}/${ownId}`);
  });

  it("sends the channel's headers on the POST and on every poll, and never lets them replace its own", async () => {
    const route = name();
    const url = hostile.route(route, { poll: (_r, i) => ({ body: { action: i < 4 ? "pending" : "decline" } }) });
    await ask(url, { headers: { ...EDGE, "Content-Type": "text/plain", Accept: "text/html", Prefer: "respond-async" } });
    const seen = hostile.requestsTo(route);
    expect(seen.length).toBe(5);
    for (const r of seen) {
      expect(r.headers["cf-access-client-id"]).toBe(EDGE["CF-Access-Client-Id"]);
      expect(r.headers["cf-access-client-secret"]).toBe(EDGE["CF-Access-Client-Secret"]);
      expect(r.headers.accept).toBe("application/json");
    }
    expect(seen[0]?.headers["content-type"]).toBe("application/json");
    expect(seen[0]?.headers.prefer).toBeUndefined();
  });

  it("polls right after the POST, then once per interval, each poll asking to be held with Prefer: wait", async () => {
    const route = name();
    const url = hostile.route(route, { poll: (_r, i) => ({ body: { action: i < 4 ? "pending" : "decline" } }) });
    // An interval long enough that "right after" has room on a machine the rest of the suite keeps busy (half the
    // interval), and still fails a first poll that waited an interval.
    const interval = 600;
    await ask(url, { pollIntervalMs: interval });
    const [create, ...polls] = hostile.requestsTo(route);
    expect(polls.length).toBe(4);
    expect((polls[0]?.at ?? 0) - (create?.at ?? 0)).toBeLessThan(interval / 2);
    for (let i = 1; i < polls.length; i++) expect((polls[i]?.at ?? 0) - (polls[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(interval - 10);
    for (const poll of polls) expect(poll.headers.prefer).toMatch(/^wait=\d+$/);
  });
});

describe("the deadline", () => {
  it("counts a service that never decides as expired at the deadline, and sends nothing after it", async () => {
    const route = name();
    const url = hostile.route(route, {});
    const started = Date.now();
    const deadline = started + 400;
    expect(await ask(url, { deadline })).toMatchObject({ ok: true, answer: "expired" });
    expect(Date.now() - started).toBeLessThan(1_000);
    await new Promise((r) => setTimeout(r, 200));
    for (const r of hostile.requestsTo(route)) expect(r.at).toBeLessThan(deadline + 20);
  });

  it("aborts a slow create and a held poll at the deadline", async () => {
    for (const handlers of [{ create: () => ({ hang: true }) }, { poll: () => ({ hang: true }) }, { poll: () => ({ delayMs: 3_000, body: { action: "accept", content: { confirm: true } } }) }]) {
      const started = Date.now();
      expect(await ask(hostile.route(name(), handlers), { deadline: started + 300 })).toMatchObject({ ok: true, answer: "expired" });
      expect(Date.now() - started).toBeLessThan(1_000);
    }
  });

  it("counts an accept that is read after the deadline as expired", async () => {
    const url = hostile.route(name(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    const deadline = Date.now() + 300;
    // A fetch that ignores the abort and hands the accept over late.
    const lateFetch = async (input: string, init: RequestInit) => {
      const response = await fetch(input, { ...init, signal: undefined });
      if (init.method === "GET") await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()) + 50));
      return response;
    };
    expect(await ask(url, { deadline, fetch: lateFetch })).toMatchObject({ ok: true, answer: "expired" });
  });

  it("does not ask at all once the deadline has passed", async () => {
    const route = name();
    const url = hostile.route(route, {});
    expect(await ask(url, { deadline: Date.now() - 1 })).toMatchObject({ ok: true, answer: "expired" });
    expect(hostile.requestsTo(route)).toEqual([]);
  });
});

describe("a dropped call", () => {
  it("aborts the wait between polls and answers cancel", async () => {
    const route = name();
    const url = hostile.route(route, {});
    const drop = new AbortController();
    setTimeout(() => drop.abort(), 150);
    const started = Date.now();
    expect(await ask(url, { signal: drop.signal, pollIntervalMs: 5_000 })).toMatchObject({ ok: true, answer: "cancel" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("aborts an answer whose body stalls half-read, and answers cancel (or expired at the deadline)", async () => {
    for (const headers of [{ "content-length": "200" }, { "transfer-encoding": "chunked" }] as Record<string, string>[]) {
      const drop = new AbortController();
      setTimeout(() => drop.abort(), 150);
      const started = Date.now();
      const stalled = hostile.route(name(), { poll: () => ({ stallAfter: '{"action":"acc', headers }) });
      expect(await ask(stalled, { signal: drop.signal }), JSON.stringify(headers)).toMatchObject({ ok: true, answer: "cancel" });
      expect(Date.now() - started).toBeLessThan(3_000);
      const late = hostile.route(name(), { poll: () => ({ stallAfter: '{"action":"acc', headers }) });
      expect(await ask(late, { deadline: Date.now() + 300 }), JSON.stringify(headers)).toMatchObject({ ok: true, answer: "expired" });
    }
  });

  it("aborts a request in flight and answers cancel", async () => {
    const drop = new AbortController();
    setTimeout(() => drop.abort(), 150);
    expect(await ask(hostile.route(name(), { poll: () => ({ hang: true }) }), { signal: drop.signal })).toMatchObject({ ok: true, answer: "cancel" });
  });

  it("turns an accept that arrives as the call drops into cancel", async () => {
    const drop = new AbortController();
    const url = hostile.route(name(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    const dropping = async (input: string, init: RequestInit) => {
      const response = await fetch(input, { ...init, signal: undefined });
      if (init.method === "GET") drop.abort();
      return response;
    };
    expect(await ask(url, { signal: drop.signal, fetch: dropping })).toMatchObject({ ok: true, answer: "cancel" });
  });

  it("does not ask at all when the call is already gone", async () => {
    const route = name();
    const drop = new AbortController();
    drop.abort();
    expect(await ask(hostile.route(route, {}), { signal: drop.signal })).toMatchObject({ ok: true, answer: "cancel" });
    expect(hostile.requestsTo(route)).toEqual([]);
  });
});

describe("issue 26: the action is matched exactly", () => {
  // The pulsemcp protocol: an unrecognised action is a decline (R-CLIENT-2). None of these is the protocol's word, so none acts.
  const variants: [string, unknown][] = [
    ["ACCEPT", "ACCEPT"],
    ["Accept", "Accept"],
    ["a leading space", " accept"],
    ["a trailing space", "accept "],
    ["a trailing line feed", "accept\n"],
    ["a leading tab", "\taccept"],
    ["a zero-width space after it", "accept\u200b"],
    ["a zero-width space before it", "\u200baccept"],
    ["a trailing NUL", "accept\u0000"],
    ["fullwidth letters", "\uff41\uff43\uff43\uff45\uff50\uff54"],
    ["a Cyrillic a", "\u0430ccept"],
    ["accepted", "accepted"],
    ["a list holding accept", ["accept"]],
    ["an object", { accept: true }],
    ["true", true],
    ["PENDING", "PENDING"],
    ["Pending", "Pending"],
    ["DECLINE", "DECLINE"],
  ];

  it.each(variants)("counts an action of %s as a decline, acts on nothing and polls no more", async (_label, action) => {
    const route = name();
    const url = hostile.route(route, { poll: () => ({ body: { action, content: { confirm: true }, _meta: { "dev.strad/approver": "ada@example.com" } } }) });
    expect(await ask(url)).toEqual({ ok: true, answer: "decline", why: "the answer was not recognised", cause: "unrecognised", approver: null });
    // Not read as pending either: the first poll's answer is final.
    expect(hostile.requestsTo(route).filter((r) => r.method === "GET")).toHaveLength(1);
  });

  it.each(variants)("counts an action of %s as a decline in the one-poll reader Approval Flow uses", async (_label, action) => {
    const route = name();
    const url = hostile.route(route, { poll: () => ({ body: { action, content: { confirm: true } } }) });
    const read = await pollPrompt({ url, headers: EDGE, requestId: "r-1", waitS: 0, deadline: Date.now() + 5_000, signal: new AbortController().signal });
    expect(read).toEqual({ ok: true, answer: "decline", why: "the answer was not recognised", cause: "unrecognised", approver: null });
  });
});

describe("issue 26: when the prompt became final", () => {
  it.each([
    ["2026-12-01T10:00:00.000Z", Date.UTC(2026, 11, 1, 10)],
    ["2026-12-01T10:00:00Z", Date.UTC(2026, 11, 1, 10)],
    ["2026-12-01T10:00:00.123456Z", Date.UTC(2026, 11, 1, 10, 0, 0, 123)],
    ["2026-12-01T10:00:00+01:00", undefined],
    ["2026-12-01", undefined],
    ["2026-13-45T99:99:99Z", undefined],
    [" 2026-12-01T10:00:00Z", undefined],
    ["yesterday", undefined],
    [Date.UTC(2026, 11, 1, 10), undefined],
    [null, undefined],
  ])("reads decided-at %j as %j", (value, expected) => {
    expect(decidedAtFrom(value)).toBe(expected);
  });

  it("hands on the answer's _meta dev.strad/decided-at as decidedAt, and leaves it out when the answer has none", async () => {
    const at = "2026-12-01T10:00:00.000Z";
    const stamped = hostile.route(name(), { poll: () => ({ body: { action: "accept", content: { confirm: true }, _meta: { "dev.strad/decided-at": at } } }) });
    expect(await ask(stamped)).toEqual({ ok: true, answer: "accept", content: { confirm: true }, approver: null, decidedAt: Date.parse(at) });
    const declined = hostile.route(name(), { poll: () => ({ body: { action: "decline", _meta: { "dev.strad/decided-at": at } } }) });
    expect(await ask(declined)).toMatchObject({ answer: "decline", decidedAt: Date.parse(at) });
    const bare = hostile.route(name(), { poll: () => ({ body: { action: "accept", content: { confirm: true } } }) });
    expect(Object.hasOwn(await ask(bare), "decidedAt")).toBe(false);
    const junk = hostile.route(name(), { poll: () => ({ body: { action: "accept", content: { confirm: true }, _meta: { "dev.strad/decided-at": "soon" } } }) });
    expect(Object.hasOwn(await ask(junk), "decidedAt")).toBe(false);
  });
});
