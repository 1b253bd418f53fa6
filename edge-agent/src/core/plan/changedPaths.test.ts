import { describe, expect, it } from 'vitest';
import { changedPaths, deepEqual, KEY_PLACEHOLDER, MAX_PATH_SEGMENTS } from './changedPaths.js';
import type { Json } from './planJson.js';

const none = new Set<string>();

function nest(depth: number, leaf: Json): Json {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('changedPaths', () => {
  it('keeps attribute names and list indexes, and replaces every other map key by a placeholder', () => {
    const paths = changedPaths(
      {
        actions: ['update'],
        before: { tags: { env: 'a', 'Vault-Pa55word-q7Zr': 'x', Name: 'n' }, rules: [{ port: 1 }] },
        after: { tags: { env: 'b', 'other key/with.dots': 'y', Name: 'm' }, rules: [{ port: 2 }] },
      },
      none,
    );
    expect(paths).toEqual(['rules[0].port', `tags[${KEY_PLACEHOLDER}]`, 'tags.env']);
    expect(JSON.stringify(paths)).not.toMatch(/Vault|other key|Name/);
  });

  it('replaces a 100,000-character key and never copies it', () => {
    const key = 'k'.repeat(100_000);
    const paths = changedPaths(
      { actions: ['update'], before: { tags: { [key]: 'x' } }, after: { tags: {} } },
      none,
    );
    expect(paths).toEqual([`tags[${KEY_PLACEHOLDER}]`]);
  });

  it('walks 5,000 levels without overflowing the stack and stops paths at a bounded depth', () => {
    const paths = changedPaths({ actions: ['update'], before: nest(5000, 1), after: nest(5000, 2) }, none);
    expect(paths).toHaveLength(1);
    expect(paths[0]?.split('.')).toHaveLength(MAX_PATH_SEGMENTS);
    expect(deepEqual(nest(5000, 1), nest(5000, 1))).toBe(true);
    expect(deepEqual(nest(5000, 1), nest(5000, 2))).toBe(false);
  });

  it('lists top-level names of a create with the same placeholder rule', () => {
    expect(
      changedPaths({ actions: ['create'], before: null, after: { ami: 'x', 'Odd Key': 1 } }, none),
    ).toEqual([`[${KEY_PLACEHOLDER}]`, 'ami']);
  });
});
