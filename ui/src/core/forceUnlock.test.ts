import { describe, expect, it } from 'vitest';
import { forceUnlockCommand, shellWord } from './forceUnlock.js';

const ID = '5ba24658-9d93-e5d5-231e-bf92254a663e';

describe('forceUnlockCommand', () => {
  it('names the lock alone when the agent did not say where to run it', () => {
    expect(forceUnlockCommand({ id: ID })).toBe(`terraform force-unlock ${ID}`);
  });

  it('puts -chdir before the subcommand and the workspace in the environment', () => {
    expect(forceUnlockCommand({ id: ID, dir: '/srv/infra/network', workspace: 'stg' })).toBe(
      `TF_WORKSPACE=stg terraform -chdir=/srv/infra/network force-unlock ${ID}`,
    );
  });

  it('quotes a directory a shell would split or expand', () => {
    expect(forceUnlockCommand({ id: ID, dir: "/srv/bob's infra/$HOME" })).toBe(
      `terraform -chdir='/srv/bob'\\''s infra/$HOME' force-unlock ${ID}`,
    );
  });
});

describe('shellWord', () => {
  it('leaves a plain word as it is', () => {
    expect(shellWord('a-b_c.d/e@f')).toBe('a-b_c.d/e@f');
  });
});
