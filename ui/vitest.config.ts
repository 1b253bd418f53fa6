import { defineProject } from 'vitest/config';

export default defineProject({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  test: {
    name: 'ui',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    // its own temporary folder when run alone (docs/decisions/442-test-temp-folder.md)
    globalSetup: ['../scripts/tmp.setup.ts'],
    // Hang guards, not speed checks: beside a whole run on a slow machine set-ups took past the default
    // 10 s, and a linear-time parse of a hostile megabyte past the default 5 s (protocol's lockFile test).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    environment: 'happy-dom',
    setupFiles: ['test/support/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}', 'test/**/*.test.{ts,tsx}'],
  },
});
