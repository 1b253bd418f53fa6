import { MATRIX_PAGE_MAX } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../../adapters/memory/MemoryHubStore.js';
import type { AgentRow, CellRow } from '../../ports/HubStore.js';
import { MatrixWindow, SPANNING_PAGE_MAX } from './MatrixWindow.js';

const NOW = 10_000_000;
const site = (i: number) => `s${String(i).padStart(3, '0')}`;
const agent = (s: string): AgentRow => ({
  site: s,
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: null,
  lastContactAt: NOW,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: null,
  offsetSampledAt: null,
  upstream: null,
  cadenceS: { 'prod/c000': 3600 },
  contactIntervalS: 3600,
  contactWindows: [],
});
const drifted = (s: string, k: number): CellRow => ({
  site: s,
  environment: 'prod',
  component: `c${String(k).padStart(3, '0')}`,
  agent: 'a1',
  status: 'drift',
  counts: { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 1 },
  reason: null,
  runId: `R-${s}-${k}`,
  plannedAt: NOW - 1000,
  receivedAt: NOW - 500,
  expectedIntervalS: 3600,
  planHash: null,
  staleNotifiedFor: null,
});

// 60 sites × 25 drifted cells: 1,500 cells, more than a spanning page and more sites than are read one by one.
const store = new MemoryHubStore();
const sites = Array.from({ length: 60 }, (_, i) => site(i));
await store.commit({
  agents: sites.map(agent),
  sites: sites.map((s) => ({ site: s, lastContactAt: NOW, upstream: null, unreachableNotifiedFor: null })),
  cells: sites.flatMap((s) => Array.from({ length: 25 }, (_, k) => drifted(s, k))),
});

describe('MatrixWindow', () => {
  it('caps a page across sites and reads the rest by its cursor, never reading every agent’s whole row', async () => {
    // The store as the window sees it, where reading every agent's whole row fails the test.
    const noAgentRows = new Proxy(store, {
      get: (target, key) => {
        if (key === 'listAgents')
          return (s?: string) =>
            s === undefined
              ? Promise.reject(new Error('read every agent’s whole row'))
              : target.listAgents(s);
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const window = new MatrixWindow(noAgentRows, 3600);
    const first = await window.page({ status: 'drift' }, NOW);
    expect(first.cells).toHaveLength(SPANNING_PAGE_MAX);
    const rest = await window.page({ status: 'drift', cursor: first.next ?? '' }, NOW);
    expect(rest.cells).toHaveLength(1500 - SPANNING_PAGE_MAX);
    expect(rest.next).toBeNull();
    expect(first.cells.every((c) => c.status === 'drift' && c.siteUnreachable === false)).toBe(true);
  });

  it('keeps a window of named sites to the larger cap, with its declared cells', async () => {
    const window = new MatrixWindow(store, 3600);
    const page = await window.page({ sites: sites.slice(0, 50), limit: MATRIX_PAGE_MAX }, NOW);
    expect(page.cells).toHaveLength(50 * 25);
    expect(page.next).toBeNull();
    // An environment page across sites is capped as a status page is.
    const env = await window.page({ environment: 'prod', limit: MATRIX_PAGE_MAX }, NOW);
    expect(env.cells).toHaveLength(SPANNING_PAGE_MAX);
    expect(env.next).not.toBeNull();
  });
});
