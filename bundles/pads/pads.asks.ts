// What the two pad tools that may ask bind and show: set_document (the whole text replaced) and replace_in_document
// (occurrences of an exact pair), each target as measured in the call's session, the fingerprint its approval is bound
// to, and its prompt, which shows pad ids, counts and the caller's pair, never a pad's content (docs/rules.md R-PAD-2,
// R-PAD-3, R-PAD-4, R-PAD-13).
import type { FingerprintInput } from "../kit/fingerprint";
import type { PromptSpec } from "../kit/prompt";
import { describeVerdict, type LossVerdict } from "./pads.loss";
import type { PadSession } from "./pads.session";

/** "1 character", "3 characters": a count in the bundle's words. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// ---- set_document ----

export interface SetTarget {
  mount: string;
  pad: string;
  before: number;
  beforeSha256: string;
  content: string;
  after: number;
  contentSha256: string;
  /** The session's revision when the pad was measured: the edit is built against it. */
  revision: number;
  session: PadSession;
  /** What replacing the whole text loses, judged as every edit is (R-PAD-13): any non-empty pad asks. */
  verdict: LossVerdict;
}

export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What an approval of set_document covers: this pad as it stood (length and digest) and this new text. */
export const setFingerprint = (t: SetTarget): FingerprintInput => ({
  operation: "set_document",
  target: { mount: t.mount, pad: t.pad, before_chars: t.before, before_sha256: t.beforeSha256, content_sha256: t.contentSha256 },
});

/** Why a prompt asks, as one line of the bundle's own words, or nothing when another rule asked (R-PAD-13). */
function askedBecause(verdict: LossVerdict): string[] {
  return verdict.asks ? [`Asked because ${describeVerdict(verdict)}.`] : [];
}

export function setPrompt(t: SetTarget): PromptSpec {
  return {
    heading: `This will replace the whole of pad "${t.pad}": ${plural(t.before, "character")} now, ${plural(t.after, "character")} after.`,
    consequence: "What is replaced cannot be restored. The pad's content is not shown here: pads are world-writable.",
    values: [{ label: "Pad", value: t.pad }],
  };
}

// ---- replace_in_document ----

export interface ReplaceTarget {
  mount: string;
  pad: string;
  search: string;
  replace: string;
  replaceAll: boolean;
  /** Occurrences the edit would change, measured in the open session: all of them, or the first. */
  count: number;
  before: number;
  after: number;
  starts: number[];
  text: string;
  revision: number;
  session: PadSession;
  /** What the edit loses, judged on the pad as it stands (R-PAD-13). */
  verdict: LossVerdict;
}

/** replace_in_document asks past one occurrence (R-PAD-3), or when what it removes needs a yes (R-PAD-13). */
export const replaceAsks = (t: ReplaceTarget): boolean => t.count > 1 || t.verdict.asks;

/** What an approval of replace_in_document covers: the pad, the exact pair, replace_all and the number of matches (docs/rules.md R-PAD-3). */
export const replaceFingerprint = (t: ReplaceTarget): FingerprintInput => ({
  operation: "replace_in_document",
  target: { mount: t.mount, pad: t.pad, search: t.search, replace: t.replace, replace_all: t.replaceAll, count: t.count },
});

export function replacePrompt(t: ReplaceTarget): PromptSpec {
  return {
    heading: `This will replace ${plural(t.count, "occurrence")} in pad "${t.pad}".`,
    consequence: [
      "What is replaced cannot be restored, and a search string that is shorter than",
      "intended matches in places nobody looked at.",
      `The pad holds ${plural(t.before, "character")} now and will hold ${plural(t.after, "character")} after.`,
      ...askedBecause(t.verdict),
    ].join("\n"),
    values: [
      { label: "Pad", value: t.pad },
      { label: "Search", value: t.search },
      { label: t.replace === "" ? "Replace with (empty: each match is deleted)" : "Replace with", value: t.replace },
    ],
  };
}
