// A confirmed call's answer stream, as the caller receives it. workerd notices a caller that left only when
// a write to it fails, so while a claim of the call is on hold (contract/call-registry.ts) this writes SSE
// comment frames to the caller: a caller gone before the claim was asked is noticed, the stream is cancelled
// (which ends the call) and the claim is refused. The gateway vouches for its caller only once it has pushed
// PROBES_FOR_LIVENESS probes out, each after the runtime had taken the one before, and none failed: a loaded
// runtime that does not take them in time delays the claim rather than letting an unnoticed drop through.
import { CLAIM_CONFIRM_MAX_MS, PROBE_INTERVAL_MS, PROBES_FOR_LIVENESS } from "../contract/call-registry";

const PROBE = new TextEncoder().encode(": probe\n\n");

export interface ProbedStream {
  /** Put between the SDK's event stream and the response. */
  transform: TransformStream<Uint8Array, Uint8Array>;
  /**
   * Probes the caller: true once `needed` probes went out one after another without failing, false when the
   * stream is gone or over first, or nothing could be pushed out within CLAIM_CONFIRM_MAX_MS.
   */
  probe: () => Promise<boolean>;
  /**
   * Writes one whole SSE frame of the gateway's own to the caller (a question pushed on a 2025-11-25 call, docs/rules.md
   * R-PUSH-1), never inside one of the SDK's frames: at once at a frame boundary, else right after the frame being
   * written. False when the stream is over, so nothing was sent.
   */
  push: (frame: Uint8Array) => boolean;
}

/** True when the chunk ends an SSE frame, so a probe written next cannot split an event. */
function endsFrame(chunk: Uint8Array): boolean {
  const n = chunk.length;
  return n >= 2 && chunk[n - 1] === 0x0a && (chunk[n - 2] === 0x0a || (n >= 3 && chunk[n - 2] === 0x0d && chunk[n - 3] === 0x0a));
}

/**
 * `holdMs`: how long the registry holds a claim. Probing goes on even once the caller has been vouched for, for as
 * long as the registry may still grant the claim: the hold, and then up to `graceMs` (CLAIM_CONFIRM_MAX_MS, past
 * which the registry refuses a claim it has not granted). A registry that grants late (its isolate or the machine
 * busy) grants a call whose caller left meanwhile only if that drop also went unseen by probes still running then:
 * before, probing stopped at the hold's end, and under load a grant 600 ms later let a caller that left in between
 * write (test/e2e/late-yes.race.test.ts). The call's answer ends the stream, and with it the probing, so a call
 * that writes and returns is probed no longer than it takes; only a drop in the last moments before the write can go
 * unseen.
 */
export function probedStream(intervalMs: number = PROBE_INTERVAL_MS, needed: number = PROBES_FOR_LIVENESS, holdMs = 0, graceMs: number = CLAIM_CONFIRM_MAX_MS): ProbedStream {
  let controller: TransformStreamDefaultController<Uint8Array> | undefined;
  let atBoundary = true;
  /** The gateway's own frames that came while one of the SDK's was half written: they follow it. */
  let waiting: Uint8Array[] = [];
  let over = false;
  /** Probes go out until then, whether or not a round still waits for its verdict. */
  let until = 0;
  /** Each running probe round: its verdict and how many of its probes the runtime has taken so far. */
  const rounds = new Set<{ taken: number; outstanding: boolean; settle: (alive: boolean) => void }>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const finish = (alive: boolean) => {
    for (const round of rounds) round.settle(alive);
    rounds.clear();
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  const stop = () => {
    over = true;
    controller = undefined;
    finish(false);
  };
  const tick = () => {
    if (controller === undefined || (rounds.size === 0 && Date.now() > until)) return finish(false);
    // An errored stream (the caller's side failed) has no queue any more.
    if (controller.desiredSize === null) return stop();
    // The runtime takes a chunk from the queue as it writes it on: a probe still queued was not sent yet.
    if (controller.desiredSize < 0 || !atBoundary) return;
    for (const round of [...rounds]) {
      if (round.outstanding) round.taken++;
      if (round.taken >= needed) {
        rounds.delete(round);
        round.settle(true);
      } else round.outstanding = true;
    }
    if (rounds.size === 0 && Date.now() > until) return finish(true);
    try {
      controller.enqueue(PROBE);
    } catch {
      // The caller's side is gone: the stream was cancelled, which already ends the call.
      stop();
    }
  };
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    start(c) {
      controller = c;
    },
    transform(chunk, c) {
      c.enqueue(chunk);
      atBoundary = endsFrame(chunk);
      if (atBoundary && waiting.length > 0) {
        for (const frame of waiting) c.enqueue(frame);
        waiting = [];
      }
    },
    flush() {
      stop();
    },
  });
  return {
    transform,
    push(frame) {
      if (over || controller === undefined || controller.desiredSize === null) return false;
      if (!atBoundary) {
        waiting.push(frame);
        return true;
      }
      try {
        controller.enqueue(frame);
        return true;
      } catch {
        stop();
        return false;
      }
    },
    probe() {
      if (over) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        let settled = false;
        const giveUp = setTimeout(() => round.settle(false), CLAIM_CONFIRM_MAX_MS);
        const round = {
          taken: 0,
          outstanding: false,
          settle: (alive: boolean) => {
            if (settled) return;
            settled = true;
            clearTimeout(giveUp);
            rounds.delete(round);
            resolve(alive);
          },
        };
        rounds.add(round);
        until = Math.max(until, Date.now() + holdMs + graceMs + 2 * intervalMs);
        tick();
        timer ??= setInterval(tick, intervalMs);
      });
    },
  };
}
