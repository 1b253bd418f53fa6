import { createHopServer } from '@driftline/hop';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { MemoryUplink } from '../src/adapters/memory/MemoryUplink.js';
import { memoryUrlStorage } from './helpers/memoryUrlStorage.js';
import { tempDir } from './helpers/storeFixtures.js';
import { runUplinkContract } from './uplinkContract.js';

runUplinkContract('HttpUplink', async (terminal) => {
  const dir = tempDir('driftline-uplink-');
  const hop = createHopServer(terminal, { uploads: { directory: dir } });
  const { url } = await hop.listen(0, '127.0.0.1');
  let open = true;
  const close = async () => {
    if (open) await hop.close();
    open = false;
  };
  return {
    connect: (o) => new HttpUplink({ url, urlStorage: memoryUrlStorage(), ...o }),
    cut: close,
    // The upload directory stays: tus may still create in it after the server closed.
    done: close,
  };
});

runUplinkContract('MemoryUplink', async (backend) => {
  const made: MemoryUplink[] = [];
  return {
    connect: (o) => {
      const up = new MemoryUplink({ backend, ...o });
      made.push(up);
      return up;
    },
    cut: async () => {
      for (const up of made) up.down = true;
    },
    done: async () => {},
  };
});
