import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'edge-agent',
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
