// The IMAP client: the commands the tools need, by UID always, over one connection of the call's
// (mailbox.connection.ts): listing and opening mailboxes, searching and fetching messages, and the writes. A write
// whose answer never came, or that stopped part way, fails with MailPartly (mailbox.errors.ts), saying what may have
// changed.
import type { ImapAccount } from "./mailbox.config";
import { type Answer, type Connector, ImapConnection } from "./mailbox.connection";
import { MailError, MailPartly, MailRefused, MailUnanswered } from "./mailbox.errors";
import { parseSequenceSet, type Range, toSequenceSet } from "./mailbox.uids";
import { decodeMailboxName, encodeMailboxName } from "./mailbox.utf7";
import { type Arg, atomOf, fetchAttributes, listOf, raw, str, stringOf, type Token } from "./mailbox.wire";

export interface Selected {
  name: string;
  readOnly: boolean;
  uidValidity: number;
  exists: number;
  uidNext: number | undefined;
}

export class ImapClient extends ImapConnection {
  selected: Selected | undefined;

  /** Connects, upgrades (STARTTLS) when asked to, logs in. Throws MailError naming what failed, never the password. */
  static open(account: ImapAccount, connect: Connector, signal: AbortSignal): Promise<ImapClient> {
    return ImapConnection.establish((socket, s) => new ImapClient(socket, s), account, connect, signal);
  }

  // ---- mailboxes ----

  /** Every mailbox: decoded name, flags (\Noselect, special-use) and, with LIST-STATUS, its message count. */
  async listMailboxes(): Promise<{ name: string; flags: string[]; messages?: number; unseen?: number }[]> {
    const status = this.has("LIST-STATUS");
    const answer = await this.run([raw('LIST "" "*"'), ...(status ? [raw("RETURN (SPECIAL-USE STATUS (MESSAGES UNSEEN))")] : [])], { what: "LIST" });
    const out = new Map<string, { name: string; flags: string[]; messages?: number; unseen?: number }>();
    for (const line of answer.untagged) {
      const kind = atomOf(line[1])?.toUpperCase();
      if (kind === "LIST") {
        const wire = stringOf(line[4]);
        if (wire === undefined) continue;
        const name = decodeMailboxNameSafe(wire);
        if (name === undefined) continue;
        out.set(wire, { name, flags: (listOf(line[2]) ?? []).map((t) => atomOf(t) ?? "").filter(Boolean) });
      } else if (kind === "STATUS") {
        const wire = stringOf(line[2]);
        const entry = wire === undefined ? undefined : out.get(wire);
        const items = listOf(line[3]) ?? [];
        if (entry === undefined) continue;
        for (let i = 0; i + 1 < items.length; i += 2) {
          const key = atomOf(items[i])?.toUpperCase();
          const value = Number(atomOf(items[i + 1]));
          if (key === "MESSAGES") entry.messages = value;
          if (key === "UNSEEN") entry.unseen = value;
        }
      }
    }
    return [...out.values()];
  }

  /** The hierarchy delimiter (LIST "" ""), or undefined on a flat server (NIL). */
  async delimiter(): Promise<string | undefined> {
    const answer = await this.run([raw('LIST "" ""')], { what: "LIST" });
    const line = answer.untagged.find((l) => atomOf(l[1])?.toUpperCase() === "LIST");
    const d = line === undefined || atomOf(line[3])?.toUpperCase() === "NIL" ? undefined : stringOf(line[3]);
    return d === "" ? undefined : d;
  }

  /**
   * Every mailbox under `name` (LIST "" "name<delimiter>*"), each with its message count (STATUS; 0 for a \Noselect
   * one): what a RENAME of `name` carries along (R-MAIL-11). A name holding a wildcard lists more, so the answer is
   * kept to the names that truly sit under `name`.
   */
  async children(name: string, delimiter: string): Promise<{ name: string; messages: number }[]> {
    const names = await this.childNames(name, delimiter);
    const out: { name: string; messages: number }[] = [];
    for (const child of names) out.push({ name: child.name, messages: child.selectable ? (await this.status(child.name)).messages : 0 });
    return out;
  }

