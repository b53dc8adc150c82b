// The mailbox bundle: an IMAP client (mailbox.client.ts, over cloudflare:sockets) behind the gateway's binding
// MAILBOX. A mount per slug that holds its own IMAP account (`<SLUG>__IMAP_HOST`, `_USER`, `_PASSWORD`; bundle.json),
// so a mailbox is a roster entry and its secrets. It opts into the two-call token, so it reads ELICITATION
// (bundles/kit/switch.ts) and names itself "mailbox" in its start-up line. bundles/mailbox/README.md says more.
import { serveBundle } from "../kit/mount";
import manifest from "./bundle.json";
import { mailboxServer } from "./mailbox.tools";

export default serveBundle({ manifest, server: mailboxServer, elicitationSwitch: { bundle: "mailbox" } });
