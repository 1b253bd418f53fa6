import type { PublicationListItem } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { pendingAt } from './publications.js';

const pub = (publicationId: string, state: string): PublicationListItem =>
  ({
    publicationId,
    name: 'providers',
    fileKind: 'provider-mirror',
    size: 10,
    publishedAt: '2026-11-01T00:00:00.000Z',
    sites: ['ship-7'],
    deliveries: [{ site: 'ship-7', state, bytes: 0, reason: null, updatedAt: '2026-11-01T00:00:00.000Z' }],
  }) as unknown as PublicationListItem;

describe('pendingAt', () => {
  it('leaves out publications a newer one superseded, as well as placed, refused and expired ones', () => {
    const all = ['superseded', 'placed', 'refused', 'expired', 'downloading', 'announced'].map((s, i) =>
      pub(`b${i}`, s),
    );
    expect(
      pendingAt(all, 'ship-7')
        .map((r) => r.state)
        .sort(),
    ).toEqual(['announced', 'downloading']);
  });
});