  /** The names under `name` (LIST "" "name<delimiter>*"), kept to those that truly sit under it, without their counts. */
  async childNames(name: string, delimiter: string): Promise<{ name: string; selectable: boolean }[]> {
    const prefix = `${name}${delimiter}`;
    const answer = await this.run([raw('LIST ""'), str(`${encodeMailboxName(prefix)}*`)], { what: "LIST" });
    const names: { name: string; selectable: boolean }[] = [];
    for (const line of answer.untagged) {
      if (atomOf(line[1])?.toUpperCase() !== "LIST") continue;
      const wire = stringOf(line[4]);
      const decoded = wire === undefined ? undefined : decodeMailboxNameSafe(wire);
      if (decoded === undefined || !decoded.startsWith(prefix)) continue;
      const flags = (listOf(line[2]) ?? []).map((t) => atomOf(t)?.toLowerCase());
      names.push({ name: decoded, selectable: !flags.includes("\\noselect") && !flags.includes("\\nonexistent") });
    }
    return names;
  }

  /** Opens a mailbox (EXAMINE: read-only, or SELECT), unless it is open already in that mode; returns its UIDVALIDITY and size. */
  async open(name: string, readOnly: boolean): Promise<Selected> {
    if (this.selected?.name === name && (readOnly || !this.selected.readOnly)) return this.selected;
    this.selected = undefined;
    const answer = await this.run([raw(readOnly ? "EXAMINE" : "SELECT"), str(encodeMailboxName(name))], { what: readOnly ? "EXAMINE" : "SELECT" });
    let exists = 0;
    let uidValidity: number | undefined;
    let uidNext: number | undefined;
    for (const line of answer.untagged) {
      if (atomOf(line[2])?.toUpperCase() === "EXISTS") exists = Number(atomOf(line[1]));
      const code = atomOf(line[2]);
      const m = code === undefined ? null : /^\[(UIDVALIDITY|UIDNEXT) (\d+)\]$/i.exec(code);
      if (m?.[1]?.toUpperCase() === "UIDVALIDITY") uidValidity = Number(m[2]);
      if (m?.[1]?.toUpperCase() === "UIDNEXT") uidNext = Number(m[2]);
    }
    if (uidValidity === undefined) throw new MailError("the IMAP server did not say the mailbox's UIDVALIDITY, so no UID in it can be trusted");
    this.selected = { name, readOnly: answer.code === "READ-ONLY" || readOnly, uidValidity, exists, uidNext };
    return this.selected;
  }

  async status(name: string): Promise<{ messages: number; uidValidity: number }> {
    const answer = await this.run([raw("STATUS"), str(encodeMailboxName(name)), raw("(MESSAGES UIDVALIDITY)")], { what: "STATUS" });
    const line = answer.untagged.find((l) => atomOf(l[1])?.toUpperCase() === "STATUS");
    const items = listOf(line?.[3]) ?? [];
    const value = (key: string) => {
      for (let i = 0; i + 1 < items.length; i += 2) if (atomOf(items[i])?.toUpperCase() === key) return Number(atomOf(items[i + 1]));
      return undefined;
    };
    const messages = value("MESSAGES");
    const uidValidity = value("UIDVALIDITY");
    if (messages === undefined || uidValidity === undefined) throw new MailError("the IMAP server's STATUS answer lacked MESSAGES or UIDVALIDITY");
    return { messages, uidValidity };
  }

  // ---- messages (all by UID) ----

