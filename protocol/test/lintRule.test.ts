import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The architecture rule (STYLE.md): src/core/** imports no I/O module; protocol/src imports nothing of Node.
// Probe files are linted in a scratch tree that carries the repository's own biome.json.
const root = fileURLToPath(new URL('../../', import.meta.url));
const biome = join(root, 'node_modules/@biomejs/biome/bin/biome');
const scratch = mkdtempSync(join(tmpdir(), 'driftline-lint-'));
const config = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8'));
config.$schema = undefined;
config.vcs = { enabled: false };
writeFileSync(join(scratch, 'biome.json'), JSON.stringify(config));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function lint(path: string, source: string): string {
  const file = join(scratch, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  const r = spawnSync(process.execPath, [biome, 'lint', path], { cwd: scratch, encoding: 'utf8' });
  return r.stdout + r.stderr;
}

describe('lint rule: pure core', () => {
  const io = [
    'koa',
    'better-sqlite3',
    'node-cron',
    'tus-js-client',
    '@tus/server',
    'node:fs',
    'node:net',
    'node:child_process',
  ];
  for (const [i, mod] of io.entries()) {
    it(`refuses '${mod}' in */src/core/**`, () => {
      const out = lint(`relay/src/core/probe${i}.ts`, `import x from '${mod}';\nexport const y = x;\n`);
      expect(out).toContain('noRestrictedImports');
      expect(out).toContain('src/core is pure logic');
    });
  }

  it('allows protocol and zod in */src/core/**', () => {
    const out = lint(
      'hub/src/core/ok.ts',
      "import { ERRORS } from '@driftline/protocol';\nimport { z } from 'zod';\n\nexport const y = [z, ERRORS];\n",
    );
    expect(out).not.toContain('noRestrictedImports');
  });

  it('allows I/O modules in adapters', () => {
    const out = lint(
      'relay/src/adapters/sqlite/ok.ts',
      "import Database from 'better-sqlite3';\n\nexport const y = Database;\n",
    );
    expect(out).not.toContain('noRestrictedImports');
  });

  it('refuses any node: import in protocol/src', () => {
    const out = lint(
      'protocol/src/probe.ts',
      "import { createHash } from 'node:crypto';\n\nexport const y = createHash;\n",
    );
    expect(out).toContain('no node: imports');
  });
});
