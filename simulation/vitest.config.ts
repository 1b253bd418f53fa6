import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';

// The simulation's default lane: the world (src/world, docs/decisions/540-deterministic-world.md) and the
// simulator's own units, in virtual time. The tests that start programs as processes are the process lane
// (vitest.process.config.ts), run after this group at a concurrency that suits two cores.
export default defineProject({
  test: {
    name: 'simulation',
    // Files share workers (docs/decisions/441-longest-files-first.md); the root config sets the rest.
    isolate: false,
    environment: 'node',
    // `test/**/*.world.test.ts`: files of the process lane moved onto the world (the hostile suite's)
    include: ['src/**/*.test.ts', 'test/**/*.world.test.ts'],
    // libuv's pool is one thread in these workers (set before anything uses it), so a world's seed replays;
    // the rest of the suite keeps Node's four (one for all made the CLI tests twice as slow: decision 540)
    execArgv: ['--require', fileURLToPath(new URL('../scripts/onePoolThread.cjs', import.meta.url))],
    globalSetup: ['../scripts/tmp.setup.ts'],
    // No wall-clock deadline (docs/decisions/540-deterministic-world.md, "No wall-clock deadline in a
    // world"): a world test ends by its bounds in virtual time, and a world that hangs says so itself
    // (never idle: VirtualTime's busy-waits limit; a timer loop: its loop limit). A deadline on the
    // machine's clock only failed worlds on a loaded machine (hubWindows: 333 s of a 300 s bound in CI).
    testTimeout: 0,
    hookTimeout: 0,
  },
});
