// One tool call's IMAP connection: opened on first use from the mount's own account, reused by every command of
// the call, and closed when the call ends; none is held across requests (docs/rules.md R-MAIL-8). A guarded call
// takes each look at its target through `look()`, on a connection of its own that is closed before the look returns,
// so no socket is open, logged in, while a person decides; the look after the answer is a new SELECT that sees a
// recreated mailbox's new UIDVALIDITY, and the write opens its own connection and looks once more before it acts.
import { ImapClient } from "./mailbox.client";
import { accountFor } from "./mailbox.config";
import type { Connector } from "./mailbox.connection";
import { MailError } from "./mailbox.errors";
import { workerConnect } from "./mailbox.socket";

let connector: Connector = workerConnect;
/** Connections this isolate opened (tests read it to hold a call to one connection). */
export const stats = { connections: 0 };

/** Tests only: reach IMAP through another connector (Node's sockets in unit tests). Returns what puts it back. */
export function useConnector(next: Connector): () => void {
  const before = connector;
  connector = next;
  return () => {
    connector = before;
  };
}

export class MailSession {
  private opening: Promise<ImapClient> | undefined;

  constructor(
    /** The mount whose account this session opens: the call's own (bundles/kit/scope.ts). */
    readonly mount: string,
    private readonly env: Record<string, unknown>,
    private readonly signal: AbortSignal,
  ) {}

  /** The call's connection, opened once. */
  client(): Promise<ImapClient> {
    if (this.opening === undefined) {
      const found = accountFor(this.mount, this.env);
      if (!found.ok) return Promise.reject(new MailError(found.reason));
      stats.connections++;
      this.opening = ImapClient.open(found.account, connector, this.signal);
    }
    return this.opening;
  }

  /** A new connection, the previous one closed. */
  async fresh(): Promise<ImapClient> {
    await this.close();
    return this.client();
  }

  /** One look at a target on a new connection, closed when the look ends, whatever it found (R-MAIL-8). */
  async look<T>(work: (client: ImapClient) => Promise<T>): Promise<T> {
    try {
      return await work(await this.fresh());
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    if (opening === undefined) return;
    try {
      await (await opening).close();
    } catch {}
  }
}
