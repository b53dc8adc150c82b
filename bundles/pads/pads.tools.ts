// The pads tools of one mount, over a Rustpad server (pads.client.ts). Two operations take out content nobody can
// get back, and ask a person first: set_document when the pad is not empty, and replace_in_document when it would
// change more than one occurrence, counted on the pad as it stands in the open session (docs/rules.md R-PAD-2,
// R-PAD-3), or when the edit would remove more than a little of the pad, whichever tool builds it (pads.loss.ts,
// R-PAD-13). Everything else never asks: appending, creating and setting a language take nothing away. A prompt shows
// pad ids, character counts and the search/replace pair, never a pad's content: pads are world-writable
// (R-PAD-4). Both guarded tools fall back to the two-call token where the slug allows it (R-PAD-7). No tool takes a
// user, token or host: the two-call token is this server's own, handed out by its first call (R-TOOL-2).
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import type { EditPlan } from "../kit/edits";
import type { FingerprintInput } from "../kit/fingerprint";
import { type GatedWrite, GateRefusal } from "../kit/gate";
import { checkFallback, type DeclaredAnnotations, declareGuard, editPlanFor, type Guard, type GuardKind, never, runGuarded, when } from "../kit/guard";
import { currentScope } from "../kit/scope";
import { twoCallTokenShape } from "../kit/token";
import { jsonSchemaOnce, plainTool, registerTools, type ToolEntry } from "../kit/tools";
import { plural, type ReplaceTarget, replaceAsks, replaceFingerprint, replacePrompt, type SetTarget, setFingerprint, setPrompt, sha256 } from "./pads.asks";
import { checkPadId, MAX_PAD_CHARS, newPadId, PAD_ID, PAD_ID_LENGTH, PadError, readPadText, readStats, rustpadBase } from "./pads.client";
import { padLeases } from "./pads.lease";
import { MAX_UNASKED_LOSS_CHARS, MAX_UNASKED_LOSS_PERCENT, MIN_KEPT_PERCENT } from "./pads.loss";
import { charLength } from "./pads.ot";
import { appendOp, type EditAck, occurrences, PadSession, replaceOp, setOp } from "./pads.session";

/** The pads bundle's registry of confirmed tools: every tool that asks a person, and nothing else. */
export const CONFIRMED_TOOLS: ReadonlySet<string> = new Set(["set_document", "replace_in_document"]);

/** A search or replacement is shown whole on the prompt (the kit's bound-value cap), so it is at most this long. */
export const MAX_PAIR_CHARS = 1_000;
/** Rustpad's language names are short words ("markdown", "cpp", "plaintext"). */
export const LANGUAGE = /^[A-Za-z0-9+#._-]{1,40}$/;

// Truthful hints (docs/rules.md R-PAD-5): reads change nothing; a create, an append and a language change take
// nothing away; replacing a pad's text cannot be undone. Setting a text or a language twice ends where once does;
// a create makes a new pad each time, an append adds each time, and a replace may match again in what it wrote.
const READS: DeclaredAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const CREATES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
const APPENDS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
const LANGUAGES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const SETS: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };
const REPLACES: DeclaredAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

export const ANNOTATIONS: Readonly<Record<string, DeclaredAnnotations>> = {
  get_document: READS,
  get_server_stats: READS,
  create_document: CREATES,
  append_to_document: APPENDS,
  set_language: LANGUAGES,
  set_document: SETS,
  replace_in_document: REPLACES,
};

/** Text Rustpad can carry: no lone surrogate (Rust strings hold none, and the server would drop the connection). */
const padText = (max: number, what: string) =>
  z
    .string()
    // UTF-16 units first (a code point is at most two), then code points, as Rustpad counts.
    .max(max * 2)
    .refine((text) => charLength(text) <= max && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text), `${what} holds a lone surrogate or is too long`)
    .describe(what);
const padId = z.string().regex(PAD_ID, `a Rustpad pad id: ${PAD_ID_LENGTH} characters of A-Z, a-z and 0-9`).describe(`The pad's id: ${PAD_ID_LENGTH} characters of A-Z, a-z and 0-9.`);
const language = z.string().regex(LANGUAGE).describe('The editor language, as Rustpad names it, e.g. "markdown", "python", "plaintext".');

