// The e2e run's log scan (test/e2e/secrets.ts) finds what it must, so a leak would fail the run.
import { describe, expect, it } from "vitest";
import { secretsIn } from "../e2e/secrets";

describe("the log scan", () => {
  it("finds a dev bearer token, an Access secret and an approval URL token in a log", () => {
    expect(secretsIn('[gateway] {"auth":"dev-session-token-0123456789abcdef"}')).toEqual(["STRAD_TOKEN_DEV_SESSION"]);
    expect(secretsIn("[gateway] dev-access-client-secret-0123456789abcdef")).toContain("APPROVALS_CF_ACCESS_CLIENT_SECRET");
    expect(secretsIn("[gateway] POST http://127.0.0.1:8788/api/v1/elicitations/session/abc123def456.sig/ 200")).toEqual(["an approval-session URL token"]);
    expect(secretsIn("[gateway] x http://127.0.0.1:8790/scripted/run-1/")).toEqual(["a scripted approval URL"]);
  });

  it("passes a clean log, and the approval service's own access log of its own URLs", () => {
    expect(secretsIn('[gateway] {"event":"mcp_request","caller":"dev-session","outcome":"ok"}')).toEqual([]);
    expect(secretsIn("[approvals] [wrangler:info] POST /api/v1/elicitations/session/abc123def456.sig/ 200 OK")).toEqual([]);
  });
});
