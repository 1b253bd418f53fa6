import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'relay',
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
