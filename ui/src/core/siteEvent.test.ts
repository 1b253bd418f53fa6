import type { HubEvent } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { cell, planRequest, runItem } from '../../test/support/fixtures.js';
import { concernsSite } from './siteEvent.js';

describe('concernsSite', () => {
  it("takes the site's cells, runs and plan requests, and a reset; not another site's", () => {
    const k = { environment: 'prod', component: 'compute' };
    const mine: HubEvent[] = [
      { type: 'cell-updated', cell: cell({ site: 'ship-7', ...k }) },
      { type: 'run-added', run: runItem({ n: 1, site: 'ship-7', ...k }) },
      { type: 'plan-request-updated', request: planRequest({ site: 'ship-7', ...k }) },
      { type: 'reset', reason: 'restarted' },
    ];
    for (const e of mine) expect(concernsSite(e, 'ship-7')).toBe(true);
    expect(concernsSite({ type: 'cell-updated', cell: cell({ site: 'polar-1', ...k }) }, 'ship-7')).toBe(
      false,
    );
  });
});
