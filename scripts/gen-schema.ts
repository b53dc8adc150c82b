// `npm run gen:schema`: writes strad.config.schema.json (for editors) and docs/config.md (the key reference)
// from the one zod schema in worker/roster.ts, so neither is ever written by hand. A test regenerates both
// in memory and fails when a committed copy is out of date.
import { writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { RosterSchema } from "../worker/roster";

export const SCHEMA_FILE = "strad.config.schema.json";
export const DOC_FILE = "docs/config.md";

type JsonSchema = {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
};

/** The roster's input shape (what an operator writes, defaults optional) as JSON Schema 2020-12. */
export function buildJsonSchema(): JsonSchema {
  return z.toJSONSchema(RosterSchema, { io: "input" }) as JsonSchema;
}

export function generateJsonSchema(): string {
  return `${JSON.stringify(buildJsonSchema(), null, 2)}\n`;
}

interface Row {
  path: string;
  type: string;
  required: boolean;
  default: string;
  description: string;
}

/** A code span that survives a Markdown table cell: pipes escaped, backticks fenced by a longer run. */
function code(text: string): string {
  const escaped = text.replaceAll("|", "\\|");
  return escaped.includes("`") ? `\`\` ${escaped} \`\`` : `\`${escaped}\``;
}

function isMap(s: JsonSchema): boolean {
  return s.type === "object" && s.properties === undefined && typeof s.additionalProperties === "object";
}

function typeOf(s: JsonSchema): string {
  if (s.enum !== undefined) return `one of ${s.enum.map((v) => code(String(v))).join(", ")}`;
  if (s.type === "array" && s.items !== undefined) {
    const min = s.minItems !== undefined ? ` (at least ${s.minItems})` : "";
    return `list of ${typeOf(s.items)}${min}`;
  }
  if (isMap(s)) {
    const key = s.propertyNames?.pattern !== undefined ? `name matching ${code(s.propertyNames.pattern)}` : "name";
    const value = typeof s.additionalProperties === "object" ? typeOf(s.additionalProperties) : "value";
    return `map of ${key} to ${value}`;
  }
  const parts = s.minLength !== undefined && s.minLength > 0 ? ["non-empty", s.type ?? "value"] : [s.type ?? "value"];
  if (s.format !== undefined) parts.push(`(${s.format})`);
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum} to ${s.maximum}`);
  if (s.pattern !== undefined) parts.push(`matching ${code(s.pattern)}`);
  return parts.join(" ");
}

function collect(s: JsonSchema, path: string, required: boolean, rows: Row[]): void {
  rows.push({
    path,
    type: typeOf(s),
    required,
    default: s.default === undefined ? "" : code(JSON.stringify(s.default)),
    description: (s.description ?? "").replaceAll("|", "\\|").replaceAll("\n", " "),
  });
  const object = s.type === "array" && s.items?.type === "object" ? s.items : s;
  const base = object === s ? path : `${path}[]`;
  for (const [key, child] of Object.entries(object.properties ?? {})) {
    collect(child, `${base}.${key}`, object.required?.includes(key) ?? false, rows);
  }
}

/** Rules that span several keys: the schema enforces them in code (worker/roster.ts), so they are listed here. */
const CROSS_FIELD_RULES = [
  "`servers[].slug` is unique; so is `callers[].id`.",
  "A `bundle` server needs `bundle` and `path` and takes no `url`; a `remote-http` server needs `url` and takes no `bundle` or `path`.",
  "`confirmations`, `skipConfirmations` and `confirmationHeaders` are refused on a `remote-http` server: the approval URL and the edge credential are never sent to third-party code.",
  "`confirmations` and `skipConfirmations` cannot both be true.",
  "`confirmationHeaders` needs `confirmations: true`; nothing would ever send them otherwise.",
  "A `confirmationHeaders` name the bundle sets itself (`content-type`, `content-length`, `transfer-encoding`, `connection`, `host`, in any case) is refused.",
  "A `skipConfirmations` server cannot share its `bundle` and `path` with a `confirmations` server: the waiver would be an ungated door beside a gated one. `npm run check-config` also compares the service each binding resolves to in `wrangler.toml`, so two binding names for one Worker are one mount.",
  "Each `approvalUrlPrefixes` entry is one of `gateway.elicitation.allowedUrlPrefixes`, and the field needs `confirmations: true`. A server with `confirmationHeaders` reaches one origin (scheme, host and port) only: its `approvalUrlPrefixes`, or every allowed prefix when it has none, must all share one, so one approval service's edge credential is never sent to another.",
  "Two servers of one bundle cannot declare one bare `env` name with different values: the bundle has one environment. Write it per slug as `<SLUG>__NAME`.",
  "Every `gateway.elicitation.allowedUrlPrefixes` entry is an absolute URL in normal form, https (plain http only for 127.0.0.0/8, `[::1]` or `localhost`), without userinfo, query or fragment, whose path ends in `/`.",
  "A `remote-http` server's `url` is https (plain http only for 127.0.0.0/8, `[::1]` or `localhost`) without userinfo: a credential goes in `headers`, which listings show by name only.",
  "A `headers` or `confirmationHeaders` value holds only visible characters, spaces and tabs. A `${VAR}` in one names a bare variable: a name holding `__` (a slug's namespace) or a caller's `tokenSecret` is refused.",
  "An unknown key anywhere is an error, so a typo never passes silently.",
];

export function generateConfigDoc(): string {
  const rows: Row[] = [];
  const root = buildJsonSchema();
  for (const [key, child] of Object.entries(root.properties ?? {})) collect(child, key, root.required?.includes(key) ?? false, rows);
  const lines = [
    "# strad.config.yaml reference",
    "",
    "<!-- Generated by `npm run gen:schema` from worker/roster.ts. Do not edit by hand: a test fails when this file is out of date. -->",
    "",
    `${root.description ?? ""} Check a file with \`npm run check-config [file]\`; editors validate against \`${SCHEMA_FILE}\`.`,
    "",
    "`[]` in a path stands for every entry of a list. A value may reference a Worker secret as `${VAR}`: it resolves from the",
    "slug's own namespace first (`<SLUG>__VAR`, the slug upper-cased with `-` as `_`), then the shared one (`VAR`).",
    "",
    "## Keys",
    "",
    "| Key | Type | Required | Default | Description |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map((r) => `| ${code(r.path)} | ${r.type} | ${r.required ? "yes" : "no"} | ${r.default} | ${r.description} |`),
    "",
    "## Rules across keys",
    "",
    ...CROSS_FIELD_RULES.map((rule) => `- ${rule}`),
    "",
  ];
  return lines.join("\n");
}

function main(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  writeFileSync(`${root}${SCHEMA_FILE}`, generateJsonSchema());
  writeFileSync(`${root}${DOC_FILE}`, generateConfigDoc());
  process.stdout.write(`wrote ${SCHEMA_FILE} and ${DOC_FILE}\n`);
}

// Run only as a script, so a test can import the generators without writing files.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) main();
