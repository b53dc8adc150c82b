// The 1Password tools of one mount. Listing and metadata answer without asking, every sensitive value withheld;
// a reveal (onepassword_get_item), the three creates and a share ask a person first, one prompt for the whole
// batch (docs/rules.md R-OP-2, R-OP-7). Which client serves the mount (the service account's SDK or Connect) is
// the client module's business: the tools see one interface. No tool takes a user, token or host (R-TOOL-2).
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { planEdits } from "../kit/edits";
import { type DeclaredAnnotations, declareGuard, type GuardKind } from "../kit/guard";
import { activeScope, type CallState, currentScope } from "../kit/scope";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { credentialsFor, type OnePasswordClient, OnePasswordError } from "./onepassword.client";
import { type ConfirmedTool, json, reasonOf, refusal, runConfirmed, text, warnIgnoredVariables } from "./onepassword.confirm";
import { ConnectClient } from "./onepassword.connect";
import { ApiItem, batch, createTool, LoginItem, MAX_CREATE_BATCH, NoteItem, newItem } from "./onepassword.create";
import { EXPIRES, ItemRef, MAX_SHARE_BATCH, revealTool, shareTool, shownItem, vaultId } from "./onepassword.reveal";
import { CONNECT_ONLY, connectOnlyRefusal, ServiceAccountClient } from "./onepassword.sdk";
import { REDACTED } from "./onepassword.sensitive";

/** The 1Password bundle's registry of confirmed tools: every tool that asks a person, and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set([
  "onepassword_get_item",
  "onepassword_create_login",
  "onepassword_create_secure_note",
  "onepassword_create_api_credential",
  "onepassword_share_item",
]);

/** At most this many items per call: one prompt lists them all, and each costs a read or a write. */
export const MAX_BATCH = 20;

const READS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
// A reveal changes nothing in 1Password (MCP reads destructiveHint only when readOnlyHint is false); what cannot be
// taken back is the value shown, which is why it asks.
const REVEALS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const CREATES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
// A share link reveals the item to whoever opens it, and cannot be called back from them.
const SHARES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

/** The mount's client, from its own credentials only (docs/rules.md R-OP-6). Throws with a reason naming variables. */
export function clientForMount(mount: string, env: Record<string, unknown>): OnePasswordClient {
  const found = credentialsFor(mount, env);
  if (!found.ok) throw new OnePasswordError(found.reason);
  const c = found.credentials;
  if (c.kind === "service-account" && CONNECT_ONLY) throw new OnePasswordError(connectOnlyRefusal(c.names.token));
  return c.kind === "service-account" ? new ServiceAccountClient(mount, c.token) : new ConnectClient(c.host, c.token, c.names.host);
}

const currentClient = (): OnePasswordClient => {
  const scope = currentScope();
  return clientForMount(scope.mount, scope.env);
};

/** A read-only tool's answer: a failure names a status or a reason, never an upstream body. */
async function reading(work: (client: OnePasswordClient) => Promise<unknown>): Promise<CallToolResult> {
  let client: OnePasswordClient;
  try {
    client = currentClient();
  } catch (error) {
    return refusal(reasonOf(error, "the mount's 1Password client could not be made"), false);
  }
  try {
    return json(await work(client));
  } catch (error) {
    return text(`Not done: ${reasonOf(error, "the read failed")}.`, true);
  }
}

/**
 * A confirmed tool's entry. Its edit plan is checked against its schema once, when the isolate loads the bundle, so a
 * wrong edit declaration fails at start-up, never on a call (R-EDIT-1); each server it is registered on records how
 * it asks (the kit's registry checks).
 */
function confirmedTool<S extends z.ZodObject, T>(
  name: string,
  kind: GuardKind,
  config: { description: string; inputSchema: S; annotations: DeclaredAnnotations },
  tool: ConfirmedTool<z.infer<S>, T>,
): ToolEntry {
  const plan = planEdits(name, config.inputSchema, tool.editable);
  const handler = (args: z.infer<S>) => runConfirmed(tool, args, currentClient, plan);
  return {
    name,
    register: (server) => {
      declareGuard(server, CONFIRMED_TOOLS, name, kind);
      server.registerTool(name, config, handler as never);
    },
  };
}

