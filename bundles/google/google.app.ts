// The Google bundle: Gmail tools, one mount per slug. Each mount reads only its own <SLUG>__GMAIL_* secrets,
// so a person's mailbox and the agent's own sit side by side without sharing a credential. Its mounts are
// listed in bundle.json, which `npm run check-config` reads too.
import { serveBundle } from "../kit/mount";
import manifest from "./bundle.json";
import { gmailServer } from "./google.tools";

export default serveBundle({ manifest, server: gmailServer });
