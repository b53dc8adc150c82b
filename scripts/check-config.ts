// `npm run check-config [file]`: validates a roster offline (default strad.config.yaml) with the same
// schema the Worker loads, printing every error as "<path>: <message>". Exit 0 and "ok", or exit 1.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseRoster } from "../worker/roster";

export function checkConfigText(text: string): { ok: boolean; lines: string[] } {
  const result = parseRoster(text);
  if (result.ok) return { ok: true, lines: ["ok"] };
  return { ok: false, lines: result.errors.map((e) => `${e.path}: ${e.message}`) };
}

function main(argv: readonly string[]): number {
  if (argv.length > 1) {
    process.stderr.write("usage: npm run check-config [file]\n");
    return 1;
  }
  const file = argv[0] ?? "strad.config.yaml";
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = error instanceof Error && "code" in error ? String(error.code) : "unreadable";
    process.stderr.write(`${file}: cannot read the file (${code})\n`);
    return 1;
  }
  const { ok, lines } = checkConfigText(text);
  (ok ? process.stdout : process.stderr).write(`${lines.join("\n")}\n`);
  return ok ? 0 : 1;
}

// Run only as a script, so a test can import checkConfigText without side effects.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = main(process.argv.slice(2));
