import { API_PATHS } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
// The dashboard's stand-in for this table, checked here against it (docs/decisions/432-route-table-complete.md).
import { smallWorld } from '../../ui/test/support/fixtures.js';
import { MOCK_CSRF, MockHub } from '../../ui/test/support/mockHub.js';
import { API_SCHEMAS } from '../src/adapters/http/openapiShared.js';
import { API_ROUTES } from '../src/adapters/http/routes/index.js';

const SAMPLE: Record<string, string> = {
  site: 'ship-7',
  environment: 'prod',
  component: 'network',
  runId: 'run-1',
  requestId: 'pr-1',
  ref: 'main',
  approvalId: 'ap-1',
};
const fill = (path: string) =>
  path.replace(/:(\w+)/g, (_, n: string) => encodeURIComponent(SAMPLE[n] ?? 'x'));

/** What the mock answers `method path`, or null when it does not serve that route at all. */
function mockAnswer(method: string, path: string): { status: number; body: unknown } | null {
  const hub = new MockHub(smallWorld());
  const url = new URL(`http://dashboard.test${fill(path)}`);
  const headers = new Headers({ 'x-driftline-csrf': MOCK_CSRF });
  const a = hub.handle(method, url, method === 'GET' ? undefined : {}, headers);
  const message = (a.body as { error?: { message?: string } } | undefined)?.error?.message;
  // The mock's last line answers what it does not serve: 404 naming the method and the path.
  const unserved =
    a.status === 404 &&
    (message?.startsWith(`${method} ${url.pathname} (`) || message?.startsWith(`${url.pathname} (`)) === true;
  return unserved ? null : a;
}

describe("the dashboard's MockHub against the /api route table", () => {
  it('answers every route it serves with the body the table declares for it', () => {
    const served: string[] = [];
    const wrong: string[] = [];
    for (const r of API_ROUTES) {
      const a = mockAnswer(r.method, r.path);
      if (!a) continue;
      served.push(`${r.method} ${r.path}`);
      if (a.status !== r.response.status || !('schema' in r.response)) continue;
      const parsed = API_SCHEMAS[r.response.schema].safeParse(a.body);
      if (!parsed.success)
        wrong.push(`${r.method} ${r.path}: not a ${r.response.schema}: ${parsed.error.message}`);
    }
    expect(served.length).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });

  it('serves nothing the table does not declare, on any path the dashboard calls', () => {
    const table = new Set(API_ROUTES.map((r) => `${r.method} ${r.path}`));
    const phantom: string[] = [];
    for (const path of Object.values(API_PATHS))
      for (const method of ['GET', 'POST', 'DELETE'])
        if (mockAnswer(method, path) && !table.has(`${method} ${path}`)) phantom.push(`${method} ${path}`);
    expect(phantom).toEqual([]);
  });

  it('finds a route the table lacks (the check can fail)', () => {
    expect(mockAnswer('GET', '/api/audit')).not.toBeNull();
    expect(mockAnswer('GET', '/api/no-such-thing')).toBeNull();
  });
});
