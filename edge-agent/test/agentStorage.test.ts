import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryAgentStorage } from '../src/adapters/memory/MemoryAgentStorage.js';
import { openAgentDatabase } from '../src/adapters/sqlite/openDatabase.js';
import { SqliteAgentStorage } from '../src/adapters/sqlite/SqliteAgentStorage.js';
import { runAgentStorageContract } from './agentStorageContract.js';
import { tempDir } from './helpers/storeFixtures.js';

runAgentStorageContract('memory', () => ({ storage: new MemoryAgentStorage(), done: () => {} }));

runAgentStorageContract('sqlite', () => {
  const dir = tempDir();
  const storage = new SqliteAgentStorage(openAgentDatabase(join(dir, 'agent.sqlite')));
  return {
    storage,
    done: () => {
      storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
