// Edits by the person (docs/rules.md R-EDIT-1 to R-EDIT-7): a tool declares which of its arguments a person may
// correct on the card, the question carries them as a form beside the confirm box (the elicitation's
// requestedSchema, the model's values as defaults), and the answer's content is read back here into the call that
// runs. A "narrow" field may only lose entries (a recipient unticked), never gain or change one; a "free" field may
// change within the tool's own schema (a free list is offered as text, one entry per line); a "pick" field may be set
// to one of the choices the tool lists for this call (a folder the mailbox has), nothing else. A name may reach into a
// list of objects ("items.*.title": every item's title, one field each). Pure: what the edited call is, or why not.
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { CONFIRM_SCHEMA, MAX_FORM_PROPERTIES, MAX_LIST_OPTIONS, MAX_OPTION_CHARS } from "../../contract/elicitation";
import { cleanLine, hasUnsafe } from "../../contract/text";

export { MAX_LIST_OPTIONS, MAX_OPTION_CHARS };

export type EditMode = "free" | "narrow" | "pick";
/** A field's value as offered and as answered: text, or a list of text. */
export type EditValue = string | readonly string[];
/**
 * `label`: what the card calls the field (default: its name's last part, capitalised). `conceal`: the answer names the
 * field, never its value. `offers`: whether a value may be shown at all; a field whose value fails it is left off the
 * card, and a changed value that fails it is named in the answer, never shown (a 1Password URL holding credentials).
 * `choices` (a pick field only): what the person may pick from, read when the form is built, which runGuarded does after
 * the guard resolved the target, so a tool may fill it from what its resolve read; undefined: the field is not offered.
 */
export type EditRule = EditMode | { mode: EditMode; label?: string; conceal?: boolean; offers?: (value: EditValue) => boolean; choices?: () => readonly string[] | undefined };
/** The arguments a person may edit, by name: `{ subject: "free", to: "narrow", "items.*.title": "free" }`. */
export type Editable = Readonly<Record<string, EditRule>>;

/**
 * The form's size in bytes of JSON at most: the create body's envelope (contract/elicitation.ts CREATE_ENVELOPE_BYTES,
 * 64 KiB) holds the schema and _meta beside the message, so a field whose value would not fit is left off the card.
 */
export const MAX_FORM_BYTES = 32 * 1024;
export interface EditField {
  /** The form property's name: the argument's path, its list positions as numbers ("items.0.title"); in a plan, "*". */
  name: string;
  /** Where the value sits in the arguments. */
  path: readonly (string | number)[];
  mode: EditMode;
  label: string;
  conceal: boolean;
  /** Free text is "text", a free list "lines" (text, one entry per line), a narrow list "list", a pick "choice". */
  kind: "text" | "lines" | "list" | "choice";
  maxLength?: number;
  offers?: (value: EditValue) => boolean;
  choices?: () => readonly string[] | undefined;
}

export interface EditPlan {
  tool: string;
  fields: readonly EditField[];
  /** The tool's own input schema: an edited call passes it or does not run. */
  schema: StandardSchemaWithJSON;
}

type JsonSchema = { type?: unknown; items?: JsonSchema; maxLength?: unknown; properties?: Record<string, JsonSchema> };

