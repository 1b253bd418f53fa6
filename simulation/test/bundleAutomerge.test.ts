/**
 * The packaged programs compile Automerge's WebAssembly at its first call, not at start-up (an idle
 * agent never needs it): the bundle plugin in scripts/package/bundle.ts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUTOMERGE_API, bundleEntry, runtimeFiles } from '../../scripts/package/bundle.js';
import { ROOT } from '../src/topology/programs.js';

describe('Automerge in the bundled programs', () => {
  it('is compiled at the first call, once, and works as the Node entry does', {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-bundle-automerge-'));
    const out = join(dir, 'probe.mjs');
    await bundleEntry(ROOT, 'simulation/test/fixtures/automergeFirstUse.ts', out);
    for (const f of runtimeFiles(ROOT)) copyFileSync(f.from, join(dir, f.to));
    const r = spawnSync(process.execPath, [out], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ imported: 0, used: 1, after: 1, n: 2 });
  });

  it("routes every one of Automerge's low-level calls", () => {
    // Read in a fresh Node: this lane shares modules between files (isolate: false), and once any
    // file has loaded Automerge's wasm, ApiHandler also holds the module's own exports.
    const lowLevel = pathToFileURL(
      join(ROOT, 'node_modules/@automerge/automerge/dist/mjs/low_level.js'),
    ).href;
    const probe = `const { ApiHandler } = await import(${JSON.stringify(lowLevel)});
process.stdout.write(JSON.stringify(Object.keys(ApiHandler)));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect([...AUTOMERGE_API].sort()).toEqual((JSON.parse(r.stdout) as string[]).sort());
  });
});
