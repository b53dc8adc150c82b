// Covers runtime roster writes on the running dev stack: `npm run roster`'s API adds a remote server that an official
// MCP client then reaches through the gateway within OVERLAY_TTL_MS, the audit line in the stack log, a guard key
// refused, and a session caller refused; the overlay is reset afterwards so no other file sees it.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { OVERLAY_TTL_MS } from "../../worker/overlay";
import { bearer, connectLegacy, GATEWAY, logsCaughtUp, STACK_LOG, TOKENS, waitFor } from "./helpers";

const admin = (method: string, path: string, body?: unknown, token = TOKENS.admin) =>
  fetch(`${GATEWAY}/admin/roster${path}`, {
    method,
    headers: { ...bearer(token), "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const RUNTIME_REMOTE = { slug: "runtime-remote", kind: "remote-http", url: "http://127.0.0.1:8789/remote/mcp", entitlements: ["user"] };

afterAll(async () => {
  await admin("DELETE", "");
});

describe("runtime roster writes on the dev stack", () => {
  it("a remote server added at runtime is reached by an MCP client within OVERLAY_TTL_MS, and the write is one audit line", async () => {
    const written = await admin("POST", "/servers", RUNTIME_REMOTE);
    expect(written.status).toBe(200);
    const at = Date.now();
    const tools = await waitFor(
      async () => {
        try {
          const client = await connectLegacy("runtime-remote", bearer(TOKENS.session));
          const listed = await client.listTools();
          await client.close();
          return listed.tools;
        } catch {
          return undefined;
        }
      },
      OVERLAY_TTL_MS * 3,
      250,
    );
    expect(Date.now() - at).toBeLessThan(OVERLAY_TTL_MS + 2000);
    expect(tools.map((t) => t.name)).toContain("report_request");
    await logsCaughtUp();
    const lines = readFileSync(STACK_LOG, "utf8")
      .split("\n")
      .filter((l) => l.includes('"event":"roster_write"') && l.includes('"slug":"runtime-remote"'));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    const line = JSON.parse((lines.at(-1) as string).slice((lines.at(-1) as string).indexOf("{"))) as Record<string, unknown>;
    expect(line).toMatchObject({ who: "dev-admin", op: "add", slug: "runtime-remote" });
    expect(String(line.after)).toMatch(/^[0-9a-f]{64}$/);
    expect(lines.join("\n")).not.toContain(TOKENS.admin);
  });

  it("a guard key is refused on the running gateway, and a session caller cannot write at all", async () => {
    const guarded = await admin("PATCH", "/servers/runtime-remote", { confirmations: true });
    expect(guarded.status).toBe(422);
    expect(await guarded.json()).toMatchObject({ code: "GUARD_KEY", key: "confirmations" });
    const session = await admin("DELETE", "/servers/runtime-remote", undefined, TOKENS.session);
    expect(session.status).toBe(403);
    const listing = (await (await admin("GET", "")).json()) as { servers: { slug: string; source: string }[] };
    expect(listing.servers.find((s) => s.slug === "runtime-remote")?.source).toBe("runtime:added");
  });
});
