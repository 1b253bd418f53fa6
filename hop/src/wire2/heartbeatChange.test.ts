import { wire2 } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { encodeHeartbeatOf } from './heartbeatChange.js';

describe('the heartbeat of a change (docs/decisions/500-heartbeat-rebuilds-the-change.md)', () => {
  it('names its cell list as protocol’s cellListDigest does, at once', async () => {
    const keys = ['prod/a', 'prod/b', 'prod/c']; // sorted, as heartbeatCellKeys answers them
    const hb = encodeHeartbeatOf(keys, [{ key: 'prod/a', at: 1_000 }], 'ab'.repeat(32));
    expect(hb?.list).toEqual(await wire2.cellListDigest(['prod/c', 'prod/a', 'prod/b']));
    expect(hb?.list).not.toEqual(await wire2.cellListDigest(['prod/a', 'prod/b']));
  });
});
