// What a create request must look like (docs/rules.md R-APPR-8): form mode, a message of at most 48 KiB, a flat
// object schema the review page can answer, a request id and an expiry no more than 24 hours ahead.
// Pure: a bad body becomes one reason a caller can act on, never an echo of what it sent.
import * as z from "zod";
import {
  CREATE_ENVELOPE_BYTES,
  MAX_FORM_PROPERTIES,
  MAX_LIST_OPTIONS,
  MAX_OPTION_CHARS,
  MAX_PROMPT_BYTES,
  META_EXPIRES_AT,
  META_REQUEST_ID,
  META_REVIEW_URL,
  META_SESSION_ID,
  META_TOOL_NAME,
  REQUEST_ID,
} from "../contract/elicitation";

// The list caps are contract/elicitation.ts's, which the kit's form builder holds to as well (R-EDIT-2).
export { MAX_LIST_OPTIONS, MAX_OPTION_CHARS, REQUEST_ID };

/** The kit's own cap (contract/elicitation.ts): whatever prompt a bundle can legally build, the service takes and shows whole (docs/rules.md R-LIMIT-1). */
export const MAX_MESSAGE_BYTES = MAX_PROMPT_BYTES;
export const MAX_TTL_MS = 24 * 3600 * 1000;
/** Clock skew tolerated on the 24-hour bound; the past is refused outright. */
export const EXPIRY_SKEW_MS = 60_000;
export const MAX_PROPERTIES = MAX_FORM_PROPERTIES;
/**
 * The requested schema, as JSON, at most: the create's envelope (contract/elicitation.ts), which the kit's form stays well
 * inside. The review page's 2 s refresh carries every pending prompt's schema, so this bounds it (100 × 64 KiB).
 */
export const MAX_SCHEMA_BYTES = CREATE_ENVELOPE_BYTES;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** JSON as it crosses the Durable Object's RPC boundary. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface NewPrompt {
  requestId: string;
  message: string;
  requestedSchema: { [key: string]: Json };
  toolName: string | null;
  callerSessionId: string | null;
  expiresAt: number;
}

const Primitive = z.union([z.string().max(1024), z.number(), z.boolean(), z.null()]);
/** A text field's default may be long (a mail's body the person may correct); MAX_SCHEMA_BYTES bounds the whole form. */
export const MAX_DEFAULT_CHARS = 64 * 1024;
const Option = z.string().max(MAX_OPTION_CHARS);
// Flat: a property's keywords are primitives or lists of primitives (enum), never a nested schema; the one exception is
// the elicitation's multi-select list, whose `items` names the entries a person may keep (docs/rules.md R-EDIT-2).
const ScalarProperty = z
  .object({
    type: z.enum(["string", "number", "integer", "boolean"]),
    title: z.string().max(256).optional(),
    description: z.string().max(1024).optional(),
    default: z.union([z.string().max(MAX_DEFAULT_CHARS), z.number(), z.boolean()]).optional(),
  })
  .catchall(z.union([Primitive, z.array(Primitive).max(MAX_LIST_OPTIONS)]))
  // A pick-one field (enum) lists its choices, and its default is one of them (R-EDIT-2).
  .refine((p) => !Array.isArray(p.enum) || p.default === undefined || (p.enum as unknown[]).includes(p.default), "a pick-one field's default must be one of its choices");
const ListProperty = z
  .object({
    type: z.literal("array"),
    title: z.string().max(256).optional(),
    description: z.string().max(1024).optional(),
    minItems: z.number().int().min(0).optional(),
    maxItems: z.number().int().min(0).optional(),
    items: z.object({ type: z.literal("string"), enum: z.array(Option).min(1).max(MAX_LIST_OPTIONS) }).strict(),
    default: z
      .array(Option)
      .max(MAX_LIST_OPTIONS * 4)
      .optional(),
  })
  .strict()
  .refine((p) => (p.default ?? []).every((v) => p.items.enum.includes(v)), "a list's default may hold only its own entries");
const Property = z.union([ListProperty, ScalarProperty]);