function json(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 1) }] };
}

function notDone(reason: string): CallToolResult {
  return { content: [{ type: "text", text: `Not done: ${reason}. Nothing was written.` }], isError: true };
}

/** The call's sessions, one per pad, closed when the call ends. */
class Sessions {
  private readonly open = new Map<string, Promise<PadSession>>();
  constructor(
    /** The mount the call came to: the sessions' server is its own, and its fingerprints name it. */
    readonly mount: string,
    private readonly env: Record<string, unknown>,
    private readonly signal: AbortSignal,
  ) {}

  /** The pad's session, opened once per call; a second read syncs it with the pad as it stands now. */
  async session(pad: string): Promise<PadSession> {
    checkPadId(pad);
    const known = this.open.get(pad);
    if (known !== undefined) {
      const session = await known;
      await session.sync();
      return session;
    }
    const base = rustpadBase(this.mount, this.env);
    // The lease is the pad's, whichever mount reaches it: keyed by the server's address and the pad id (R-PAD-13).
    const server = `${base.origin}${base.pathname.replace(/\/+$/, "")}`;
    const opening = PadSession.open(base, pad, this.signal, `strad (${this.mount})`, padLeases(this.env, server));
    this.open.set(pad, opening);
    return opening;
  }

  closeAll(): void {
    for (const opening of this.open.values()) opening.then((s) => s.close()).catch(() => {});
    this.open.clear();
  }
}

/** The answer to a failure: the bundle's own words, or the kind of an error it did not expect. */
function failed(error: unknown): CallToolResult {
  if (error instanceof GateRefusal) return { content: [{ type: "text", text: `Not done: ${error.message}.` }], isError: true };
  if (error instanceof PadError) return notDone(error.message);
  return notDone(`the call failed (${error instanceof Error ? error.name : "error"})`);
}

/** An acknowledged edit, said plainly; edits by others merged before it are named, never shown. */
function merged(ack: EditAck): string {
  return ack.merged === 0 ? "" : ` ${plural(ack.merged, "edit")} by others landed first, and Rustpad merged this one after them.`;
}

/** The pad as measured is the pad the edit is built on: nothing landed between the last read and now. */
function unchangedSince(t: { revision: number; session: PadSession }): void {
  if (t.session.revision !== t.revision) throw new PadError("the pad changed while the edit was being built, so nothing was sent");
}

/**
 * A tool whose guard is built per call, around the call's pad sessions, which it closes when it ends. The guard's
 * declarations are checked against the tool's schema once per isolate, when the first server is built, so a wrong one
 * fails there, never on a call (R-EDIT-1): the check builds the guard on sessions of its own, which need an abort
 * signal, and workerd makes none at start-up. Each server the tool is registered on records how it asks.
 */
function padTool<S extends z.ZodObject, T>(
  name: string,
  config: { description: string; inputSchema: S; annotations: DeclaredAnnotations },
  kind: GuardKind,
  build: (sessions: Sessions) => Guard<z.infer<S>, T>,
): ToolEntry {
  let checked: { plan: EditPlan | undefined } | undefined;
  const check = (): { plan: EditPlan | undefined } => {
    if (checked !== undefined) return checked;
    const probe = build(new Sessions("", {}, new AbortController().signal));
    if (probe.rule.kind !== kind) throw new Error(`tool "${name}" declares ${kind} but its guard is ${probe.rule.kind}`);
    checkFallback(name, config, probe);
    checked = { plan: editPlanFor(name, config, probe) };
    return checked;
  };
  const handler = async (args: z.infer<S>): Promise<CallToolResult> => {
    const scope = currentScope();
    const sessions = new Sessions(scope.mount, scope.env, scope.signal);
    try {
      return await runGuarded(build(sessions), args, check().plan);
    } catch (error) {
      return failed(error);
    } finally {
      sessions.closeAll();
    }
  };
  return {
    name,
    register: (server) => {
      declareGuard(server, CONFIRMED_TOOLS, name, kind);
      check();
      server.registerTool(name, config, handler as never);
    },
  };
}

