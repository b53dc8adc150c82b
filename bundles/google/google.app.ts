// The Google bundle: Gmail tools, one mount per slug. bundle.json's "per-slug" serves /<slug> for every slug whose
// own <SLUG>__GMAIL_* credentials are set, and nothing else, so a mailbox is a roster entry and its secrets, not a
// code change; a mount reads only its own credentials, so a person's mailbox and the agent's own sit side by side
// without sharing one. Its tool groups (bundle.json's toolGroups) decide which tools each mount serves.
import { serveBundle } from "../kit/mount";
import manifest from "./bundle.json";
import { gmailServer } from "./google.tools";

export default serveBundle({ manifest, server: gmailServer });
