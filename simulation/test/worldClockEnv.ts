import { fileURLToPath } from 'node:url';

const SKEW_PRELOAD = fileURLToPath(new URL('./skewClock.mjs', import.meta.url));

/**
 * The environment of a program (headquarters' `hub` verbs, `edge-agent status`) run beside a world: its
 * wall clock moved to the world's instant (`skewClock.mjs`), so what it stamps and judges is world time.
 */
export function worldClockEnv(realNow: () => number): Record<string, string> {
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${SKEW_PRELOAD}`.trim(),
    DRIFTLINE_TEST_CLOCK_SKEW_MS: String(Date.now() - realNow()),
  };
}
