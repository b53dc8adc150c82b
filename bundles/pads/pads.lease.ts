// The pad's edit lease, taken from the gateway's CallRegistry namespace (CALLS), where every isolate sees it
// (contract/pad-lease.ts, docs/rules.md R-PAD-13). An edit that removes text holds it from before it is measured on
// the pad as it stands until Rustpad acknowledged it, so no two such edits are measured on the same revision. A
// second one while it is held is refused at once; it waits for nothing.
import { PAD_LEASE_MS, type PadLeaseApi, padLeaseName } from "../../contract/pad-lease";
import { PadError } from "./pads.client";

/** What a call hears when another edit that removes text holds the pad. */
export const PAD_BUSY = "another edit to this pad is in flight; call again";

export interface PadLease {
  /** When the lease runs out, by this isolate's clock (taken before it was asked for, so never later than the object's). */
  until: number;
  release(): Promise<void>;
}

/** Takes the lease on one pad of the session's server, or throws PadError saying why not. */
export type TakeLease = (pad: string) => Promise<PadLease>;

type LeaseNamespace = DurableObjectNamespace<PadLeaseApi & Rpc.DurableObjectBranded>;

/** The lease taker for pads of the Rustpad server at `server` (its address, which with the pad id names the object). */
export function padLeases(env: Record<string, unknown>, server: string): TakeLease {
  return async (pad) => {
    const ns = env.CALLS as LeaseNamespace | undefined;
    if (ns === undefined || typeof ns.idFromName !== "function") throw new PadError("no lease store is bound (CALLS), so an edit that removes text is not sent");
    const stub = ns.get(ns.idFromName(await padLeaseName(server, pad)));
    const holder = crypto.randomUUID();
    const start = Date.now();
    let won: boolean;
    try {
      won = (await stub.leasePad(holder, PAD_LEASE_MS.request)) === true;
    } catch {
      throw new PadError("the pad's edit lease could not be taken, so nothing was sent");
    }
    if (!won) throw new PadError(PAD_BUSY);
    return {
      until: start + PAD_LEASE_MS.request,
      release: async () => {
        try {
          await stub.releasePad(holder);
        } catch {
          // Not freed now: it runs out by itself at `until`.
        }
      },
    };
  };
}
