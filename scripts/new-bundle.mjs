// `npm run new-bundle <name>`: scaffolds a bundle in one command. It writes bundles/<name>/ (entry, tools with
// one read and one guarded write, bundle.json listing its mount, wrangler.toml, .dev.vars.example) and its
// contract test, then adds the gateway's [[services]] binding to wrangler.toml and a server to the roster.
// The dev stack, the e2e suite and the bench find the new Worker through scripts/workers.mjs.
// `npm run new-bundle -- --remove <name>` undoes exactly that, and refuses if any of it was edited since
// (`--force` removes what is unedited). `--root <dir>` works on another copy of the tree (the tests' copies).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { bindingOf, scaffoldFiles, serverBlock, serviceOf, servicesBlock } from "./bundle-templates.mjs";
import { gatewayEnvNames, gatewayServices } from "./bundle-tree.mjs";
import { discoverWorkers, ROOT } from "./workers.mjs";

const USAGE = "usage: npm run new-bundle -- <name> [--root <dir>]\n       npm run new-bundle -- --remove <name> [--force] [--root <dir>]\n";
/** A roster slug that also makes a binding name and a TypeScript identifier: it starts with a letter. */
const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const MAX_NAME = 40;
const RESERVED = new Set(["kit"]);
/** Git-ignored state wrangler keeps beside a config it ran: not anyone's work, so it goes with the folder. */
const LOCAL_STATE = ".wrangler";

