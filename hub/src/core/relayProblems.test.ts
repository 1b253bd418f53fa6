import type { RelayStatus } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { relayInfos, relayProblems } from './relayProblems.js';

const status = (over: Partial<RelayStatus> = {}): RelayStatus => ({
  at: 10_000_000,
  version: '0.1.0',
  custody: { bundles: 0, bytes: 0, oldestAt: null },
  upstreamRefusals: {},
  sitesRefused: [],
  sites: ['ship-7'],
  upstreams: [{ name: 'hub', ok: true, code: null, message: null }],
  ...over,
});

describe('relayProblems', () => {
  it('names the command that fixes each problem', () => {
    const s = status({
      sitesRefused: ['ship-8'],
      upstreamRefusals: { forbidden: 3, 'unknown-agent': 2 },
      upstreams: [
        { name: 'ground-2', ok: false, code: 'unauthorized', message: 'the bearer token is unknown' },
      ],
      custody: { bundles: 4, bytes: 100, oldestAt: 10_000_000 - 2 * 3_600_000 },
    });
    const p = relayProblems('relay-1', ['ship-7'], { status: s, at: 5 }, 5);
    expect(p.map((x) => x.code)).toEqual(['sites-refused', 'token-refused', 'refusals', 'custody-old']);
    expect(p[0]?.fix).toBe('hub peer sites relay-1 --sites ship-7,ship-8');
    expect(p[1]?.fix).toContain('hub peer rotate relay-1');
    expect(p[2]?.message).toBe('upstream refused bundles for good: 2 unknown-agent');
    expect(p[3]?.message).toContain('oldest for 2 h');
  });

  it('says a relay is silent once its status is five minutes old, and nothing of one that never reported', () => {
    expect(relayProblems('r', [], { status: status(), at: 0 }, 6 * 60_000).map((x) => x.code)).toEqual([
      'silent',
    ]);
    expect(relayProblems('r', [], undefined, 0)).toEqual([]);
  });

  it('lists each peer name once, a revoked one with when it was revoked and no problems', () => {
    const infos = relayInfos(
      [
        {
          tokenSha256: 'a',
          name: 'relay-1',
          sites: ['ship-7'],
          createdAt: 1,
          lastUsedAt: 50,
          revokedAt: 100,
        },
        {
          tokenSha256: 'b',
          name: 'relay-1',
          sites: ['ship-7'],
          createdAt: 2,
          lastUsedAt: 70,
          revokedAt: null,
        },
        { tokenSha256: 'c', name: 'old', sites: ['*'], createdAt: 1, revokedAt: 10 },
      ],
      60,
    );
    expect(infos.map((i) => [i.name, i.lastUsedAt, i.status, i.revokedAt])).toEqual([
      ['relay-1', new Date(70).toISOString(), null, undefined],
      ['old', null, null, new Date(10).toISOString()],
    ]);
    expect(infos[1]?.problems).toEqual([]);
  });

  it('shows the newest status any working token of the relay brought, with its problems', () => {
    const old = { ...status(), sitesRefused: ['ship-9'] };
    const infos = relayInfos(
      [
        {
          tokenSha256: 'a',
          name: 'relay-1',
          sites: ['ship-7'],
          createdAt: 1,
          revokedAt: 10_000,
          status: old,
          statusAt: 40,
        },
        {
          tokenSha256: 'b',
          name: 'relay-1',
          sites: ['ship-7'],
          createdAt: 2,
          status: status(),
          statusAt: 50,
        },
      ],
      60,
    );
    expect(infos[0]?.status?.sitesRefused).toEqual([]);
    expect(infos[0]?.reportedAt).toBe(new Date(50).toISOString());
    expect(infos[0]?.problems).toEqual([]);
  });
});
