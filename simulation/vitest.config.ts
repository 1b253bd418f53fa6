import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'simulation',
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The agent and relay processes run from the offline package, built once per run.
    globalSetup: ['test/edgePackage.setup.ts'],
  },
});
