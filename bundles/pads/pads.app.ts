// The pads bundle: a Rustpad client (pads.client.ts) behind the gateway's binding PADS. It serves the mounts
// bundle.json lists (`npm run check-config` reads the same file); its tools are in pads.tools.ts. It opts into the
// two-call token, so it reads ELICITATION (bundles/kit/switch.ts) and names itself "pads" in its start-up line.
import { serveBundle } from "../kit/mount";
import manifest from "./bundle.json";
import { padsServer } from "./pads.tools";

export default serveBundle({ manifest, server: padsServer, elicitationSwitch: { bundle: "pads" } });
