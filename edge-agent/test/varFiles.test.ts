import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FsVarFiles } from '../src/adapters/fs/FsVarFiles.js';
import { MemoryVarFiles } from '../src/adapters/memory/MemoryVarFiles.js';
import { tempDir } from './helpers/storeFixtures.js';
import { runVarFilesContract } from './varFilesContract.js';

runVarFilesContract('FsVarFiles', (files) => {
  const root = tempDir('driftline-varfiles-');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return { varFiles: new FsVarFiles(), root, done: () => rmSync(root, { recursive: true, force: true }) };
});

runVarFilesContract('MemoryVarFiles', (files) => {
  const varFiles = new MemoryVarFiles();
  const root = '/memory/site';
  for (const [rel, text] of Object.entries(files)) varFiles.write(join(root, rel), text);
  return { varFiles, root, done: () => {} };
});
