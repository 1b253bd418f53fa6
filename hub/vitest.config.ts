import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'hub',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // A hang guard, not a speed check: on two cores a full run (PostgreSQL, Chromium and process
    // topologies beside it) stretches route-by-route tests past vitest's default 5 s.
    testTimeout: 30_000,
  },
});
