import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'hop',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