let warnedAtStart = false;
/** The calls already warned for: a read the kit's lane ran and then left to the SDK's path warns once, not twice. */
const warnedCalls = new WeakSet<CallState>();

/** Tests only: the next request warns again as an isolate's first does. */
export function resetStartWarning(): void {
  warnedAtStart = false;
}

/** The upstream switches are checked when the isolate starts serving and once on every call (docs/rules.md R-OP-3). */
function warnOfIgnoredSwitches(mount: string, env: Record<string, unknown>): void {
  const call = activeScope()?.call;
  if (call === undefined ? warnedAtStart : warnedCalls.has(call)) return;
  warnedAtStart = true;
  if (call !== undefined) warnedCalls.add(call);
  warnIgnoredVariables(mount, env);
}

/**
 * A read that asks nobody, as a plain tool (bundles/kit/tools.ts): the kit's lane may serve its call without running
 * the mount's factory, so the read warns of the ignored switches for its call itself.
 */
function readTool<S extends z.ZodObject>(
  name: string,
  config: { description: string; inputSchema: S; annotations: DeclaredAnnotations },
  work: (args: z.infer<S>, client: OnePasswordClient) => Promise<unknown>,
): ToolEntry {
  return plainTool(name, config, async (args) => {
    const scope = currentScope();
    warnOfIgnoredSwitches(scope.mount, scope.env);
    return reading((client) => work(args as z.infer<S>, client));
  });
}

// Every tool's definition, schema and handler is built once per isolate, not per request: the SDK serves one exchange per
// server, so the bundle builds a server for each request, and building every tool's zod schemas and closures anew for
// it was most of what a call allocated. A handler reads its mount and env from the call's scope. The three reads are
// plain tools: the kit's lane serves a 2026-07-28 call of one without an SDK server; every tool that asks is the SDK's.

const LIST_VAULTS = {
  description: "Lists the vaults this slug's 1Password account can reach: id, name, description and item count.",
  inputSchema: jsonSchemaOnce(z.object({})),
  annotations: READS,
};
const LIST_ITEMS = {
  description: "Lists a vault's items: id, title, category and tags only. No field is read.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId })),
  annotations: READS,
};
const GET_ITEM_METADATA = {
  description: `Reads one item without asking anyone: its title, category, tags, websites and every field, with every value that is not plainly public (anything but a username or email, a title-like field or a website's address) replaced by ${REDACTED}, and websites without their userinfo. onepassword_get_item reveals them, after a person approves.`,
  inputSchema: jsonSchemaOnce(ItemRef),
  annotations: READS,
};
const GET_ITEM = {
  description: `Reads items with their sensitive values (every value but a username or email, a title-like field or a plain website's address: passwords, keys, card numbers, notes, any other field). When any would be shown, a person is asked first, once for the whole batch, and shown each item's vault, title and which fields would be revealed; without their yes the items come back with every sensitive value ${REDACTED} and _credentialsRevealed: false. Refuses when no approval channel reaches the call.`,
  inputSchema: jsonSchemaOnce(z.object({ items: z.array(ItemRef).min(1).max(MAX_BATCH).describe(`The items to read (at most ${MAX_BATCH}).`) })),
  annotations: REVEALS,
};
const CREATE_LOGIN = {
  description: "Creates login items (title, username, password, website) in a vault. A person is asked first, once for the whole batch, and shown every item but no password.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId, items: batch(LoginItem).describe(`The logins to create (at most ${MAX_CREATE_BATCH}).`) })),
  annotations: CREATES,
};
const CREATE_SECURE_NOTE = {
  description: "Creates secure notes in a vault. A person is asked first, once for the whole batch, and shown every title but no note body.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId, items: batch(NoteItem).describe(`The notes to create (at most ${MAX_CREATE_BATCH}).`) })),
  annotations: CREATES,
};
const CREATE_API_CREDENTIAL = {
  description:
    "Creates API-credential items (the key, and optionally a username, its kind and a website) in a vault. A person is asked first, once for the whole batch, and shown every item but no key.",
  inputSchema: jsonSchemaOnce(z.object({ vault_id: vaultId, items: batch(ApiItem).describe(`The API credentials to create (at most ${MAX_CREATE_BATCH}).`) })),
  annotations: CREATES,
};
const SHARE_ITEM = {
  description:
    "Creates a share link for each item: whoever opens it sees the whole item, secrets included, until it expires. A person is always asked first, once for the whole batch. Slugs served by 1Password Connect cannot share (Connect has no share endpoint).",
  inputSchema: jsonSchemaOnce(
    z.object({
      items: z.array(ItemRef).min(1).max(MAX_SHARE_BATCH).describe(`The items to share (at most ${MAX_SHARE_BATCH}).`),
      expires: z.enum(EXPIRES).optional().describe("How long each link works (default 7d)."),
      one_time: z.boolean().optional().describe("Whether a link works for one view only (default false)."),
      emails: z.array(z.string().email().max(320)).max(20).optional().describe("Only these email addresses may open the links; none: anyone holding a link, as the account's sharing policy allows."),
    }),
  ),
  annotations: SHARES,
};

