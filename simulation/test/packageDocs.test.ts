import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKOUT_ONLY, packagedExample, SHIPPED_DOCS } from '../../scripts/package/docs.js';
import { ROOT } from '../src/topology/programs.js';

describe('the text the offline package ships', () => {
  it('leaves out of the example configs what holds only in a checkout, and nothing else', () => {
    for (const name of ['agent', 'relay']) {
      const text = readFileSync(join(ROOT, 'examples', `${name}.yaml`), 'utf8');
      const shipped = packagedExample(text);
      expect(shipped, name).not.toContain('simulation/');
      expect(shipped, name).not.toContain(CHECKOUT_ONLY);
      const marked = text.split('\n').filter((l) => l.includes(CHECKOUT_ONLY)).length;
      expect(text.split('\n').length - shipped.split('\n').length, name).toBe(marked);
    }
  });

  it('ships every doc INSTALL.md names', () => {
    const install = readFileSync(join(ROOT, 'packaging', 'INSTALL.md'), 'utf8');
    const named = [...install.matchAll(/\bdocs\/[\w./-]+\.md\b/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(0);
    for (const doc of named) {
      expect(SHIPPED_DOCS as readonly string[], doc).toContain(doc);
      expect(existsSync(join(ROOT, doc)), doc).toBe(true);
    }
  });

  it('npm run package -- --help prints help and builds nothing; an unknown argument is exit 2', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'package-help-')), 'dist');
    const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
    const main = join(ROOT, 'scripts', 'package', 'main.ts');
    const help = spawnSync(tsx, [main, '--help', '--out', out], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run package -- \[--out DIR\]/);
    expect(help.stdout).toContain('Example:');
    expect(existsSync(out)).toBe(false);
    const bad = spawnSync(tsx, [main, '--bogus', '--out', out], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('package: unknown argument --bogus');
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
