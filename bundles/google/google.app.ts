// The Google bundle: Gmail tools, one mount per slug. Each mount reads only its own <SLUG>__GMAIL_* secrets,
// so a person's mailbox and the agent's own sit side by side without sharing a credential.
import { serveBundle } from "../kit/mount";
import { gmailServer } from "./google.tools";

export default serveBundle({
  mounts: { "/gmail-rw-external": gmailServer, "/gmail-agent": gmailServer },
});
