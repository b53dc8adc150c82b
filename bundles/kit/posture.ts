// The container-wide switches of the upstream elicitation library. A bundle serves every caller, so none
// of them may decide for a call: each one makes every guarded call refuse (docs/rules.md R-CHAN-10).
// Values are never logged: an approval URL is a credential.

export type Posture = { ok: true } | { ok: false; variable: string; reason: string };

const CONTAINER_URLS = ["ELICITATION_REQUEST_URL", "ELICITATION_POLL_URL"] as const;

export function elicitationPosture(env: Record<string, unknown>): Posture {
  const enabled = env.ELICITATION_ENABLED;
  if (enabled !== undefined && enabled !== "true") {
    // Only "false" switches the vendored library off; any other word is a typo an operator should hear about.
    const reason =
      enabled === "false"
        ? "the bundle sets ELICITATION_ENABLED=false, under which the upstream tool would skip the prompt"
        : "the bundle sets ELICITATION_ENABLED to something other than true or false";
    return { ok: false, variable: "ELICITATION_ENABLED", reason };
  }
  for (const variable of CONTAINER_URLS) {
    if (env[variable] !== undefined) {
      return { ok: false, variable, reason: `the bundle sets ${variable}, a container-wide approval address that cannot name the calling session` };
    }
  }
  return { ok: true };
}

let warned = false;

/** Logs once per isolate, at its first request (Workers have no start-up hook that sees env). */
export function warnPostureOnce(env: Record<string, unknown>, log: (line: string) => void = (line) => console.warn(line)): void {
  if (warned) return;
  warned = true;
  const posture = elicitationPosture(env);
  if (!posture.ok) log(JSON.stringify({ event: "elicitation_disabled", variable: posture.variable, effect: "every guarded tool refuses" }));
}

/** Tests only: forget that the warning was written. */
export function resetPostureWarning(): void {
  warned = false;
}
