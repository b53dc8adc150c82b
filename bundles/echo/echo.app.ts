// The echo bundle: a service-bound Worker with read-only tools, mounted at several paths so that the
// gateway's per-slug rules (confirmed, waived, sibling) can be shown on one bundle. Its mounts are listed
// in bundle.json, which `npm run check-config` reads too.
import { serveBundle } from "../kit/mount";
import manifest from "./bundle.json";
import { echoServer } from "./echo.tools";

export default serveBundle({ manifest, server: echoServer });
