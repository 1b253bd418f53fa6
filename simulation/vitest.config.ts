import { configDefaults, defineProject } from 'vitest/config';

/**
 * Two files of the hostile suite on hop v2 run in their own lane, `npm run test:hostile-v2`
 * (DRIFTLINE_HOSTILE_V2=1), not in `npm test`: each passes alone (83 s, 31–57 s), but each failed once in
 * a whole run of eight files at a time on two cores (a wait of 90–120 s on the hub's view that a loaded
 * machine outlasted), and a failing CI lands nothing. wire2TwoUpstreams stays in the whole run.
 */
const HOSTILE_V2_LANE = ['test/hostile/wire2AgentLink.test.ts', 'test/hostile/wire2Relay.test.ts'];

export default defineProject({
  test: {
    name: 'simulation',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: process.env.DRIFTLINE_HOSTILE_V2
      ? configDefaults.exclude
      : [...configDefaults.exclude, ...HOSTILE_V2_LANE],
    // The agent and relay processes run from the offline package, built once per run.
    globalSetup: ['test/edgePackage.setup.ts'],
    // A hang guard, not a speed check: cases that start processes passed vitest's default 5 s beside a
    // full run on two cores (package.test's unpack and version cases; issue 40).
    testTimeout: 30_000,
  },
});
