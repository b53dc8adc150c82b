// `npm run lint`: a small dependency-free lint and format check over the source folders. It prints
// "file:line: message" for every finding and exits 1 when there is any.
// Rules: no tabs, no trailing whitespace, a final newline; no console call that logs something named like a
// secret; no .only/.skip/.skipIf/.todo in tests (every rule keeps its test); no explicit `any` outside tests.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const LINTED_DIRS = ["worker", "durable-objects", "bundles", "test", "scripts"];
const TEXT_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json", ".toml", ".yaml", ".yml", ".md"];
const CODE_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"];
/** Generated state, dependencies and local tool folders are not ours to format. */
const SKIPPED_DIRS = new Set(["node_modules", "dist", "coverage"]);
const MAX_FILES = 5000;
const MAX_DEPTH = 12;

/** Identifiers whose value is a credential: a token, a secret, an approval URL, an Authorization header. */
const SECRET_NAME = /(authorization|elicitation_?url|access_?client_?secret|secret|token|password|passwd|bearer|api_?key|credential)/i;
/** Header names whose value is a credential, when a console call names them in a string (e.g. headers.get("authorization")). */
const SECRET_HEADERS = new Set(["authorization", "x-elicitation-url", "cf-access-client-secret", "cf-access-client-id", "cookie", "set-cookie"]);

function listFiles(root) {
  const files = [];
  const walk = (dir, depth) => {
    if (depth > MAX_DEPTH || files.length >= MAX_FILES) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1);
      else if (entry.isFile() && TEXT_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) files.push(path);
    }
  };
  for (const dir of LINTED_DIRS) {
    const path = join(root, dir);
    try {
      if (statSync(path).isDirectory()) walk(path, 0);
    } catch {
      // A folder that does not exist yet has nothing to lint.
    }
  }
  return files;
}

/**
 * Splits source into code with comments removed and string contents blanked, keeping line breaks so that
 * offsets map to the same lines. Template literals keep their ${...} expressions, which are code.
 * Returns the code text and the list of string literals with their offsets.
 */
export function stripSource(text) {
  const out = [];
  const strings = [];
  const templateDepth = []; // brace depth at which each open template's ${ began
  let depth = 0;
  let i = 0;
  const blank = (s) => s.replace(/[^\n]/g, " ");
  const readString = (quote, start) => {
    let j = start + 1;
    let value = "";
    while (j < text.length && text[j] !== quote && text[j] !== "\n") {
      if (text[j] === "\\") {
        value += text[j + 1] ?? "";
        j += 2;
      } else value += text[j++];
    }
    return { end: Math.min(j + 1, text.length), value };
  };
  const readTemplate = (start) => {
    // From just after a ` (or after the } closing a ${), up to the closing ` or the next ${.
    let j = start;
    while (j < text.length) {
      if (text[j] === "\\") j += 2;
      else if (text[j] === "`") return { end: j + 1, opensExpression: false };
      else if (text[j] === "$" && text[j + 1] === "{") return { end: j + 2, opensExpression: true };
      else j++;
    }
    return { end: text.length, opensExpression: false };
  };
  const readRegex = (start) => {
    // Up to the unescaped "/" outside a character class; flags are ordinary identifier characters.
    let j = start + 1;
    let inClass = false;
    while (j < text.length && text[j] !== "\n") {
      if (text[j] === "\\") j += 2;
      else if (text[j] === "[") (inClass = true), j++;
      else if (text[j] === "]") (inClass = false), j++;
      else if (text[j] === "/" && !inClass) return j + 1;
      else j++;
    }
    return j;
  };
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out.push(blank(text.slice(i, stop)));
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out.push(blank(text.slice(i, stop)));
      i = stop;
    } else if (c === "/" && startsRegex(out)) {
      const end = readRegex(i);
      out.push("/" + blank(text.slice(i + 1, end - 1)) + "/");
      i = end;
    } else if (c === '"' || c === "'") {
      const { end, value } = readString(c, i);
      strings.push({ offset: i, value });
      out.push(c + blank(text.slice(i + 1, end - 1)) + (end - 1 > i ? text[end - 1] : ""));
      i = end;
    } else if (c === "`" || (c === "}" && templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === depth)) {
      if (c === "}") templateDepth.pop();
      const { end, opensExpression } = readTemplate(i + 1);
      out.push(c + blank(text.slice(i + 1, end - (opensExpression ? 2 : 1))) + text.slice(end - (opensExpression ? 2 : 1), end));
      if (opensExpression) templateDepth.push(depth);
      i = end;
    } else {
      if (c === "{") depth++;
      else if (c === "}") depth--;
      out.push(c);
      i++;
    }
  }
  return { code: out.join(""), strings };
}