  /** UID SEARCH in the open mailbox: the matching UIDs as ranges (ESEARCH keeps the answer small). */
  async search(criteria: readonly Arg[]): Promise<Range[]> {
    const esearch = this.has("ESEARCH");
    const utf8 = criteria.some((a) => "literal" in a);
    const args = [raw("UID SEARCH"), ...(esearch ? [raw("RETURN (ALL)")] : []), ...(utf8 ? [raw("CHARSET UTF-8")] : []), ...(criteria.length === 0 ? [raw("ALL")] : criteria)];
    const answer = await this.run(args, { what: "UID SEARCH" });
    for (const line of answer.untagged) {
      const kind = atomOf(line[1])?.toUpperCase();
      if (kind === "ESEARCH") {
        for (let i = 2; i + 1 < line.length; i++) if (atomOf(line[i])?.toUpperCase() === "ALL") return parseSequenceSet(atomOf(line[i + 1]) ?? "");
        return [];
      }
      if (kind === "SEARCH") {
        const uids = line
          .slice(2)
          .map((t) => Number(atomOf(t)))
          .filter((n) => Number.isInteger(n) && n > 0);
        return uids.length === 0 ? [] : parseSequenceSet(uids.join(","));
      }
    }
    return [];
  }

  /** UID FETCH of `items` for a sorted UID list: each answer's attribute map, by UID. */
  async fetch(uids: readonly number[], items: string, maxBytes?: number): Promise<Map<number, Map<string, Token>>> {
    const out = new Map<number, Map<string, Token>>();
    if (uids.length === 0) return out;
    const answer = await this.run([raw("UID FETCH"), raw(toSequenceSet(uids)), raw(items)], { what: "UID FETCH", maxBytes });
    for (const line of answer.untagged) {
      if (atomOf(line[2])?.toUpperCase() !== "FETCH") continue;
      const attrs = fetchAttributes(listOf(line[3]) ?? []);
      const uid = Number(atomOf(attrs.get("UID")));
      if (Number.isInteger(uid) && uid > 0) out.set(uid, new Map([...(out.get(uid) ?? []), ...attrs]));
    }
    return out;
  }

  /** FETCH by sequence number (a page of the newest messages without searching the mailbox whole). */
  async fetchSequence(from: number, to: number, items: string): Promise<Map<number, Map<string, Token>>> {
    const out = new Map<number, Map<string, Token>>();
    if (to < from || from < 1) return out;
    const answer = await this.run([raw("FETCH"), raw(`${from}:${to}`), raw(items)], { what: "FETCH" });
    for (const line of answer.untagged) {
      if (atomOf(line[2])?.toUpperCase() !== "FETCH") continue;
      const attrs = fetchAttributes(listOf(line[3]) ?? []);
      const uid = Number(atomOf(attrs.get("UID")));
      if (Number.isInteger(uid) && uid > 0) out.set(uid, attrs);
    }
    return out;
  }

  /** Which of these UIDs the open mailbox holds. */
  async existing(uids: readonly number[]): Promise<number[]> {
    if (uids.length === 0) return [];
    const ranges = await this.search([raw("UID"), raw(toSequenceSet(uids))]);
    return uids.filter((uid) => ranges.some(([a, b]) => uid >= a && uid <= b));
  }

  /** Which of these UIDs carry `flag` (UID FETCH FLAGS, which sets no flag of its own). */
  async flagged(uids: readonly number[], flag: string): Promise<number[]> {
    const fetched = await this.fetch(uids, "(UID FLAGS)");
    return uids.filter((uid) => (listOf(fetched.get(uid)?.get("FLAGS")) ?? []).some((t) => atomOf(t)?.toLowerCase() === flag.toLowerCase()));
  }

  // ---- writes: each says what it may have changed when it did not complete (never "nothing" after a command went out) ----

  /** The messages in the open mailbox, as an answer names them: `UIDs 1, 2 in "INBOX"`. */
  private where(uids: readonly number[]): string {
    return `UID${uids.length === 1 ? "" : "s"} ${uids.join(", ")} in "${this.selected?.name ?? "the open mailbox"}"`;
  }

  /** One write command: when its answer never came, the failure says what it may have changed (`maybe`). */
  private async write(args: readonly Arg[], what: string, maybe: string): Promise<Answer> {
    try {
      return await this.run(args, { what });
    } catch (error) {
      if (error instanceof MailUnanswered) throw new MailPartly(error.message, mayHave(maybe));
      throw error;
    }
  }

