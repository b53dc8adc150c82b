// Constants of the fallback-elicitation protocol (bundle -> approval service) that both the kit's approval
// client and the reference approval service hold to.

export const META_REQUEST_ID = "com.pulsemcp/request-id";
export const META_EXPIRES_AT = "com.pulsemcp/expires-at";
export const META_SESSION_ID = "com.pulsemcp/session-id";
export const META_TOOL_NAME = "com.pulsemcp/tool-name";

/** A request id goes into the poll path (`<url>/<id>`): no "/", and no "." or ".." segment. */
export const REQUEST_ID = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,255}$/;

export function isRequestId(value: string): boolean {
  return REQUEST_ID.test(value) && value !== "." && value !== "..";
}

/** The one form every confirmed tool asks: a single confirm box; only `true` lets the call act. */
export const CONFIRM_SCHEMA = {
  type: "object",
  properties: { confirm: { type: "boolean", title: "Approve", description: "Tick to let the call go ahead." } },
  required: ["confirm"],
} as const;
