import {
  type DriftEpisode,
  DriftGroupsResponseSchema,
  DriftResponseSchema,
  type Waiver,
  WaiverCreateSchema,
  WaiverSchema,
  WaiversResponseSchema,
} from '@driftline/protocol';
import type { ApiAnswer } from './mockHub.js';

/**
 * `/api/drift`, `/api/drift/groups` and `/api/waivers` for the dashboard's tests, every answer parsed by
 * the protocol's schemas: episodes given by the test, grouped by signature; a waiver whose pattern is a
 * signature marks its open episodes `waived` (the hub also matches addresses and `*`; not needed here).
 */
export class MockDrift {
  waivers: Waiver[] = [];
  private n = 0;

  constructor(
    readonly episodes: DriftEpisode[],
    private readonly now: () => number = Date.now,
  ) {}

  private state(e: DriftEpisode): DriftEpisode {
    const w = this.waivers.find((x) => x.active && x.pattern === e.signature);
    return e.state === 'open' && w ? { ...e, state: 'waived', waiver: w.id } : e;
  }

  handle(method: string, url: URL, body: unknown): ApiAnswer | null {
    const p = url.pathname;
    if (method === 'GET' && p === '/api/drift/groups') {
      const by = new Map<string, { e: DriftEpisode; sites: Set<string>; open: number; waived: number }>();
      const totals = { open: 0, waived: 0, checks: 0, failures: 0 };
      for (const raw of this.episodes) {
        const e = this.state(raw);
        if (e.state === 'resolved') continue;
        if (e.state === 'waived') totals.waived++;
        else if (e.kind === 'drift') totals.open++;
        const g = by.get(e.signature) ?? { e, sites: new Set<string>(), open: 0, waived: 0 };
        g.sites.add(e.site);
        if (e.state === 'waived') g.waived++;
        else g.open++;
        by.set(e.signature, g);
      }
      const groups = [...by.values()].map((g) => ({
        signature: g.e.signature,
        kind: g.e.kind,
        type: g.e.type,
        address: g.e.address,
        attributes: g.e.attributes,
        sites: g.sites.size,
        cells: g.open + g.waived,
        open: g.open,
        waived: g.waived,
        firstSeen: g.e.firstSeen,
      }));
      return { status: 200, body: DriftGroupsResponseSchema.parse({ groups, nextCursor: null, totals }) };
    }
    if (method === 'GET' && p === '/api/drift') {
      const q = url.searchParams;
      const keys = ['signature', 'site', 'environment', 'component', 'kind'] as const;
      const state = q.get('state');
      const episodes = this.episodes
        .filter((e) => keys.every((k) => !q.get(k) || e[k] === q.get(k)))
        .map((e) => this.state(e))
        .filter((e) => !state || e.state === state);
      return {
        status: 200,
        body: DriftResponseSchema.parse({ episodes: episodes.slice(0, 100), nextCursor: null }),
      };
    }
    if (method === 'GET' && p === '/api/waivers')
      return { status: 200, body: WaiversResponseSchema.parse({ waivers: this.waivers }) };
    if (method === 'POST' && p === '/api/waivers') {
      const c = WaiverCreateSchema.parse(body);
      const now = this.now();
      const w = WaiverSchema.parse({
        id: `w-${++this.n}`,
        pattern: c.pattern,
        attributes: c.attributes ?? null,
        sites: c.sites ?? [],
        environments: c.environments ?? [],
        components: c.components ?? [],
        expiresAt: new Date(now + 7 * 86_400_000).toISOString(),
        reason: c.reason,
        author: 'ada',
        createdAt: new Date(now).toISOString(),
        removedAt: null,
        removedBy: null,
        active: true,
        covers: this.episodes.filter((e) => e.state === 'open' && e.signature === c.pattern).length,
      });
      this.waivers.push(w);
      return { status: 201, body: w };
    }
    return null;
  }
}