/** The write's door options: bound to the approved target, and needing a person's yes (or the token) when it asked. */
function writeOptions(fingerprint: FingerprintInput, asked: boolean) {
  return { binds: fingerprint, needsApproval: asked };
}

/** An edit through the gate, its failure in the bundle's words. */
async function editing(run: () => Promise<string>): Promise<CallToolResult> {
  try {
    return { content: [{ type: "text", text: await run() }] };
  } catch (error) {
    return failed(error);
  }
}

/** The mount's Rustpad server, from the call's scope. */
const currentBase = (): URL => {
  const scope = currentScope();
  return rustpadBase(scope.mount, scope.env);
};

// Every tool's definition, schema and handler is built once per isolate, not per request: the SDK serves one exchange per
// server, so the bundle builds a server for each request, and building every tool's zod schemas and closures anew for
// it was most of what a call allocated. A handler reads its mount and env from the call's scope. The two reads are
// plain tools (bundles/kit/tools.ts): the kit's lane serves a 2026-07-28 call of one without an SDK server. Every
// tool that writes goes through the kit's guard and gate, which are the SDK's path.

const GET_DOCUMENT = {
  description: "Reads a pad's text (Rustpad's plain-text endpoint; a pad Rustpad does not hold reads as empty, and is not created).",
  inputSchema: jsonSchemaOnce(z.object({ pad_id: padId })),
  annotations: READS,
};
const GET_SERVER_STATS = {
  description: "Reads the Rustpad server's statistics: when it started (seconds since the epoch) and how many pads it holds.",
  inputSchema: jsonSchemaOnce(z.object({})),
  annotations: READS,
};
const CREATE_DOCUMENT = {
  description: "Creates a new pad with a fresh id (as Rustpad's own client makes them), optionally with text and a language. Never asks.",
  inputSchema: jsonSchemaOnce(z.object({ content: padText(MAX_PAD_CHARS, "The new pad's text.").optional(), language: language.optional() })),
  annotations: CREATES,
};
const APPEND_TO_DOCUMENT = {
  description: "Adds text at the end of a pad. Takes nothing away, so it never asks.",
  inputSchema: jsonSchemaOnce(z.object({ pad_id: padId, text: padText(MAX_PAD_CHARS, "The text to add at the end.").min(1) })),
  annotations: APPENDS,
};
const SET_LANGUAGE = {
  description: "Sets a pad's editor language (syntax highlighting). Changes no text, so it never asks.",
  inputSchema: jsonSchemaOnce(z.object({ pad_id: padId, language })),
  annotations: LANGUAGES,
};
const SET_DOCUMENT = {
  description:
    "Replaces a pad's whole text. When the pad is not empty a person is asked first (shown the pad id and character counts, never the content), and nothing changes unless they approve. Where this server cannot ask, it answers a two-call token instead: call again with the same arguments and the token.",
  inputSchema: jsonSchemaOnce(z.object({ pad_id: padId, content: padText(MAX_PAD_CHARS, "The pad's new text."), ...twoCallTokenShape })),
  annotations: SETS,
};
const REPLACE_IN_DOCUMENT = {
  description: `Replaces occurrences of a search string in a pad: the first one, or every one with replace_all. When it would change more than one occurrence, or remove more than ${MAX_UNASKED_LOSS_CHARS} characters or ${MAX_UNASKED_LOSS_PERCENT}% of the pad (or leave it under ${MIN_KEPT_PERCENT}% of what it held since its last large edit), counted on the pad as it stands, a person is asked first (shown the pad id, the count and the search/replace pair, never the content); if the count has changed by the time they answer, nothing changes. Where this server cannot ask, it answers a two-call token instead.`,
  inputSchema: jsonSchemaOnce(
    z.object({
      pad_id: padId,
      search: padText(MAX_PAIR_CHARS, "The exact text to find (case-sensitive).").min(1),
      replace: padText(MAX_PAIR_CHARS, "What each occurrence becomes (may be empty)."),
      replace_all: z.boolean().optional().describe("Replace every occurrence instead of the first one only."),
      ...twoCallTokenShape,
    }),
  ),
  annotations: REPLACES,
};

