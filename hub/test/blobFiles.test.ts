import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBlobs } from '../src/adapters/fs/FileBlobs.js';
import { MemoryBlobFiles } from '../src/adapters/memory/MemoryBlobFiles.js';
import { runBlobFilesContract } from './blobFilesContract.js';

runBlobFilesContract('FileBlobs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-blobs-'));
  return {
    // A directory not yet made: the first adopt makes it.
    blobs: new FileBlobs(join(dir, 'blobs')),
    done: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

runBlobFilesContract('MemoryBlobFiles', async () => ({ blobs: new MemoryBlobFiles(), done: async () => {} }));
