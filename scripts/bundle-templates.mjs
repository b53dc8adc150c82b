// What `npm run new-bundle <name>` writes (scripts/new-bundle.mjs edits the tree with it): the bundle's files
// and its contract test, the gateway's [[services]] block and the roster's server. Names derive from <name>:
// binding <NAME> (upper case, "-" as "_"), Worker strad-bundle-<name>, factory <camelName>Server.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./workers.mjs";

export const bindingOf = (name) => name.toUpperCase().replaceAll("-", "_");
export const serviceOf = (name) => `strad-bundle-${name}`;
const factoryOf = (name) => `${name.replace(/-([a-z0-9])/g, (_m, c) => c.toUpperCase())}Server`;

/** The compatibility settings of the echo bundle (the gateway's if it is gone), copied line for line. */
function compatibilityLines(root) {
  const from = ["bundles/echo/wrangler.toml", "wrangler.toml"].map((f) => join(root, f)).find((f) => existsSync(f));
  const text = readFileSync(from, "utf8");
  const line = (key) => new RegExp(`^${key}\\s*=.*$`, "m").exec(text)?.[0];
  return [line("compatibility_date") ?? 'compatibility_date = "2026-04-26"', line("compatibility_flags") ?? 'compatibility_flags = ["nodejs_compat", "enable_request_signal"]'];
}

/** Biome's import order within one folder depth: by specifier, with "." before "-" before digits and letters. */
const sortKey = (spec) => spec.replaceAll(".", "\u0001").replaceAll("-", "\u0002");
const sortedImports = (lines) => [...lines].sort((a, b) => (sortKey(a.spec) < sortKey(b.spec) ? -1 : sortKey(a.spec) > sortKey(b.spec) ? 1 : 0)).map((l) => l.text);

/** Biome's order of the names in one import: by name, case aside. */
const sortedNames = (names) => [...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));

