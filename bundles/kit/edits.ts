// Edits by the person (docs/rules.md R-EDIT-1 to R-EDIT-7): a tool declares which of its arguments a person may
// correct on the card, the question carries them as a form beside the confirm box (the elicitation's
// requestedSchema, the model's values as defaults), and the answer's content is read back here into the call that
// runs. A "narrow" field may only lose entries (a recipient unticked), never gain or change one; a "free" field may
// change within the tool's own schema. Pure: what the edited call is, or why there is none.
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { CONFIRM_SCHEMA } from "../../contract/elicitation";
import { cleanLine, hasUnsafe } from "../../contract/text";

export type EditMode = "free" | "narrow";
/** `label`: what the card calls the field (default: its name, capitalised). `conceal`: the answer names the field, never its value. */
export type EditRule = EditMode | { mode: EditMode; label?: string; conceal?: boolean };
/** The arguments a person may edit, by name: `{ subject: "free", to: "narrow" }`. */
export type Editable = Readonly<Record<string, EditRule>>;

/**
 * The form's size in bytes of JSON at most: the create body's envelope (contract/elicitation.ts CREATE_ENVELOPE_BYTES,
 * 64 KiB) holds the schema and _meta beside the message, so a field whose value would not fit is left off the card.
 */
export const MAX_FORM_BYTES = 32 * 1024;
/** A list offered for narrowing holds at most this many distinct entries, each at most MAX_OPTION_CHARS (the approval service's limits). */
export const MAX_LIST_OPTIONS = 64;
export const MAX_OPTION_CHARS = 1024;

export interface EditField {
  name: string;
  mode: EditMode;
  label: string;
  conceal: boolean;
  /** A free field is text; a narrow one is a list of text. */
  kind: "text" | "list";
  maxLength?: number;
}

export interface EditPlan {
  tool: string;
  fields: readonly EditField[];
  /** The tool's own input schema: an edited call passes it or does not run. */
  schema: StandardSchemaWithJSON;
}

type JsonSchema = { type?: unknown; items?: { type?: unknown }; maxLength?: unknown; properties?: Record<string, JsonSchema> };

const labelOf = (name: string) => {
  const words = name.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * Checks a tool's declaration against its input schema when the tool is registered, so a wrong one fails at
 * start-up, never on a call: a free field must be a string argument, a narrow one a list of strings, and no field
 * may be called "confirm" (the form's own box). Undefined when the tool declares nothing editable.
 */
export function planEdits(tool: string, schema: StandardSchemaWithJSON, editable: Editable | undefined): EditPlan | undefined {
  if (editable === undefined || Object.keys(editable).length === 0) return undefined;
  const json = schema["~standard"].jsonSchema.input({ target: "draft-2020-12" }) as JsonSchema;
  const fields: EditField[] = [];
  for (const [name, rule] of Object.entries(editable)) {
    const { mode, label, conceal } = typeof rule === "string" ? { mode: rule, label: undefined, conceal: undefined } : rule;
    if (name === "confirm") throw new Error(`tool "${tool}" cannot offer an argument named "confirm" for editing: the form's confirm box has that name`);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw new Error(`tool "${tool}" offers "${name}" for editing, which is not a form property name`);
    const property = json.properties?.[name];
    if (property === undefined) throw new Error(`tool "${tool}" offers "${name}" for editing, but its input schema has no such argument`);
    const isText = property.type === "string";
    const isList = property.type === "array" && property.items?.type === "string";
    if (mode === "free" && !isText) throw new Error(`tool "${tool}" offers "${name}" as free text, but that argument is not a string`);
    if (mode === "narrow" && !isList) throw new Error(`tool "${tool}" offers "${name}" for narrowing, but that argument is not a list of strings`);
    fields.push({
      name,
      mode,
      label: label ?? labelOf(name),
      conceal: conceal === true,
      kind: isText ? "text" : "list",
      ...(typeof property.maxLength === "number" ? { maxLength: property.maxLength } : {}),
    });
  }
  return { tool, fields, schema };
}

/** One field on the card, with the model's value as its default. */
export interface Offered {
  field: EditField;
  value: string | readonly string[];
}

export interface EditForm {
  /** The elicitation's requestedSchema: the offered fields, then the confirm box (the only required property). */
  schema: Record<string, unknown>;
  offered: readonly Offered[];
}

const FREE_HELP = "You may correct this before accepting; what you change is shown before you accept.";
const NARROW_HELP = "Untick an entry to leave it out. Nothing can be added or changed here.";

function property(o: Offered): Record<string, unknown> {
  const { field } = o;
  if (field.kind === "text") {
    return { type: "string", title: field.label, description: FREE_HELP, ...(field.maxLength === undefined ? {} : { maxLength: field.maxLength }), default: o.value };
  }
  const list = o.value as readonly string[];
  return { type: "array", title: field.label, description: NARROW_HELP, maxItems: list.length, items: { type: "string", enum: [...new Set(list)] }, default: [...list] };
}

function bytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).byteLength;
}

