import { describe, expect, it } from 'vitest';
import { isGuardedPath, policyFor } from './policy.js';

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

  it('asks viewer to read and admin to write on a route it does not list', () => {
    expect(policyFor('GET', '/api/not-yet').need).toBe('viewer');
    expect(policyFor('PUT', '/api/sites/ship-7').need).toBe('admin');
    expect(policyFor('POST', '/api/approvers').need).toBe('admin');
  });

  it('guards /api and /metrics however they are spelt, and nothing else', () => {
    for (const p of ['/api', '/api/matrix', '/API/x', '//api/x', '/metrics', '/Metrics/'])
      expect(isGuardedPath(p), p).toBe(true);
    for (const p of ['/', '/apix', '/v1/health', '/assets/app.js', '/metricsx'])
      expect(isGuardedPath(p), p).toBe(false);
  });
});