const RequestedSchema = z
  .object({
    type: z.literal("object"),
    properties: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "property names are 1-64 letters, digits, _ . -"), Property),
    required: z.array(z.string()).max(MAX_PROPERTIES).optional(),
  })
  .catchall(Primitive)
  .superRefine((schema, ctx) => {
    const names = Object.keys(schema.properties);
    if (names.length > MAX_PROPERTIES) ctx.addIssue({ code: "custom", path: ["properties"], message: `at most ${MAX_PROPERTIES} properties` });
    if (schema.properties.confirm?.type !== "boolean") {
      ctx.addIssue({ code: "custom", path: ["properties", "confirm"], message: "must be a boolean property: the review page answers with a confirm box" });
    }
    // Named by position, never by what the caller wrote (R-APPR-8: no echo).
    (schema.required ?? []).forEach((name, i) => {
      if (!names.includes(name)) ctx.addIssue({ code: "custom", path: ["required", i], message: "names no property" });
      else if (name !== "confirm") ctx.addIssue({ code: "custom", path: ["required", i], message: 'only "confirm" may be required: the review page answers only it' });
    });
  });

const Meta = z
  .object({
    [META_REQUEST_ID]: z.string().regex(REQUEST_ID, "must be 1-256 letters, digits, _ . ~ - not starting with a dot (a UUID)"),
    [META_EXPIRES_AT]: z.string().regex(ISO_8601, "must be an ISO-8601 date-time with a zone"),
    [META_SESSION_ID]: z.string().max(256).optional(),
    [META_TOOL_NAME]: z.string().max(128).optional(),
  })
  .catchall(z.unknown());

const CreateBody = z.object({
  mode: z.literal("form", { message: 'must be "form"' }),
  message: z
    .string()
    .min(1, "must not be empty")
    .refine((m) => new TextEncoder().encode(m).byteLength <= MAX_MESSAGE_BYTES, `must be at most ${MAX_MESSAGE_BYTES} bytes of UTF-8`),
  requestedSchema: RequestedSchema,
  _meta: Meta,
});

export type Parsed = { ok: true; prompt: NewPrompt } | { ok: false; reason: string };

/** The words of the create body's own vocabulary: a path names these as they are, and any other key by its position. */
const KNOWN_KEYS: ReadonlySet<PropertyKey> = new Set([
  "mode",
  "message",
  "requestedSchema",
  "_meta",
  "type",
  "title",
  "description",
  "default",
  "enum",
  "items",
  "properties",
  "required",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "confirm",
  META_REQUEST_ID,
  META_EXPIRES_AT,
  META_SESSION_ID,
  META_TOOL_NAME,
  META_REVIEW_URL,
]);

/**
 * Where in the body an issue is. A key the caller chose (a property's name, an unknown keyword) is named by its position
 * among its object's keys, never written out: a reason never echoes what was sent (R-APPR-8).
 */
function pathText(path: readonly PropertyKey[], body: unknown): string {
  let at: unknown = body;
  return path
    .map((p, i) => {
      const parent = at;
      at = typeof at === "object" && at !== null ? (at as Record<PropertyKey, unknown>)[p] : undefined;
      if (typeof p === "number") return `[${p}]`;
      if (!KNOWN_KEYS.has(p)) {
        const position = typeof parent === "object" && parent !== null ? Object.keys(parent).indexOf(String(p)) + 1 : 0;
        return position > 0 ? `[key ${position}]` : "[a key]";
      }
      return /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(p)) ? `${i === 0 ? "" : "."}${String(p)}` : `["${String(p)}"]`;
    })
    .join("");
}

/** zod's own words, but for the one issue whose words name a key the caller wrote. */
function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return `holds ${issue.keys.length === 1 ? "a keyword" : `${issue.keys.length} keywords`} it does not take`;
  if (issue.code === "invalid_key") return "has a key it does not take: property names are 1-64 letters, digits, _ . -";
  return issue.message;
}

/**
 * A decision body at most: the person's edits ride on it (a mail's corrected body). The poll answer repeats them with
 * at most about 1 KiB of _meta, under the bundle's 64 KiB cap on an answer (bundles/kit/approval-client.ts, R-BODY-5).
 */
export const MAX_DECISION_BYTES = 48 * 1024;

type SchemaProperty = { type?: unknown; maxLength?: unknown; maxItems?: unknown; enum?: unknown; items?: { enum?: unknown } };