  /** Adds, then removes, flags; a removal that fails after the addition says the addition stands. */
  async store(uids: readonly number[], add: readonly string[], remove: readonly string[]): Promise<void> {
    const set = toSequenceSet(uids);
    const on = this.where(uids);
    const removing = [raw("UID STORE"), raw(set), raw(`-FLAGS.SILENT (${remove.join(" ")})`)];
    if (add.length > 0) await this.write([raw("UID STORE"), raw(set), raw(`+FLAGS.SILENT (${add.join(" ")})`)], "UID STORE", `${add.join(" ")} may have been added to ${on}, and nothing was removed`);
    if (remove.length === 0) return;
    if (add.length === 0) {
      await this.write(removing, "UID STORE", `${remove.join(" ")} may have been removed from ${on}`);
      return;
    }
    try {
      await this.run(removing, { what: "UID STORE" });
    } catch (error) {
      if (!(error instanceof MailError)) throw error;
      const added = `The mailbox was changed: ${add.join(" ")} ${add.length === 1 ? "was" : "were"} added to ${on}`;
      const removed = error instanceof MailUnanswered ? "may or may not have been removed" : `${remove.length === 1 ? "was" : "were"} not removed`;
      throw new MailPartly(error.message, `${added}; ${remove.join(" ")} ${removed}.`);
    }
  }

  /** UID MOVE or UID COPY; the new UIDs from COPYUID (UIDPLUS) when the server sends them. */
  async transfer(mode: "move" | "copy", uids: readonly number[], destination: string): Promise<{ uidValidity: number; source: Range[]; destination: Range[] } | undefined> {
    if (mode === "move" && !this.has("MOVE")) throw new MailError("the IMAP server does not support MOVE, so nothing was moved");
    const what = mode === "move" ? "UID MOVE" : "UID COPY";
    let answer: Answer;
    try {
      answer = await this.write(
        [raw(what), raw(toSequenceSet(uids)), str(encodeMailboxName(destination))],
        what,
        `${this.where(uids)} may have been ${mode === "move" ? "moved" : "copied"} into "${destination}"`,
      );
    } catch (error) {
      // A UID MOVE answered NO may still have moved some of its messages: each is moved or untouched (RFC 6851 §3.3).
      // A UID COPY answered NO leaves the destination as it was (RFC 3501 §6.4.7).
      if (mode === "move" && error instanceof MailRefused)
        throw new MailPartly(error.message, mayHave(`some of ${this.where(uids)} may have been moved into "${destination}" before the server refused`));
      throw error;
    }
    const codes = [
      answer.code,
      ...answer.untagged.map((l) =>
        atomOf(l[2])
          ?.replace(/^\[|\]$/g, "")
          .toUpperCase(),
      ),
    ];
    const copyuid = codes.find((c) => c?.startsWith("COPYUID "));
    if (copyuid === undefined) return undefined;
    const [, validity, source, dest] = copyuid.split(" ");
    try {
      return { uidValidity: Number(validity), source: parseSequenceSet(source ?? ""), destination: parseSequenceSet(dest ?? "") };
    } catch {
      return undefined;
    }
  }

