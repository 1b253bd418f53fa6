import { defineProject } from 'vitest/config';

export default defineProject({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  test: {
    name: 'ui',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}', 'test/**/*.test.{ts,tsx}'],
  },
});
