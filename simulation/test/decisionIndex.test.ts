import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../src/topology/programs.js';

const DIR = join(ROOT, 'docs', 'decisions');
const STATUS = /^(In force|Partly replaced by \d{3}|Replaced by \d{3})/;

/** The map of decision records (docs/decisions/README.md) lists every record, each with its status. */
describe('the decision records index', () => {
  const records = readdirSync(DIR).filter((f) => /^\d{3}-.+\.md$/.test(f));
  const rows = new Map(
    readFileSync(join(DIR, 'README.md'), 'utf8')
      .split('\n')
      .filter((l) => /^\| \d{3} \|/.test(l))
      .map((l) => {
        const cells = l.split(' | ');
        return [l.slice(2, 5), { link: cells[1] ?? '', status: (cells.at(-1) ?? '').replace(/ \|$/, '') }];
      }),
  );

  it('has a row for every record, linking to it, with a status', () => {
    expect(records.length).toBeGreaterThan(40);
    const problems = records.flatMap((f) => {
      const row = rows.get(f.slice(0, 3));
      if (!row) return [`${f}: no row in docs/decisions/README.md (add its one line and status)`];
      if (!row.link.includes(`(${f})`)) return [`${f}: its row does not link to it`];
      if (!STATUS.test(row.status))
        return [`${f}: status '${row.status}' is not In force / Partly replaced by N / Replaced by N`];
      return [];
    });
    expect(problems).toEqual([]);
  });

  it('lists no record that does not exist', () => {
    const numbers = new Set(records.map((f) => f.slice(0, 3)));
    expect([...rows.keys()].filter((n) => !numbers.has(n))).toEqual([]);
  });
});