/** Every tool of the bundle, in the order a mount lists them. */
const ONEPASSWORD_TOOLS: readonly ToolEntry[] = [
  readTool("onepassword_list_vaults", LIST_VAULTS, async (_args, client) => ({ vaults: await client.listVaults() })),
  readTool("onepassword_list_items", LIST_ITEMS, async ({ vault_id }, client) => ({
    vault_id,
    items: (await client.listItems(vault_id)).map((i) => ({ id: i.id, title: i.title, category: i.category, tags: i.tags })),
  })),
  readTool("onepassword_get_item_metadata", GET_ITEM_METADATA, async ({ vault_id, item_id }, client) => shownItem(await client.getItem(vault_id, item_id), false, await client.getVault(vault_id))),
  confirmedTool("onepassword_get_item", "when", GET_ITEM, revealTool),
  confirmedTool(
    "onepassword_create_login",
    "always",
    CREATE_LOGIN,
    createTool("onepassword_create_login", (args: { vault_id: string; items: z.infer<typeof LoginItem>[] }) =>
      args.items.map((i) =>
        newItem(
          args.vault_id,
          "LOGIN",
          i.title,
          [
            i.username === undefined ? undefined : { label: "username", type: "STRING", purpose: "USERNAME", value: i.username },
            i.password === undefined ? undefined : { label: "password", type: "CONCEALED", purpose: "PASSWORD", value: i.password },
          ],
          i.url,
          i.tags,
        ),
      ),
    ),
  ),
  confirmedTool(
    "onepassword_create_secure_note",
    "always",
    CREATE_SECURE_NOTE,
    createTool("onepassword_create_secure_note", (args: { vault_id: string; items: z.infer<typeof NoteItem>[] }) =>
      args.items.map((i) => newItem(args.vault_id, "SECURE_NOTE", i.title, [{ label: "notesPlain", type: "STRING", purpose: "NOTES", value: i.note }], undefined, i.tags)),
    ),
  ),
  confirmedTool(
    "onepassword_create_api_credential",
    "always",
    CREATE_API_CREDENTIAL,
    createTool("onepassword_create_api_credential", (args: { vault_id: string; items: z.infer<typeof ApiItem>[] }) =>
      args.items.map((i) =>
        newItem(
          args.vault_id,
          "API_CREDENTIAL",
          i.title,
          [
            i.username === undefined ? undefined : { label: "username", type: "STRING", value: i.username },
            { label: "credential", type: "CONCEALED", value: i.secret },
            i.key_type === undefined ? undefined : { label: "type", type: "STRING", value: i.key_type },
          ],
          i.url,
          i.tags,
        ),
      ),
    ),
  ),
  confirmedTool("onepassword_share_item", "always", SHARE_ITEM, shareTool),
];

export function onepasswordServer(mount: string, env: Record<string, unknown>): McpServer {
  warnOfIgnoredSwitches(mount, env);
  return registerTools(new McpServer({ name: `strad-onepassword/${mount}`, version: "0.1.0" }), ONEPASSWORD_TOOLS);
}