export type EditsCheck = { ok: true; content: { [key: string]: Json } } | { ok: false; reason: string };

const codePoints = (text: string) => [...text].length;

/**
 * A person's edits on an accept, held to the prompt's own form (docs/rules.md R-EDIT-2): only its properties (never
 * "confirm", which the box answers), text within its maxLength, a list holding only the form's entries, a number or
 * boolean of its type, a pick-one text one of its choices. The bundle checks again, against the tool's own rules; this keeps the page honest.
 */
export function checkEdits(schema: { [key: string]: Json }, edits: unknown): EditsCheck {
  if (edits === undefined || edits === null) return { ok: true, content: {} };
  if (typeof edits !== "object" || Array.isArray(edits)) return { ok: false, reason: "edits must be an object of field names and values" };
  const properties = (schema.properties ?? {}) as Record<string, SchemaProperty>;
  const content: { [key: string]: Json } = {};
  for (const [name, value] of Object.entries(edits as Record<string, unknown>)) {
    const property = name === "confirm" || !Object.hasOwn(properties, name) ? undefined : properties[name];
    const field = `"${name.slice(0, 64)}"`;
    if (property === undefined) return { ok: false, reason: `the form has no field ${field} to edit` };
    if (property.type === "string") {
      if (typeof value !== "string") return { ok: false, reason: `${field} must be text` };
      if (typeof property.maxLength === "number" && codePoints(value) > property.maxLength) return { ok: false, reason: `${field} is longer than the ${property.maxLength} characters it takes` };
      // A pick-one field (the protocol's single-select enum) takes one of its listed values and nothing else.
      if (Array.isArray(property.enum) && !property.enum.includes(value)) return { ok: false, reason: `${field} must be one of the choices the form lists` };
    } else if (property.type === "array") {
      const allowed = Array.isArray(property.items?.enum) ? (property.items.enum as unknown[]) : [];
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && allowed.includes(v))) return { ok: false, reason: `${field} may hold only the entries the form lists` };
      if (typeof property.maxItems === "number" && value.length > property.maxItems) return { ok: false, reason: `${field} holds more entries than the form allows` };
    } else if (property.type === "boolean") {
      if (typeof value !== "boolean") return { ok: false, reason: `${field} must be true or false` };
    } else if (typeof value !== "number" || !Number.isFinite(value) || (property.type === "integer" && !Number.isInteger(value))) {
      return { ok: false, reason: `${field} must be a number` };
    }
    content[name] = value as Json;
  }
  return { ok: true, content };
}

export function parseCreate(body: unknown, now: number): Parsed {
  const parsed = CreateBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "body" : pathText(issue.path, body);
    return { ok: false, reason: `${where}: ${issue === undefined ? "invalid" : issueText(issue)}` };
  }
  const { message, requestedSchema, _meta: meta } = parsed.data;
  // The review page's refresh carries every pending prompt's schema: it is held to its own cap, as it is stored.
  const schemaBytes = new TextEncoder().encode(JSON.stringify(requestedSchema)).byteLength;
  if (schemaBytes > MAX_SCHEMA_BYTES) return { ok: false, reason: `requestedSchema: must be at most ${MAX_SCHEMA_BYTES} bytes as JSON (the create's envelope); this one is ${schemaBytes}` };
  const expiresAt = Date.parse(meta[META_EXPIRES_AT]);
  if (Number.isNaN(expiresAt)) return { ok: false, reason: '_meta["com.pulsemcp/expires-at"]: is not a valid date-time' };
  if (expiresAt <= now) return { ok: false, reason: '_meta["com.pulsemcp/expires-at"]: is in the past' };
  if (expiresAt > now + MAX_TTL_MS + EXPIRY_SKEW_MS) return { ok: false, reason: '_meta["com.pulsemcp/expires-at"]: is more than 24 hours ahead' };
  return {
    ok: true,
    prompt: {
      requestId: meta[META_REQUEST_ID],
      message,
      requestedSchema: requestedSchema as { [key: string]: Json },
      toolName: meta[META_TOOL_NAME] ?? null,
      callerSessionId: meta[META_SESSION_ID] ?? null,
      expiresAt,
    },
  };
}
