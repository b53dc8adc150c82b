// `node scripts/check-secret-logs.mjs [root]`, part of `npm run lint`: the one rule Biome has no equivalent for.
// No console call may log something named like a secret (a token, an approval URL, an Authorization header).
// It prints "file:line: message" for every finding and exits 1 when there is any.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const CHECKED_DIRS = ["contract", "worker", "durable-objects", "bundles", "approvals", "scripts", "test", "types"];
const CODE_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"];
/** Dependencies and build output are not ours; dot-folders (.wrangler, .xdg) are local tool state. */
const SKIPPED_DIRS = new Set(["node_modules", "dist", "coverage", "test-output"]);
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
      else if (entry.isFile() && CODE_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) files.push(path);
    }
  };
  for (const dir of CHECKED_DIRS) {
    const path = join(root, dir);
    try {
      if (statSync(path).isDirectory()) walk(path, 0);
    } catch {
      // A folder that does not exist yet has nothing to check.
    }
  }
  return files;
}

/**
 * Splits source into code with comments removed and string contents blanked, keeping line breaks so that
 * offsets map to the same lines. Template literals keep their ${...} expressions, which are code.
 * Returns the code text and the list of string literals with their offsets.
 */
function stripSource(text) {
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
      if (text[j] === "/" && !inClass) return j + 1;
      if (text[j] === "[") inClass = true;
      else if (text[j] === "]") inClass = false;
      j += text[j] === "\\" ? 2 : 1;
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
      out.push(`/${blank(text.slice(i + 1, end - 1))}/`);
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

/** Every console call in `text` (JavaScript or TypeScript source) that logs a secret, as { line, message }. */
export function secretLogs(text) {
  const findings = [];
  const { code, strings } = stripSource(text);
  for (const match of code.matchAll(/\bconsole\s*\.\s*(log|info|warn|error|debug|trace|dir)\s*\(/g)) {
    const open = (match.index ?? 0) + match[0].length - 1;
    const close = closingParen(code, open);
    // Object keys name a field, not a value ({ secrets: names } logs names); drop them before matching.
    const args = code.slice(open + 1, close).replace(/([{,]\s*)[A-Za-z_$][\w$]*\s*:/g, "$1");
    const named = [...args.matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => m[0]).find((id) => SECRET_NAME.test(id));
    const header = strings.find((s) => s.offset > open && s.offset < close && SECRET_HEADERS.has(s.value.toLowerCase()));
    const line = lineOf(text, match.index ?? 0);
    if (named !== undefined) findings.push({ line, message: `console.${match[1]} logs "${named}", which is named like a secret` });
    else if (header !== undefined) findings.push({ line, message: `console.${match[1]} logs the ${header.value} header, which carries a secret` });
  }
  return findings;
}

/** Every finding under `root`, as "path:line: message", sorted by path and line. */
export function checkTree(root) {
  const found = [];
  for (const file of listFiles(root)) {
    const rel = relative(root, file).split(sep).join("/");
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue; // removed since it was listed: others work in this tree at the same time
    }
    for (const f of secretLogs(text)) found.push({ rel, ...f });
  }
  found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : a.line - b.line));
  return found.map((f) => `${f.rel}:${f.line}: ${f.message}`);
}

function main() {
  const root = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url));
  const messages = checkTree(root);
  for (const m of messages) process.stderr.write(`${m}\n`);
  if (messages.length > 0) {
    process.stderr.write(`secret logs: ${messages.length} problem(s)\n`);
    return 1;
  }
  process.stdout.write("secret logs: ok\n");
  return 0;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = main();
