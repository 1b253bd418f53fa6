import { describe, expect, it } from 'vitest';
import { counts } from '../../test/support/fixtures.js';
import { countsSentence, countsText, statusLook, statusText } from './status.js';

describe('countsText', () => {
  it('shows one replacement as Terraform does, once in add and once in destroy, and names it apart', () => {
    // Terraform: "Plan: 1 to add, 0 to change, 1 to destroy." for a single replacement.
    const one = counts({ add: 1, destroy: 1, replace: 1 });
    expect(countsText(one)).toBe('+1 ~0 -1 (1 replaced)');
    expect(statusText('changes', one)).toBe('changes +1 ~0 -1 (1 replaced)');
  });

  it('adds nothing in brackets when there is no replacement or import', () => {
    expect(countsText(counts({ add: 2, change: 1, destroy: 3 }))).toBe('+2 ~1 -3');
    expect(countsText(null)).toBe('');
  });

  it('names imports apart too, as Terraform\'s "to import"', () => {
    expect(countsText(counts({ add: 2, change: 1, destroy: 1, replace: 1, import: 2 }))).toBe(
      '+2 ~1 -1 (1 replaced, 2 imported)',
    );
  });
});

describe('countsSentence', () => {
  it('reads like the "Plan:" line and says a replacement is counted in both', () => {
    expect(countsSentence(counts({ add: 1, destroy: 1, replace: 1 }))).toBe(
      '1 to add, 0 to change, 1 to destroy (1 replacement, counted in both add and destroy)',
    );
    expect(countsSentence(counts({ import: 1, change: 1 }))).toBe(
      '1 to import, 0 to add, 1 to change, 0 to destroy',
    );
  });
});

describe('statusText', () => {
  it('gives every status a word and an icon, and the reason where there is one', () => {
    expect(statusLook('blocked').label).toBe('blocked');
    expect(statusText('blocked', null, 'missing-provider')).toBe('blocked: missing-provider');
    expect(statusText('drift', counts({ drift: 3 }))).toBe('drift (3)');
  });
});
