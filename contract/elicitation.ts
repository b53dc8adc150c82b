// Constants of the fallback-elicitation protocol (bundle -> approval service) that both the kit's approval
// client and the reference approval service hold to.

export const META_REQUEST_ID = "com.pulsemcp/request-id";
export const META_EXPIRES_AT = "com.pulsemcp/expires-at";
export const META_SESSION_ID = "com.pulsemcp/session-id";
export const META_TOOL_NAME = "com.pulsemcp/tool-name";
/**
 * Not the protocol's own: a create whose `_meta` sets this key to `true` asks where a person reviews that one
 * prompt, and the reference approval service answers the page's URL under the same key in the create answer's
 * `_meta` (bundles/approval-flow hands it to the agent as `reviewUrl`). A service that does not know it ignores it.
 */
export const META_REVIEW_URL = "dev.strad/review-url";

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

/**
 * The largest prompt message, in bytes of UTF-8, a bundle sends and the approval service takes (the kit's
 * bundles/kit/prompt.ts and approvals/prompt.ts hold to this one number, docs/rules.md R-LIMIT-1). Sized to the
 * largest prompt any confirmed tool can legally build: Gmail's send_email with every limit at its maximum
 * (50 recipients, each a 64-character display name in 3-byte characters beside the longest address the
 * recipient entry leaves room for, labelled Bcc; a 900-character subject in 3-byte characters; a reply; 10
 * attachments named in 120 4-byte characters; the longest slug and mailbox address) is 31,860 bytes, and the
 * largest draft send_email sends as it stands (its names in 4-byte characters, its addresses not held to the
 * 320-character entry) 38,128. 48 KiB holds both with room for a tool's wording to grow;
 * test/bundles/kit/prompt-limits.unit.test.ts builds both through the real builder and fails when a tool's
 * limit outgrows this.
 */
export const MAX_PROMPT_BYTES = 48 * 1024;

/**
 * A list a person may narrow, or pick one of, offers at most this many distinct entries, each at most MAX_OPTION_CHARS
 * characters: the kit's form builder (bundles/kit/edits.ts) leaves a longer list off the card, and the approval service
 * (approvals/prompt.ts) refuses one. One pair of numbers, so the two sides cannot drift (docs/rules.md R-EDIT-2).
 */
export const MAX_LIST_OPTIONS = 64;
export const MAX_OPTION_CHARS = 1024;
/** A form holds at most this many properties, the confirm box included: the kit offers no more, the service takes no more. */
export const MAX_FORM_PROPERTIES = 32;

/** JSON may write any character of a message as a `\uXXXX` escape: at most six bytes of JSON for every byte of UTF-8. */
export const JSON_BYTES_PER_MESSAGE_BYTE = 6;
/** Everything in a create body besides its message: the requested schema, `_meta`, the framing (the service's whole cap before R-LIMIT-1). */
export const CREATE_ENVELOPE_BYTES = 64 * 1024;
/** The approval service reads at most this much of a create: any JSON encoding of the largest message, and its envelope. */
export const MAX_CREATE_BODY_BYTES = MAX_PROMPT_BYTES * JSON_BYTES_PER_MESSAGE_BYTE + CREATE_ENVELOPE_BYTES;

/** Headers the kit's approval client sets itself on every approval request (bundles/kit/approval-client.ts). */
export const APPROVAL_CLIENT_HEADERS = ["content-type", "accept", "prefer"] as const;
/** Framing and hop-by-hop headers, which belong to the HTTP connection, never to a configured value (docs/rules.md R-CONF-4). */
export const FRAMING_HEADERS = ["content-length", "transfer-encoding", "connection", "host"] as const;
/**
 * The names a channel's headers (a slug's `confirmationHeaders`) may never take: the roster refuses them
 * (worker/roster.ts) and the kit drops any that still arrives (docs/rules.md R-CONF-4). One list, so the two cannot drift.
 */
export const RESERVED_CHANNEL_HEADERS: readonly string[] = [...APPROVAL_CLIENT_HEADERS, ...FRAMING_HEADERS];

/** Whether a header name (any case) is one the channel may not set. */
export function isReservedChannelHeader(name: string): boolean {
  return RESERVED_CHANNEL_HEADERS.includes(name.toLowerCase());
}