/** A "/" starts a regex literal (not a division) after an operator, an opening bracket or a keyword. */
function startsRegex(out) {
  let tail = "";
  for (let k = out.length - 1; k >= 0 && tail.trimEnd().length < 40; k--) tail = out[k] + tail;
  const before = tail.trimEnd();
  if (before === "") return true;
  if (/[(,=:[!&|?{};+\-*%<>~^]$/.test(before)) return true;
  return /\b(return|typeof|case|in|of|void|delete|throw|yield|await|else|do)$/.test(before);
}

function lineOf(text, offset) {
  let line = 1;
  for (let k = 0; k < offset && k < text.length; k++) if (text.charCodeAt(k) === 10) line++;
  return line;
}

/** The offset of the parenthesis closing the one at `open`, in stripped code (strings are blanked). */
function closingParen(code, open) {
  let depth = 0;
  for (let k = open; k < code.length && k < open + 20_000; k++) {
    if (code[k] === "(") depth++;
    else if (code[k] === ")" && --depth === 0) return k;
  }
  return code.length;
}

function isTestFile(rel) {
  return /\.test\.[cm]?[jt]s$/.test(rel);
}

/** Findings for one file, as { line, message }. `rel` is the path from the repository root, with "/". */
export function lintText(rel, text) {
  const findings = [];
  const add = (line, message) => findings.push({ line, message });
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    if (line.includes("\t")) add(index + 1, "tab character (indent with spaces)");
    if (/[ \t]+\r?$/.test(line)) add(index + 1, "trailing whitespace");
  });
  if (text.length > 0 && !text.endsWith("\n")) add(lines.length, "file does not end with a newline");

  if (!CODE_EXTENSIONS.some((ext) => rel.endsWith(ext))) return findings;
  const { code, strings } = stripSource(text);

  for (const match of code.matchAll(/\bconsole\s*\.\s*(log|info|warn|error|debug|trace|dir)\s*\(/g)) {
    const open = (match.index ?? 0) + match[0].length - 1;
    const close = closingParen(code, open);
    // Object keys name a field, not a value ({ secrets: names } logs names); drop them before matching.
    const args = code.slice(open + 1, close).replace(/([{,]\s*)[A-Za-z_$][\w$]*\s*:/g, "$1");
    const named = [...args.matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => m[0]).find((id) => SECRET_NAME.test(id));
    const header = strings.find((s) => s.offset > open && s.offset < close && SECRET_HEADERS.has(s.value.toLowerCase()));
    if (named !== undefined) add(lineOf(text, match.index ?? 0), `console.${match[1]} logs "${named}", which is named like a secret`);
    else if (header !== undefined) add(lineOf(text, match.index ?? 0), `console.${match[1]} logs the ${header.value} header, which carries a secret`);
  }

  if (rel.startsWith("test/") || isTestFile(rel)) {
    for (const match of code.matchAll(/\.\s*(only|skip|skipIf|todo)\s*\(/g)) {
      add(lineOf(text, match.index ?? 0), `.${match[1]}( in a test: every test runs, none is focused or skipped`);
    }
  }

  if (/\.[cm]?ts$/.test(rel) && !isTestFile(rel)) {
    const anyPattern = /(?::\s*any\b|\bas\s+any\b|<\s*any\s*>|\bany\s*\[\s*\]|[<,]\s*any\s*[,>])/g;
    for (const match of code.matchAll(anyPattern)) add(lineOf(text, match.index ?? 0), "explicit any (name the type, or use unknown)");
  }
  return findings;
}

/** Every finding under `root`, as "path:line: message", sorted by path and line. */
export function lintTree(root) {
  const found = [];
  for (const file of listFiles(root)) {
    const rel = relative(root, file).split(sep).join("/");
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue; // removed since it was listed: others work in this tree at the same time
    }
    for (const f of lintText(rel, text)) found.push({ rel, ...f });
  }
  found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : a.line - b.line));
  return found.map((f) => `${f.rel}:${f.line}: ${f.message}`);
}

function main() {
  const root = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url));
  const messages = lintTree(root);
  for (const m of messages) process.stderr.write(`${m}\n`);
  if (messages.length > 0) {
    process.stderr.write(`lint: ${messages.length} problem(s)\n`);
    return 1;
  }
  process.stdout.write("lint: ok\n");
  return 0;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = main();