interface CreateTarget {
  mount: string;
  pad: string;
  content: string;
  language: string | undefined;
  session: PadSession;
}
const createFingerprint = (t: CreateTarget): FingerprintInput => ({ operation: "create_document", target: { mount: t.mount, pad: t.pad, content: t.content, language: t.language ?? null } });

interface AppendTarget {
  mount: string;
  pad: string;
  text: string;
  before: number;
  session: PadSession;
}
const appendFingerprint = (t: AppendTarget): FingerprintInput => ({ operation: "append_to_document", target: { mount: t.mount, pad: t.pad, text: t.text, before_chars: t.before } });

interface LanguageTarget {
  mount: string;
  pad: string;
  language: string;
  session: PadSession;
}
const languageFingerprint = (t: LanguageTarget): FingerprintInput => ({ operation: "set_language", target: { mount: t.mount, pad: t.pad, language: t.language } });

/** Every tool of the bundle, in the order a mount lists them. */
const PAD_TOOLS: readonly ToolEntry[] = [
  plainTool("get_document", GET_DOCUMENT, async ({ pad_id }) => {
    try {
      const text = await readPadText(currentBase(), pad_id, currentScope().signal);
      return json({ pad_id, characters: charLength(text), text });
    } catch (error) {
      return failed(error);
    }
  }),
  plainTool("get_server_stats", GET_SERVER_STATS, async () => {
    try {
      return json(await readStats(currentBase(), currentScope().signal));
    } catch (error) {
      return failed(error);
    }
  }),
  padTool(
    "create_document",
    CREATE_DOCUMENT,
    "never",
    (sessions): Guard<{ content?: string; language?: string }, CreateTarget> => ({
      rule: never,
      resolve: async ({ content, language: lang }) => {
        // A fresh id names an empty pad; on the rare one already in use, draw again.
        for (let attempt = 0; attempt < 3; attempt++) {
          const pad = newPadId();
          const session = await sessions.session(pad);
          if (session.revision === 0) return { mount: sessions.mount, pad, content: content ?? "", language: lang, session };
        }
        throw new PadError("no unused pad id was found in three draws");
      },
      fingerprint: createFingerprint,
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) =>
        editing(async () => {
          const options = writeOptions(createFingerprint(t), false);
          if (t.content !== "") await t.session.edit(appendOp(0, t.content), write, options);
          if (t.language !== undefined) await t.session.setLanguage(t.language, write, t.content === "" ? options : { needsApproval: false });
          return JSON.stringify({ pad_id: t.pad, characters: charLength(t.content), language: t.language ?? null }, null, 1);
        }),
    }),
  ),
  padTool(
    "append_to_document",
    APPEND_TO_DOCUMENT,
    "never",
    (sessions): Guard<{ pad_id: string; text: string }, AppendTarget> => ({
      rule: never,
      resolve: async ({ pad_id, text }) => {
        const session = await sessions.session(pad_id);
        return { mount: sessions.mount, pad: pad_id, text, before: session.length, session };
      },
      fingerprint: appendFingerprint,
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) =>
        editing(async () => {
          const ack = await t.session.edit(appendOp(t.session.length, t.text), write, writeOptions(appendFingerprint(t), false));
          return `Appended ${plural(charLength(t.text), "character")} to pad "${t.pad}"; it now holds ${plural(t.session.length, "character")}.${merged(ack)}`;
        }),
    }),
  ),
  padTool(
    "set_language",
    SET_LANGUAGE,
    "never",
    (sessions): Guard<{ pad_id: string; language: string }, LanguageTarget> => ({
      rule: never,
      resolve: async ({ pad_id, language: lang }) => ({ mount: sessions.mount, pad: pad_id, language: lang, session: await sessions.session(pad_id) }),
      fingerprint: languageFingerprint,
      prompt: () => ({ heading: "", consequence: "", values: [] }),
      act: async (t, write) =>
        editing(async () => {
          await t.session.setLanguage(t.language, write, writeOptions(languageFingerprint(t), false));
          return `Pad "${t.pad}" is now in ${t.language}.`;
        }),
    }),
  ),
  padTool(
    "set_document",
    SET_DOCUMENT,
    "when",
    (sessions): Guard<{ pad_id: string; content: string }, SetTarget> => ({
      // Replacing the whole text loses all of it: any non-empty pad asks (R-PAD-2), by the rule every edit is held to.
      rule: when((t: SetTarget) => t.verdict.asks),
      fallback: "token",
      // The person may rewrite the new text on the card; what is written is their text (docs/rules.md R-EDIT-1).
      editable: { content: { mode: "free", label: "New text" } },
      resolve: async ({ pad_id, content }) => {
        const session = await sessions.session(pad_id);
        const text = session.text;
        const revision = session.revision;
        const verdict = session.verdictFor(setOp(session.length, content));
        return {
          mount: sessions.mount,
          pad: pad_id,
          before: session.length,
          beforeSha256: await sha256(text),
          content,
          after: charLength(content),
          contentSha256: await sha256(content),
          revision,
          session,
          verdict,
        };
      },
      fingerprint: setFingerprint,
      prompt: setPrompt,
      // The digest's head tells two texts of one length apart in the answer, and shows nothing of either (R-PAD-2).
      describe: (t) => `pad "${t.pad}" holds ${plural(t.before, "character")}, text sha-256 ${t.beforeSha256.slice(0, 12)}…`,
      act: async (t, write: GatedWrite) =>
        editing(async () => {
          unchangedSince(t);
          const ack = await t.session.edit(setOp(t.before, t.content), write, writeOptions(setFingerprint(t), t.verdict.asks));
          return `Pad "${t.pad}" now holds the new text: ${plural(t.after, "character")} (it held ${plural(t.before, "character")}).${merged(ack)}`;
        }),
    }),
  ),
  padTool(
    "replace_in_document",
    REPLACE_IN_DOCUMENT,
    "when",
    (sessions): Guard<{ pad_id: string; search: string; replace: string; replace_all?: boolean }, ReplaceTarget> => ({
      rule: when(replaceAsks),
      fallback: "token",
      // The person may correct what each match becomes; the search stays the model's, so the count they saw holds.
      editable: { replace: { mode: "free", label: "Replace with" } },
      resolve: async ({ pad_id, search, replace, replace_all }) => {
        const session = await sessions.session(pad_id);
        const text = session.text;
        const all = occurrences(text, search);
        const starts = replace_all === true ? all : all.slice(0, 1);
        const before = session.length;
        const after = before + starts.length * (charLength(replace) - charLength(search));
        const verdict = session.verdictFor(replaceOp(text, starts, search, replace));
        return {
          mount: sessions.mount,
          pad: pad_id,
          search,
          replace,
          replaceAll: replace_all === true,
          count: starts.length,
          before,
          after,
          starts,
          text,
          revision: session.revision,
          session,
          verdict,
        };
      },
      fingerprint: replaceFingerprint,
      prompt: replacePrompt,
      describe: (t) => `${plural(t.count, "occurrence")} in pad "${t.pad}"`,
      act: async (t, write: GatedWrite) =>
        editing(async () => {
          if (t.count === 0) return `No occurrence of the search text in pad "${t.pad}": nothing was changed.`;
          unchangedSince(t);
          const ack = await t.session.edit(replaceOp(t.text, t.starts, t.search, t.replace), write, writeOptions(replaceFingerprint(t), replaceAsks(t)));
          return `Replaced ${plural(t.count, "occurrence")} in pad "${t.pad}"; it now holds ${plural(t.session.length, "character")}.${merged(ack)}`;
        }),
    }),
  ),
];

export function padsServer(mount: string): McpServer {
  return registerTools(new McpServer({ name: `strad-pads/${mount}`, version: "0.1.0" }), PAD_TOOLS);
}
