// The Approval Flow bundle: a service-bound Worker the gateway reaches over its binding APPROVAL_FLOW. It serves the
// mounts bundle.json lists (`npm run check-config` reads the same file); its tools are in approval-flow.tools.ts, and
// the requests they keep live in its own Durable Object (approval-flow.store.ts).
import { serveBundle } from "../kit/mount";
import { approvalFlowServer } from "./approval-flow.tools";
import manifest from "./bundle.json";

export { ApprovalFlowStore } from "./approval-flow.store";

export default serveBundle({ manifest, server: approvalFlowServer });
