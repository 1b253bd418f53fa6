import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'simulation',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The agent and relay processes run from the offline package, built once per run.
    globalSetup: ['test/edgePackage.setup.ts'],
    // A hang guard, not a speed check: cases that start processes passed vitest's default 5 s beside a
    // full run on two cores (package.test's unpack and version cases; issue 40).
    testTimeout: 30_000,
  },
});