/**
 * The form for this call: every declared field the model gave a value to, in declaration order, as long as the
 * whole stays under MAX_FORM_BYTES (a field that would not fit, a list with nothing to remove or too many entries
 * for the service, is left off and cannot be edited). Undefined when nothing is offered: the question is the
 * plain confirm box.
 */
export function editForm(plan: EditPlan | undefined, args: unknown): EditForm | undefined {
  if (plan === undefined || typeof args !== "object" || args === null) return undefined;
  const given = args as Record<string, unknown>;
  const offered: Offered[] = [];
  const properties: Record<string, unknown> = {};
  let size = bytes(CONFIRM_SCHEMA);
  for (const field of plan.fields) {
    const value = given[field.name];
    let candidate: Offered | undefined;
    if (field.kind === "text" && typeof value === "string") candidate = { field, value };
    if (field.kind === "list" && Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")) {
      const list = value as string[];
      if (new Set(list).size <= MAX_LIST_OPTIONS && list.every((v) => v.length <= MAX_OPTION_CHARS)) candidate = { field, value: [...list] };
    }
    if (candidate === undefined) continue;
    const entry = property(candidate);
    const grown = size + bytes(field.name) + 1 + bytes(entry) + 1;
    if (grown > MAX_FORM_BYTES) continue;
    size = grown;
    properties[field.name] = entry;
    offered.push(candidate);
  }
  if (offered.length === 0) return undefined;
  return {
    schema: { type: "object", properties: { ...properties, confirm: CONFIRM_SCHEMA.properties.confirm }, required: ["confirm"] },
    offered,
  };
}

/** One field the person changed: its value as offered and as answered. */
export interface Change {
  field: EditField;
  before: string | readonly string[];
  after: string | readonly string[];
}

export type EditRefusalCode = "edit_not_offered" | "edit_widened" | "edit_invalid";
export type EditRead = { ok: true; changes: readonly Change[] } | { ok: false; code: EditRefusalCode; why: string };

/** What a person cannot see in an edit: the one sanitiser's unsafe characters (contract/text.ts) but the line feed and tab, which a text box shows. */
const hiddenInEdit = (text: string) => hasUnsafe(text.replace(/[\n\t]/g, ""));

/** Whether `after` keeps entries of `before` only, in their order, each no more often than it was there. */
export function isNarrowing(before: readonly string[], after: readonly string[]): boolean {
  let at = 0;
  for (const item of after) {
    while (at < before.length && before[at] !== item) at++;
    if (at === before.length) return false;
    at++;
  }
  return true;
}

const named = (key: string) => `"${cleanLine(key, 64, { collapse: true })}"`;

