// The channel's _meta keys and the caller id pattern, without the channel's schemas (contract/channel.ts): what the
// gateway needs of the channel at every call, kept apart so that its start does not evaluate zod (docs/bench.md).
export const CHANNEL_META_KEY = "dev.strad/elicitation";

/**
 * The key under which an approval service's poll answer may name who decided the prompt (an email, a dev
 * identity): beside the protocol's own `_meta` keys, which a client that does not know it ignores. The kit
 * writes it into its audit lines only, cleaned and capped (docs/rules.md R-AUDIT-4).
 */
export const APPROVER_META_KEY = "dev.strad/approver";

/**
 * The key under which an approval service's poll answer may say when a settled prompt became final: the store's
 * time of the decision (accept, decline, a dismissal's cancel), or the expiry itself for `expired`; ISO-8601 in UTC.
 * A flow that holds an approval past the call that asked can tell a decision made in time from one made after it
 * (docs/rules.md R-APPR-19).
 */
export const DECIDED_AT_META_KEY = "dev.strad/decided-at";

/** A roster caller id (worker/roster.ts holds the roster to the same pattern): lower-case letters, digits and single hyphens. */
export const CALLER_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
