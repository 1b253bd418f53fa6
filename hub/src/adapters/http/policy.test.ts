import { describe, expect, it } from 'vitest';
import { isGuardedPath, lookup, policyFor } from './policy.js';

describe('route policy', () => {
  it('names the role of each route, ignoring letter case, empty segments and HEAD', () => {
    expect(policyFor('POST', '/api/publications')).toMatchObject({
      need: 'publisher',
      audit: 'publication.publish',
    });
    // The deprecated alias asks for the same role and records the same action.
    expect(policyFor('POST', '/api/bundles')).toMatchObject({
      need: 'publisher',
      audit: 'publication.publish',
    });
    expect(policyFor('GET', '/api/bundles/01J').need).toBe('viewer');
    expect(policyFor('post', '/API//Plan-Requests/').need).toBe('operator');
    expect(policyFor('HEAD', '/api/sites/ship-7').need).toBe('viewer');
    expect(policyFor('DELETE', '/api/session').need).toBe('open');
    expect(policyFor('POST', '/api/approvals')).toMatchObject({ need: 'approver', audit: 'approval.submit' });
  });

  it('refuses a route it does not list: 404 for an unknown path, 405 for another method of a known one', () => {
    expect(() => policyFor('GET', '/api/not-yet')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => policyFor('PUT', '/api/sites/ship-7')).toThrow(expect.objectContaining({ status: 405 }));
    expect(() => policyFor('POST', '/api/approvers')).toThrow(expect.objectContaining({ status: 405 }));
    expect(lookup('POST', '/api/approvers')).toEqual({ allowed: ['GET'] });
  });

  it('matches a percent-encoded slash inside its segment', () => {
    expect(policyFor('GET', '/api/refs/pr%2F42/status').path).toBe('/api/refs/:ref/status');
    expect(() => policyFor('GET', '/api/refs/pr/42/status')).toThrow(
      expect.objectContaining({ status: 404 }),
    );
    expect(() => policyFor('GET', '/api%2Fmatrix')).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('guards /api and /metrics however they are spelt, and nothing else', () => {
    for (const p of ['/api', '/api/matrix', '/API/x', '//api/x', '/metrics', '/Metrics/'])
      expect(isGuardedPath(p), p).toBe(true);
    for (const p of ['/', '/apix', '/v1/health', '/assets/app.js', '/metricsx'])
      expect(isGuardedPath(p), p).toBe(false);
  });
});