/** The roster with the server added as the last item of `servers:`, by text so every comment stays; and the block added. */
function withServer(text, name) {
  const lines = (text.endsWith("\n") ? text : `${text}\n`).split("\n");
  const start = lines.findIndex((l) => /^servers:\s*(#.*)?$/.test(l));
  if (start === -1) throw new Error("the roster has no block-style `servers:` list to add to; add the server by hand");
  let end = lines.length;
  for (let j = start + 1; j < lines.length; j++) {
    if (/^[^\s#-]/.test(lines[j])) {
      end = j;
      break;
    }
  }
  // Blank lines and column-0 comments just before the next key (or the end) are not the list's.
  while (end > start + 1 && (lines[end - 1].trim() === "" || lines[end - 1].startsWith("#"))) end--;
  const indent = /^(\s*)- /.exec(lines.slice(start + 1, end).find((l) => /^\s*- /.test(l)) ?? "  - ")[1].length;
  const block = serverBlock(name, indent);
  lines.splice(end, 0, block);
  return { text: lines.join("\n"), block };
}

function serversOf(yamlText) {
  const servers = parseYaml(yamlText)?.servers;
  return Array.isArray(servers) ? servers : [];
}

/** Why `name` cannot be a new bundle in `root`, or an empty list. */
export function nameProblems(name, root = ROOT) {
  if (!NAME.test(name)) return [`"${name}" is not a bundle name: lower-case letters and digits in words joined by single hyphens, starting with a letter`];
  const problems = [];
  if (name.length > MAX_NAME) problems.push(`"${name}" is longer than ${MAX_NAME} characters`);
  if (RESERVED.has(name)) problems.push(`"${name}" is reserved (bundles/${name} is the shared kit)`);
  if (existsSync(join(root, "bundles", name))) problems.push(`bundles/${name} already exists`);
  if (existsSync(join(root, "test", "bundles", name))) problems.push(`test/bundles/${name} already exists`);
  const workers = discoverWorkers(root);
  const service = serviceOf(name);
  for (const w of [workers.gateway, ...workers.bundles, workers.approvals, workers.fakes]) {
    if (w.name === service) problems.push(`the Worker ${service} already exists (${w.config})`);
  }
  if (gatewayEnvNames(root).has(bindingOf(name))) problems.push(`the gateway already has a binding, var or secret named ${bindingOf(name)}`);
  const servers = serversOf(readFileSync(join(root, "strad.dev.yaml"), "utf8"));
  if (servers.some((s) => s?.slug === name)) problems.push(`the roster already has a server with slug "${name}"`);
  if (servers.some((s) => s?.bundle === bindingOf(name))) problems.push(`the roster already names binding ${bindingOf(name)}`);
  return problems;
}

/** Writes the scaffold and its three additions; everything is computed and checked before the first write. */
export function createBundle(name, root = ROOT) {
  const problems = nameProblems(name, root);
  if (problems.length > 0) throw new Error(problems.join("\n"));
  const files = scaffoldFiles(name, root);
  const wranglerPath = join(root, "wrangler.toml");
  const wrangler = readFileSync(wranglerPath, "utf8");
  const rosterPath = join(root, "strad.dev.yaml");
  const roster = readFileSync(rosterPath, "utf8");
  const added = withServer(roster, name);
  const before = serversOf(roster).length;
  const after = serversOf(added.text);
  const entry = after.find((s) => s?.slug === name);
  if (after.length !== before + 1 || entry?.bundle !== bindingOf(name) || entry?.path !== `/${name}`) {
    throw new Error("adding the server to strad.dev.yaml by text did not give the expected roster; add it by hand");
  }
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  copyFileSync(join(root, "bundles", name, ".dev.vars.example"), join(root, "bundles", name, ".dev.vars"));
  writeFileSync(wranglerPath, `${wrangler.endsWith("\n") ? wrangler : `${wrangler}\n`}${servicesBlock(name)}`);
  writeFileSync(rosterPath, added.text);
  return [
    ...Object.keys(files).map((rel) => `wrote ${rel}`),
    `wrote bundles/${name}/.dev.vars (local only, git-ignored)`,
    `added [[services]] ${bindingOf(name)} -> ${serviceOf(name)} to wrangler.toml`,
    `added the server "${name}" (bundle ${bindingOf(name)}, path /${name}) to strad.dev.yaml`,
    `next: npm run check-config strad.dev.yaml && npx vitest run --project unit test/bundles/${name}; then npm run dev and call /mcp?servers=${name}; to deploy it, add the server to strad.config.yaml too`,
  ];
}

/**
 * Removes exactly what createBundle added. Anything since edited (a file, the binding, the server) or added
 * beside it makes it refuse and change nothing; with `force` it removes what is still as written and lists
 * the rest.
 */
export function removeBundle(name, root = ROOT, { force = false } = {}) {
  if (!NAME.test(name)) throw new Error(`"${name}" is not a bundle name`);
  const files = scaffoldFiles(name, root);
  // The local copy counts as written while it still equals its example.
  files[`bundles/${name}/.dev.vars`] = files[`bundles/${name}/.dev.vars.example`];
  const ours = [];
  const left = [];
  for (const [rel, text] of Object.entries(files)) {
    if (!existsSync(join(root, rel))) continue;
    if (readFileSync(join(root, rel), "utf8") === text) ours.push(rel);
    else left.push(`${rel} was changed`);
  }
  for (const dir of [`bundles/${name}`, `test/bundles/${name}`]) {
    if (!existsSync(join(root, dir))) continue;
    for (const entry of readdirSync(join(root, dir))) {
      if (files[`${dir}/${entry}`] === undefined && entry !== LOCAL_STATE) left.push(`${dir}/${entry} was not written by new-bundle`);
    }
  }
  const wranglerPath = join(root, "wrangler.toml");
  const wrangler = readFileSync(wranglerPath, "utf8");
  const services = servicesBlock(name);
  const hasServices = wrangler.includes(services);
  if (!hasServices && gatewayServices(root).some((s) => s.binding === bindingOf(name))) left.push(`wrangler.toml: the [[services]] entry for ${bindingOf(name)} was changed`);
  const rosterPath = join(root, "strad.dev.yaml");
  const roster = readFileSync(rosterPath, "utf8");
  const item = roster.split("\n").find((l) => l.trimStart() === `- slug: ${name}`);
  const server = `${serverBlock(name, item === undefined ? 2 : item.indexOf("-"))}\n`;
  const hasServer = roster.includes(server);
  if (!hasServer && serversOf(roster).some((s) => s?.slug === name)) left.push(`strad.dev.yaml: the server "${name}" was changed`);
  if (left.length > 0 && !force) throw new Error([...left, "nothing was removed (--force removes what is still as new-bundle wrote it and leaves the rest)"].join("\n"));

  const done = [];
  for (const rel of ours) {
    rmSync(join(root, rel));
    done.push(`removed ${rel}`);
  }
  for (const dir of [`bundles/${name}`, `test/bundles/${name}`]) {
    if (!existsSync(join(root, dir))) continue;
    const rest = readdirSync(join(root, dir));
    if (rest.every((entry) => entry === LOCAL_STATE)) rmSync(join(root, dir), { recursive: true });
  }
  if (hasServices) {
    writeFileSync(wranglerPath, wrangler.replace(services, ""));
    done.push(`removed [[services]] ${bindingOf(name)} from wrangler.toml`);
  }
  if (hasServer) {
    writeFileSync(rosterPath, roster.replace(server, ""));
    done.push(`removed the server "${name}" from strad.dev.yaml`);
  }
  return { done, left };
}

function main(argv) {
  let root = ROOT;
  let remove = false;
  let force = false;
  let unknown = false;
  const names = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--root" && argv[i + 1] !== undefined) root = argv[++i];
    else if (arg === "--remove") remove = true;
    else if (arg === "--force") force = true;
    else if (arg.startsWith("-")) unknown = true;
    else names.push(arg);
  }
  if (unknown || names.length !== 1 || (force && !remove)) {
    process.stderr.write(USAGE);
    return 1;
  }
  const name = names[0];
  try {
    if (!remove) {
      process.stdout.write(`${createBundle(name, root).join("\n")}\n`);
      return 0;
    }
    const { done, left } = removeBundle(name, root, { force });
    if (done.length > 0) process.stdout.write(`${done.join("\n")}\n`);
    if (left.length > 0) process.stderr.write(`left for you to remove by hand:\n${left.join("\n")}\n`);
    if (done.length === 0 && left.length === 0) process.stdout.write(`nothing of bundle "${name}" was found\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`new-bundle: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
