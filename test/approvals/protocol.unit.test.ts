// Covers the approval service's operator sessions and pulsemcp protocol endpoints: minting, token rules, create validation, polling, Prefer: wait, expiry and the emulated Access edge.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { listPrompts } from "../../approvals/dev-api.mjs";
import { MAX_DEFAULT_CHARS, MAX_MESSAGE_BYTES } from "../../approvals/prompt";
import { MAX_CREATE_BYTES } from "../../approvals/protocol.routes";
import { createBody, createPrompt, DEV_ACCESS_HEADERS, DEV_OPERATOR_TOKEN, mint, newPrompt, poll, requestIdOf, sleep, useApprovals } from "./helpers";

const svc = useApprovals();

const operator = svc.operator;

async function decideAsOperator(sessionId: string, requestId: string, action: "accept" | "decline"): Promise<Response> {
  return fetch(`${svc.origin}/api/v1/sessions/${sessionId}/prompts/${requestId}/decision`, {
    method: "POST",
    headers: { authorization: `Bearer ${DEV_OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ action }),
  });
}

describe("sessions", () => {
  it("answers /healthz", async () => {
    const response = await fetch(`${svc.origin}/healthz`);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("mints a session only for the operator token", async () => {
    const none = await fetch(`${svc.origin}/api/v1/sessions`, { method: "POST" });
    expect(none.status).toBe(401);
    const wrong = await fetch(`${svc.origin}/api/v1/sessions`, { method: "POST", headers: { authorization: "Bearer not-the-operator-token-at-all" } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain("not-the-operator-token");
  });

  it("returns an elicitation URL under the protocol route and a review URL that shares no secret with it", async () => {
    const a = await mint(svc.origin);
    const b = await mint(svc.origin);
    expect(a.elicitationUrl.startsWith(`${svc.origin}/api/v1/elicitations/session/`)).toBe(true);
    expect(a.elicitationUrl.endsWith("/")).toBe(true);
    expect(a.reviewUrl.startsWith(`${svc.origin}/review/`)).toBe(true);
    const token = a.elicitationUrl.split("/").at(-2) as string;
    const key = a.reviewUrl.split("/").at(-1) as string;
    expect(token.split(".")[1]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(token.split(".")[1]).not.toBe(key.split(".")[1]);
    expect(b.elicitationUrl).not.toBe(a.elicitationUrl);
    expect(b.sessionId).not.toBe(a.sessionId);
  });

  it("npm run session prints a fresh, working elicitation URL and review URL", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(new URL("../../scripts/session.mjs", import.meta.url))], {
      env: { ...process.env, APPROVALS_ORIGIN: svc.origin },
      timeout: 30_000,
    });
    const elicitationUrl = /^elicitationUrl: (\S+)$/m.exec(stdout)?.[1] ?? "";
    const reviewUrl = /^reviewUrl: +(\S+)$/m.exec(stdout)?.[1] ?? "";
    expect(elicitationUrl.startsWith(`${svc.origin}/api/v1/elicitations/session/`)).toBe(true);
    expect((await createPrompt(elicitationUrl, createBody())).status).toBe(201);
    expect((await fetch(reviewUrl)).status).toBe(200);
  });

  it("refuses a token it did not mint, even one naming a real session", async () => {
    const a = await mint(svc.origin);
    const b = await mint(svc.origin);
    const tokenA = a.elicitationUrl.split("/").at(-2) as string;
    const tokenB = b.elicitationUrl.split("/").at(-2) as string;
    const base = `${svc.origin}/api/v1/elicitations/session/`;
    const forged = [`${tokenA.slice(0, -1)}${tokenA.endsWith("A") ? "B" : "A"}`, `${b.sessionId}.${tokenA.split(".")[1]}`, a.sessionId, "not-a-token", `${tokenB}.extra`];
    for (const token of forged) {
      const response = await createPrompt(`${base}${token}/`, createBody());
      expect(response.status, token).toBe(404);
    }
  });

  it("takes the session from the token only: another session's token cannot see a prompt", async () => {
    const a = await mint(svc.origin);
    const b = await mint(svc.origin);
    const id = await newPrompt(a.elicitationUrl, {}, { ...DEV_ACCESS_HEADERS, "x-session-id": b.sessionId });
    expect((await poll(b.elicitationUrl, id)).status).toBe(404);
    expect((await poll(a.elicitationUrl, id)).status).toBe(200);
    expect(await listPrompts(b.sessionId, operator())).toEqual([]);
  });
});

describe("create", () => {
  const bad: [string, (b: Record<string, unknown>) => void, RegExp][] = [
    ["mode url", (b) => (b.mode = "url"), /mode/],
    ["no mode", (b) => delete b.mode, /mode/],
    ["empty message", (b) => (b.message = ""), /message/],
    ["message one byte over the cap", (b) => (b.message = "x".repeat(MAX_MESSAGE_BYTES + 1)), new RegExp(`message.*${MAX_MESSAGE_BYTES} bytes`)],
    ["message over the cap in multibyte characters", (b) => (b.message = "€".repeat(Math.floor(MAX_MESSAGE_BYTES / 3) + 1)), new RegExp(`message.*${MAX_MESSAGE_BYTES} bytes`)],
    ["schema not an object schema", (b) => (b.requestedSchema = { type: "array", items: { type: "string" } }), /requestedSchema/],
    ["nested object property", (b) => ((b.requestedSchema as { properties: Record<string, unknown> }).properties.to = { type: "object", properties: {} }), /requestedSchema\.properties\[key 2\]/],
    [
      "property holding a nested schema",
      (b) => ((b.requestedSchema as { properties: Record<string, unknown> }).properties.list = { type: "string", items: { type: "string" } }),
      /requestedSchema\.properties\[key 2\]/,
    ],
    ["no confirm property", (b) => (b.requestedSchema = { type: "object", properties: { ok: { type: "boolean" } } }), /confirm/],
    ["confirm not a boolean", (b) => ((b.requestedSchema as { properties: Record<string, unknown> }).properties.confirm = { type: "string" }), /confirm/],
    [
      "required field the page cannot answer",
      (b) => Object.assign(b.requestedSchema as object, { properties: { confirm: { type: "boolean" }, note: { type: "string" } }, required: ["confirm", "note"] }),
      /required\[1\]: only "confirm" may be required/,
    ],
    ["no _meta", (b) => delete b._meta, /_meta/],
    ["no request id", (b) => delete (b._meta as Record<string, unknown>)["com.pulsemcp/request-id"], /request-id/],
    ["request id with a slash", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/request-id"] = "a/b"), /request-id/],
    ["request id that is a dot segment", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/request-id"] = ".."), /request-id/],
    ["no expiry", (b) => delete (b._meta as Record<string, unknown>)["com.pulsemcp/expires-at"], /expires-at/],
    ["expiry not a date", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/expires-at"] = "tomorrow"), /expires-at/],
    ["expiry without a zone", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/expires-at"] = "2030-01-01T00:00:00"), /expires-at/],
    ["expiry in the past", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/expires-at"] = new Date(Date.now() - 1000).toISOString()), /expires-at.*past/],
    ["expiry 25 hours ahead", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/expires-at"] = new Date(Date.now() + 25 * 3600_000).toISOString()), /expires-at.*24 hours/],
  ];

  it.each(bad)("refuses %s with a 400 and a reason", async (_name, mutate, reason) => {
    const { elicitationUrl } = await mint(svc.origin);
    const body = createBody();
    mutate(body);
    const response = await createPrompt(elicitationUrl, body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(reason);
  });

  // R-APPR-8: a reason names what was wrong, never what was sent. Each body carries the mark where a caller chose a key or a value.
  const MARK = "Echo-Mark";
  const schemaWith =
    (extra: Record<string, unknown>, top: Record<string, unknown> = {}) =>
    (b: Record<string, unknown>) => {
      b.requestedSchema = { type: "object", properties: { confirm: { type: "boolean" }, ...extra }, required: ["confirm"], ...top };
    };
  const echoes: [string, (b: Record<string, unknown>) => void, RegExp][] = [
    ["a property name that is not one", schemaWith({ [`<script>${MARK}${"A".repeat(100)}`]: { type: "string" } }), /^requestedSchema\.properties\[key 2\]: /],
    ["a required name that is no property", schemaWith({}, { required: ["confirm", `${MARK}<b>`] }), /^requestedSchema\.required\[1\]: names no property$/],
    [
      "a required name that is a property other than confirm",
      schemaWith({ [MARK]: { type: "string" } }, { required: ["confirm", MARK] }),
      /^requestedSchema\.required\[1\]: only "confirm" may be required/,
    ],
    ["a default past its cap under a property name", schemaWith({ [MARK]: { type: "string", default: "x".repeat(MAX_DEFAULT_CHARS + 1) } }), /^requestedSchema\.properties\[key 2\]\.default: /],
    [
      "a keyword a list does not take",
      schemaWith({ [MARK]: { type: "array", items: { type: "string", enum: ["a"] }, [MARK]: 1 } }),
      /^requestedSchema\.properties\[key 2\]: holds a keyword it does not take$/,
    ],
    [
      "a keyword a list's items do not take",
      schemaWith({ to: { type: "array", items: { type: "string", enum: ["a"], [MARK]: 1 } } }),
      /^requestedSchema\.properties\[key 2\]\.items: holds a keyword it does not take$/,
    ],
    ["a nested schema under an unknown keyword", schemaWith({}, { [MARK]: { x: 1 } }), /^requestedSchema\[key 4\]: /],
    ["an unknown keyword's long value", schemaWith({}, { [`x-${MARK}`]: "y".repeat(2000) }), /^requestedSchema\[key 4\]: /],
    ["a property type that is not one", schemaWith({ a: { type: MARK } }), /^requestedSchema\.properties\[key 2\]: /],
    ["a request id that is not a path segment", (b) => ((b._meta as Record<string, unknown>)["com.pulsemcp/request-id"] = `${MARK}/x`), /request-id/],
  ];

  it.each(echoes)("refuses %s naming where it is, never echoing it", async (_name, mutate, reason) => {
    const { elicitationUrl } = await mint(svc.origin);
    const body = createBody();
    mutate(body);
    const response = await createPrompt(elicitationUrl, body);
    expect(response.status).toBe(400);
    const error = ((await response.json()) as { error: string }).error;
    expect(error).toMatch(reason);
    expect(error.toLowerCase()).not.toContain(MARK.toLowerCase());
  });

  it("accepts the limits themselves: a message at the byte cap and an expiry 23 hours ahead", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    expect((await createPrompt(elicitationUrl, createBody({ message: "é".repeat(MAX_MESSAGE_BYTES / 2) }))).status).toBe(201);
    expect((await createPrompt(elicitationUrl, createBody({ expiresInMs: 23 * 3600_000 }))).status).toBe(201);
  });

  it("refuses what is not a JSON object body", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const post = (body: string, type = "application/json") => fetch(elicitationUrl, { method: "POST", headers: { "content-type": type, ...DEV_ACCESS_HEADERS }, body });
    expect((await post("{not json")).status).toBe(400);
    expect((await post("[]")).status).toBe(400);
    expect((await post(JSON.stringify(createBody()), "text/plain")).status).toBe(415);
    expect((await post(JSON.stringify({ ...createBody(), message: "x".repeat(MAX_CREATE_BYTES) }))).status).toBe(413);
  });

  it("answers the request id, and refuses the same id twice in a session", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const body = createBody();
    const first = await createPrompt(elicitationUrl, body);
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ requestId: requestIdOf(body) });
    expect((await createPrompt(elicitationUrl, body)).status).toBe(409);
  });

  it("accepts a POST to the URL without its trailing slash too", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    expect((await createPrompt(elicitationUrl.slice(0, -1), createBody())).status).toBe(201);
  });
});

describe("poll", () => {
  it("answers pending at once when the poll carries no Prefer header", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const result = await poll(elicitationUrl, id);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ action: "pending", content: null, _meta: { "com.pulsemcp/request-id": id } });
    expect(result.ms).toBeLessThan(1500);
    expect(result.response.headers.get("preference-applied")).toBeNull();
  });

  it("ignores Prefer: wait in a session minted with longPoll: false, as a plain pulsemcp service would", async () => {
    const minted = await fetch(`${svc.origin}/api/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEV_OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ longPoll: false }),
    });
    expect(minted.status).toBe(201);
    const { elicitationUrl } = (await minted.json()) as { elicitationUrl: string };
    const id = await newPrompt(elicitationUrl);
    const started = Date.now();
    const response = await fetch(`${elicitationUrl}${id}`, { headers: { ...DEV_ACCESS_HEADERS, prefer: "wait=10" } });
    expect(await response.json()).toMatchObject({ action: "pending" });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(response.headers.get("preference-applied")).toBeNull();
  });

  it("refuses a session option that is not a boolean", async () => {
    const minted = await fetch(`${svc.origin}/api/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEV_OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ longPoll: "no" }),
    });
    expect(minted.status).toBe(400);
    expect(await minted.text()).toContain("longPoll must be a boolean");
  });

  it("answers 404 for a prompt the session does not hold", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    expect((await poll(elicitationUrl, crypto.randomUUID())).status).toBe(404);
  });

  it("holds a Prefer: wait poll and answers promptly when the decision lands", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const started = Date.now();
    const held = fetch(`${elicitationUrl}${id}`, { headers: { ...DEV_ACCESS_HEADERS, prefer: "wait=20" } }).then(async (r) => ({
      at: Date.now(),
      status: r.status,
      body: (await r.json()) as { action: string; content: unknown },
    }));
    await sleep(1000);
    const decidedAt = Date.now();
    expect((await decideAsOperator(sessionId, id, "accept")).status).toBe(200);
    const answer = await held;
    expect(answer.body).toMatchObject({ action: "accept", content: { confirm: true } });
    expect(answer.at - started).toBeGreaterThanOrEqual(900);
    expect(answer.at - decidedAt).toBeLessThan(1000);
  }, 30_000);

  it("answers pending when the wait elapses without a decision", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const started = Date.now();
    const response = await fetch(`${elicitationUrl}${id}`, { headers: { ...DEV_ACCESS_HEADERS, prefer: "respond-async, wait=2" } });
    const elapsed = Date.now() - started;
    expect(await response.json()).toMatchObject({ action: "pending" });
    expect(response.headers.get("preference-applied")).toBe("wait=2");
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(6000);
  }, 30_000);

  it("caps Prefer: wait at 25 seconds", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const held = fetch(`${elicitationUrl}${id}`, { headers: { ...DEV_ACCESS_HEADERS, prefer: "wait=600" } });
    await sleep(300);
    await decideAsOperator(sessionId, id, "decline");
    const response = await held;
    expect(response.headers.get("preference-applied")).toBe("wait=25");
    expect(await response.json()).toMatchObject({ action: "decline", content: null });
  }, 30_000);

  it("answers expired at the expiry, even to a poll held past it", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl, { expiresInMs: 2000 });
    const started = Date.now();
    const response = await fetch(`${elicitationUrl}${id}`, { headers: { ...DEV_ACCESS_HEADERS, prefer: "wait=20" } });
    expect(await response.json()).toMatchObject({ action: "expired", content: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await poll(elicitationUrl, id)).body.action).toBe("expired");
    expect((await decideAsOperator(sessionId, id, "accept")).status).toBe(409);
    expect((await poll(elicitationUrl, id)).body.action).toBe("expired");
  }, 30_000);
});

describe("who decided, for the bundle's audit trail", () => {
  it("names the operator API's dev-mode decider in a decided poll answer's _meta, and nobody on a pending or expired one", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    expect((await poll(elicitationUrl, id)).body._meta).toEqual({ "com.pulsemcp/request-id": id, "com.pulsemcp/expires-at": expect.any(String) });
    expect((await decideAsOperator(sessionId, id, "decline")).status).toBe(200);
    expect((await poll(elicitationUrl, id)).body).toMatchObject({ action: "decline", _meta: { "com.pulsemcp/request-id": id, "dev.strad/approver": "operator (dev mode)" } });
    const expiring = await newPrompt(elicitationUrl, { expiresInMs: 1000 });
    await sleep(1500);
    const expired = await poll(elicitationUrl, expiring);
    expect(expired.body.action).toBe("expired");
    // Issue 26 (R-APPR-19): the answer also says when the expiry made it final, the expiry itself.
    const expiresAt = expired.body._meta?.["com.pulsemcp/expires-at"];
    expect(expired.body._meta, "R-AUDIT-4: an expiry is nobody's decision").toEqual({ "com.pulsemcp/request-id": expiring, "com.pulsemcp/expires-at": expiresAt, "dev.strad/decided-at": expiresAt });
  }, 30_000);
});

describe("a session token cannot answer", () => {
  it("refuses every write to the prompt's URL and leaves the prompt pending", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const answer = JSON.stringify({ action: "accept", content: { confirm: true } });
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      for (const url of [`${elicitationUrl}${id}`, `${elicitationUrl}${id}/decision`]) {
        const response = await fetch(url, { method, headers: { "content-type": "application/json", ...DEV_ACCESS_HEADERS }, body: answer });
        expect(response.status, `${method} ${url.endsWith("decision") ? "…/decision" : "…"}`).toBe(405);
      }
    }
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });

  it("does not open the review page or its decision endpoint", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const token = elicitationUrl.split("/").at(-2) as string;
    expect((await fetch(`${svc.origin}/review/${token}`)).status).toBe(404);
    const post = await fetch(`${svc.origin}/review/${token}/prompts/${id}/decision`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ action: "accept", confirm: true }),
    });
    expect(post.status).toBe(404);
    expect((await poll(elicitationUrl, id)).body.action).toBe("pending");
  });
});

describe("the emulated Access edge", () => {
  it("answers 401 to a create or poll without the service token", async () => {
    const { elicitationUrl } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    const missing: Record<string, string>[] = [
      {},
      { "CF-Access-Client-Id": DEV_ACCESS_HEADERS["CF-Access-Client-Id"] },
      { ...DEV_ACCESS_HEADERS, "CF-Access-Client-Secret": "wrong-secret-0123456789abcdef0123" },
    ];
    for (const headers of missing) {
      expect((await createPrompt(elicitationUrl, createBody(), headers)).status).toBe(401);
      const polled = await poll(elicitationUrl, id, headers);
      expect(polled.status).toBe(401);
      expect(JSON.stringify(polled.body)).not.toContain("wrong-secret");
    }
  });

  it("records that the service token arrived on the create and on every poll", async () => {
    const { elicitationUrl, sessionId } = await mint(svc.origin);
    const id = await newPrompt(elicitationUrl);
    for (let i = 0; i < 3; i++) expect((await poll(elicitationUrl, id)).status).toBe(200);
    await poll(elicitationUrl, id, {});
    const [prompt] = await listPrompts(sessionId, operator());
    expect(prompt).toMatchObject({ requestId: id, createdWithAccess: true, polls: 3, accessPolls: 3 });
  });
});
