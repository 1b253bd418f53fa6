import { rmSync } from 'node:fs';
import { createHopServer } from '@driftline/hop';
import { HttpUpstream } from '../src/adapters/http/HttpUpstream.js';
import { MemoryUpstream } from '../src/adapters/memory/MemoryUpstream.js';
import { tmp } from './helpers.js';
import { runUpstreamContract } from './upstreamContract.js';

runUpstreamContract('HttpUpstream', async (terminal) => {
  const dir = tmp('relay-upstream-');
  const hop = createHopServer(terminal, { uploads: { directory: dir } });
  const { url } = await hop.listen(0, '127.0.0.1');
  let open = true;
  const close = async () => {
    if (open) await hop.close();
    open = false;
  };
  return {
    connect: (token) => new HttpUpstream('hub', url, token, 30_000),
    cut: close,
    done: async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

runUpstreamContract('MemoryUpstream', async (backend) => {
  const made: MemoryUpstream[] = [];
  return {
    connect: (token) => {
      const up = new MemoryUpstream('hub', { backend, token });
      made.push(up);
      return up;
    },
    cut: async () => {
      for (const up of made) up.down = true;
    },
    done: async () => {},
  };
});
