// A pad's edit lease, as the pads bundle and the CallRegistry Durable Object both see it (docs/rules.md R-PAD-13):
// every edit that removes text takes it before it is measured on the pad as it stands and holds it until Rustpad
// acknowledged the edit, so calls sent at the same moment are measured one after another. It lives in the gateway's
// CallRegistry namespace, on an object of its own per pad, so every isolate sees the same lease.

/** What a lease asks for, and the most the object grants: a holder that died frees the pad after this long. */
export const PAD_LEASE_MS = { request: 10_000, min: 50, max: 10_000 } as const;
/** A holder is a random id of the bundle's, one per edit. */
export const PAD_LEASE_HOLDER = /^[A-Za-z0-9-]{16,64}$/;

/** The two requests, on the CallRegistry object named padLeaseName(...). */
export interface PadLeaseApi {
  /** True when the pad was free (or its lease expired, or this holder already has it): the lease is now this holder's for ttlMs. */
  leasePad(holder: string, ttlMs: number): Promise<boolean>;
  /** Frees the pad if this holder has it; anything else is left alone. */
  releasePad(holder: string): Promise<void>;
}

/** The object a pad's lease lives on: `pad:` and the SHA-256 of the Rustpad server's address and the pad id. */
export async function padLeaseName(server: string, pad: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${server}\n${pad}`));
  return `pad:${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
