// A fake of the Gmail API subset the Google bundle uses, mounted by the fakes Worker under /gmail/:
//   POST /token                                   OAuth refresh-token grant (clients and grants in seed.ts)
//   GET  /gmail/v1/users/me/profile | messages | messages/:id | threads/:id | drafts | drafts/:id
//   POST /gmail/v1/users/me/messages/send | drafts | drafts/send
//   POST /upload/gmail/v1/users/me/messages/send?uploadType=media|multipart
// and, for tests: GET /_fake/outbox (what was sent), GET /_fake/requests (every API request, recorded),
// DELETE /_fake/outbox (forget both), POST /_fake/reset (mailboxes back to the seed), POST /_fake/faults
// (answer a path with a status), POST /_fake/config ({ expiresIn }), GET /_fake/files/:name (attachment URLs).
// Error bodies carry a secret-looking marker, so tests can check that the bundle never repeats one.
import { type Context, Hono } from "hono";
import { binaryToBytes, bytesToBinary, header, parseMime } from "./mime";
import { CLIENTS, GRANTS } from "./seed";
import { type Account, type Fault, GmailStore, matches, messageResource, type RecordedGmailRequest, type StoredMessage } from "./store";

type Env = { Variables: { account: Account; entry: RecordedGmailRequest } };

export const SECRET_MARKER = "fake-upstream-secret-body";
/** The inline JSON send takes at most this much message; larger ones must use the upload URI. */
export const JSON_SEND_LIMIT = 5 * 1024 * 1024;
export const UPLOAD_LIMIT = 35 * 1024 * 1024;
const MAX_FILE_BYTES = 30 * 1024 * 1024;

function error(c: Context<Env>, status: number, message: string): Response {
  return c.json({ error: { code: status, message: `${SECRET_MARKER}: ${message}`, status: "FAILED" } }, status as 400);
}

