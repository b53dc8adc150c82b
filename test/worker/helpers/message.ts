/** The JSON-RPC message of an answer's text, whether it came as JSON or as an event stream (its first data line). */
export function messageOf(text: string): Record<string, unknown> {
  const data = text.trimStart().startsWith("{")
    ? text
    : text
        .split("\n")
        .find((l) => l.startsWith("data:"))
        ?.slice(5);
  return JSON.parse(data ?? "null") as Record<string, unknown>;
}
