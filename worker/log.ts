// One structured JSON line per /mcp request. Only names, counts and outcomes: never a token, a header
// value, an approval URL or an argument; and a name the caller chose only as one short, clean line.
import { cleanLine } from "../contract/text";

export interface RequestLog {
  caller: string | null;
  slugs: string[];
  method: string | null;
  tool: string | null;
  outcome: string;
  status: number;
  durationMs: number;
}

/** Caller-chosen names (a method, a tool) are cut to this many characters in the log line (docs/rules.md R-LOG-5). */
export const LOGGED_NAME_MAX = 128;

const loggedName = (name: string | null) => (name === null ? null : cleanLine(name, LOGGED_NAME_MAX));

export function writeRequestLog(line: RequestLog): void {
  console.log(JSON.stringify({ at: new Date().toISOString(), event: "mcp_request", ...line, method: loggedName(line.method), tool: loggedName(line.tool) }));
}
