import { defineConfig } from 'vitest/config';

// One vitest run over every workspace; each workspace's own vitest.config.ts is a project.
export default defineConfig({
  test: {
    projects: ['protocol', 'hop', 'edge-agent', 'relay', 'hub', 'ui', 'simulation'],
    // The programs that tests start as processes run compiled (hub/dist, relay/dist, …): rebuilt here,
    // once per run, when a source is newer (docs/decisions/440-compiled-programs.md).
    globalSetup: ['scripts/build.setup.ts'],
    // Every run ends with its 20 slowest files (and .tmp/test-timing.json; `npm run test:timing`).
    reporters: ['default', './scripts/slowestFiles.ts'],
    // Two test files at a time. Vitest's default on a 2-core machine (cores − 1) runs the files one after
    // another, and the longest ones (the act loop over an emulated Mars link, contact windows) spend their
    // time waiting on the link, not on the CPU: serial, the whole run neared an hour. The tests bound their
    // waits by count and by the programs' own signals, never by wall-clock limits, so a second file beside
    // them changes how long they take, not what they assert. VITEST_MAX_WORKERS overrides it.
    maxWorkers: 2,
  },
});
