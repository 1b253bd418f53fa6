import type { BundleId, Receipt } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { peerSitesFix, pulledSites, RelayHealth } from './relayHealth.js';

const rejected = (code: string): Receipt => ({
  bundleId: 'B' as BundleId,
  index: 0,
  status: 'rejected',
  code: code as Receipt['code'],
  by: 'hub',
});

describe('RelayHealth', () => {
  it('counts refusals by code and names the sites refused as not the relay’s once', () => {
    const h = new RelayHealth(['hub']);
    const refused = {
      type: 'refused' as const,
      upstream: 'hub',
      receipts: [rejected('forbidden'), rejected('forbidden'), rejected('unknown-agent')],
      sources: ['ship-8/a1', 'ship-8/a2', 'ship-7/a1'],
    };
    expect(h.note(refused)).toEqual(['ship-8']);
    expect(h.note(refused)).toEqual([]);
    h.note({
      type: 'failed',
      upstream: 'hub',
      code: 'unauthorized',
      reason: 'no',
      retryable: false,
      retryInMs: 1,
    });
    const s = h.status({ at: 1, version: 'v', custody: { bundles: 0, bytes: 0, oldestAt: null }, sites: [] });
    expect(s.upstreamRefusals).toEqual({ forbidden: 4, 'unknown-agent': 2 });
    expect(s.sitesRefused).toEqual(['ship-8']);
    expect(s.upstreams).toEqual([{ name: 'hub', ok: false, code: 'unauthorized', message: 'no' }]);
    h.accepted(['ship-8']);
    expect(h.refusedSites()).toEqual([]);
  });

  it('pulls relay.yaml’s sites and those upstream names, never a `*`', () => {
    expect(pulledSites(['ship-7'], [['ship-8', 'ship-7'], ['*']])).toEqual(['ship-7', 'ship-8']);
  });

  it('names the command that adds the refused sites to what the token acts for', () => {
    expect(peerSitesFix('relay-1', ['ship-7'], ['ship-9', 'ship-8'])).toBe(
      'hub peer sites relay-1 --sites ship-7,ship-8,ship-9',
    );
  });
});
