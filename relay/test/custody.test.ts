import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryCustody } from '../src/adapters/memory/MemoryCustody.js';
import { SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';
import { runCustodyContract } from './custodyContract.js';
import { tmp } from './helpers.js';

runCustodyContract('SqliteCustody', (opts = {}) => {
  const dir = tmp('relay-custody-');
  return {
    custody: new SqliteCustody(join(dir, 'relay.sqlite'), opts),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
});

runCustodyContract('MemoryCustody', (opts = {}) => ({ custody: new MemoryCustody(opts) }));
