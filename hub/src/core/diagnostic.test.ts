import type { MatrixCell } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { DIAGNOSTICS_CAP, firstDiagnostic, withDiagnostics } from './diagnostic.js';

describe('the first diagnostic of a failed plan', () => {
  it("takes the first Error line of terraform's framed output", () => {
    const excerpt = [
      '╷',
      '│ Warning: Deprecated attribute',
      '╵',
      '╷',
      '│ Error: Unsupported argument',
      '│ ',
      '│   on main.tf line 3, in resource "aws_instance" "web":',
      '╵',
    ].join('\n');
    expect(firstDiagnostic(excerpt)).toBe('Error: Unsupported argument');
    expect(firstDiagnostic('│ Warning: Deprecated attribute\nexit 1')).toBe('Warning: Deprecated attribute');
    expect(firstDiagnostic('\n  exit status 1\nmore')).toBe('exit status 1');
    expect(firstDiagnostic('')).toBeNull();
    expect(firstDiagnostic(`Error: ${'x'.repeat(500)}`)).toHaveLength(200);
  });
});

describe('withDiagnostics', () => {
  it('gives at most DIAGNOSTICS_CAP failed cells their diagnostic, the rest untouched, in order', async () => {
    const cells = Array.from({ length: DIAGNOSTICS_CAP * 2 }, (_, i) => ({
      site: `s${i}`,
      status: i % 3 === 0 ? 'clean' : 'failed',
      runId: `run-${i}`,
    })) as unknown as MatrixCell[];
    let open = 0;
    let most = 0;
    const store = {
      getRun: async (runId: string) => {
        most = Math.max(most, ++open);
        await new Promise((r) => setImmediate(r));
        open--;
        return { summary: { errorExcerpt: `Error: in ${runId}` } } as never;
      },
    };
    const out = await withDiagnostics(store, cells);
    expect(out.map((c) => c.site)).toEqual(cells.map((c) => c.site));
    const given = out.filter((c) => c.diagnostic);
    expect(given).toHaveLength(DIAGNOSTICS_CAP);
    expect(given.every((c) => c.diagnostic === `Error: in ${c.runId}` && c.status === 'failed')).toBe(true);
    expect(out.filter((c) => c.status === 'clean').some((c) => c.diagnostic)).toBe(false);
    expect(most).toBeGreaterThan(1); // read several at once, bounded
    expect(most).toBeLessThanOrEqual(16);
  });
});
