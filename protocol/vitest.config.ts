import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'protocol',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    // its own temporary folder when run alone (docs/decisions/442-test-temp-folder.md)
    globalSetup: ['../scripts/tmp.setup.ts'],
    // Hang guards, not speed checks: beside a whole run on a slow machine set-ups took past the default
    // 10 s, and a linear-time parse of a hostile megabyte past the default 5 s (protocol's lockFile test).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
