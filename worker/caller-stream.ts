// A confirmed call's answer stream, as the caller receives it. workerd notices a caller that left only when
// a write to it fails, so while a claim of the call is on hold (contract/call-registry.ts) this writes an SSE
// comment frame every PROBE_INTERVAL_MS: a caller gone before the claim was asked is noticed, the stream is
// cancelled (which ends the call) and the claim is refused before its hold runs out.
import { PROBE_INTERVAL_MS } from "../contract/call-registry";

const PROBE = new TextEncoder().encode(": probe\n\n");

export interface ProbedStream {
  /** Put between the SDK's event stream and the response. */
  transform: TransformStream<Uint8Array, Uint8Array>;
  /** Probes the caller for the next `forMs` (a later call extends it). */
  probe: (forMs: number) => void;
}

/** True when the chunk ends an SSE frame, so a probe written next cannot split an event. */
function endsFrame(chunk: Uint8Array): boolean {
  const n = chunk.length;
  return n >= 2 && chunk[n - 1] === 0x0a && (chunk[n - 2] === 0x0a || (n >= 3 && chunk[n - 2] === 0x0d && chunk[n - 3] === 0x0a));
}

export function probedStream(intervalMs: number = PROBE_INTERVAL_MS): ProbedStream {
  let controller: TransformStreamDefaultController<Uint8Array> | undefined;
  let atBoundary = true;
  let until = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    controller = undefined;
  };
  const tick = () => {
    if (controller === undefined || Date.now() > until) {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      return;
    }
    if (!atBoundary) return;
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
    },
    flush() {
      stop();
    },
  });
  return {
    transform,
    probe(forMs) {
      until = Math.max(until, Date.now() + forMs);
      tick();
      timer ??= setInterval(tick, intervalMs);
    },
  };
}
