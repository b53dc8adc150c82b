// One structured JSON line per /mcp request. Only names, counts and outcomes: never a token, a header
// value, an approval URL or an argument.
export interface RequestLog {
  caller: string | null;
  slugs: string[];
  method: string | null;
  tool: string | null;
  outcome: string;
  status: number;
  durationMs: number;
}

export function writeRequestLog(line: RequestLog): void {
  console.log(JSON.stringify({ at: new Date().toISOString(), event: "mcp_request", ...line }));
}
