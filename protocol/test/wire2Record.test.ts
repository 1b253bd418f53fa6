import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toHex } from '../src/bytes.js';
import { wire2 } from '../src/index.js';
import { examples } from './wire2Examples.js';

const RECORD = new URL('../../docs/decisions/490-hop-v2-wire-format.md', import.meta.url);

/** The hex of the record's block after `<!-- example:<name>`: the first word of each line, joined. */
function recordHex(text: string, name: string): string | null {
  const at = text.indexOf(`<!-- example:${name} `);
  if (at < 0) return null;
  const m = /```text\n([\s\S]*?)```/.exec(text.slice(at));
  return (m?.[1] ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(/\s+/)[0])
    .join('');
}

describe('decision 490: the example bytes in the record', () => {
  it('are exactly what the codec makes now (regenerate: npx tsx protocol/test/wire2Examples.ts)', async () => {
    const text = readFileSync(RECORD, 'utf8');
    for (const e of await examples()) {
      expect(e.lines.map(([x]) => x).join(''), `${e.name}: the labelled lines`).toBe(toHex(e.bytes));
      expect(recordHex(text, e.name), `${e.name} in docs/decisions/490`).toBe(toHex(e.bytes));
      expect(text).toContain(`<!-- example:${e.name} (${e.bytes.length} bytes) -->`);
    }
  });

  it('decode to the messages they label', async () => {
    const [push, pull] = await examples();
    const p = wire2.decodeMessage(push!.bytes);
    const q = wire2.decodeMessage(pull!.bytes);
    expect(p.ok && [p.value.kind, p.value.from, p.value.to, p.value.seq]).toEqual(['push', 7, 0, 12]);
    expect(q.ok && q.value.body).toEqual({ have: 5, holdS: 21_600 });
  });
});