const labelOf = (name: string) => {
  const words = (name.split(".").at(-1) ?? name).replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** The schema a path names: object properties by name, a list's entries by "*". */
function schemaAt(json: JsonSchema, path: readonly string[]): JsonSchema | undefined {
  let at: JsonSchema | undefined = json;
  for (const step of path) {
    if (at === undefined) return undefined;
    at = step === "*" ? (at.type === "array" ? at.items : undefined) : at.type === "object" || at.properties !== undefined ? at.properties?.[step] : undefined;
  }
  return at;
}

/**
 * Checks a tool's declaration against its input schema when the tool is registered, so a wrong one fails at
 * start-up, never on a call: a path must name an argument (through lists by "*"), a free field must be a string or
 * a list of strings, a narrow one a list of strings, a pick one a string with its choices, and no field may be called
 * "confirm" (the form's own box). Undefined when the tool declares nothing editable.
 */
export function planEdits(tool: string, schema: StandardSchemaWithJSON, editable: Editable | undefined): EditPlan | undefined {
  if (editable === undefined || Object.keys(editable).length === 0) return undefined;
  const json = schema["~standard"].jsonSchema.input({ target: "draft-2020-12" }) as JsonSchema;
  const fields: EditField[] = [];
  for (const [name, rule] of Object.entries(editable)) {
    const { mode, label, conceal } = typeof rule === "string" ? { mode: rule, label: undefined, conceal: undefined } : rule;
    if (name === "confirm") throw new Error(`tool "${tool}" cannot offer an argument named "confirm" for editing: the form's confirm box has that name`);
    // A "*" stands for a list position: the form's name holds the number instead, within the same 64 characters.
    if (!/^[A-Za-z0-9_-]+(\.([A-Za-z0-9_-]+|\*))*$/.test(name) || name.length > 64) throw new Error(`tool "${tool}" offers "${name}" for editing, which is not a form property name`);
    const path = name.split(".");
    if (path.at(-1) === "*") throw new Error(`tool "${tool}" offers "${name}" for editing: a path ends at a named argument, not at a list position`);
    const property = schemaAt(json, path);
    if (property === undefined) throw new Error(`tool "${tool}" offers "${name}" for editing, but its input schema has no such argument`);
    const isText = property.type === "string";
    const isList = property.type === "array" && property.items?.type === "string";
    if (mode === "free" && !isText && !isList) throw new Error(`tool "${tool}" offers "${name}" as free text, but that argument is not a string or a list of strings`);
    if (mode === "narrow" && !isList) throw new Error(`tool "${tool}" offers "${name}" for narrowing, but that argument is not a list of strings`);
    if (mode === "pick" && !isText) throw new Error(`tool "${tool}" offers "${name}" to pick, but that argument is not a string`);
    const listed = typeof rule === "string" ? undefined : rule.choices;
    if ((mode === "pick") !== (listed !== undefined)) throw new Error(`tool "${tool}" offers "${name}": a pick field, and only a pick field, lists its choices`);
    const offers = typeof rule === "string" ? undefined : rule.offers;
    fields.push({
      name,
      path,
      mode,
      label: label ?? labelOf(name),
      conceal: conceal === true,
      kind: mode === "pick" ? "choice" : isText ? "text" : mode === "free" ? "lines" : "list",
      ...(isText && typeof property.maxLength === "number" ? { maxLength: property.maxLength } : {}),
      ...(offers === undefined ? {} : { offers }),
      ...(listed === undefined ? {} : { choices: listed }),
    });
  }
  return { tool, fields, schema };
}

/** One field on the card (its name and path with the list positions in place), with the model's value as its default. */
export interface Offered {
  field: EditField;
  value: EditValue;
  /** A pick field's choices, as offered. */
  choices?: readonly string[];
}

export interface EditForm {
  /** The elicitation's requestedSchema: the offered fields, then the confirm box (the only required property). */
  schema: Record<string, unknown>;
  offered: readonly Offered[];
}

const FREE_HELP = "You may correct this before accepting; what you change is shown before you accept.";
const LINES_HELP = `One entry per line. ${FREE_HELP}`;
const NARROW_HELP = "Untick an entry to leave it out. Nothing can be added or changed here.";
const PICK_HELP = "You may pick another of these choices, read from the service just now, before accepting; nothing else can be entered here.";

/** A free list as its text box holds it: one entry per line. */
const asLines = (list: readonly string[]) => list.join("\n");

function property(o: Offered): Record<string, unknown> {
  const { field } = o;
  const title = field.label;
  switch (field.kind) {
    case "text":
      return { type: "string", title, description: FREE_HELP, ...(field.maxLength === undefined ? {} : { maxLength: field.maxLength }), default: o.value };
    case "lines":
      return { type: "string", title, description: LINES_HELP, default: asLines(o.value as readonly string[]) };
    case "choice":
      // The protocol's single-select enum: the schema itself names the only values the answer may hold.
      return { type: "string", title, description: PICK_HELP, enum: [...(o.choices ?? [])], default: o.value };
    case "list": {
      const list = o.value as readonly string[];
      return { type: "array", title, description: NARROW_HELP, maxItems: list.length, items: { type: "string", enum: [...new Set(list)] }, default: [...list] };
    }
  }
}

function bytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).byteLength;
}

