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

  it("routes every one of Automerge's low-level calls", async () => {
    const lowLevel = join(ROOT, 'node_modules/@automerge/automerge/dist/mjs/low_level.js');
    const { ApiHandler } = (await import(pathToFileURL(lowLevel).href)) as { ApiHandler: object };
    expect([...AUTOMERGE_API].sort()).toEqual(Object.keys(ApiHandler).sort());
  });
});
