// The approval channel the gateway puts on a confirmed tools/call, under _meta["dev.strad/elicitation"].
// Core never forwards a client's own _meta, so a bundle can treat this key as the gateway's word (docs/rules.md R-FWD-2).
import * as z from "zod";

export { APPROVER_META_KEY, CALLER_ID, CHANNEL_META_KEY, DECIDED_AT_META_KEY } from "./channel-keys";

import { CALLER_ID } from "./channel-keys";
import { codePointLength } from "./text";

/**
 * Where the call's record lives, so the send gate can claim it exactly once. `key` is the record's key: on
 * 2025-11-25 the session's name and the caller's request id (what a cancel names), on 2026-07-28 a per-call nonce
 * (docs/rules.md R-CALL-12); `nonce` is the gateway's own per-call value, so a late call cannot claim a newer call
 * that reuses its key.
 */
export const CallRefSchema = z.strictObject({
  scope: z.string().min(1),
  key: z.string().min(1),
  nonce: z.string().min(16),
});
export type CallRef = z.infer<typeof CallRefSchema>;

/** Who is calling, by roster id: the audit trail names it (docs/rules.md R-AUDIT-2). Never a token. */
const CallerSchema = z.string().regex(CALLER_ID).optional();

/**
 * The slug's `fallback` setting (worker/roster.ts): "token" lets a bundle that opts in fall back to the two-call
 * token when there is nobody to ask (docs/rules.md R-PAD-7). Absent: off.
 */
export const FallbackSchema = z.literal("token");

/** An approval address to ask at (the fallback-elicitation protocol). */
const AskAtUrlSchema = z.strictObject({
  slug: z.string(),
  url: z.string().url(),
  ttlMs: z.number().int().positive(),
  headers: z.record(z.string(), z.string()),
  call: CallRefSchema.optional(),
  caller: CallerSchema,
  fallback: FallbackSchema.optional(),
});
const RefusedSchema = z.strictObject({ slug: z.string(), refused: z.string().min(1), caller: CallerSchema });
const SkipSchema = z.strictObject({ slug: z.string(), skip: z.literal(true), ttlMs: z.number().int().positive().optional(), call: CallRefSchema.optional(), caller: CallerSchema });
// Nobody to ask (no approval address came with the call, or the slug declares no confirmations) on a slug whose
// roster entry says `fallback: token`: the call is registered as a confirmed one, so its write still claims it.
const FallbackChannelSchema = z.strictObject({ slug: z.string(), fallback: FallbackSchema, reason: z.string().min(1), ttlMs: z.number().int().positive(), call: CallRefSchema, caller: CallerSchema });
// The question goes to the client itself (docs/rules.md R-CHAN-15): a caller the roster declares human-backed
// (`asks: client`), on a slug with `clientQuestions: true`, over 2026-07-28 with form elicitation declared and no
// X-Elicitation-Url. The bundle answers input_required with a sealed requestState; the caller is what the seal binds.
// `fallback` as the slug declares it: under its bundle's ELICITATION=false the dialog is off here too, and the call
// takes the two-call token where the slug allows it (R-PAD-7), or is refused.
const ClientAskSchema = z.strictObject({
  slug: z.string(),
  ask: z.literal("client"),
  ttlMs: z.number().int().positive(),
  call: CallRefSchema,
  caller: z.string().regex(CALLER_ID),
  fallback: FallbackSchema.optional(),
});

export const ChannelSchema = z.union([AskAtUrlSchema, RefusedSchema, SkipSchema, FallbackChannelSchema, ClientAskSchema]);
export type Channel = z.infer<typeof ChannelSchema>;
export type AskChannel = Extract<Channel, { url: string }>;
export type FallbackChannel = Extract<Channel, { reason: string }>;
export type ClientChannel = Extract<Channel, { ask: "client" }>;

// parseChannel: the union's verdict by hand. Every call to a gated mount carries a channel, so the bundle reads one on
// every such call, reads included; zod's union built a refusal for each form it tried first and a copy of every
// level it accepted, about 4 KiB of such a call (docs/bench.md, part 7). The checks below are the forms' own, as zod
// makes them (a number is finite, an int is a safe integer; a length counts code points; an optional key may hold undefined; a strict object
// refuses any other key its for-in yields); the URL and the headers record are left to zod, whose URL check also
// trims what it accepts. test/contract/channel-parse.test.ts holds parseChannel to ChannelSchema's verdict and value.

const URL_CHECK = z.string().url();
const HEADERS_CHECK = z.record(z.string(), z.string());
const MISSING = Symbol("missing");
type Field = (value: unknown) => unknown;

const str: Field = (v) => (typeof v === "string" ? v : MISSING);
const minLength =
  (n: number): Field =>
  (v) =>
    typeof v === "string" && v.length >= n && (v.length >= 2 * n || codePointLength(v) >= n) ? v : MISSING;
const positiveInt: Field = (v) => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : MISSING);
const literal =
  (value: unknown): Field =>
  (v) =>
    v === value ? v : MISSING;
const callerId: Field = (v) => (typeof v === "string" && CALLER_ID.test(v) ? v : MISSING);
const viaZod =
  (schema: z.ZodType): Field =>
  (v) => {
    const parsed = schema.safeParse(v);
    return parsed.success ? parsed.data : MISSING;
  };
const strict =
  (fields: Record<string, Field>, optional: readonly string[] = []): Field =>
  (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return MISSING;
    const raw = v as Record<string, unknown>;
    for (const key in raw) if (!Object.hasOwn(fields, key)) return MISSING;
    const out: Record<string, unknown> = {};
    for (const key in fields) {
      const present = key in raw;
      const value = raw[key];
      if (optional.includes(key) && (!present || value === undefined)) {
        if (present) out[key] = undefined;
        continue;
      }
      if (!present) return MISSING;
      const checked = (fields[key] as Field)(value);
      if (checked === MISSING) return MISSING;
      out[key] = checked;
    }
    return out;
  };

const callRef = strict({ scope: minLength(1), key: minLength(1), nonce: minLength(16) });
/** Each form by the key only it has: every form is strict, so an entry holding one of these can only be that form, or none. */
const FORM_BY_KEY: readonly (readonly [string, Field])[] = [
  [
    "url",
    strict({ slug: str, url: viaZod(URL_CHECK), ttlMs: positiveInt, headers: viaZod(HEADERS_CHECK), call: callRef, caller: callerId, fallback: literal("token") }, ["call", "caller", "fallback"]),
  ],
  ["refused", strict({ slug: str, refused: minLength(1), caller: callerId }, ["caller"])],
  ["skip", strict({ slug: str, skip: literal(true), ttlMs: positiveInt, call: callRef, caller: callerId }, ["ttlMs", "call", "caller"])],
  ["reason", strict({ slug: str, fallback: literal("token"), reason: minLength(1), ttlMs: positiveInt, call: callRef, caller: callerId }, ["caller"])],
  ["ask", strict({ slug: str, ask: literal("client"), ttlMs: positiveInt, call: callRef, caller: callerId, fallback: literal("token") }, ["fallback"])],
];

/** ChannelSchema's verdict on `raw`: the channel it parses to, or undefined where it refuses it. */
export function parseChannel(raw: unknown): Channel | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  for (const [key, form] of FORM_BY_KEY) {
    // `in`, as zod reads an entry: a key found on the prototype counts here too.
    if (key in raw) {
      const parsed = form(raw);
      return parsed === MISSING ? undefined : (parsed as Channel);
    }
  }
  return undefined;
}