  /**
   * Marks exactly these UIDs \Deleted and expunges exactly them (UID EXPUNGE: UIDPLUS), never another message. When
   * the expunge is refused, the mark this call set comes off again, from exactly the UIDs it set it on (one another
   * client had marked keeps its mark), and the failure says what is left; when no answer came, it says what may be.
   */
  async expunge(uids: readonly number[]): Promise<void> {
    if (!this.has("UIDPLUS")) throw new MailError("the IMAP server does not support UIDPLUS, so it cannot expunge only the named messages; nothing was deleted");
    const set = toSequenceSet(uids);
    const already = await this.flagged(uids, "\\Deleted");
    const marking = uids.filter((uid) => !already.includes(uid));
    if (marking.length > 0) {
      await this.write(
        [raw("UID STORE"), raw(toSequenceSet(marking)), raw("+FLAGS.SILENT (\\Deleted)")],
        "UID STORE",
        `${this.where(marking)} may now be marked \\Deleted, and another client's expunge would delete them`,
      );
    }
    try {
      await this.run([raw("UID EXPUNGE"), raw(set)], { what: "UID EXPUNGE" });
    } catch (error) {
      if (!(error instanceof MailError)) throw error;
      if (!(error instanceof MailRefused)) {
        throw new MailPartly(
          error.message,
          mayHave(
            `${this.where(uids)} ${uids.length === 1 ? "was" : "were"} marked \\Deleted and may have been expunged; any still there keep the mark, and another client's expunge would delete them`,
          ),
        );
      }
      if (marking.length > 0) {
        try {
          await this.run([raw("UID STORE"), raw(toSequenceSet(marking)), raw("-FLAGS.SILENT (\\Deleted)")], { what: "UID STORE" });
        } catch (undo) {
          const still = undo instanceof MailRefused ? (marking.length === 1 ? "is still" : "are still") : "may still be";
          const why = undo instanceof MailError ? undo.message : "the connection failed";
          throw new MailPartly(
            error.message,
            `The mailbox was changed: ${this.where(marking)} ${still} marked \\Deleted (taking the mark off failed too: ${why}), and another client's expunge would delete them.`,
          );
        }
      }
      const undone = marking.length > 0 ? "; the \\Deleted mark set for it was taken off again" : "";
      const left = await this.existing(uids).catch(() => undefined);
      if (left === undefined) throw new MailPartly(`${error.message}${undone}`, mayHave(`whether the server expunged any of ${this.where(uids)} before it refused could not be checked`));
      const gone = uids.filter((uid) => !left.includes(uid));
      if (gone.length > 0) throw new MailPartly(`${error.message}${undone}`, `The mailbox was changed: ${this.where(gone)} ${gone.length === 1 ? "was" : "were"} expunged before the server refused.`);
      throw new MailRefused(`${error.message}${undone}`);
    }
  }

  async createMailbox(name: string): Promise<void> {
    await this.write([raw("CREATE"), str(encodeMailboxName(name))], "CREATE", `mailbox "${name}" may have been created`);
  }

  async deleteMailbox(name: string): Promise<void> {
    if (this.selected?.name === name) {
      await this.run([raw("UNSELECT")], { what: "UNSELECT" }).catch(() => this.run([raw("CLOSE")], { what: "CLOSE" }));
      this.selected = undefined;
    }
    await this.write([raw("DELETE"), str(encodeMailboxName(name))], "DELETE", `mailbox "${name}" and the messages in it may have been deleted`);
  }

  async renameMailbox(from: string, to: string): Promise<void> {
    if (this.selected?.name === from) {
      await this.run([raw("UNSELECT")], { what: "UNSELECT" }).catch(() => undefined);
      this.selected = undefined;
    }
    await this.write([raw("RENAME"), str(encodeMailboxName(from)), str(encodeMailboxName(to))], "RENAME", `mailbox "${from}" (and every mailbox under it) may have been renamed to "${to}"`);
  }

  /** APPEND with flags; the new UID from APPENDUID (UIDPLUS), if sent. */
  async append(name: string, message: Uint8Array, flags: readonly string[]): Promise<number | undefined> {
    const answer = await this.write([raw("APPEND"), str(encodeMailboxName(name)), raw(`(${flags.join(" ")})`), { literal: message }], "APPEND", `the message may have been saved in "${name}"`);
    const m = /^APPENDUID \d+ (\d+)$/.exec(answer.code ?? "");
    return m === null ? undefined : Number(m[1]);
  }
}

/** What a write that did not complete may have changed, as the answer says it. */
const mayHave = (what: string) => `The mailbox may have been changed: ${what}.`;

function decodeMailboxNameSafe(wire: string): string | undefined {
  try {
    return decodeMailboxName(wire);
  } catch {
    return undefined;
  }
}
