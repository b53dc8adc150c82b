// The echo bundle: a service-bound Worker with read-only tools, mounted at several paths so that the
// gateway's per-slug rules (confirmed, waived, sibling) can be shown on one bundle.
import { serveBundle } from "../kit/mount";
import { echoServer } from "./echo.tools";

export default serveBundle({
  mounts: { "/echo": echoServer, "/echo-confirmed": echoServer, "/echo-waived": echoServer, "/echo-unseeded": echoServer },
});
