import { API_PATHS, fillPath, type RunsQueryParams } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { HttpApi } from './HttpApi.js';

/** An `HttpApi` whose fetch records each URL and answers `body`. */
function recording(body: unknown) {
  const urls: string[] = [];
  const fetchFn = (async (url: string) => {
    urls.push(url);
    return new Response(JSON.stringify(body), { status: 200 });
  }) as typeof fetch;
  return { api: new HttpApi('', fetchFn), urls };
}

describe('HttpApi queries', () => {
  it('sends only the parameters that are set, named as the hub parses them', async () => {
    const m = recording({ cells: [] });
    await m.api.matrix({ site: 'ship-7', ref: 'pr/42', environment: null });
    await m.api.matrix();
    expect(m.urls).toEqual(['/api/matrix?site=ship-7&ref=pr%2F42', '/api/matrix']);
    const a = recording({ entries: [] });
    await a.api.audit({ limit: 50, before: '12' });
    expect(a.urls).toEqual(['/api/audit?limit=50&before=12']);
    const p = recording({ publications: [] });
    await p.api.publications('ship-7');
    await p.api.publications();
    expect(p.urls).toEqual(['/api/publications?site=ship-7', '/api/publications']);
    const j = recording({ approvals: [] });
    await j.api.approvals('ship-7', '01J0000000000000000000000A');
    expect(j.urls).toEqual(['/api/approvals?site=ship-7&runId=01J0000000000000000000000A']);
  });

  it('types a query by the hub’s schema: a name the hub does not read does not compile', () => {
    // @ts-expect-error the runs query has no `state` (it is `status`)
    const wrong: RunsQueryParams = { state: 'failed' };
    const right: RunsQueryParams = { ref: 'pr/42', limit: 20, status: 'failed' };
    expect([wrong, right]).toHaveLength(2);
  });

  it('fills a path from the hub’s own template, each parameter percent-encoded and required', () => {
    expect(fillPath(API_PATHS.refStatus, { ref: 'pr/42' })).toBe('/api/refs/pr%2F42/status');
    expect(fillPath(API_PATHS.runs, { site: 'ship-7', environment: 'prod', component: 'net' })).toBe(
      '/api/cells/ship-7/prod/net/runs',
    );
    // @ts-expect-error the runs path also needs environment and component
    expect(fillPath(API_PATHS.runs, { site: 'ship-7' })).toBe('/api/cells/ship-7///runs');
  });
});