async function jsonBody(c: Context<Env>): Promise<Record<string, unknown>> {
  try {
    const body = (await c.req.json()) as unknown;
    return typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function page<T>(items: T[], c: Context<Env>): { items: T[]; next?: string } {
  const max = Math.min(500, Math.max(1, Number(c.req.query("maxResults") ?? "100") || 100));
  const start = Math.max(0, Number(c.req.query("pageToken") ?? "0") || 0);
  const slice = items.slice(start, start + max);
  return start + max < items.length ? { items: slice, next: String(start + max) } : { items: slice };
}

function fileBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  return bytes;
}

export function createGmailFake(): { app: Hono<Env>; store: GmailStore } {
  const store = new GmailStore();
  const app = new Hono<Env>();

  // Every API request is recorded with its status; the fake's own test routes are not.
  app.use("*", async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (path.includes("/_fake/")) return next();
    const length = Number(c.req.header("content-length") ?? "0");
    const entry: RecordedGmailRequest = {
      at: Date.now(),
      method: c.req.method,
      path,
      query: Object.fromEntries(new URL(c.req.url).searchParams),
      account: store.accountFor(c.req.header("authorization"))?.email ?? null,
      bearer: /^Bearer (\S+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? null,
      contentType: c.req.header("content-type") ?? null,
      bytes: length,
      status: 0,
    };
    store.record(entry);
    c.set("entry", entry);
    const fault = store.fault(c.req.method, path);
    if (fault !== undefined) {
      entry.status = fault.status;
      return error(c, fault.status, "injected fault");
    }
    await next();
    entry.status = c.res.status;
  });

  app.post("/token", async (c) => {
    const form = new URLSearchParams(await c.req.text());
    const clientId = form.get("client_id") ?? "";
    const last = c.get("entry") as RecordedGmailRequest | undefined;
    if (last !== undefined) last.clientId = clientId;
    if (form.get("grant_type") !== "refresh_token") return c.json({ error: "unsupported_grant_type", error_description: SECRET_MARKER }, 400);
    if (CLIENTS[clientId] === undefined || CLIENTS[clientId].secret !== form.get("client_secret")) return c.json({ error: "invalid_client", error_description: SECRET_MARKER }, 401);
    const grant = GRANTS[form.get("refresh_token") ?? ""];
    if (grant === undefined || grant.clientId !== clientId) return c.json({ error: "invalid_grant", error_description: `${SECRET_MARKER}: Token has been expired or revoked.` }, 400);
    const minted = store.mint(grant.email);
    if (last !== undefined) {
      last.account = grant.email;
      last.minted = minted;
    }
    return c.json({ access_token: minted, expires_in: store.expiresIn, token_type: "Bearer", scope: "https://www.googleapis.com/auth/gmail.modify" });
  });

  const users = new Hono<Env>();
  users.use("/:user/*", async (c, next) => {
    const account = store.accountFor(c.req.header("authorization"));
    if (account === undefined) return error(c, 401, "Request had invalid authentication credentials.");
    const user = c.req.param("user");
    if (user !== "me" && user !== account.email) return error(c, 403, "Delegation denied.");
    c.set("account", account);
    await next();
  });

  users.get("/:user/profile", (c) => {
    const a = c.get("account");
    return c.json({ emailAddress: a.email, messagesTotal: a.messages.size, threadsTotal: new Set([...a.messages.values()].map((m) => m.threadId)).size, historyId: "1000" });
  });

  users.get("/:user/messages", (c) => {
    const labels = c.req.queries("labelIds") ?? [];
    const all = [...c.get("account").messages.values()].filter((m) => labels.every((l) => m.labelIds.includes(l)) && matches(m, c.req.query("q"))).sort((a, b) => b.internalDate - a.internalDate);
    const { items, next } = page(all, c);
    return c.json({ messages: items.map((m) => ({ id: m.id, threadId: m.threadId })), resultSizeEstimate: all.length, ...(next === undefined ? {} : { nextPageToken: next }) });
  });

  users.get("/:user/messages/:id", (c) => {
    const m = c.get("account").messages.get(c.req.param("id"));
    if (m === undefined) return error(c, 404, "Requested entity was not found.");
    return c.json(messageResource(m, c.req.query("format") ?? "full", c.req.queries("metadataHeaders") ?? []));
  });

  users.get("/:user/threads/:id", (c) => {
    const id = c.req.param("id");
    const messages = [...c.get("account").messages.values()].filter((m) => m.threadId === id).sort((a, b) => a.internalDate - b.internalDate);
    if (messages.length === 0) return error(c, 404, "Requested entity was not found.");
    return c.json({ id, historyId: "1000", messages: messages.map((m) => messageResource(m, c.req.query("format") ?? "full")) });
  });

  users.post("/:user/messages/send", async (c) => {
    const body = await jsonBody(c);
    if (typeof body.raw !== "string") return error(c, 400, "Invalid raw message.");
    const raw = bytesToBinary(base64(body.raw));
    if (raw.length > JSON_SEND_LIMIT) return error(c, 413, "Request payload size exceeds the limit.");
    const sent = await store.deliver(c.get("account"), raw, typeof body.threadId === "string" ? body.threadId : undefined, "send");
    return c.json({ id: sent.id, threadId: sent.threadId, labelIds: sent.labelIds });
  });

  users.get("/:user/drafts", (c) => {
    const all = [...c.get("account").drafts.entries()].filter(([, m]) => matches(m, c.req.query("q"))).sort(([, a], [, b]) => b.internalDate - a.internalDate);
    const { items, next } = page(all, c);
    return c.json({ drafts: items.map(([id, m]) => ({ id, message: { id: m.id, threadId: m.threadId } })), resultSizeEstimate: all.length, ...(next === undefined ? {} : { nextPageToken: next }) });
  });

  users.get("/:user/drafts/:id", (c) => {
    const m = c.get("account").drafts.get(c.req.param("id"));
    if (m === undefined) return error(c, 404, "Requested entity was not found.");
    return c.json({ id: c.req.param("id"), message: messageResource(m, c.req.query("format") ?? "full") });
  });

  users.post("/:user/drafts", async (c) => {
    const message = (await jsonBody(c)).message as { raw?: unknown; threadId?: unknown } | undefined;
    if (typeof message?.raw !== "string") return error(c, 400, "Invalid draft.");
    const raw = bytesToBinary(base64(message.raw));
    if (raw.length > JSON_SEND_LIMIT) return error(c, 413, "Request payload size exceeds the limit.");
    const draft = store.storeDraft(c.get("account"), raw, typeof message.threadId === "string" ? message.threadId : undefined);
    return c.json({ id: draft.id, message: { id: draft.message.id, threadId: draft.message.threadId, labelIds: draft.message.labelIds } });
  });

  users.post("/:user/drafts/send", async (c) => {
    const id = (await jsonBody(c)).id;
    const account = c.get("account");
    const draft = typeof id === "string" ? account.drafts.get(id) : undefined;
    if (draft === undefined) return error(c, 404, "Requested entity was not found.");
    account.drafts.delete(id as string);
    const sent = await store.deliver(account, draft.raw, draft.threadId, "draft", draft.id);
    return c.json({ id: sent.id, threadId: sent.threadId, labelIds: sent.labelIds });
  });

  const upload = new Hono<Env>();
  upload.use("/:user/*", async (c, next) => {
    const account = store.accountFor(c.req.header("authorization"));
    if (account === undefined) return error(c, 401, "Request had invalid authentication credentials.");
    c.set("account", account);
    await next();
  });
  upload.post("/:user/messages/send", async (c) => {
    const kind = c.req.query("uploadType");
    const body = bytesToBinary(new Uint8Array(await c.req.arrayBuffer()));
    if (body.length > UPLOAD_LIMIT) return error(c, 413, "Request payload size exceeds the limit.");
    let raw: string;
    let threadId: string | undefined;
    if (kind === "media") {
      if (!(c.req.header("content-type") ?? "").startsWith("message/rfc822")) return error(c, 400, "Media upload needs message/rfc822.");
      raw = body;
    } else if (kind === "multipart") {
      const related = parseMime(`Content-Type: ${c.req.header("content-type") ?? ""}\r\n\r\n${body}`);
      const meta = related.parts.find((p) => p.mimeType === "application/json");
      const message = related.parts.find((p) => p.mimeType === "message/rfc822");
      if (related.mimeType !== "multipart/related" || meta === undefined || message === undefined) return error(c, 400, "Multipart upload needs JSON metadata and a message/rfc822 part.");
      try {
        const parsed = JSON.parse(new TextDecoder().decode(meta.body)) as { threadId?: unknown };
        threadId = typeof parsed.threadId === "string" ? parsed.threadId : undefined;
      } catch {
        return error(c, 400, "Invalid metadata.");
      }
      raw = bytesToBinary(message.body);
    } else return error(c, 400, "uploadType must be media or multipart.");
    const sent = await store.deliver(c.get("account"), raw, threadId, kind === "media" ? "upload-media" : "upload-multipart");
    return c.json({ id: sent.id, threadId: sent.threadId, labelIds: sent.labelIds });
  });

  app.route("/gmail/v1/users", users);
  app.route("/upload/gmail/v1/users", upload);

  app.get("/_fake/outbox", (c) => c.json(store.outbox));
  app.get("/_fake/requests", (c) => c.json(store.requests));
  app.get("/_fake/file-requests", (c) => c.json(store.fileRequests));
  app.delete("/_fake/outbox", (c) => {
    store.clearRecords();
    return c.json({ ok: true });
  });
  app.post("/_fake/reset", (c) => {
    store.reset();
    return c.json({ ok: true });
  });
  app.post("/_fake/faults", async (c) => {
    const f = (await jsonBody(c)) as Partial<Fault>;
    if (typeof f.path !== "string" || typeof f.status !== "number") return c.json({ error: "path and status are needed" }, 400);
    store.faults.push({ path: f.path, status: f.status, ...(typeof f.method === "string" ? { method: f.method } : {}), ...(typeof f.times === "number" ? { times: f.times } : {}) });
    return c.json({ ok: true });
  });
  app.post("/_fake/config", async (c) => {
    const { expiresIn } = await jsonBody(c);
    if (typeof expiresIn === "number" && expiresIn > 0) store.expiresIn = expiresIn;
    return c.json({ ok: true, expiresIn: store.expiresIn });
  });
  // Files for attachment URLs: ?bytes=N deterministic bytes; redirect-* answers 302; missing-* a 404.
  app.get("/_fake/files/:name", (c) => {
    const name = c.req.param("name");
    store.fileRequests.push({ at: Date.now(), path: new URL(c.req.url).pathname });
    if (name.startsWith("redirect-")) return c.redirect(`./target-${name.slice(9)}`, 302);
    if (name.startsWith("missing-")) return c.text(`${SECRET_MARKER}: no such file`, 404);
    const size = Math.min(MAX_FILE_BYTES, Math.max(0, Number(c.req.query("bytes") ?? "64") || 0));
    return new Response(fileBytes(size), { headers: { "content-type": c.req.query("type") ?? "application/octet-stream", "content-length": String(size) } });
  });

  return { app, store };
}

function base64(data: string): Uint8Array {
  return binaryToBytes(
    atob(
      data
        .replaceAll("-", "+")
        .replaceAll("_", "/")
        .padEnd(data.length + ((4 - (data.length % 4)) % 4), "="),
    ),
  );
}

export { fileBytes, header, type StoredMessage };

/** The fakes Worker's instance (one isolate in `wrangler dev`, so one mailbox state). */
export const gmailFake = createGmailFake();
