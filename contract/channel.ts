// The approval channel the gateway puts on a confirmed tools/call, under _meta["dev.strad/elicitation"].
// Core never forwards a client's own _meta, so a bundle can treat this key as the gateway's word (docs/rules.md R-FWD-2).
import { z } from "zod";

export const CHANNEL_META_KEY = "dev.strad/elicitation";

/**
 * Where the call's record lives, so the send gate can claim it exactly once. `key` is the caller's request id
 * (what a cancel names); `nonce` is the gateway's own per-call value, so a late call cannot claim a newer
 * call that reuses its request id.
 */
export const CallRefSchema = z.strictObject({
  scope: z.string().min(1),
  key: z.string().min(1),
  nonce: z.string().min(16),
});
export type CallRef = z.infer<typeof CallRefSchema>;

export const ChannelSchema = z.union([
  z.strictObject({
    slug: z.string(),
    url: z.string().url(),
    ttlMs: z.number().int().positive(),
    headers: z.record(z.string(), z.string()),
    call: CallRefSchema.optional(),
  }),
  z.strictObject({ slug: z.string(), refused: z.string().min(1) }),
  z.strictObject({ slug: z.string(), skip: z.literal(true), ttlMs: z.number().int().positive().optional(), call: CallRefSchema.optional() }),
]);
export type Channel = z.infer<typeof ChannelSchema>;
export type AskChannel = Extract<Channel, { url: string }>;
