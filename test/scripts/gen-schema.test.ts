// Covers scripts/gen-schema.ts: the committed strad.config.schema.json and docs/config.md are what the roster schema generates, and they describe every key.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildJsonSchema, DOC_FILE, generateConfigDoc, generateJsonSchema, SCHEMA_FILE } from "../../scripts/gen-schema";
import { ServerSchema } from "../../worker/roster";

const read = (rel: string): string => readFileSync(fileURLToPath(new URL(`../../${rel}`, import.meta.url)), "utf8");

describe("generated config files", () => {
  it(`${SCHEMA_FILE} is up to date (run npm run gen:schema)`, () => {
    expect(read(SCHEMA_FILE)).toBe(generateJsonSchema());
  });

  it(`${DOC_FILE} is up to date (run npm run gen:schema)`, () => {
    expect(read(DOC_FILE)).toBe(generateConfigDoc());
  });

  it("the JSON Schema describes the operator's input: defaults optional, unknown keys refused", () => {
    const schema = buildJsonSchema();
    expect(schema.additionalProperties).toBe(false);
    const servers = schema.properties?.servers?.items;
    expect(servers?.additionalProperties).toBe(false);
    expect(servers?.required).toEqual(["slug", "kind", "entitlements"]);
    expect(servers?.properties?.timeoutMs?.default).toBe(120_000);
  });

  it("the reference has a row, with a description, for every server key", () => {
    const doc = generateConfigDoc();
    for (const key of Object.keys(ServerSchema.shape)) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`servers[].${key}\` |`));
      expect(row, `no row for servers[].${key}`).toBeDefined();
      const description = row?.split(" | ").at(-1)?.replace(/ \|$/, "") ?? "";
      expect(description.length, `servers[].${key} has no description`).toBeGreaterThan(10);
    }
    expect(doc).toContain("| `gateway.elicitation.allowedUrlPrefixes` | list of string | no | `[]` |");
    expect(doc).toContain("| `servers[].timeoutMs` | integer 1000 to 3600000 | no | `120000` |");
  });
});
