// ELICITATION=true|false: the bundle-wide switch of a bundle that opts into the two-call token (serveBundle's
// `elicitationSwitch`; docs/rules.md R-PAD-11). Deliberately unprefixed, like the upstream servers' variable it
// mirrors: one value for the whole Worker. `true` (the default) asks a person through the channel; `false` takes
// the two-call token wherever the slug allows it (`fallback: token`) and refuses elsewhere, so no setting lets a
// guarded call go unannounced. Any other value, empty included, makes every request of the bundle fail naming
// both valid values: a Worker cannot exit, so it must not serve, and a typo that fell back to the default would
// leave the dialog on while the operator believed it off. Bundles that do not opt in never read it.

export const ELICITATION_VARIABLE = "ELICITATION";

export type ElicitationSwitch = { ok: true; asks: boolean } | { ok: false; reason: string };

export const INVALID_SWITCH_REASON =
  'ELICITATION must be "true" (ask a person through the approval channel, the default) or "false" (guarded tools fall back to the two-call token); it is set to something else, so this bundle serves nothing until it is one of the two';

/** The switch as the bundle reads it; never echoes the value. */
export function elicitationSwitch(env: Record<string, unknown>): ElicitationSwitch {
  const raw = env[ELICITATION_VARIABLE];
  if (raw === undefined || raw === "true") return { ok: true, asks: true };
  if (raw === "false") return { ok: true, asks: false };
  return { ok: false, reason: INVALID_SWITCH_REASON };
}

/** The one line a bundle running with ELICITATION=false writes when an isolate starts serving. */
export function switchOffLine(bundle: string): string {
  return `${bundle}: ELICITATION=false — guarded tools fall back to the two-call token`;
}

/** The one line a bundle with an invalid ELICITATION writes when an isolate starts serving. */
export function switchInvalidLine(bundle: string): string {
  return `${bundle}: ELICITATION is neither true nor false — every request fails until it is one of the two`;
}

const logged = new Set<string>();

/**
 * Logs once per isolate and bundle, at its first request (Workers have no start-up hook that sees env): the
 * off line, or the invalid line; nothing when the switch is on. Returns the switch.
 */
export function logSwitchOnce(bundle: string, env: Record<string, unknown>, log: (line: string) => void = (line) => console.log(line)): ElicitationSwitch {
  const value = elicitationSwitch(env);
  if (!logged.has(bundle)) {
    logged.add(bundle);
    if (!value.ok) log(switchInvalidLine(bundle));
    else if (!value.asks) log(switchOffLine(bundle));
  }
  return value;
}

/** Tests only: forget that the line was written. */
export function resetSwitchLog(): void {
  logged.clear();
}
