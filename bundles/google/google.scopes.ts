// The OAuth scopes a Gmail mount's refresh token needs, derived from what its tools call: each tool's Gmail API
// methods (google.mailbox.ts), and the scopes Google's API reference accepts for each method. A mount's tool groups
// (bundle.json) give its tools, and the fewest, narrowest scopes that allow every method those tools call are what
// the operator grants. `npm run posture` shows them per slug, and docs/deploy.md lists them per group, held to this
// file by a test (docs/rules.md R-GMAIL-6). Nothing here is read at run time: a token's scopes are Google's to enforce.

const AUTH = "https://www.googleapis.com/auth/";
/** The Gmail scopes this file speaks of, by short name. */
export const GMAIL_SCOPE = {
  readonly: `${AUTH}gmail.readonly`,
  send: `${AUTH}gmail.send`,
  compose: `${AUTH}gmail.compose`,
  modify: `${AUTH}gmail.modify`,
  full: "https://mail.google.com/",
} as const;
export type GmailScopeName = keyof typeof GMAIL_SCOPE;

/** Every Gmail API method the bundle calls, with the scopes Google's reference lists for it (narrow ones first). */
export const GMAIL_METHOD_SCOPES = {
  "users.getProfile": ["readonly", "compose", "modify", "full"],
  // With `q`, which gmail.metadata does not allow.
  "users.messages.list": ["readonly", "modify", "full"],
  // format=full, which gmail.metadata does not allow.
  "users.messages.get": ["readonly", "modify", "full"],
  "users.threads.get": ["readonly", "modify", "full"],
  "users.drafts.list": ["readonly", "compose", "modify", "full"],
  "users.drafts.get": ["readonly", "compose", "modify", "full"],
  "users.drafts.create": ["compose", "modify", "full"],
  "users.drafts.send": ["compose", "modify", "full"],
  "users.messages.send": ["send", "compose", "modify", "full"],
} as const satisfies Record<string, readonly GmailScopeName[]>;
export type GmailMethod = keyof typeof GMAIL_METHOD_SCOPES;

/** The Gmail API methods each tool calls, its reads and its writes (a reply reads the original; a draft send reads the draft). */
export const TOOL_METHODS: Readonly<Record<string, readonly GmailMethod[]>> = {
  search_messages: ["users.messages.list", "users.messages.get"],
  get_message: ["users.messages.get"],
  get_thread: ["users.threads.get"],
  list_drafts: ["users.drafts.list", "users.drafts.get"],
  get_draft: ["users.drafts.get"],
  create_draft: ["users.getProfile", "users.messages.get", "users.drafts.create"],
  send_email: ["users.getProfile", "users.messages.get", "users.drafts.get", "users.messages.send", "users.drafts.send"],
};

/** The scopes a grant is chosen from, narrowest first; gmail.modify and https://mail.google.com/ are never needed. */
const CANDIDATES: readonly GmailScopeName[] = ["readonly", "send", "compose"];

/**
 * The fewest scopes, narrowest first on a tie, that allow every method the tools call. Throws for a tool this file
 * does not declare, so a new tool cannot go unlisted.
 */
export function gmailScopesFor(tools: Iterable<string>): string[] {
  const methods = new Set<GmailMethod>();
  for (const tool of tools) {
    const called = TOOL_METHODS[tool];
    if (called === undefined) throw new Error(`tool "${tool}" has no Gmail methods declared in bundles/google/google.scopes.ts`);
    for (const method of called) methods.add(method);
  }
  if (methods.size === 0) return [];
  // Every subset of the candidates, smallest first, then in the candidates' order: the first that allows all wins.
  const subsets: GmailScopeName[][] = [];
  for (let mask = 1; mask < 1 << CANDIDATES.length; mask++) subsets.push(CANDIDATES.filter((_, i) => (mask & (1 << i)) !== 0));
  subsets.sort((a, b) => a.length - b.length);
  const allows = (granted: readonly GmailScopeName[]) => [...methods].every((m) => (GMAIL_METHOD_SCOPES[m] as readonly GmailScopeName[]).some((s) => granted.includes(s)));
  const chosen = subsets.find(allows);
  if (chosen === undefined) throw new Error("no combination of gmail.readonly, gmail.send and gmail.compose allows these tools");
  return chosen.map((name) => GMAIL_SCOPE[name]);
}
