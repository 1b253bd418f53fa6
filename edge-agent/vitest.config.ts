import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'edge-agent',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    // its own temporary folder when run alone (docs/decisions/442-test-temp-folder.md)
    globalSetup: ['../scripts/tmp.setup.ts'],
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // A hang guard, not a speed check: beside a full run on two cores, tests that start the program as a
    // process passed vitest's default 5 s (relayKey.test took 9.2 s once; issue 40).
    testTimeout: 30_000,
    // A hang guard too: a set-up that starts programs or compresses a fixture took past the default 10 s
    // beside a whole run on a slow machine (hub approvals' and cli's hooks at CI, 2026-11-30).
    hookTimeout: 60_000,
  },
});
