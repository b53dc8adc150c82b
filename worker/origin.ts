// The Origin check every /mcp request passes first (docs/rules.md R-MCP-3): a browser page's request carries an
// Origin, and only the roster's allowedOrigins may call (the 2025-11-25 transport requires it, against DNS
// rebinding); server-side clients send none. The same check and the same refusal as the SDK's
// originValidationResponse, restated so that a request the fast lane serves never loads the SDK's modules
// (contract/sdk.ts); test/worker/origin.test.ts holds the two to the same answers.

/** The refusal of a request whose Origin the list does not allow, or undefined when it may go on. */
export function originRefusal(request: Request, allowedHostnames: readonly string[]): Response | undefined {
  const why = originProblem(request.headers.get("origin"), allowedHostnames);
  if (why === undefined) return undefined;
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message: why }, id: null }, { status: 403, headers: { "Content-Type": "application/json" } });
}

/**
 * Why an Origin is refused, or undefined: none (or an empty one) passes; one that is not a URL with a hostname is
 * invalid; otherwise its hostname must be listed, or, for a scheme other than http(s), `<scheme>//*` must be.
 */
function originProblem(origin: string | null, allowed: readonly string[]): string | undefined {
  if (origin === null || origin === "") return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Invalid Origin header: ${origin}`;
  }
  const { hostname, protocol } = url;
  if (hostname === "") return `Invalid Origin header: ${origin}`;
  const anyOfScheme = protocol !== "http:" && protocol !== "https:" && allowed.includes(`${protocol}//*`);
  if (!anyOfScheme && !allowed.includes(hostname)) return `Invalid Origin: ${hostname}`;
  return undefined;
}
