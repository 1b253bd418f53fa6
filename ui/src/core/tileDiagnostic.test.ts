import { describe, expect, it } from 'vitest';
import { cell } from '../../test/support/fixtures.js';
import { tileSentence } from './tile.js';

describe('a failure tile', () => {
  it('says the first diagnostic summary, not only the exit code', () => {
    const failed = cell({
      site: 'ship-7',
      environment: 'prod',
      component: 'dns',
      status: 'failed',
      reason: 'exit-1',
      diagnostic: 'Error: Unsupported argument',
    });
    expect(tileSentence(failed, Date.now(), null)).toContain(
      'failed: exit-1 · ship-7 · prod / dns · Error: Unsupported argument',
    );
  });
});
