import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { runHubStoreContract } from './storeContract.js';

runHubStoreContract('memory', async () => ({ store: new MemoryHubStore(), done: async () => {} }));

runHubStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-store-'));
  const store = new SqliteHubStore(join(dir, 'hub.db'));
  return {
    store,
    done: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
