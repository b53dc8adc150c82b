// `npm run session`: mints a fresh approval session on the local approval service (npm run dev) and
// prints its elicitation URL (send it as X-Elicitation-Url to the gateway) and its review URL (open it).
// APPROVALS_ORIGIN / APPROVALS_OPERATOR_TOKEN point it elsewhere.
import { DEV_OPERATOR_TOKEN, DEV_ORIGIN, mintSession } from "../approvals/dev-api.mjs";

const origin = process.env.APPROVALS_ORIGIN ?? DEV_ORIGIN;
let session;
try {
  session = await mintSession({ origin, operatorToken: process.env.APPROVALS_OPERATOR_TOKEN ?? DEV_OPERATOR_TOKEN });
} catch (error) {
  const reason = error instanceof Error ? error.message : String(error);
  console.error(`could not mint a session at ${origin}: ${reason}. Is the stack running (npm run dev)?`);
  process.exit(1);
}
// Printing the session's URLs to the person who asked for them is this command's output, not a log line.
process.stdout.write(
  [`elicitationUrl: ${session.elicitationUrl}`, `reviewUrl:      ${session.reviewUrl}`, `sessionId:      ${session.sessionId}`, "", `export X_ELICITATION_URL='${session.elicitationUrl}'`, ""].join(
    "\n",
  ),
);
