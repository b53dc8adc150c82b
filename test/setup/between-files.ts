// The unit project runs files one after another in the same worker without isolating them (vitest.config.ts): what
// a file stubbed or faked and did not put back ends with the file, so no later file sees another's globals or clock.
import { afterAll, vi } from "vitest";

afterAll(() => {
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  vi.useRealTimers();
  vi.restoreAllMocks();
});
