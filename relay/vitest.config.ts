import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'relay',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // A hang guard, not a speed check: beside a full run on two cores, tests that start the program as a
    // process passed vitest's default 5 s (relayKey.test took 9.2 s once; issue 40).
    testTimeout: 30_000,
  },
});
