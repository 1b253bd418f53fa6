import { cpSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Command } from 'commander';
import { csrfKeyPath, keyPath, publicationStorePath, storePath } from '../app.js';
import type { HubConfig } from '../config.js';
import { driftStorePath } from '../dataDir.js';

/** What `hub backup` wrote, by file, relative to `--out`. */
interface BackupReport {
  out: string;
  files: string[];
  /** Set for store kind postgres: the database is not in the copy. */
  database?: string;
}

/**
 * Copies what a restore needs into `out` (a new folder, 0700: the hub key is in it): the SQLite store
 * through SQLite's online backup (consistent while `hub run` writes), the key files and the blobs as
 * they are. For store kind postgres it copies the files and says the database (hub store, publications,
 * drift episodes and waivers) needs `pg_dump`.
 */
export async function backupHub(c: HubConfig, out: string): Promise<BackupReport> {
  const files: string[] = [];
  mkdirSync(out, { mode: 0o700 });
  // Drift episodes and waivers: drift.db beside a SQLite store, in the database on PostgreSQL (decision 470).
  const sqliteFiles =
    c.store.kind === 'sqlite'
      ? [storePath(c.dataDir), publicationStorePath(c.dataDir), driftStorePath(c.dataDir)]
      : [];
  for (const db of sqliteFiles) {
    if (!existsSync(db)) continue;
    const src = new Database(db, { readonly: true, fileMustExist: true });
    try {
      const name = db.slice(c.dataDir.length + 1);
      await src.backup(join(out, name));
      files.push(name);
    } finally {
      src.close();
    }
  }
  for (const name of [keyPath(''), csrfKeyPath(''), 'blobs'].map((p) => p.replace(/^\//, ''))) {
    const from = join(c.dataDir, name);
    if (!existsSync(from)) continue;
    cpSync(from, join(out, name), { recursive: true, preserveTimestamps: true });
    files.push(statSync(from).isDirectory() ? `${name}/` : name);
  }
  return {
    out,
    files,
    ...(c.store.kind === 'postgres'
      ? { database: 'not copied: store.kind is postgres; back it up with pg_dump -Fc (docs/operations.md)' }
      : {}),
  };
}

/** `hub backup --out DIR`. */
export function addBackupVerb(program: Command, config: (o: { config?: string }) => HubConfig): void {
  program
    .command('backup')
    .description(
      "copy the store, the hub's key files and blobs into a new folder, safely while hub run is running",
    )
    .requiredOption('--out <dir>', 'a folder that does not exist yet (made 0700: the hub key goes in it)')
    .option('-c, --config <file>', 'hub.yaml')
    .option('--json', 'print { out, files, database? }')
    .addHelpText(
      'after',
      [
        '',
        'Restore: stop the hub, make the folder its dataDir (or copy its files into an empty dataDir),',
        'run hub config check, start it. docs/operations.md has the steps.',
        '',
        'Exit codes: 0 written, 1 the copy failed, 2 a bad configuration or --out exists.',
        '',
        'Example:',
        '  hub backup --out /backup/hub-$(date +%F) --config hub.yaml',
      ].join('\n'),
    )
    .exitOverride()
    .action(async (o: { out: string; config?: string; json?: boolean }) => {
      const c = config(o);
      const out = resolve(o.out);
      if (existsSync(out)) {
        console.error(`hub backup: --out ${out} exists; name a new folder (a backup never overwrites one)`);
        process.exit(2);
      }
      if (!existsSync(storePath(c.dataDir)) && c.store.kind === 'sqlite') {
        console.error(`hub backup: no store at ${storePath(c.dataDir)}; is --config the hub's hub.yaml?`);
        process.exit(2);
      }
      let r: BackupReport;
      try {
        r = await backupHub(c, out);
      } catch (e) {
        console.error(`hub backup: ${(e as Error).message} (the partial copy is in ${out}: remove it)`);
        process.exit(1);
      }
      if (o.json) console.log(JSON.stringify(r));
      else {
        console.log(`backed up to ${r.out}: ${r.files.join(' ')}`);
        if (r.database) console.log(`database ${r.database}`);
      }
    });
}
