import { defineProject } from 'vitest/config';

// The process lane (docs/decisions/540-deterministic-world.md): the simulation's tests that start hub,
// relay and agent programs as processes and wait on their (compressed) link time. They run as a group of
// their own once the default lane has finished (groupOrder 1; the Compose test is 2), four files at a time:
// each file runs three to six node processes, and eight such files beside the unit lanes on two cores were
// what turned their waits into coin tosses (issue 56). The world replaces them file by file.
export default defineProject({
  test: {
    name: 'process',
    isolate: false,
    environment: 'node',
    include: ['test/**/*.test.ts'],
    // The Compose test is a project of its own that runs after everything else (vitest.compose.config.ts).
    exclude: ['test/compose.test.ts', 'test/**/*.world.test.ts'],
    // The agent and relay processes run from the offline package, built once per run.
    globalSetup: ['../scripts/tmp.setup.ts', 'test/edgePackage.setup.ts'],
    sequence: { groupOrder: 1 },
    maxWorkers: 4,
    // A hang guard, not a speed check: cases that start processes passed vitest's default 5 s beside a
    // full run on two cores (package.test's unpack and version cases; issue 40).
    testTimeout: 30_000,
    // The same for set-up and tear-down: stopping a topology's processes and a browser took over vitest's
    // default 10 s beside a full run (dashboard.e2e's afterAll, 2026-11-30).
    hookTimeout: 60_000,
  },
});
