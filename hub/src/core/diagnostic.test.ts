import { describe, expect, it } from 'vitest';
import { firstDiagnostic } from './diagnostic.js';

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
