import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'hub',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    // its own temporary folder when run alone (docs/decisions/442-test-temp-folder.md)
    globalSetup: ['../scripts/tmp.setup.ts'],
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // A hang guard, not a speed check: on two cores a full run (PostgreSQL, Chromium and process
    // topologies beside it) stretches route-by-route tests past vitest's default 5 s.
    testTimeout: 30_000,
    // A hang guard too: a set-up that starts programs or compresses a fixture took past the default 10 s
    // beside a whole run on a slow machine (hub approvals' and cli's hooks at CI, 2026-11-30).
    hookTimeout: 60_000,
  },
});
