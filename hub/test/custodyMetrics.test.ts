import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CUSTODY_UPSTREAM_LABELS, registerCustodyGauges } from '../src/adapters/http/custodyMetrics.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { relayOfUpstream } from '../src/core/fleet/custodyHeld.js';
import type { AgentRow } from '../src/ports/HubStore.js';

const agent = (site: string, upstream: string, results: number): AgentRow => ({
  site,
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: null,
  lastContactAt: 5,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: 0,
  offsetSampledAt: 5,
  upstream: null,
  cadenceS: {},
  contactIntervalS: null,
  contactWindows: [],
  custodyOverdue: [{ upstream, results, oldestAt: 1, since: 2, resends: 0, episode: 2 }],
});

describe('custody gauges on /metrics (issue 59)', () => {
  it(`names the ${CUSTODY_UPSTREAM_LABELS} upstreams holding most and sums the rest as other`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-custody-'));
    const store = new SqliteHubStore(join(dir, 'hub.db'));
    try {
      const registry = new Registry();
      registerCustodyGauges(registry, store);
      // 52 upstreams: u-00 holds 100 results, u-01 99, … u-51 49
      const agents = Array.from({ length: 52 }, (_, i) =>
        agent(`site-${i}`, `http://u-${String(i).padStart(2, '0')}:7000`, 100 - i),
      );
      await store.commit({ agents });
      const text = await registry.metrics();
      const lines = text.split('\n').filter((l) => l.startsWith('hub_custody_overdue_results{'));
      expect(lines.length).toBe(CUSTODY_UPSTREAM_LABELS + 1);
      expect(text).toContain('hub_custody_overdue_results{upstream="http://u-00:7000"} 100');
      expect(text).toContain('hub_custody_overdue_results{upstream="http://u-49:7000"} 51');
      expect(text).not.toContain('u-50');
      expect(text).toContain('hub_custody_overdue_results{upstream="other"} 99');
      expect(text).toContain('hub_custody_overdue_sites 52');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names an upstream as the relay whose name is its host, else leaves it as the agent names it', () => {
    const relays = new Set(['relay-2', 'Ground-1']);
    expect(relayOfUpstream('http://relay-2:7000', relays)).toBe('relay-2');
    expect(relayOfUpstream('https://relay-2.example.net/hop', relays)).toBe('relay-2');
    expect(relayOfUpstream('https://ground-1.example.net', relays)).toBe('Ground-1');
    expect(relayOfUpstream('relay-2', relays)).toBe('relay-2');
    expect(relayOfUpstream('http://10.0.0.2:7000', relays)).toBeNull();
    expect(relayOfUpstream('https://relay-20.example.net', relays)).toBeNull();
    expect(relayOfUpstream('not a url', relays)).toBeNull();
  });
});
