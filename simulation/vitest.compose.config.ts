import { defineProject } from 'vitest/config';

// The Compose topology's test (test/compose.test.ts) as a project of its own that starts only once every
// other file of the run has finished (groupOrder 2: after the default lane, 0, and the process lane, 1): it builds an image and runs ten
// containers, and beside the rest of the suite on two cores a CLI run in its set-up took 30-50 s instead of
// 3 and the hub stopped answering the test (docs/decisions/531-compose-test-runs-alone.md).
export default defineProject({
  test: {
    name: 'compose',
    isolate: false,
    // the images start building as the run begins (test/composeImage.setup.ts)
    globalSetup: ['../scripts/tmp.setup.ts', 'test/composeImage.setup.ts'],
    environment: 'node',
    include: ['test/compose.test.ts'],
    sequence: { groupOrder: 2 },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
