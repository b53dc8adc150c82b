// The 1Password bundle: the shared mount /onepassword (its slugs share one account: ONEPASSWORD__ or the bare
// credentials) and a mount per slug with a token of its own (/onepassword-provisioning: its own <SLUG>__ only). Its
// mounts are listed in bundle.json, which `npm run check-config` reads too; bundles/onepassword/README.md says more.
import { serveBundle } from "../kit/mount";
import manifest from "./bundle.json";
import { onepasswordServer } from "./onepassword.tools";

export default serveBundle({ manifest, server: onepasswordServer });