/** Every file the scaffold writes, relative to the root, with its text. */
export function scaffoldFiles(name, root = ROOT) {
  const binding = bindingOf(name);
  const factory = factoryOf(name);
  const dir = `bundles/${name}`;
  const appImports = sortedImports([
    { spec: "./bundle.json", text: 'import manifest from "./bundle.json";' },
    { spec: `./${name}.tools`, text: `import { ${factory} } from "./${name}.tools";` },
  ]);
  const testImports = sortedImports([
    { spec: `../../../bundles/${name}/${name}.app`, text: `import handler from "../../../bundles/${name}/${name}.app";` },
    { spec: `../../../bundles/${name}/${name}.tools`, text: `import { ${sortedNames(["CONFIRMED_TOOLS", factory]).join(", ")} } from "../../../bundles/${name}/${name}.tools";` },
    { spec: `../../../bundles/${name}/bundle.json`, text: `import manifest from "../../../bundles/${name}/bundle.json";` },
  ]);
  return {
    [`${dir}/bundle.json`]: `{
  "mounts": ["/${name}"]
}
`,
    [`${dir}/${name}.app.ts`]: `// The ${name} bundle: a service-bound Worker the gateway reaches over its binding ${binding}. It serves the mounts
// bundle.json lists (\`npm run check-config\` reads the same file); its tools are in ${name}.tools.ts.
import { serveBundle } from "../kit/mount";
${appImports.join("\n")}

export default serveBundle({ manifest, server: ${factory} });
`,
    [`${dir}/${name}.tools.ts`]: `// The ${name} bundle's tools: hello reads and answers at once; write_note writes, so it asks a person first and
// its request leaves only through the kit's send gate. bundles/README.md says what every tool must declare.
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import type { FingerprintInput } from "../kit/fingerprint";
import { always, guardedTool } from "../kit/guard";
import { currentScope } from "../kit/scope";

/** The ${name} bundle's registry of confirmed tools: every tool that asks a person, and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["write_note"]);

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

interface NoteTarget {
  note: string;
  mount: string;
}

/** What an approval of write_note covers: this note, on this mount. */
const noteWrite = (target: NoteTarget): FingerprintInput => ({ operation: "write_note", target: { note: target.note, mount: target.mount } });

export function ${factory}(mount: string): McpServer {
  const server = new McpServer({ name: \`strad-${name}/\${mount}\`, version: "0.1.0" });

  server.registerTool(
    "hello",
    { description: "Answers with the text it was given and the mount that served it.", inputSchema: z.object({ text: z.string().max(1_000) }), annotations: READ_ONLY },
    async ({ text }) => ({ content: [{ type: "text", text: \`\${mount}: \${text}\` }] }),
  );

  guardedTool(
    server,
    CONFIRMED_TOOLS,
    "write_note",
    {
      description: "Posts a note to this bundle's write endpoint. Asks a person first.",
      inputSchema: z.object({ note: z.string().min(1).max(2_000) }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    {
      rule: always,
      resolve: ({ note }): NoteTarget => ({ note, mount }),
      fingerprint: noteWrite,
      prompt: (target) => ({
        heading: "This will post a note to the ${name} write endpoint.",
        consequence: "A posted note cannot be taken back.",
        values: [{ label: "Note", value: target.note }],
      }),
      // \`write\` is the kit's send gate, the only way out: for a live call, a person's yes, this exact note, once.
      act: async (target, write) => {
        const url = currentScope().env.WRITE_URL;
        if (typeof url !== "string") return { content: [{ type: "text", text: "Not done: WRITE_URL is not set on this bundle." }], isError: true };
        const request = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ kind: "${name}.write_note", note: target.note, mount: target.mount }) };
        const response = await write(url, request, { binds: noteWrite(target), needsApproval: true });
        await response.body?.cancel().catch(() => {});
        if (!response.ok) return { content: [{ type: "text", text: \`Not done: the write endpoint answered HTTP \${response.status}.\` }], isError: true };
        return { content: [{ type: "text", text: "Posted." }] };
      },
    },
  );

  return server;
}
`,
    [`${dir}/wrangler.toml`]: `# The ${name} bundle (\`npm run new-bundle ${name}\`). No public route: only the gateway reaches it, over its
# service binding ${binding}.
name = "${serviceOf(name)}"
main = "${name}.app.ts"
${compatibilityLines(root).join("\n")}
# No workers.dev address and no Preview URLs (docs/rules.md R-DEPLOY-4); and the kit refuses any request that did not
# come over the gateway's binding (R-CHAN-13).
workers_dev = false
preview_urls = false

# WRITE_URL, where write_note posts, is deliberately not set here, so no local address ships. Locally it comes
# from .dev.vars beside this file (a copy of .dev.vars.example; wrangler dev reads the .dev.vars next to each
# config). In production set it under [vars] or as a secret; a credential goes per slug, as <SLUG>__NAME.

# The MCP SDK's schemas are built on first use, not at the Worker's start (bundles/echo/wrangler.toml says why).
[alias]
"@modelcontextprotocol/server/_shims" = "../../node_modules/@modelcontextprotocol/server/dist/shimsBrowser.mjs"

# The audit trail (docs/audit.md) is this Worker's console output, one JSON line per decision: Workers Logs
# keeps every line. Invocation logs stay off: they would record the gateway's requests' headers.
[observability]
enabled = true
head_sampling_rate = 1

[observability.logs]
invocation_logs = false

# The gateway's per-call records: the send gate claims a call here, at most once and only while it is live.
[[durable_objects.bindings]]
name = "CALLS"
class_name = "CallRegistry"
script_name = "strad-gateway"
`,
    [`${dir}/.dev.vars.example`]: `# Local development values for the ${name} bundle, for 127.0.0.1 only. \`npm run new-bundle\` copied this file to
# .dev.vars beside it, which wrangler dev reads for this Worker alone; production values are [vars] or secrets.
# Where write_note posts: the fakes' recorder (\`curl http://127.0.0.1:8789/recorder/events\` shows the writes).
WRITE_URL="http://127.0.0.1:8789/recorder/events"
`,
    [`test/bundles/${name}/contract.unit.test.ts`]: `// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the ${name} bundle on every mount its bundle.json lists (hello answers unasked, write_note alone is confirmed and refuses without a channel), and write_note's write: once a person accepts, exactly one post, through the gate.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
${testImports.join("\n")}
import { bundleContract } from "../kit/contract";
import { askChannel, callBundle, fakeCalls } from "../kit/helpers/bundle";
import { HostileServer, startSink } from "../kit/helpers/hostile-server";

const mounts = manifest.mounts.map((path) => path.slice(1));

bundleContract({
  bundle: "${name}",
  handler,
  factory: ${factory},
  mounts,
  registry: CONFIRMED_TOOLS,
  tools: {
    hello: { asks: "never", args: { text: "hi" } },
    write_note: { asks: "always", args: { note: "contract" } },
  },
});

describe("write_note", () => {
  let approvals: HostileServer;
  let endpoint: Awaited<ReturnType<typeof startSink>>;
  beforeAll(async () => {
    approvals = await new HostileServer().start();
    endpoint = await startSink();
  });
  afterAll(async () => {
    await approvals.stop();
    await endpoint.stop();
  });

  /** write_note on a call the gateway holds live, with an approval service that answers \`answer\`. */
  async function writeNote(route: string, answer: Record<string, unknown>) {
    endpoint.requests.length = 0;
    const calls = fakeCalls();
    calls.live("dev-session", "n:1");
    const url = approvals.route(route, { poll: () => ({ body: answer }) });
    const env = { WRITE_URL: \`\${endpoint.base}/notes\`, CALLS: calls.ns, STRAD_POLL_INTERVAL_MS: "30" };
    const result = await callBundle(handler, { mount: mounts[0] as string, name: "write_note", args: { note: "hello" }, channel: askChannel(url), env });
    return { result, posts: endpoint.requests.map((r) => JSON.parse(r.body) as unknown), claims: calls.claims };
  }

  it("posts the note once a person accepts, and claims the call once", async () => {
    const { result, posts, claims } = await writeNote("accept", { action: "accept", content: { confirm: true } });
    expect(result.text).toBe("Posted.");
    expect(posts).toEqual([{ kind: "${name}.write_note", note: "hello", mount: mounts[0] }]);
    expect(claims).toEqual([{ scope: "dev-session", key: "n:1", won: true }]);
  });

  it("posts nothing when the person declines", async () => {
    const { result, posts } = await writeNote("decline", { action: "decline", content: null });
    expect(result.text).toMatch(/^Not done: the person declined/);
    expect(posts).toEqual([]);
  });

  it("leaves only through the gate: its tools module makes no fetch of its own", () => {
    const source = readFileSync(new URL("../../../bundles/${name}/${name}.tools.ts", import.meta.url), "utf8");
    expect(source).not.toMatch(/(^|[^.\\w])fetch\\s*\\(/m);
    expect(source).toMatch(/await write\\(/);
  });
});
`,
  };
}

