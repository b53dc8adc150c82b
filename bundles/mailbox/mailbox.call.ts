// How a mailbox tool call runs and answers: in the call's IMAP session, closed at the call's end (docs/rules.md
// R-MAIL-8); every write inside the door the kit's send gate opens, once every check has passed and at most once; the
// write's own look at its target before it acts; and a failure answered in the bundle's words, which say what a write
// that went out may have changed and never repeat upstream text.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { audit } from "../kit/audit";
import { fingerprint as digest, type FingerprintInput } from "../kit/fingerprint";
import { type GatedWrite, GateRefusal, type WriteWords } from "../kit/gate";
import { currentScope } from "../kit/scope";
import { MailError, MailPartly } from "./mailbox.errors";
import { MailSession } from "./mailbox.session";

const MAIL_WORDS: WriteWords = { act: "change the mailbox", done: "changed", target: "set of messages" };

export function notDone(reason: string): CallToolResult {
  return { content: [{ type: "text", text: `Not done: ${reason}. Nothing was changed.` }], isError: true };
}

/** The answer to a failure: the bundle's own words, or the kind of an error it did not expect (never upstream text). */
export function failed(error: unknown): CallToolResult {
  if (error instanceof GateRefusal) return { content: [{ type: "text", text: `Not done: ${error.message}.` }], isError: true };
  // A write that went out and did not complete says what may have changed, never that nothing did.
  if (error instanceof MailPartly) return { content: [{ type: "text", text: `Not done: ${error.message}. ${error.state}` }], isError: true };
  if (error instanceof MailError) return notDone(error.message);
  if (error instanceof RangeError) return notDone(error.message);
  return notDone(`the call failed (${error instanceof Error ? error.name : "error"})`);
}

/**
 * One IMAP write through the send gate: the command runs inside the door the gate opens, once every check has
 * passed (a live call, a yes or the token for this exact target, the call's single claim), and at most once.
 */
export async function through<T>(write: GatedWrite, mount: string, op: string, options: { binds: FingerprintInput; needsApproval: boolean }, run: () => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  let failure: unknown;
  const door = async (): Promise<Response> => {
    try {
      result = { value: await run() };
      return new Response(null, { status: 204 });
    } catch (error) {
      // The client says what a write that went out may have changed; an error it did not expect may have come after one.
      failure =
        error instanceof MailError
          ? error
          : new MailPartly(`the IMAP ${op} did not complete (${error instanceof Error ? error.name : "error"})`, "The mailbox may have been changed: the write was under way.");
      return new Response(null, { status: 502 });
    }
  };
  try {
    await write(`imap://${mount}/${op}`, { method: "POST" }, { ...options, words: MAIL_WORDS, fetch: door });
  } catch (error) {
    // Only what the door did counts once it opened: a failure after it must not hide a write, or invent one.
    if (result === undefined && failure === undefined) throw error;
  }
  if (result === undefined) throw failure instanceof Error ? failure : new MailError(`the IMAP ${op} did not complete`);
  return result.value;
}

/** The call's IMAP session, from the mount and env of the call's scope, closed at the call's end; a failure is answered in the bundle's words. */
export async function inSession(work: (session: MailSession) => Promise<CallToolResult>): Promise<CallToolResult> {
  const scope = currentScope();
  const session = new MailSession(scope.mount, scope.env, scope.signal);
  try {
    return await work(session);
  } catch (error) {
    return failed(error);
  } finally {
    await session.close();
  }
}

export const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/**
 * The write's own look, on the connection it writes over: every guarded look closed its connection before anyone was
 * asked (R-MAIL-8), so the act sees its target again, selected on this connection, and writes only if it is still
 * the one approved. Undefined when it is; else why not, as the kit says it.
 */
export async function changedSince<T>(approved: T, live: T, bind: (t: T) => FingerprintInput, describe: (t: T) => string): Promise<string | undefined> {
  if ((await digest(bind(live))) === (await digest(bind(approved)))) return undefined;
  // Said on the call's trail as the kit says it when its own look after the answer finds the target changed.
  audit("refused", { reason: "target_changed" });
  return `the target changed after it was approved (approved: ${describe(approved)}; now: ${describe(live)}), so the approval does not cover it`;
}
