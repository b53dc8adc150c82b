// Small HTTP helpers shared by the routes: the Hono context type, JSON errors that carry a reason and
// never an echo of the request, a bounded body reader, and the Durable Object of one session.
import type { Context } from "hono";
import { readCappedText } from "../contract/body";
import type { SessionApi } from "./session-store";
import type { ApprovalsEnv, Settings } from "./settings";

export type AppEnv = { Bindings: ApprovalsEnv; Variables: { settings: Settings; access: boolean; sessionId: string; identity: string; devMode: boolean } };
export type AppContext = Context<AppEnv>;

export function jsonError(status: number, reason: string, headers?: Record<string, string>): Response {
  return Response.json({ error: reason }, { status, headers: { "cache-control": "no-store", ...headers } });
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; response: Response };

/** Reads a JSON body of at most maxBytes; anything else is a 4xx with a reason. */
export async function readJson(request: Request, maxBytes: number): Promise<JsonBody> {
  const fail = (status: number, reason: string): JsonBody => ({ ok: false, response: jsonError(status, reason) });
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") return fail(415, "Content-Type must be application/json");
  if (request.body === null) return fail(400, "the body is empty");
  const text = await readCappedText(request, maxBytes, true);
  if (!text.ok) return text.tooLarge ? fail(413, `the body is larger than ${maxBytes} bytes`) : fail(400, "the body could not be read");
  try {
    return { ok: true, value: JSON.parse(text.value) as unknown };
  } catch {
    return fail(400, "the body is not valid JSON");
  }
}

export function sessionStore(env: ApprovalsEnv, sessionId: string): SessionApi {
  // The stub's generated Rpc types recurse on JSON values; the class implements SessionApi, so use that.
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId)) as unknown as SessionApi;
}

/** The origin minted URLs start with: PUBLIC_ORIGIN when set, else the one the request reached. */
export function originOf(c: AppContext): string {
  return c.var.settings.publicOrigin ?? new URL(c.req.url).origin;
}
