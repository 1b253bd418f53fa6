import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));

describe('hub publication list', { timeout: 60_000 }, () => {
  it('prints why a delivery is refused or superseded under the publication, not only its state', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-publication-list-'));
    const cfg = join(dir, 'hub.yaml');
    writeFileSync(cfg, 'dataDir: ./data\n');
    writeFileSync(join(dir, 'f.bin'), 'abc');
    const hub = (args: string[]) =>
      spawnSync(process.execPath, [bin, ...args, '--config', cfg], {
        encoding: 'utf8',
        env: { ...process.env, LOG_LEVEL: 'silent' },
      });
    expect(hub(['init']).status).toBe(0);
    const publish = () =>
      JSON.parse(
        hub(['publication', 'publish', '--site', 'ship-7', '--name', 'f', '--json', join(dir, 'f.bin')])
          .stdout,
      ) as { publicationId: string };
    const first = publish();
    const second = publish();
    const list = hub(['publication', 'list']);
    expect(list.status).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    const at = lines.findIndex((l) => l.startsWith(`${first.publicationId}\t`));
    expect(lines[at]).toMatch(/\tship-7:superseded$/);
    expect(lines[at + 1]).toBe(
      `  ship-7 superseded: superseded by publication ${second.publicationId} (same name and kind)`,
    );
  });
});