/**
 * The gateway's binding, appended to the root wrangler.toml, with the props the kit answers to (docs/rules.md
 * R-CHAN-13; the value is bundles/kit/gateway-only.ts's GATEWAY_PROPS, which `npm run deploy:check` holds it to).
 */
export const servicesBlock = (name) =>
  `\n# The ${name} bundle (\`npm run new-bundle ${name}\`).\n[[services]]\nbinding = "${bindingOf(name)}"\nservice = "${serviceOf(name)}"\nprops = { from = "strad-gateway" }\n`;

/** The roster's server for the bundle's one mount, at the list's indentation. */
export function serverBlock(name, indent) {
  const pad = " ".repeat(indent);
  return [
    `${pad}# bundles/${name} (\`npm run new-bundle ${name}\`): write_note asks the caller's approval service first.`,
    `${pad}- slug: ${name}`,
    `${pad}  kind: bundle`,
    `${pad}  bundle: ${bindingOf(name)}`,
    `${pad}  path: /${name}`,
    `${pad}  entitlements: [user, reader]`,
    `${pad}  confirmations: true`,
    // Its edge credential goes to one approval service only (docs/rules.md R-CONF-14): the local one; in production, yours.
    `${pad}  approvalUrlPrefixes: [http://127.0.0.1:8788/api/v1/elicitations/session/]`,
    `${pad}  confirmationHeaders:`,
    `${pad}    CF-Access-Client-Id: "\${APPROVALS_CF_ACCESS_CLIENT_ID}"`,
    `${pad}    CF-Access-Client-Secret: "\${APPROVALS_CF_ACCESS_CLIENT_SECRET}"`,
  ].join("\n");
}
