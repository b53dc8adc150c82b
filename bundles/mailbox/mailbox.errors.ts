// What a mailbox failure is, in the bundle's own words: the server refused a command, a command's answer never came
// whole (so it may have run), or a write stopped part way and says what may have changed. The connection
// (mailbox.connection.ts) and the commands (mailbox.client.ts) throw them, and the tools answer with them, so each
// holds only what the bundle wrote: never the server's text or a credential.

export class MailError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MailError";
  }
}

/** The server answered a command NO or BAD: it failed (a UID MOVE may still have moved some messages, RFC 6851 §3.3). */
export class MailRefused extends MailError {}

/** A command went out and its answer never came whole (a timeout, a broken connection, a dropped call): it may have run. */
export class MailUnanswered extends MailError {}

/**
 * A write that may have changed the mailbox although it did not complete: `state` says, in the bundle's words, what
 * may have changed or what state the messages are in, so the answer never says "Nothing was changed".
 */
export class MailPartly extends MailError {
  constructor(
    message: string,
    readonly state: string,
  ) {
    super(message);
  }
}