/**
 * What the person changed, read from an accept's content (docs/rules.md R-EDIT-3): a key the card did not offer
 * (besides "confirm") is refused, a value of the wrong type is refused, a narrow field that gained, changed or
 * reordered an entry is refused, and free text holding a character nobody could see is refused. A field left out,
 * or answered with the value offered, is unchanged. No content beyond `{confirm: true}` is the original call.
 */
export function readEdits(form: EditForm | undefined, content: Record<string, unknown>): EditRead {
  const offered = new Map((form?.offered ?? []).map((o) => [o.field.name, o]));
  const changes: Change[] = [];
  for (const [key, after] of Object.entries(content)) {
    if (key === "confirm") continue;
    const o = offered.get(key);
    if (o === undefined) return { ok: false, code: "edit_not_offered", why: `the answer sets ${named(key)}, which the card did not offer to edit` };
    const { field } = o;
    if (field.kind === "text") {
      if (typeof after !== "string") return { ok: false, code: "edit_invalid", why: `the answer's ${named(key)} is not text` };
      if (after === o.value) continue;
      if (hiddenInEdit(after)) return { ok: false, code: "edit_invalid", why: `the edited ${named(key)} holds a control, invisible or bidi character, which nobody could have seen on the card` };
      changes.push({ field, before: o.value, after });
      continue;
    }
    if (!Array.isArray(after) || !after.every((v) => typeof v === "string")) return { ok: false, code: "edit_invalid", why: `the answer's ${named(key)} is not a list of text` };
    const before = o.value as readonly string[];
    if (after.length === before.length && after.every((v, i) => v === before[i])) continue;
    if (!isNarrowing(before, after)) {
      return { ok: false, code: "edit_widened", why: `${named(key)} may only lose entries, and the answer adds, changes or reorders one` };
    }
    changes.push({ field, before, after: [...after] });
  }
  return { ok: true, changes };
}

/** The call with the person's changes in place of the model's values. */
export function applyEdits<A>(args: A, changes: readonly Change[]): A {
  const edited: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const change of changes) edited[change.field.name] = Array.isArray(change.after) ? [...change.after] : change.after;
  return edited as A;
}

/** The edited call checked against the tool's own input schema, as a model's call is; the parsed value, or where it fails. */
export async function checkSchema(plan: EditPlan, args: unknown): Promise<{ ok: true; value: unknown } | { ok: false; why: string }> {
  const result = await plan.schema["~standard"].validate(args);
  if (result.issues === undefined) return { ok: true, value: result.value };
  const issue = result.issues[0];
  const path = (issue?.path ?? []).map((p) => String(typeof p === "object" && p !== null && "key" in p ? p.key : p)).join(".");
  return { ok: false, why: `the edited call fails the tool's own input schema${path === "" ? "" : ` at ${named(path)}`}: ${cleanLine(issue?.message ?? "invalid", 200, { collapse: true })}` };
}

const quoted = (value: string) => JSON.stringify(value);

/** The changed fields' names, sorted: what the audit line records (never their values). */
export function changedNames(changes: readonly Change[]): string[] {
  return changes.map((c) => c.field.name).sort();
}

/**
 * The line the tool's answer carries when the person edited the call (docs/rules.md R-EDIT-5): what ran, field by
 * field, so the agent knows exactly what went out. A concealed field is named, never shown.
 */
export function editsLine(changes: readonly Change[]): string {
  const parts = changes.map(({ field, before, after }) => {
    if (field.conceal) return `${field.name} was changed (its value is not shown)`;
    if (field.kind === "text") return `${field.name} is now ${quoted(after as string)}`;
    const kept = after as readonly string[];
    const removed = [...(before as readonly string[])];
    for (const item of kept) removed.splice(removed.indexOf(item), 1);
    return `${field.name} lost ${removed.map(quoted).join(", ")} and is now [${kept.map(quoted).join(", ")}]`;
  });
  return `The person edited this call before approving it, and what ran is their version, not the one proposed: ${parts.join("; ")}.`;
}
