import { describe, expect, it } from 'vitest';
import { BUILTIN_RULES } from '../redact/rules.js';
import type { ComponentSettings } from '../settings.js';
import { unlockWhere } from './unlockWhere.js';

const target = (over: Partial<ComponentSettings> = {}, workspace?: string) =>
  ({
    component: { name: 'network', ...over },
    environment: { name: 'prod', ...(workspace ? { workspace } : {}) },
  }) as never;

describe('unlockWhere', () => {
  it('names the configured working directory and the workspace', () => {
    expect(unlockWhere(target({}, 'stg'), { dir: '/srv/infra/network' }, [], BUILTIN_RULES)).toEqual({
      dir: '/srv/infra/network',
      workspace: 'stg',
    });
  });

  it('names no directory for a component planned from a git checkout, which is gone after the run', () => {
    const fromGit = target({ source: { repo: 'infra', path: '.', refs: ['main'] } } as never);
    expect(
      unlockWhere(fromGit, { dir: '/var/lib/driftline/scratch/x1/network', ref: 'main' }, [], BUILTIN_RULES),
    ).toEqual({});
  });

  it('leaves out a directory or workspace the scan finds a value in', () => {
    const secret = { value: 'tenant-4471-prod', source: 'env' };
    expect(
      unlockWhere(
        target({}, 'tenant-4471-prod'),
        { dir: '/srv/tenant-4471-prod/net' },
        [secret],
        BUILTIN_RULES,
      ),
    ).toEqual({});
    const random = '/srv/x/Q8vZr2LmT4kW9pXc7bN1sYd5hJ3fG6aE';
    expect(unlockWhere(target(), { dir: random }, [], BUILTIN_RULES)).toEqual({});
  });
});
