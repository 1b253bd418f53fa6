import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerClockGauges } from '../src/adapters/http/clockMetrics.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import type { AgentRow } from '../src/ports/HubStore.js';

const agent = (site: string, name: string, offset: number | null, unc: number | null): AgentRow => ({
  site,
  agent: name,
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: null,
  lastContactAt: 5,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: offset,
  clockOffsetUncertaintyMs: unc,
  offsetSampledAt: 5,
  upstream: null,
  cadenceS: {},
  contactIntervalS: null,
  contactWindows: [],
});

describe('clock gauges on /metrics', () => {
  it("exports each site's mean offset and each agent's bound, read from the store at each scrape", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-clock-'));
    const store = new SqliteHubStore(join(dir, 'hub.db'));
    try {
      const registry = new Registry();
      registerClockGauges(registry, store);
      await store.commit({
        agents: [
          agent('ship-7', 'a1', 90_000, 300),
          agent('mars-base', 'a1', -60_000, null),
          agent('lab', 'a1', null, null),
        ],
      });
      const text = await registry.metrics();
      expect(text).toContain('hub_site_clock_offset_seconds{site="ship-7"} 90');
      expect(text).toContain('hub_site_clock_offset_seconds{site="mars-base"} -60');
      expect(text).not.toContain('site="lab"');
      expect(text).toContain('hub_agent_clock_offset_uncertainty_seconds{site="ship-7",agent="a1"} 0.3');
      expect(text).not.toMatch(/uncertainty_seconds\{site="mars-base"/);
      // A revoked agent is not a clock anyone reads any more.
      await store.commit({ agents: [{ ...agent('ship-7', 'a1', 90_000, 300), revokedAt: 9 }] });
      expect(await registry.metrics()).not.toContain('site="ship-7"');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
