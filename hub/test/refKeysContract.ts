import { expect, it } from 'vitest';
import { RefQueries } from '../src/core/RefQueries.js';
import type { AgentRow, CellKey, CellRow, HubStore } from '../src/ports/HubStore.js';
import { cell } from './storeFixtures.js';

const at = (
  site: string,
  environment: string,
  component: string,
  ref: string,
  status: CellRow['status'],
) => ({
  ...cell(`R-${site}-${environment}-${component}`, 1000, status),
  site,
  environment,
  component,
  ref,
  commit: 'c1',
});
const agent = (site: string, refs: Record<string, string[]>, revokedAt: number | null = null): AgentRow => ({
  site,
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt,
  version: null,
  lastContactAt: null,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: null,
  offsetSampledAt: null,
  upstream: null,
  cadenceS: {},
  contactIntervalS: null,
  contactWindows: [],
  refs,
});
const key = (site: string, environment: string, component: string): CellKey => ({
  site,
  environment,
  component,
});
const ids = (ks: CellKey[]) => ks.map((k) => `${k.site}/${k.environment}/${k.component}`).sort();

/** What the gate did before decision 640: each asked cell's whole row by key, kept when its ref is the ref. */
async function byRows(s: HubStore, ref: string, keys: CellKey[]): Promise<CellKey[]> {
  return (await s.getCells(keys)).filter((c): c is CellRow => c?.ref === ref);
}

/**
 * `ReadStore.refDefaultKeys` (docs/decisions/640-ref-reads-whole-and-indexed.md) answers what reading the
 * cells' rows did, for every adapter; the gate of a ref its agents' patterns allow counts the same by
 * either of the two ways `RefQueries` asks it.
 */
export function runRefKeysContract(withStore: (fn: (s: HubStore) => Promise<void>) => () => Promise<void>) {
  it(
    "finds the agents' cells that are default cells of a ref from the ref index, as their rows said (decision 640)",
    withStore(async (s) => {
      await s.commit({
        agents: [
          agent('a', { 'prod/net': ['main'], 'prod/dns': ['*'], 'prod/db': ['pr/*'], 'dev/net': ['main'] }),
          agent('b', { 'prod/net': ['main'], 'prod/dns': ['main'] }),
          agent('c', { 'prod/net': ['main'] }, 5),
        ],
        cells: [
          at('a', 'prod', 'net', 'main', 'clean'),
          at('a', 'prod', 'dns', 'release/2', 'clean'),
          at('b', 'prod', 'net', 'main', 'failed'),
          at('b', 'prod', 'dns', 'main', 'clean'),
          // An `@ref` cell of main at b/prod/dns: the default cell there is still a default cell of main.
          { ...at('b', 'prod', 'dns', 'main', 'changes'), atRef: 'main' },
          at('c', 'prod', 'net', 'main', 'clean'),
          at('d', 'prod', 'net', 'main', 'clean'),
        ],
      });
      const asked = [
        key('a', 'prod', 'net'),
        key('a', 'prod', 'dns'),
        key('a', 'dev', 'net'),
        key('b', 'prod', 'net'),
        key('b', 'prod', 'dns'),
        key('z', 'prod', 'net'),
      ];
      const old = ids(await byRows(s, 'main', asked));
      expect(old).toEqual(['a/prod/net', 'b/prod/dns', 'b/prod/net']);
      expect(ids(await s.refDefaultKeys({ ref: 'main', keys: asked }))).toEqual(old);
      expect(ids(await s.refDefaultKeys({ ref: 'main' }))).toEqual(
        [...old, 'c/prod/net', 'd/prod/net'].sort(),
      );
      expect(ids(await s.refDefaultKeys({ ref: 'release/2', keys: asked }))).toEqual(['a/prod/dns']);
      expect(await s.refDefaultKeys({ ref: 'pr/9' })).toEqual([]);
      expect(await s.refDefaultKeys({ ref: 'main', keys: [] })).toEqual([]);

      // The gate: a/prod/dns and a/dev/net are allowed and unplanned (pending); b/prod/dns is the `@ref`
      // cell's; c's agent is revoked, d has none: their cells count as default cells only.
      const gate = async () => (await new RefQueries(s).status('main', 'c1'))?.counts;
      // Four default cells of main counted, four asked about: the ref's keys are read.
      expect(await gate()).toEqual({ complete: 4, pending: 2, blocked: 0, failed: 1, total: 7 });
      // Five more default cells than asked about: the asked keys are looked up; the same answer.
      await s.commit({
        cells: ['e', 'f', 'g', 'h', 'i'].map((site) => at(site, 'prod', 'net', 'main', 'clean')),
      });
      expect(await gate()).toEqual({ complete: 9, pending: 2, blocked: 0, failed: 1, total: 12 });
    }),
  );
}
