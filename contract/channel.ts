// The approval channel the gateway puts on a confirmed tools/call, under _meta["dev.strad/elicitation"].
// Core never forwards a client's own _meta, so a bundle can treat this key as the gateway's word (docs/rules.md R-FWD-2).
import * as z from "zod";

export { APPROVER_META_KEY, CALLER_ID, CHANNEL_META_KEY, DECIDED_AT_META_KEY } from "./channel-keys";

import { CALLER_ID } from "./channel-keys";

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

export const ChannelSchema = z.union([
  z.strictObject({
    slug: z.string(),
    url: z.string().url(),
    ttlMs: z.number().int().positive(),
    headers: z.record(z.string(), z.string()),
    call: CallRefSchema.optional(),
    caller: CallerSchema,
    fallback: FallbackSchema.optional(),
  }),
  z.strictObject({ slug: z.string(), refused: z.string().min(1), caller: CallerSchema }),
  z.strictObject({ slug: z.string(), skip: z.literal(true), ttlMs: z.number().int().positive().optional(), call: CallRefSchema.optional(), caller: CallerSchema }),
  // Nobody to ask (no approval address came with the call, or the slug declares no confirmations) on a slug whose
  // roster entry says `fallback: token`: the call is registered as a confirmed one, so its write still claims it.
  z.strictObject({ slug: z.string(), fallback: FallbackSchema, reason: z.string().min(1), ttlMs: z.number().int().positive(), call: CallRefSchema, caller: CallerSchema }),
  // The question goes to the client itself (docs/rules.md R-CHAN-15): a caller the roster declares human-backed
  // (`asks: client`), on a slug with `clientQuestions: true`, over 2026-07-28 with form elicitation declared and no
  // X-Elicitation-Url. The bundle answers input_required with a sealed requestState; the caller is what the seal binds.
  // `fallback` as the slug declares it: under its bundle's ELICITATION=false the dialog is off here too, and the call
  // takes the two-call token where the slug allows it (R-PAD-7), or is refused.
  z.strictObject({ slug: z.string(), ask: z.literal("client"), ttlMs: z.number().int().positive(), call: CallRefSchema, caller: z.string().regex(CALLER_ID), fallback: FallbackSchema.optional() }),
]);
export type Channel = z.infer<typeof ChannelSchema>;
export type AskChannel = Extract<Channel, { url: string }>;
export type FallbackChannel = Extract<Channel, { reason: string }>;
export type ClientChannel = Extract<Channel, { ask: "client" }>;