/** A declared field at every list position the arguments have: "items.*.title" over two items is items.0.title and items.1.title. */
function instances(field: EditField, args: unknown): { field: EditField; value: unknown }[] {
  let found: { path: (string | number)[]; value: unknown; of: string }[] = [{ path: [], value: args, of: "" }];
  for (const step of field.path) {
    const next: typeof found = [];
    for (const at of found) {
      if (step === "*") {
        if (!Array.isArray(at.value)) continue;
        const list = at.value as unknown[];
        list.forEach((value, i) => {
          next.push({ path: [...at.path, i], value, of: list.length > 1 ? `${at.of} (${i + 1} of ${list.length})` : at.of });
        });
      } else if (typeof at.value === "object" && at.value !== null && !Array.isArray(at.value) && Object.hasOwn(at.value, step)) {
        next.push({ path: [...at.path, step], value: (at.value as Record<string, unknown>)[step], of: at.of });
      }
    }
    found = next;
  }
  return found.map((at) => ({ field: { ...field, name: at.path.join("."), path: at.path, label: `${field.label}${at.of}` }, value: at.value }));
}

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");
const fitsOptions = (list: readonly string[]) => new Set(list).size <= MAX_LIST_OPTIONS && list.every((v) => v.length <= MAX_OPTION_CHARS);

function candidateOf(field: EditField, value: unknown): Offered | undefined {
  if (field.offers !== undefined && (typeof value === "string" || isStrings(value)) && !field.offers(value)) return undefined;
  switch (field.kind) {
    case "text":
      return typeof value === "string" ? { field, value } : undefined;
    case "lines":
      // Lines cannot hold an entry that is empty, holds a line break or starts or ends with a space: such a list is not offered.
      return isStrings(value) && value.every((v) => v !== "" && v === v.trim() && !/[\r\n]/.test(v)) ? { field, value: [...value] } : undefined;
    case "list":
      return isStrings(value) && value.length > 0 && fitsOptions(value) ? { field, value: [...value] } : undefined;
    case "choice": {
      const choices = field.choices?.();
      if (typeof value !== "string" || choices === undefined || !choices.includes(value)) return undefined;
      const unique = [...new Set(choices)];
      return fitsOptions(unique) ? { field, value, choices: unique } : undefined;
    }
  }
}

/**
 * The form for this call: every declared field the model gave a value to, in declaration order, as long as the
 * whole stays under MAX_FORM_BYTES (a field that would not fit, a list with nothing to remove or too many entries
 * for the service, a field past the service's MAX_FORM_PROPERTIES, a value the field's `offers` refuses, a pick whose
 * value is not among its choices, is left off and cannot be edited). Undefined when nothing is offered: the question is the
 * plain confirm box.
 */
