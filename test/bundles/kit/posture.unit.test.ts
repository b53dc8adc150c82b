// Covers bundles/kit/posture.ts: the upstream library's container-wide switches make every guarded call refuse, with one warning naming the variable.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { elicitationPosture, resetPostureWarning, warnPostureOnce } from "../../../bundles/kit/posture";
import { callBundle } from "./helpers/bundle";
import { kitBundle } from "./helpers/test-bundle";

// The warning is once per isolate, and the unit project's files share one (vitest.config.ts): another file's bundle may
// have written it already.
beforeEach(() => resetPostureWarning());
afterEach(() => {
  resetPostureWarning();
  vi.restoreAllMocks();
});

describe("the posture", () => {
  it("is fine with none of the switches, or ELICITATION_ENABLED=true", () => {
    expect(elicitationPosture({})).toEqual({ ok: true });
    expect(elicitationPosture({ ELICITATION_ENABLED: "true", ELICITATION_TTL_MS: "1000" })).toEqual({ ok: true });
  });

  it.each([
    [{ ELICITATION_ENABLED: "false" }, "ELICITATION_ENABLED"],
    [{ ELICITATION_ENABLED: "0" }, "ELICITATION_ENABLED"],
    [{ ELICITATION_REQUEST_URL: "https://approvals.example.com/api/v1/elicitations/session/abc" }, "ELICITATION_REQUEST_URL"],
    [{ ELICITATION_POLL_URL: "https://approvals.example.com/poll/abc" }, "ELICITATION_POLL_URL"],
    [{ ELICITATION_REQUEST_URL: "" }, "ELICITATION_REQUEST_URL"],
  ])("refuses under %o, naming %s and never its value", (env, variable) => {
    const posture = elicitationPosture(env);
    expect(posture).toMatchObject({ ok: false, variable });
    if (!posture.ok) {
      expect(posture.reason).toContain(variable);
      for (const value of Object.values(env)) if (value.length > 5) expect(posture.reason).not.toContain(value);
    }
  });
});

describe("the start-up warning", () => {
  it("is written once per isolate, names the variable and not its value", () => {
    const lines: string[] = [];
    const env = { ELICITATION_REQUEST_URL: "https://approvals.example.com/api/v1/elicitations/session/secret-token-1" };
    warnPostureOnce(env, (l) => lines.push(l));
    warnPostureOnce(env, (l) => lines.push(l));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toEqual({ event: "elicitation_disabled", variable: "ELICITATION_REQUEST_URL", effect: "every guarded tool refuses" });
    expect(lines[0]).not.toContain("secret-token-1");
  });

  it("is not written when nothing is switched", () => {
    const lines: string[] = [];
    warnPostureOnce({}, (l) => lines.push(l));
    expect(lines).toEqual([]);
  });

  it("is written by a bundle at its first request", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await callBundle(kitBundle, { mount: "kit", name: "whoami", args: { pauseMs: 0 }, env: { ELICITATION_ENABLED: "false" } });
    await callBundle(kitBundle, { mount: "kit", name: "whoami", args: { pauseMs: 0 }, env: { ELICITATION_ENABLED: "false" } });
    expect(warn.mock.calls.filter(([line]) => String(line).includes("ELICITATION_ENABLED"))).toHaveLength(1);
  });
});
