// What a person approves: the purpose and the payload, the payload as formatted JSON, under the same rules as every
// prompt (docs/rules.md R-FLOW-2): each line of the payload on a line of its own labelled "Payload", under the
// caller-values heading, no markup, and every value shown whole or the request refused before anyone is asked.
// The JSON shown is the payload itself, written so that nothing in it can forge or hide a line: every character the
// one sanitiser refuses, and any whitespace but a single space, is written as its JSON escape (\uXXXX), which reads
// back as the very same value.
import { UNSAFE_CHARS } from "../../contract/text";
import { buildPrompt, CALLER_VALUES_HEADING, MAX_BOUND_VALUE_CHARS, MAX_PROMPT_BYTES, PromptRefusal } from "../kit/prompt";

/** The largest payload a request stores and hands back, in bytes of compact JSON (UTF-8). */
export const MAX_PAYLOAD_BYTES = 32 * 1024;
/** How deep a payload may nest: every level indents its lines on the card. */
export const MAX_PAYLOAD_DEPTH = 16;
export const MAX_PURPOSE_CHARS = 500;
export const PAYLOAD_LABEL = "Payload";
export const PURPOSE_LABEL = "Purpose";

export type PayloadCheck = { ok: true; text: string } | { ok: false; reason: string };

/** Whether `value` is JSON through and through (as a tools/call argument always is), no deeper than the cap. */
function isJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || depth >= MAX_PAYLOAD_DEPTH) return false;
  if (Array.isArray(value)) return value.every((v) => isJson(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.keys(value).every((k) => isJson((value as Record<string, unknown>)[k], depth + 1));
}

/** The payload as stored and handed back: compact JSON of exactly what was given, or why it cannot be taken. */
export function checkPayload(value: unknown): PayloadCheck {
  if (value === undefined) return { ok: false, reason: "payload is required: the JSON value to approve and later apply" };
  if (!isJson(value, 0)) return { ok: false, reason: `payload must be JSON nested at most ${MAX_PAYLOAD_DEPTH} levels deep` };
  const text = JSON.stringify(value);
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_PAYLOAD_BYTES) return { ok: false, reason: `payload is ${bytes} bytes of JSON, more than the ${MAX_PAYLOAD_BYTES} a request holds` };
  return { ok: true, text };
}

const UNSAFE = new RegExp(`[${UNSAFE_CHARS}]|\\s`, "gu");
const jsonEscape = (ch: string): string =>
  [...ch]
    .map((c) => {
      const code = c.codePointAt(0) as number;
      // A character past the BMP is written as its surrogate pair, as JSON spells it.
      if (code > 0xffff) return `\\u${(0xd800 + ((code - 0x10000) >> 10)).toString(16).padStart(4, "0")}\\u${(0xdc00 + ((code - 0x10000) & 0x3ff)).toString(16).padStart(4, "0")}`;
      return `\\u${code.toString(16).padStart(4, "0")}`;
    })
    .join("");

/** A JSON string literal with nothing in it that could forge or hide a line, or pad a value out: still the same string. */
export function safeString(s: string): string {
  // JSON.stringify escapes controls, quotes, backslashes and lone surrogates; the rest is done here, outside escapes.
  const quoted = JSON.stringify(s);
  const inner = quoted.slice(1, -1).replace(UNSAFE, (ch) => (ch === " " ? ch : jsonEscape(ch)));
  // A run of spaces would pad a value: every space of a run is written escaped.
  return `"${inner.replace(/ {2,}/g, (run) => "\\u0020".repeat(run.length))}"`;
}

/** `value` as formatted JSON (two spaces per level), one line per entry, every string made safe by safeString. */
export function formatPayload(value: unknown, indent = ""): string[] {
  if (value === null || typeof value !== "object") return [typeof value === "string" ? safeString(value) : JSON.stringify(value)];
  const inner = `${indent}  `;
  const entries: string[][] = Array.isArray(value)
    ? value.map((v) => formatPayload(v, inner))
    : Object.keys(value).map((k) => {
        const [first = "", ...rest] = formatPayload((value as Record<string, unknown>)[k], inner);
        return [`${safeString(k)}: ${first}`, ...rest];
      });
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return [`${open}${close}`];
  const lines = [open];
  entries.forEach((entry, i) => {
    const last = i === entries.length - 1;
    entry.forEach((line, j) => {
      lines.push(`${j === 0 ? inner : ""}${line}${last || j !== entry.length - 1 ? "" : ","}`);
    });
  });
  lines.push(`${indent}${close}`);
  return lines;
}

export interface FlowPrompt {
  slug: string;
  purpose: string;
  payload: unknown;
  expiresAt: number;
}

/**
 * The prompt's text: the slug and what approving does, the expiry, then under the caller-values heading the purpose
 * and one "Payload:" line per line of the formatted payload. Throws PromptRefusal when the purpose or a payload line
 * is longer than a prompt shows whole, or the whole is over the approval service's cap.
 */
export function buildFlowPrompt(p: FlowPrompt): string {
  const head = buildPrompt(p.slug, {
    heading: "The agent asks you to approve the payload below before it carries it out.",
    // The person is told how long a yes lasts, and the bundle holds apply to it (docs/rules.md R-FLOW-12).
    consequence: [
      "If you approve, the agent is handed exactly this payload, once, to carry out; it cannot change it. If you decline, or nobody decides in time, nothing is handed out.",
      `This request expires at ${new Date(p.expiresAt).toISOString()}. Your approval lasts until then: the agent cannot carry the payload out after it.`,
    ].join("\n"),
    values: [{ label: PURPOSE_LABEL, value: p.purpose }],
  });
  const lines = formatPayload(p.payload);
  lines.forEach((line, i) => {
    const chars = [...line].length;
    if (chars > MAX_BOUND_VALUE_CHARS) {
      throw new PromptRefusal(
        `line ${i + 1} of the formatted payload is ${chars} characters long, more than the ${MAX_BOUND_VALUE_CHARS} a prompt shows whole, and it is never shown cut`,
        "value_too_long",
      );
    }
  });
  if (!head.includes(CALLER_VALUES_HEADING)) throw new Error("the prompt lost its caller-values heading");
  const text = [head, ...lines.map((line) => `  ${PAYLOAD_LABEL}: ${line}`)].join("\n");
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_PROMPT_BYTES) {
    throw new PromptRefusal(`the prompt would be ${bytes} bytes, more than the ${MAX_PROMPT_BYTES} the approval service takes, and it is never shown cut`, "too_large");
  }
  return text;
}
