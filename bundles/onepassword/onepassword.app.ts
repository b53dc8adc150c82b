// The 1Password bundle: a mount per slug (bundle.json "per-slug"), each reading only its own <SLUG>__ credentials;
// the shared /onepassword reads ONEPASSWORD__, else the bare ones. A second account is a roster entry and its
// secrets (onepassword.mounts.ts); bundles/onepassword/README.md says more.
import manifest from "./bundle.json";
import { servePerSlug } from "./onepassword.mounts";
import { onepasswordServer } from "./onepassword.tools";

export default servePerSlug(manifest, onepasswordServer);
