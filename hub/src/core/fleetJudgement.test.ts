import type { RelayInfo, SiteContact } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { judgementMoves, judgementOf } from './fleetJudgement.js';

const contact = (state: SiteContact['state'], missedWindows = 0): SiteContact => ({
  source: 'declared',
  windows: ['every 4m for 40s from 2026-11-27T00:00:00Z'],
  confidence: null,
  judged: true,
  state,
  nextWindowAt: null,
  nextWindowEndsAt: null,
  lastWindowAt: null,
  lastWindowEndsAt: null,
  missedWindows,
  graceS: 60,
  unreachableAfter: 3,
});

const relay = (name: string, message: string | null): RelayInfo => ({
  name,
  sites: ['ship-7'],
  lastUsedAt: null,
  reportedAt: null,
  status: null,
  problems: message ? [{ code: 'silent', message, fix: 'relay config check --online' }] : [],
  unkeyed: false,
});

describe('judgementMoves', () => {
  it('names the sites whose contact state or missed windows moved and the relays whose problems moved', () => {
    const before = judgementOf(
      [
        { site: 'polar-1', contact: contact('waiting') },
        { site: 'ship-7', contact: contact('overdue', 1) },
        { site: 'lab', contact: contact('in-window') },
      ],
      [relay('relay-dmz', null), relay('relay-2', null)],
    );
    const after = judgementOf(
      [
        { site: 'polar-1', contact: contact('in-window') },
        { site: 'ship-7', contact: contact('overdue', 2) },
        { site: 'lab', contact: contact('in-window') },
      ],
      [relay('relay-dmz', 'no status from relay-dmz for 6 min'), relay('relay-2', null)],
    );
    expect(judgementMoves(before, after)).toEqual({ sites: ['polar-1', 'ship-7'], relays: ['relay-dmz'] });
  });

  it('does not count a silence growing older as a move', () => {
    const at = (min: number) => judgementOf([], [relay('relay-dmz', `no status for ${min} min`)]);
    expect(judgementMoves(at(6), at(9))).toEqual({ sites: [], relays: [] });
  });
});
