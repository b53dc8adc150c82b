// `npm run dev`: the whole local stack on 127.0.0.1 (gateway 8787, approvals 8788, fakes 8789) under
// `wrangler dev`, which rebuilds a Worker when its code changes. The e2e suite runs the same Workers built as
// deployed, on workerd through Miniflare (scripts/stack.mjs), and starts this command once to see it come up.
// `npm run dev -- --free-ports` serves on free ports instead (its Workers still call each other on 8788/8789):
// for that check, beside a stack that holds the usual ports.
import { startDevStack } from "./stack.mjs";

const stack = await startDevStack({ quiet: false, freePorts: process.argv.includes("--free-ports") });
const { gateway, approvals, fakes, rustpad, dovecot } = stack.ports;
console.log(`\nstrad is up: gateway http://127.0.0.1:${gateway}/mcp  approvals http://127.0.0.1:${approvals}/  fakes http://127.0.0.1:${fakes}/  rustpad ws://127.0.0.1:${rustpad}/`);
console.log(dovecot === undefined ? "dovecot: not running (see above); the mailbox mounts cannot reach IMAP" : `dovecot imap://127.0.0.1:${dovecot} (test/servers/dovecot/)`);
const shutdown = async () => {
  await stack.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
