import type { RelayInfo } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { behindRelay, sentenceBehind } from './relayBehind.js';

const relay = (over: Partial<RelayInfo>): RelayInfo => ({
  name: 'relay-1',
  sites: ['*'],
  lastUsedAt: null,
  reportedAt: '2026-11-29T12:03:10.000Z',
  status: null,
  problems: [],
  ...over,
});
const silent = { code: 'silent' as const, message: 'no status', fix: 'relay config check' };

describe('behindRelay', () => {
  it('finds the silent or revoked relay a site came through', () => {
    expect(behindRelay({ upstream: 'relay-1' }, [relay({ problems: [silent] })])).toEqual({
      relay: 'relay-1',
      why: 'silent',
      since: '2026-11-29T12:03:10.000Z',
    });
    expect(
      behindRelay({ upstream: 'relay-1' }, [relay({ revokedAt: '2026-11-29T11:00:00.000Z' })])?.why,
    ).toBe('revoked');
    expect(behindRelay({ upstream: 'relay-1' }, [relay({})])).toBeNull();
    expect(behindRelay({ upstream: null }, [relay({ problems: [silent] })])).toBeNull();
  });

  it('replaces in contact and waiting, and names the relay beside the others', () => {
    const b = behindRelay({ upstream: 'relay-1' }, [relay({ problems: [silent] })]);
    expect(sentenceBehind('in contact', 'ok', b)).toBe(
      'behind relay-1, silent since 2026-11-29 12:03:10 UTC',
    );
    expect(sentenceBehind('overdue: 1 window passed without contact', 'overdue', b)).toBe(
      'overdue: 1 window passed without contact · behind relay-1, silent since 2026-11-29 12:03:10 UTC',
    );
    expect(sentenceBehind('in contact', 'ok', null)).toBe('in contact');
  });
});
