import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WaiverSchema, WaiversResponseSchema } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { storePath } from '../src/dataDir.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const run = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, USER: 'ada' } });

describe('hub waiver add|list|remove', () => {
  it('adds, lists and removes a waiver, each change in the audit log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-waiver-'));
    try {
      const cfg = join(dir, 'hub.yaml');
      writeFileSync(
        cfg,
        `dataDir: ${dir}\nuiDir: ${join(dir, 'no-ui')}\nlisten: { host: 127.0.0.1, port: 0 }\n`,
      );
      const bad = run('waiver', 'add', '--pattern', 'x', '--expires', 'tomorrow', '--reason', 'r', '-c', cfg);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain('--expires "tomorrow": give a future time within a year');
      // what the API refuses the CLI refuses too, naming the option (the API's own schema)
      const tooMany = Array.from({ length: 101 }, (_, i) => `a${i}`).join(',');
      const wide = run(
        'waiver',
        'add',
        '--pattern',
        'x',
        '--expires',
        '7d',
        '--reason',
        'r',
        '--attributes',
        tooMany,
        '-c',
        cfg,
      );
      expect([wide.status, wide.stderr]).toEqual([2, expect.stringContaining('--attributes: ')]);

      const added = run(
        'waiver',
        'add',
        '--pattern',
        'aws_security_group.*',
        '--attributes',
        'ingress,tags',
        '--sites',
        'ship-*',
        '--expires',
        '7d',
        '--reason',
        'provider upgrade noise',
        '--json',
        '-c',
        cfg,
      );
      expect(added.status, added.stderr).toBe(0);
      const w = WaiverSchema.parse(JSON.parse(added.stdout));
      expect(w).toMatchObject({
        pattern: 'aws_security_group.*',
        attributes: ['ingress', 'tags'],
        sites: ['ship-*'],
        author: 'ada',
        active: true,
      });

      const listed = run('waiver', 'list', '--json', '-c', cfg);
      expect(WaiversResponseSchema.parse(JSON.parse(listed.stdout)).waivers.map((x) => x.id)).toEqual([w.id]);
      const text = run('waiver', 'list', '-c', cfg);
      expect(text.stdout).toContain(`${w.id}  aws_security_group.* (sites ship-*; attributes ingress,tags)`);

      const removed = run('waiver', 'remove', w.id, '--json', '-c', cfg);
      expect(removed.status, removed.stderr).toBe(0);
      expect(JSON.parse(removed.stdout)).toMatchObject({ active: false, removedBy: 'ada' });
      expect(run('waiver', 'remove', 'w-nope', '-c', cfg).status).toBe(1);

      const store = new SqliteHubStore(storePath(dir));
      const audit = await store.listAudit({ limit: 10 });
      await store.close();
      expect(audit.map((a) => [a.action, a.actor, a.via, a.target])).toEqual([
        ['waiver.remove', 'ada', 'cli', w.id],
        ['waiver.add', 'ada', 'cli', w.id],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
