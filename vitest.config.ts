import { defineConfig } from 'vitest/config';
import LongestFirst from './scripts/longestFirst.js';

// One vitest run over every workspace; each workspace's own vitest.config.ts is a project.
export default defineConfig({
  test: {
    // The Compose test (simulation/vitest.compose.config.ts) runs alone once the rest have finished.
    projects: [
      'protocol',
      'hop',
      'edge-agent',
      'relay',
      'hub',
      'ui',
      'simulation',
      // the process lane, after the rest (docs/decisions/540-deterministic-world.md)
      'simulation/vitest.process.config.ts',
      'simulation/vitest.compose.config.ts',
    ],
    // The programs that tests start as processes run compiled (hub/dist, relay/dist, …): rebuilt here,
    // once per run, when a source is newer (docs/decisions/440-compiled-programs.md).
    // Everything the run puts in the temporary folder goes in one folder of its own, removed at the end
    // (docs/decisions/442-test-temp-folder.md).
    globalSetup: ['scripts/build.setup.ts', 'scripts/tmp.setup.ts'],
    // Every run ends with its 20 slowest files (and .tmp/test-timing.json; `npm run test:timing`).
    reporters: ['default', './scripts/slowestFiles.ts'],
    // Eight files at a time, the longest first whichever workspace they are in, in shared workers
    // (docs/decisions/441-longest-files-first.md). The longest files wait minutes on (compressed) link time
    // at a tenth of a core each and held four of six workers (eight: 660 -> 556 s). The tests bound their
    // waits by count and by the programs' own signals, never by wall-clock limits, so more files at a time
    // changes how long they take, not what they assert. VITEST_MAX_WORKERS or --maxWorkers overrides it.
    // Each workspace's config sets `isolate: false` (a project does not take it from here).
    maxWorkers: 8,
    sequence: { sequencer: LongestFirst },
  },
});
