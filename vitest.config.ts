import { defineConfig } from 'vitest/config';

// One vitest run over every workspace; each workspace's own vitest.config.ts is a project.
export default defineConfig({
  test: {
    projects: ['protocol', 'hop', 'edge-agent', 'relay', 'hub', 'ui', 'simulation'],
  },
});
