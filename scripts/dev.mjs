// `npm run dev`: the whole local stack on 127.0.0.1 (gateway 8787, approvals 8788, fakes 8789).
import { PORTS, startStack } from "./stack.mjs";

const stack = await startStack({ quiet: false });
console.log(`\nstrad is up: gateway http://127.0.0.1:${PORTS.gateway}/mcp  approvals http://127.0.0.1:${PORTS.approvals}/  fakes http://127.0.0.1:${PORTS.fakes}/`);
const shutdown = async () => { await stack.stop(); process.exit(0); };
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
