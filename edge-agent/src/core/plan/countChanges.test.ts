import type { ResourceChange } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { buildSummary, countChanges } from './buildSummary.js';

const change = (actions: string[], extra: Partial<ResourceChange> = {}): ResourceChange => ({
  address: `r.${actions.join('_')}`,
  type: 'r',
  actions,
  drift: false,
  changedAttributes: [],
  ...extra,
});

const ctx = {
  component: 'c',
  environment: 'e',
  startedAt: '2025-01-01T00:00:00.000Z',
  finishedAt: '2025-01-01T00:00:01.000Z',
  sensitiveNames: new Set<string>(),
};

// Terraform's "Plan:" line (internal/command/jsonformat/plan.go): add = create + both replace orders +
// create-then-forget; change = update; destroy = delete + both replace orders; import apart; no-op,
// read and forget are not counted.
describe('countChanges', () => {
  it('counts one replacement in add and in destroy, as "Plan: 1 to add, 0 to change, 1 to destroy."', () => {
    expect(countChanges([change(['delete', 'create'])], 0)).toEqual({
      add: 1,
      change: 0,
      destroy: 1,
      replace: 1,
      import: 0,
      drift: 0,
    });
    expect(countChanges([change(['create', 'delete'])], 0)).toMatchObject({ add: 1, destroy: 1, replace: 1 });
  });

  it('counts every other action as Terraform does', () => {
    const all = [
      change(['create']),
      change(['update']),
      change(['delete']),
      change(['read']),
      change(['no-op'], { previousAddress: 'r.old' }),
      change(['forget']),
      change(['create', 'forget']),
      change(['update'], { importing: true }),
      change(['no-op'], { importing: true }),
    ];
    expect(countChanges(all, 2)).toEqual({ add: 2, change: 2, destroy: 1, replace: 0, import: 2, drift: 2 });
  });
});

describe('buildSummary counts', () => {
  it('leaves out the deletion of a data source, which Terraform neither shows nor counts', () => {
    const s = buildSummary(
      {
        format_version: '0.1',
        terraform_version: '0.12.31',
        resource_changes: [
          { address: 'data.aws_ami.old', mode: 'data', type: 'aws_ami', change: { actions: ['delete'] } },
          {
            address: 'aws_instance.web',
            mode: 'managed',
            type: 'aws_instance',
            change: { actions: ['delete'] },
          },
        ],
      },
      ctx,
    );
    expect(s.counts).toMatchObject({ add: 0, change: 0, destroy: 1 });
    expect(s.resources?.map((r) => r.address)).toEqual(['aws_instance.web']);
  });
});