export function editForm(plan: EditPlan | undefined, args: unknown): EditForm | undefined {
  if (plan === undefined || typeof args !== "object" || args === null) return undefined;
  const offered: Offered[] = [];
  const properties: Record<string, unknown> = {};
  let size = bytes(CONFIRM_SCHEMA);
  for (const declared of plan.fields) {
    for (const { field, value } of instances(declared, args)) {
      // The service takes at most MAX_FORM_PROPERTIES, the confirm box one of them: a field past that is not offered.
      if (offered.length >= MAX_FORM_PROPERTIES - 1) break;
      // A position's number may take a name past the form's 64 characters: that instance is not offered.
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(field.name)) continue;
      const candidate = candidateOf(field, value);
      if (candidate === undefined) continue;
      const entry = property(candidate);
      const grown = size + bytes(field.name) + 1 + bytes(entry) + 1;
      if (grown > MAX_FORM_BYTES) continue;
      size = grown;
      properties[field.name] = entry;
      offered.push(candidate);
    }
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
  before: EditValue;
  after: EditValue;
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
    if (field.kind === "text" || field.kind === "choice") {
      if (typeof after !== "string") return { ok: false, code: "edit_invalid", why: `the answer's ${named(key)} is not text` };
      if (after === o.value) continue;
      if (field.kind === "choice" && !(o.choices ?? []).includes(after)) {
        return { ok: false, code: "edit_not_offered", why: `the answer sets ${named(key)} to a value that is not one of the choices the card offered` };
      }
      if (hiddenInEdit(after)) return { ok: false, code: "edit_invalid", why: `the edited ${named(key)} holds a control, invisible or bidi character, which nobody could have seen on the card` };
      changes.push({ field, before: o.value, after });
      continue;
    }
    if (field.kind === "lines") {
      if (typeof after !== "string") return { ok: false, code: "edit_invalid", why: `the answer's ${named(key)} is not text` };
      const before = o.value as readonly string[];
      if (after === asLines(before)) continue;
      if (hiddenInEdit(after)) return { ok: false, code: "edit_invalid", why: `the edited ${named(key)} holds a control, invisible or bidi character, which nobody could have seen on the card` };
      // Blank lines separate nothing; an entry's own leading or trailing space is one nobody could tell apart on the card.
      const list = after.split("\n").filter((line) => line.trim() !== "");
      if (list.some((line) => line !== line.trim()))
        return { ok: false, code: "edit_invalid", why: `an entry of the edited ${named(key)} starts or ends with a space, which nobody could see on the card` };
      if (list.length === before.length && list.every((v, i) => v === before[i])) continue;
      changes.push({ field, before, after: list });
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

/** `at` with `value` at `path`, every object and list on the way copied, nothing of `at` changed. */
function setAt(at: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const [step, ...rest] = path;
  if (step === undefined) return value;
  if (typeof step === "number" && Array.isArray(at)) return at.map((v, i) => (i === step ? setAt(v, rest, value) : v));
  const object = typeof at === "object" && at !== null && !Array.isArray(at) ? (at as Record<string, unknown>) : {};
  return { ...object, [step]: setAt(object[String(step)], rest, value) };
}

/** The call with the person's changes in place of the model's values. */
export function applyEdits<A>(args: A, changes: readonly Change[]): A {
  let edited: unknown = args;
  for (const change of changes) edited = setAt(edited, change.field.path, Array.isArray(change.after) ? [...change.after] : change.after);
  return edited as A;
}

export type EditedArgs<A> = { ok: true; args: A; changes: readonly Change[] } | { ok: false; code: EditRefusalCode; why: string };

/**
 * An accept's content read into the call it makes (docs/rules.md R-EDIT-3, R-EDIT-4): the changes (readEdits), put in
 * place (applyEdits) and held to the tool's own input schema (checkSchema). No change: the arguments as proposed. The
 * tool then resolves the edited call under its own rules, as the kit's guard and 1Password's ask flow both do.
 */
export async function editedArgs<A>(plan: EditPlan, form: EditForm | undefined, args: A, content: Record<string, unknown>): Promise<EditedArgs<A>> {
  const read = readEdits(form, content);
  if (!read.ok) return read;
  if (read.changes.length === 0) return { ok: true, args, changes: [] };
  const checked = await checkSchema(plan, applyEdits(args, read.changes));
  if (!checked.ok) return { ok: false, code: "edit_invalid", why: checked.why };
  return { ok: true, args: checked.value as A, changes: read.changes };
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
    if (field.conceal || (field.offers !== undefined && !field.offers(after))) return `${field.name} was changed (its value is not shown)`;
    if (field.kind === "text" || field.kind === "choice") return `${field.name} is now ${quoted(after as string)}`;
    if (field.kind === "lines") return `${field.name} is now [${(after as readonly string[]).map(quoted).join(", ")}]`;
    const kept = after as readonly string[];
    const removed = [...(before as readonly string[])];
    for (const item of kept) removed.splice(removed.indexOf(item), 1);
    return `${field.name} lost ${removed.map(quoted).join(", ")} and is now [${kept.map(quoted).join(", ")}]`;
  });
  return `The person edited this call before approving it, and what ran is their version, not the one proposed: ${parts.join("; ")}.`;
}
