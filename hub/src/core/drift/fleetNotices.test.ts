import type { RelayStatus, SiteContact } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { MemoryDriftStore } from '../../adapters/memory/MemoryDriftStore.js';
import type { WebhookRow } from '../../ports/HubStore.js';
import { Drift } from './Drift.js';
import { fleetNotices } from './fleetNotices.js';

const status: RelayStatus = {
  at: 0,
  version: '0.1.0',
  custody: { bundles: 0, bytes: 0, oldestAt: null },
  upstreamRefusals: {},
  sitesRefused: [],
  sites: ['ship-7'],
  upstreams: [{ name: 'hub', ok: true, code: null, message: null }],
};

describe('fleetNotices', () => {
  it('queues site.overdue and relay.silent once per silence, however many sweeps see it', async () => {
    const rows = new Map<string, WebhookRow>();
    let now = 10 * 60_000;
    const commit = async (w: { webhooks?: WebhookRow[] }) => {
      for (const r of w.webhooks ?? []) if (!rows.has(r.id)) rows.set(r.id, r);
    };
    const drift = new Drift({
      drift: new MemoryDriftStore(),
      commit,
      clock: { now: () => now },
      ids: { next: () => 'x' },
      webhookUrls: ['http://127.0.0.1:9/h'],
    });
    let lastContactAt = Date.parse('2025-01-01T00:00:00.000Z');
    const site = () => ({
      site: 'polar-1',
      lastContactAt,
      contact: { judged: true, state: 'overdue', missedWindows: 1 } as unknown as SiteContact,
    });
    const deps = {
      queries: { siteContacts: async () => [site()] },
      store: {
        listPeers: async () => [{ tokenSha256: 'a', name: 'relay-1', sites: ['*'], status, statusAt: 0 }],
        commit,
      },
      clock: { now: () => now },
      drift,
    };
    for (let sweep = 0; sweep < 3; sweep++) {
      await fleetNotices(deps);
      now += 60_000;
    }
    expect([...rows.values()].map((r) => r.event).sort()).toEqual(['relay.silent', 'site.overdue']);
    // The site is heard from, then silent again: a new silence, a new notice.
    lastContactAt = Date.parse('2025-01-01T01:00:00.000Z');
    await fleetNotices(deps);
    expect([...rows.values()].filter((r) => r.event === 'site.overdue')).toHaveLength(2);
  });
});
